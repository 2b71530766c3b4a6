"""Python optimizers in the host: an Optimizer subclass is described as an optimizer (never a driver), and its
state is created, asked, told and dropped over the protocol. The Optuna adapter runs when optuna is installed."""
import importlib.util
import os
import sys
import tempfile
import textwrap
import unittest

from optional import optional
from test_host import HostProcess

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from labdeck_host import optimizer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPTUNA_ADAPTER = os.path.join(ROOT, "examples", "optimizers", "optuna_optimizer.py")
_, NO_OPTUNA = optional("optuna")

PLUGIN = '''
    from typing import Literal
    from labdeck_host.optimizer import Optimizer

    class Helper:
        def run(self, x: float) -> float:
            return x

    class Grid(Optimizer):
        """Walks the first parameter's range in even steps.

        Args:
            points: how many steps span the range
        """
        name = "grid"
        capabilities = {"batch": True}

        def __init__(self, setup, points: int = 4, mode: Literal["up", "down"] = "up"):
            super().__init__(setup)
            self.points, self.mode, self.seen = points, mode, []

        def suggest(self, n):
            p = self.setup.space[0]
            lo, hi = p["bounds"]
            k = len(self.seen)
            print("suggesting", n)
            return [{p["name"]: lo + (hi - lo) * (k + i) / self.points} for i in range(n)]

        def observe(self, rows):
            self.seen += rows

        def snapshot(self):
            return {"observed": len(self.seen)}
'''

SETUP = {"space": [{"name": "x", "type": "range", "bounds": [0, 8]}],
         "objectives": [{"name": "y", "minimize": True}], "seed": 1, "constraints": [], "outcome_constraints": []}


class OptimizerHostTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.host = HostProcess()
        self.addCleanup(self.host.close)

    def load(self, text, name="plugin_opt.py"):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        reply, _ = self.host.request({"type": "load_module", "file": path})
        return path, reply

    def test_an_optimizer_class_is_described_as_an_optimizer_not_a_driver(self):
        path, reply = self.load(PLUGIN)
        self.assertEqual([c["name"] for c in reply["value"]["classes"]], ["Helper"])
        [grid] = reply["value"]["optimizers"]
        self.assertEqual(grid["id"], path + "::Grid")
        self.assertEqual(grid["name"], "grid")
        self.assertEqual(grid["description"], "Walks the first parameter's range in even steps.")
        self.assertEqual(grid["capabilities"], dict(optimizer.CAPABILITIES, parameter_types=["range", "int", "choice"],
                                                    batch=True))
        self.assertEqual(grid["options"]["properties"], {
            "points": {"type": "integer", "description": "how many steps span the range", "default": 4},
            "mode": {"enum": ["up", "down"], "default": "up"}})

    def test_create_suggest_observe_snapshot_and_dispose(self):
        path, _ = self.load(PLUGIN)
        created, _ = self.host.request({"type": "optimizer_create", "class": path + "::Grid", "handle": "g1",
                                        "setup": SETUP, "config": {"points": 8}})
        self.assertEqual(created["type"], "result")
        asked, events = self.host.request({"type": "optimizer_call", "handle": "g1", "method": "suggest", "args": {"n": 2}})
        self.assertEqual(asked["value"], {"value": [{"x": 0}, {"x": 1}], "snapshot": {"observed": 0}})
        self.assertEqual([e["text"] for e in events], ["suggesting 2"])  # what it prints is the call's
        told, _ = self.host.request({"type": "optimizer_call", "handle": "g1", "method": "observe",
                                     "args": {"rows": [{"params": {"x": 0}, "values": {"y": 3}}]}})
        self.assertEqual(told["value"]["snapshot"], {"observed": 1})
        asked, _ = self.host.request({"type": "optimizer_call", "handle": "g1", "method": "suggest", "args": {"n": 1}})
        self.assertEqual(asked["value"]["value"], [{"x": 1}])
        dropped, _ = self.host.request({"type": "optimizer_dispose", "handle": "g1"})
        self.assertIs(dropped["value"], True)
        gone, _ = self.host.request({"type": "optimizer_call", "handle": "g1", "method": "suggest", "args": {"n": 1}})
        self.assertEqual(gone["error"]["kind"], "not_found")  # the runtime creates it again from what it told it

    def test_a_bad_answer_or_an_exception_fails_that_request_only(self):
        path, _ = self.load(PLUGIN.replace('return [{p["name"]', 'return {"x": 1} or [{p["name"]'))
        self.host.request({"type": "optimizer_create", "class": path + "::Grid", "handle": "g", "setup": SETUP, "config": {}})
        bad, _ = self.host.request({"type": "optimizer_call", "handle": "g", "method": "suggest", "args": {"n": 1}})
        self.assertEqual(bad["error"]["type"], "TypeError")
        self.assertIn("must return a list of dicts", bad["error"]["message"])
        wrong, _ = self.host.request({"type": "optimizer_create", "class": path + "::Grid", "handle": "h", "setup": SETUP,
                                      "config": {"nope": 1}})
        self.assertIn("nope", wrong["error"]["message"])
        ping, _ = self.host.request({"type": "ping"})
        self.assertEqual(ping["value"], "pong")

    def test_a_class_that_breaks_the_contract_fails_its_file_saying_why(self):
        cases = [
            (PLUGIN.replace('points: int = 4', 'points: int'), "give every option a default (points has none)"),
            (PLUGIN.replace('{"batch": True}', '{"batches": True}'), "unknown capabilities batches"),
            (PLUGIN.replace("def suggest", "def propose"), "define suggest()"),
            (PLUGIN.replace("self, setup, points", "self, points"), "__init__ must take setup"),
        ]
        for i, (text, message) in enumerate(cases):
            _, reply = self.load(text, "broken_%d.py" % i)
            self.assertEqual(reply["error"]["kind"], "load_error", message)
            self.assertIn(message, reply["error"]["message"])


@unittest.skipIf(NO_OPTUNA, NO_OPTUNA)
class OptunaAdapterTest(unittest.TestCase):
    def setUp(self):
        spec = importlib.util.spec_from_file_location("optuna_optimizer", OPTUNA_ADAPTER)
        self.module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.module)

    def make(self, space, objectives=({"name": "y", "minimize": True},), seed=3, **options):
        setup = optimizer.Setup(space=space, objectives=list(objectives), seed=seed)
        return self.module.OptunaOptimizer(setup, **options)

    def run_campaign(self, opt, f, n, batch=1):
        rows = []
        while len(rows) < n:
            for p in opt.suggest(batch):
                row = {"params": p, "values": {"y": f(p)}}
                opt.observe([row])
                rows.append(row)
        return rows

    def test_it_minimises_and_is_reproducible_from_its_seed(self):
        space = [{"name": "a", "type": "range", "bounds": [-5, 5]}, {"name": "b", "type": "range", "bounds": [-5, 5]}]
        f = lambda p: (p["a"] - 1) ** 2 + (p["b"] + 2) ** 2  # noqa: E731
        first = self.run_campaign(self.make(space, n_startup_trials=5), f, 25)
        again = self.run_campaign(self.make(space, n_startup_trials=5), f, 25)
        self.assertEqual(first, again)
        self.assertLess(min(r["values"]["y"] for r in first), 1.0)
        self.assertEqual(self.make(space).snapshot(), {"trials": 0})

    def test_kinds_batches_and_a_state_rebuilt_from_observations(self):
        space = [{"name": "t", "type": "range", "bounds": [0, 100], "step": 5},
                 {"name": "c", "type": "range", "bounds": [0.01, 10], "log_scale": True},
                 {"name": "n", "type": "int", "bounds": [1, 9]},
                 {"name": "s", "type": "choice", "choices": ["water", "ethanol"]}]
        f = lambda p: abs(p["t"] - 40) + abs(p["n"] - 3) + (p["s"] == "water")  # noqa: E731
        opt = self.make(space)
        rows = self.run_campaign(opt, f, 12, batch=3)
        for r in rows:
            p = r["params"]
            self.assertEqual(p["t"] % 5, 0)
            self.assertTrue(0.01 <= p["c"] <= 10 and isinstance(p["n"], int) and p["s"] in ("water", "ethanol"))
        self.assertEqual(len({tuple(sorted(r["params"].items())) for r in rows}), 12)
        rebuilt = self.make(space)
        rebuilt.observe(rows)  # what labdeck does after a restart
        self.assertEqual(rebuilt.snapshot(), opt.snapshot())
        self.assertEqual(opt.snapshot()["trials"], 12)

    def test_several_objectives_a_pareto_front_or_weighted(self):
        space = [{"name": "a", "type": "range", "bounds": [0, 1]}]
        two = [{"name": "y", "minimize": True}, {"name": "z", "minimize": False}]
        opt = self.make(space, objectives=two)
        for p in opt.suggest(4):
            opt.observe([{"params": p, "values": {"y": p["a"], "z": p["a"]}}])
        self.assertEqual(len(opt.snapshot()["best"]), 4)  # every point is on the front
        weighted = self.make(space, objectives=[dict(two[0], weight=1), dict(two[1], weight=3)])
        weighted.observe([{"params": {"a": 0.5}, "values": {"y": 1, "z": 2}}])
        self.assertEqual(weighted.snapshot()["best"][0]["values"], [5])


if __name__ == "__main__":
    unittest.main()
