"""Optuna as a labdeck optimizer: copy this file into your plugin folder (lab-plugins/) on a machine whose
Python has optuna (pip install optuna, or Debian's python3-optuna), and campaigns can choose "optuna".
"""
import warnings
from typing import Literal

import optuna
from labdeck_host.optimizer import Optimizer

optuna.logging.set_verbosity(optuna.logging.WARNING)
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)  # constant_liar, multivariate


class OptunaOptimizer(Optimizer):
    """Optuna's samplers (TPE by default): one or several objectives, batches, log-scale and stepped ranges.

    Args:
        sampler: tpe (Tree-structured Parzen Estimator), or random
        n_startup_trials: random suggestions before TPE models the observations
    """

    name = "optuna"
    capabilities = {"parameter_types": ["range", "int", "choice"], "multi_objective": True, "batch": True,
                    "log_scale": True, "steps": True}

    def __init__(self, setup, sampler: Literal["tpe", "random"] = "tpe", n_startup_trials: int = 10):
        super().__init__(setup)
        self.distributions = {p["name"]: _distribution(p) for p in setup.space}
        self.objectives = setup.objectives
        weighted = any("weight" in o for o in self.objectives)
        # weights scalarise several objectives into one to maximise; without them Optuna keeps a Pareto front
        directions = ["maximize"] if weighted else ["minimize" if o["minimize"] else "maximize" for o in self.objectives]
        if sampler == "random":
            chosen = optuna.samplers.RandomSampler(seed=setup.seed)
        else:  # constant_liar: a batch's pending points push the next ones elsewhere
            chosen = optuna.samplers.TPESampler(seed=setup.seed, n_startup_trials=n_startup_trials, constant_liar=True,
                                                multivariate=True)
        self.study = optuna.create_study(directions=directions, sampler=chosen)
        self.pending = []  # asked trials not yet measured

    def _values(self, measured):
        if len(self.study.directions) == 1 and len(self.objectives) > 1:
            return [sum(o["weight"] * measured[o["name"]] * (-1 if o["minimize"] else 1) for o in self.objectives)]
        return [measured[o["name"]] for o in self.objectives]

    def suggest(self, n):
        trials = [self.study.ask(self.distributions) for _ in range(n)]
        self.pending += trials
        return [dict(t.params) for t in trials]

    def observe(self, rows):
        for row in rows:
            values = self._values(row["values"])
            trial = next((t for t in self.pending if t.params == row["params"]), None)
            if trial is not None:
                self.pending.remove(trial)
                self.study.tell(trial, values)
            else:  # a warm-start row, or a measurement from before a restart
                self.study.add_trial(optuna.trial.create_trial(params=row["params"], distributions=self.distributions,
                                                               values=values))

    def snapshot(self):
        done = [t for t in self.study.trials if t.values is not None]
        if not done:
            return {"trials": 0}
        best = self.study.best_trials if len(self.study.directions) > 1 else [self.study.best_trial]
        return {"trials": len(done), "best": [{"params": t.params, "values": t.values} for t in best]}


def _distribution(p):
    log, step = bool(p.get("log_scale")), p.get("step")
    if p["type"] == "choice":
        return optuna.distributions.CategoricalDistribution(p["choices"])
    low, high = p["bounds"]
    if p["type"] == "int":
        return optuna.distributions.IntDistribution(int(low), int(high), log=log, step=int(step or 1))
    return optuna.distributions.FloatDistribution(low, high, log=log, step=step)
