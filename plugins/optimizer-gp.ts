/**
 * `gp`: Bayesian optimisation with a Gaussian-process model and log expected improvement.
 *
 * - Initial design: the first points of a scrambled Sobol sequence (default d + 3 for d parameters: on
 *   Hartmann-6 a short design leaves the model more steps, and finds the global basin more often than 2·d + 1).
 * - Model (./opt/gp.ts): inputs scaled to [0, 1] (choices one-hot, ints relaxed), outputs standardised,
 *   Matérn-5/2 ARD kernel; hyper-parameters by maximum (penalised) marginal likelihood from several starts,
 *   fewer as observations grow, warm-started from the previous fit (its optimum and its L-BFGS curvature);
 *   beyond 128 observations they are fitted on a fixed random subset of 128 (the posterior uses all).
 *   The fitted model is cached per set of observations and shared by suggest() and snapshot().
 * - Acquisition (./opt/acquisition.ts): log EI (computed without underflow), over many quasi-random and
 *   local candidates, the best refined by projected L-BFGS; ints rounded, choices kept exact.
 * - Basin restarts (`basin_restarts`, one objective, one point at a time): EI converges on the first good
 *   basin and stays there; once that region has converged while most of the space is unexplored, steps go to
 *   a model of the observations outside the incumbent's basin, searching outside it, for as long as they make
 *   progress (see `restart`). On Hartmann-6 this turns some runs stuck in the local optimum into global ones.
 * - Linear constraints (./opt/polytope.ts): the initial design is the feasible points of the Sobol sequence,
 *   and every acquisition candidate and local search result is kept feasible.
 * - Batches and pending points: constant liar (the lie is the best value so far) or Kriging believer (the
 *   model's own mean), hyper-parameters held fixed within a batch.
 * - Several objectives: ParEGO. Each suggested point optimises a fresh random augmented Chebyshev
 *   scalarisation max_i(λ_i f_i) + 0.05·Σ λ_i f_i of the objectives normalised to [0, 1] (with weights on
 *   the objectives, λ is the weights, normalised); the snapshot reports the Pareto front of the observations.
 * - Outcome constraints (`purity >= 0.9`): each outcome is modelled by its own GP, and log EI (over the best
 *   observation meeting them all) is added log P(each is met); before any observation meets them, the
 *   probability alone is maximised.
 * - Seeded: the same seed and the same sequence of observe/suggest/snapshot calls give the same suggestions.
 *   A state rebuilt from the records (observe everything, then suggest) repeats the initial design exactly;
 *   in the model phase it suggests equivalent, not bit-identical, points (its fit starts cold).
 */
import { defineOptimizer, z, type JsonValue, type LinearConstraint, type ObjectiveSpec, type OutcomeConstraint, type ParameterSpec, type ParamValues } from '../core/contracts/index.js';
import { LabError } from '../core/contracts/index.js';
import { ballDistance, maximizeLogEI, type AcquisitionOptions, type AcquisitionResult, type Ball, type OutcomeModel } from './opt/acquisition.js';
import { Posterior, fitHyper, hyperOf, thetaBounds, type FitStart, type Hyper } from './opt/gp.js';
import { FeasibleSequence, FeasibleSpace } from './opt/polytope.js';
import { createRng, hashSeed, type Rng } from './opt/rng.js';
import { SOBOL_MAX_DIM, SobolSequence } from './opt/sobol.js';
import { History, Pending, SpaceCodec, checkCount } from './opt/space.js';

const config = z.object({
  initial_points: z.int().min(1).max(1000).optional().describe('Quasi-random (Sobol) points measured before the model takes over; default d + 3 for d parameters'),
  candidates: z.int().min(16).max(200_000).default(1024).describe('Quasi-random and local candidates scored for each suggestion'),
  local_starts: z.int().min(0).max(64).default(5).describe('Best candidates refined by local search for each suggestion'),
  batch_strategy: z
    .enum(['constant_liar', 'kriging_believer'])
    .default('constant_liar')
    .describe('How points of a batch (and pending points) are fantasised: the best value so far, or the model mean'),
  fit_restarts: z.int().min(0).max(20).default(4).describe('Random restarts of the hyper-parameter fit while observations are few'),
  basin_restarts: z.boolean().default(true).describe("Once the best point's region has converged, search outside it with a model of the other observations (one objective)"),
});
type Config = z.infer<typeof config>;

export const gpOptimizer = defineOptimizer({
  name: 'gp',
  description:
    'Gaussian-process Bayesian optimization (Matérn-5/2, log expected improvement): finds good settings in few experiments. Handles integers, choices, batches and several objectives (ParEGO).',
  config,
  capabilities: { parameterTypes: ['range', 'int', 'choice'], multiObjective: true, batch: true, constraints: true, outcomeConstraints: true, logScale: true, steps: true },
  create: ({ space, objectives, config, seed, constraints, outcomeConstraints }) => new GpOptimizer(space, objectives, config, seed, constraints, outcomeConstraints),
});

interface Model {
  post: Posterior;
  theta: Float64Array;
  yMean: number;
  ySd: number;
  /** Standardised incumbent (lowest posterior mean at an observation). */
  best: number;
  /** The same among the observations that meet the outcome constraints, or null when none does. */
  feasibleBest: number | null;
  /** Model-space points of the best observations (those meeting the outcome constraints first), best first. */
  incumbents: Float64Array[];
}

/** The last fit of a quantity: the warm start of the next, and what it was fitted on (to keep it while that holds). */
interface LastFit extends FitStart {
  /** Observations when θ was fitted. */
  fitN: number;
  /** The rows of the fit subset beyond FIT_MAX observations (empty below). */
  subset: Set<number>;
  /** Its posterior over every observation (kept θ only), to grow by the next ones. */
  post: Posterior | null;
}

const ROUND = (v: number) => Number(v.toPrecision(6));
/** Observations beyond which the hyper-parameters are fitted on a subset. */
const FIT_MAX = 128;
/** Beyond FIT_MAX observations, θ is kept until this many rows of the fit subset are new, or the observations grew by an eighth. */
const REFIT_AFTER = 8;

/**
 * Basin restarts (see `restart`). The incumbent's region has converged when the best candidate's posterior sd
 * is under CONVERGED_SD of the signal sd (the model would re-measure what it knows); a restart is considered
 * only while more than UNEXPLORED_SHARE of the space (a Sobol probe of PROBE points) has a posterior sd over
 * half the signal sd; the basin is the ball of BASIN_RADIUS length scales around the incumbent; a restart
 * stalls when, of the last STALL_WINDOW observations, STALL_COUNT or more lie outside the basin and none of
 * them closed STALL_PROGRESS of the gap between the best outside before them and the best overall.
 */
const RESTART = {
  CONVERGED_SD: 0.02,
  UNEXPLORED_SHARE: 0.5,
  PROBE: 256,
  BASIN_RADIUS: 1.5,
  STALL_WINDOW: 12,
  STALL_COUNT: 3,
  STALL_PROGRESS: 0.2,
} as const;

class GpOptimizer {
  private readonly codec: SpaceCodec;
  private readonly history: History;
  private readonly pending: Pending;
  private readonly feasible: FeasibleSpace;
  private readonly design: FeasibleSequence;
  private readonly nInit: number;
  /** The last fit's θ and curvature pairs, per modelled quantity (the objective, each outcome): the warm start of the next fit. */
  private lastFit = new Map<string, LastFit>();
  /** The single-objective model of the current observations (for suggest and snapshot). */
  private model: { version: number; model: Model } | null = null;
  /** The outcome constraints' models of the current observations. */
  private outcomeModels: { version: number; models: OutcomeModel[] } | null = null;
  private version = 0;

  constructor(
    private readonly space: ParameterSpec[],
    private readonly objectives: ObjectiveSpec[],
    private readonly config: Config,
    private readonly seed: number,
    constraints: LinearConstraint[],
    private readonly outcomes: OutcomeConstraint[],
  ) {
    if (space.length > SOBOL_MAX_DIM) {
      throw new LabError('invalid_input', `gp handles up to ${SOBOL_MAX_DIM} parameters`, [{ field: 'parameters', message: `at most ${SOBOL_MAX_DIM} parameters` }]);
    }
    this.codec = new SpaceCodec(space);
    this.history = new History(this.codec, objectives, outcomes);
    this.pending = new Pending(this.codec);
    this.feasible = new FeasibleSpace(this.codec, constraints);
    const design = new SobolSequence(this.feasible.cubeDim, { seed, scramble: true });
    this.design = new FeasibleSequence(
      this.feasible,
      (i) => design.point(i),
      (j) => createRng(seed, 'gp-walk', j),
    );
    this.nInit = config.initial_points ?? space.length + 3;
  }

  observe(rows: { params: ParamValues; values: Record<string, number> }[]): void {
    this.pending.settle(this.history.add(rows));
    this.version++;
  }

  restore(r: { pending: ParamValues[]; discarded: ParamValues[] }): void {
    this.pending.restore(r);
    this.version++;
  }

  suggest(n: number): ParamValues[] {
    checkCount(n);
    const out: ParamValues[] = [];
    const start = this.history.total + this.pending.count;
    // initial design, and a fallback while fewer than two observations are usable; in a small discrete
    // space Sobol points can coincide, and repeats are skipped while the next points offer something new
    const taken = new Set([...this.history.rows, ...[...this.pending.list, ...this.pending.discarded].map((params) => ({ params }))].map((r) => this.codec.key(r.params)));
    let index = start;
    while (out.length < n && (start + out.length < this.nInit || this.history.rows.length < 2)) {
      let p = this.design.at(index++);
      for (let tries = 0; taken.has(this.codec.key(p)) && tries < 32; tries++) p = this.design.at(index++);
      taken.add(this.codec.key(p));
      out.push(p);
    }
    if (out.length < n) out.push(...this.suggestModel(n - out.length, out, createRng(this.seed, 'gp', start + out.length)));
    this.pending.add(out);
    return out;
  }

  /** n points from the model, given points already chosen in this call (fantasised with the pending ones). */
  private suggestModel(n: number, chosen: ParamValues[], rng: Rng): ParamValues[] {
    const out: ParamValues[] = [];
    const multi = this.objectives.length > 1;
    let m: Model | null = null;
    const outcomes = this.outcomeModelsNow();
    for (let j = 0; j < n; j++) {
      // one model per batch for one objective; a fresh scalarisation (and model) per point for several
      if (!m || multi) {
        m = multi ? this.fit(this.scalarised(rng), rng) : this.singleModel();
        for (const p of [...this.pending.list, ...chosen, ...out]) this.fantasise(m, this.codec.encode(p));
      }
      const exclude = new Set([...this.pending.list, ...chosen, ...out].map((p) => this.codec.key(p)));
      const opts: AcquisitionOptions = {
        codec: this.codec,
        feasible: this.feasible,
        rng,
        best: outcomes.length ? m.feasibleBest : m.best,
        outcomes,
        incumbents: m.incumbents,
        candidates: this.config.candidates,
        localStarts: this.config.local_starts,
        exclude,
      };
      let r = maximizeLogEI(m.post, opts);
      // one objective, one point at a time, nothing pending: the restart may take this step
      if (this.config.basin_restarts && !multi && !outcomes.length && n === 1 && !chosen.length && !this.pending.list.length) r = this.restart(m, r, opts) ?? r;
      out.push(this.codec.decode(r.x));
      if (!multi) this.fantasise(m, r.x);
    }
    return out;
  }

  /**
   * A basin restart: EI converges on the best basin it has found and stays there, though with few
   * observations in several dimensions another basin may be deeper (on Hartmann-6, a quarter of the runs
   * refine the local optimum at −3.20 to the end). When the main step `r` would re-measure a converged region
   * (posterior sd at r under CONVERGED_SD of the signal) while most of the space is unexplored, this step goes
   * to a model fitted to the observations outside the incumbent's basin (BASIN_RADIUS length scales), whose
   * own best EI improves on, with the basin excluded: a fresh search that has forgotten the basin. It keeps
   * the steps while it makes progress (STALL_*), otherwise the main search refines the incumbent. Returns
   * null when the main step stands.
   */
  private restart(m: Model, r: AcquisitionResult, opts: AcquisitionOptions): AcquisitionResult | null {
    const post = m.post;
    const sf = Math.sqrt(post.hyper.signal);
    if (!(post.predict(r.x, 1).sd[0]! < RESTART.CONVERGED_SD * sf)) return null;
    const D = this.codec.dim;
    // most of the space still unexplored? (in a well-covered space the model's confidence is earned)
    const probe = new SobolSequence(this.feasible.cubeDim, { seed: hashSeed(this.seed, 'gp-probe') });
    const P = new Float64Array(RESTART.PROBE * D);
    let k = 0;
    for (let scanned = 0; k < RESTART.PROBE && scanned < 4 * RESTART.PROBE; scanned++) {
      const p = this.feasible.fromCube(probe.next());
      if (p) this.codec.encode(p, P.subarray(k * D, ++k * D));
    }
    if (k < 16) return null;
    const { sd } = post.predict(P, k);
    let uncertain = 0;
    for (let i = 0; i < k; i++) if (sd[i]! > 0.5 * sf) uncertain++;
    if (uncertain <= RESTART.UNEXPLORED_SHARE * k) return null;

    const rows = this.history.rows;
    const n = rows.length;
    const X = this.inputs();
    const basin: Ball = { center: m.incumbents[0]!, lengthscales: post.hyper.lengthscales, radius: RESTART.BASIN_RADIUS };
    const outside = Array.from({ length: n }, (_, i) => i).filter((i) => ballDistance(basin, X, i * D) > basin.radius);
    if (outside.length < 3) return null;
    // stalled: the recent steps outside the basin closed too little of the gap to the best
    const loss = (i: number) => rows[i]!.loss[0]!;
    const from = n - RESTART.STALL_WINDOW;
    const recent = outside.filter((i) => i >= from);
    const earlier = outside.filter((i) => i < from);
    if (recent.length >= RESTART.STALL_COUNT && earlier.length) {
      const before = Math.min(...earlier.map(loss));
      const best = Math.min(...rows.map((_, i) => loss(i)));
      if (Math.min(...recent.map(loss)) > before - RESTART.STALL_PROGRESS * (before - best)) return null;
    }
    const alt = this.fit(outside.map(loss), createRng(this.seed, 'fit-restart', n), 'restart', outside);
    const r2 = maximizeLogEI(alt.post, { ...opts, best: alt.best, incumbents: alt.incumbents, avoid: basin });
    return Number.isFinite(r2.logEI) ? r2 : null;
  }

  /** Condition the model on a fantasy at x (constant liar: the incumbent; Kriging believer: the mean). */
  private fantasise(m: Model, x: Float64Array): void {
    const lie = this.config.batch_strategy === 'kriging_believer' ? m.post.predict(x, 1).mu[0]! : m.best;
    m.post.addPoint(x, lie);
  }

  /** The model of the single objective, fitted once per set of observations (a fresh copy each call). */
  private singleModel(): Model {
    if (!this.model || this.model.version !== this.version) {
      const rng = createRng(this.seed, 'fit', this.history.rows.length);
      this.model = {
        version: this.version,
        model: this.fit(
          this.history.rows.map((r) => r.loss[0]!),
          rng,
          'objective',
          undefined,
          true,
        ),
      };
    }
    const base = this.model.model;
    return { ...base, post: base.post.clone() }; // fantasies go to the copy
  }

  /** Model-space inputs of the observations (of the rows `idx`, when given). */
  private inputs(idx?: number[]): Float64Array {
    const D = this.codec.dim;
    const rows = idx ? idx.map((i) => this.history.rows[i]!) : this.history.rows;
    const X = new Float64Array(rows.length * D);
    rows.forEach((r, i) => this.codec.encode(r.params, X.subarray(i * D, i * D + D)));
    return X;
  }

  /** ParEGO: an augmented Chebyshev scalarisation of the objectives, with their weights or random ones. */
  private scalarised(rng: Rng): number[] {
    if (this.history.weighted) return this.history.scalarised();
    // λ uniform on the simplex (normalised exponentials)
    return this.history.scalarised(this.objectives.map(() => -Math.log(1 - rng.next())));
  }

  /** One GP per outcome constraint, on its margins (met where ≤ 0), fitted once per set of observations. */
  private outcomeModelsNow(): OutcomeModel[] {
    if (!this.outcomes.length) return [];
    if (this.outcomeModels?.version !== this.version) {
      const models = this.outcomes.map((c, k) => {
        const m = this.fit(
          this.history.rows.map((r) => r.margins[k]!),
          createRng(this.seed, 'fit-outcome', k, this.history.rows.length),
          `outcome ${k}`,
          undefined,
          true,
        );
        return { post: m.post, threshold: -m.yMean / m.ySd };
      });
      this.outcomeModels = { version: this.version, models };
    }
    return this.outcomeModels.models;
  }

  /**
   * Standardise the losses and fit the GP hyper-parameters (`key`: which quantity, for the warm start), on
   * every observation or on the rows `idx` (`loss` then holds theirs). With `keep` (the same quantity as
   * before over every row: the objective, an outcome), beyond FIT_MAX observations θ is kept until
   * REFIT_AFTER rows of its fit subset are new (a new observation joins it with probability FIT_MAX/n) or the
   * observations have grown by an eighth, and meanwhile the posterior grows by the new observations in
   * O(n²) each instead of a fit and an O(n³) factorisation.
   */
  private fit(loss: number[], rng: Rng, key = 'objective', idx?: number[], keep = false): Model {
    const n = loss.length;
    const D = this.codec.dim;
    const yMean = loss.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(loss.reduce((a, b) => a + (b - yMean) ** 2, 0) / Math.max(1, n - 1));
    const ySd = sd > 1e-12 * Math.max(1, Math.abs(yMean)) ? sd : 1;
    const y = Float64Array.from(loss, (v) => (v - yMean) / ySd);
    const X = this.inputs(idx);

    // starts: the previous optimum (with its curvature pairs), a default, and random ones while n is small
    const { lo, hi } = thetaBounds(D);
    const def = new Float64Array(D + 2).fill(Math.log(0.5));
    def[D] = 0;
    def[D + 1] = Math.log(1e-3);
    const random = (count: number): FitStart[] =>
      Array.from({ length: count }, () => {
        const t = new Float64Array(D + 2);
        for (let d = 0; d < D; d++) t[d] = Math.log(0.05) + rng.next() * (Math.log(2) - Math.log(0.05));
        t[D] = Math.log(0.3) + rng.next() * Math.log(10);
        t[D + 1] = Math.log(1e-5) + rng.next() * (Math.log(0.1) - Math.log(1e-5));
        for (let d = 0; d < D + 2; d++) t[d] = Math.min(hi[d]!, Math.max(lo[d]!, t[d]!));
        return { theta: t };
      });
    const restarts = this.config.fit_restarts;
    // beyond FIT_MAX observations the hyper-parameters are fitted on a fixed random subset of them (a new
    // observation joins it only if it draws a place): O(FIT_MAX³) per step, while the posterior uses all
    const sub = n > FIT_MAX ? this.subset(X, y, FIT_MAX) : null;
    const last = this.lastFit.get(key);
    const whole = keep && !idx;
    let theta: Float64Array;
    let pairs: FitStart['pairs'];
    let post: Posterior;
    let fitN = n;
    let subset = new Set(sub?.idx);
    if (whole && sub && last?.subset.size && sub.idx.filter((i) => !last.subset.has(i)).length < REFIT_AFTER && n <= last.fitN * 1.125) {
      ({ theta, pairs, fitN, subset } = last);
      post = last.post && last.post.n <= n ? Posterior.grow(last.post, X, n, y) : new Posterior(X, n, D, y, hyperOf(theta, D));
    } else {
      let starts: FitStart[];
      if (n <= 30) starts = [...(last ? [last] : []), { theta: def }, ...random(restarts)];
      else if (n <= 60) starts = [...(last ? [last] : []), { theta: def }, ...random(Math.ceil(restarts / 2))];
      else if (last) starts = [last, ...random(n <= 100 ? Math.min(1, restarts) : 0)];
      else {
        // a cold start on many observations (a warm-start history, a restart): fit a small subset first,
        // cheaply, and start the full fit from its optimum and curvature
        const small = this.subset(X, y, 48);
        const f0 = fitHyper(small.X, small.n, D, small.y, [{ theta: def }, ...random(Math.ceil(restarts / 2))], 100);
        starts = [{ theta: f0.theta, pairs: f0.pairs }];
      }
      const maxIter = n <= 50 ? 100 : n <= 100 ? 50 : 30;
      const fit = sub ? fitHyper(sub.X, sub.n, D, sub.y, starts, maxIter) : fitHyper(X, n, D, y, starts, maxIter);
      ({ theta, pairs } = fit);
      post = new Posterior(X, n, D, y, hyperOf(theta, D));
    }
    this.lastFit.set(key, { theta, pairs, fitN, subset, post: whole ? post : null });
    const mean = post.trainMean();
    const rows = idx ? idx.map((i) => this.history.rows[i]!) : this.history.rows;
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => mean[a]! - mean[b]!);
    const feasible = order.filter((i) => rows[i]!.feasible);
    return {
      post,
      theta,
      yMean,
      ySd,
      best: mean[order[0]!]!,
      feasibleBest: feasible.length ? mean[feasible[0]!]! : null,
      incumbents: [...feasible, ...order.filter((i) => !rows[i]!.feasible)].slice(0, 3).map((i) => X.slice(i * D, i * D + D)),
    };
  }

  /**
   * A fixed pseudo-random subset of m observations (ranked by a hash of the seed and the row index: a new
   * observation joins it only if it outranks one of its members).
   */
  private subset(X: Float64Array, y: Float64Array, m: number): { X: Float64Array; y: Float64Array; n: number; idx: number[] } {
    const D = this.codec.dim;
    const n = y.length;
    const rank = Array.from({ length: n }, (_, i) => hashSeed(this.seed, 'fit-subset', i));
    const idx = Array.from({ length: n }, (_, i) => i)
      .sort((a, b) => rank[a]! - rank[b]! || a - b)
      .slice(0, m)
      .sort((a, b) => a - b);
    const Xs = new Float64Array(idx.length * D);
    const ys = new Float64Array(idx.length);
    idx.forEach((i, k) => {
      Xs.set(X.subarray(i * D, i * D + D), k * D);
      ys[k] = y[i]!;
    });
    return { X: Xs, y: ys, n: idx.length, idx };
  }

  snapshot(): { [k: string]: JsonValue } {
    const multi = this.objectives.length > 1;
    const phase = this.history.total < this.nInit || this.history.rows.length < 2 ? 'initial' : 'model';
    const base = {
      optimizer: 'gp',
      phase,
      initial_points: this.nInit,
      pending: this.pending.list.length,
      ...this.history.summary(),
    };
    if (multi || this.history.rows.length < 2) return { ...base, recommended: null, model: null, surface: null };
    const m = this.singleModel();
    return { ...base, recommended: this.recommended(m), model: this.describe(m.post.hyper, m), surface: this.surface(m) };
  }

  /**
   * The observation the model rates best: the lowest posterior mean among those meeting the outcome
   * constraints (all of them when none does), with that mean and its sd in the objective's units. With
   * noisy measurements a better pick than the best single measurement (`best`), which noise flatters.
   */
  private recommended(m: Model): { [k: string]: JsonValue } {
    const rows = this.history.rows;
    const mean = m.post.trainMean();
    const pool = rows.some((r) => r.feasible) ? rows.map((_, i) => i).filter((i) => rows[i]!.feasible) : rows.map((_, i) => i);
    const i = pool.reduce((a, b) => (mean[b]! < mean[a]! ? b : a));
    const sign = this.objectives[0]!.minimize ? 1 : -1;
    const sd = m.post.predict(this.codec.encode(rows[i]!.params), 1).sd[0]!;
    return { params: { ...rows[i]!.params }, mean: ROUND(sign * (m.yMean + m.ySd * mean[i]!)), sd: ROUND(m.ySd * sd) };
  }

  /** Hyper-parameters in the user's units: length scales per parameter, signal and noise sd of the objective. */
  private describe(h: Hyper, m: Model): { [k: string]: JsonValue } {
    const ls: { [k: string]: JsonValue } = {};
    this.space.forEach((p, i) => {
      const o = this.codec.offsets[i]!;
      ls[p.name] =
        p.type === 'choice' ? p.choices!.map((_, k) => ROUND(h.lengthscales[o + k]!)) : ROUND(h.lengthscales[o]! * (p.log_scale ? Math.log(p.bounds![1] / p.bounds![0]) : p.bounds![1] - p.bounds![0]));
    });
    return { lengthscales: ls, signal_sd: ROUND(Math.sqrt(h.signal) * m.ySd), noise_sd: ROUND(Math.sqrt(h.noise) * m.ySd) };
  }

  /**
   * The model's mean and sd of the objective on a grid, for one or two range/int parameters (the campaign
   * page's surface plot): `x` (and `y`), `mean` and `sd` as arrays (2-D: mean[iy][ix]).
   */
  private surface(m: Model): { [k: string]: JsonValue } | null {
    if (this.space.length > 2 || this.space.some((p) => p.type === 'choice')) return null;
    const obj = this.objectives[0]!;
    const sign = obj.minimize ? 1 : -1;
    // the values the parameter can take, at most `size` of them, evenly spread in model space
    const axis = (p: ParameterSpec, size: number): number[] => {
      const x = new Float64Array(this.codec.dim);
      const o = this.codec.offsets[this.space.indexOf(p)]!;
      return [
        ...new Set(
          Array.from({ length: size }, (_, i) => {
            x[o] = i / (size - 1);
            return this.codec.decode(x)[p.name] as number;
          }),
        ),
      ];
    };
    const toUser = (mu: number, sd: number) => [ROUND(sign * (m.yMean + m.ySd * mu)), ROUND(m.ySd * sd)] as const;
    const post = m.post;
    if (this.space.length === 1) {
      const xs = axis(this.space[0]!, 50);
      const C = new Float64Array(xs.length);
      xs.forEach((v, i) => (C[i] = this.codec.encode({ [this.space[0]!.name]: v })[0]!));
      const p = post.predict(C, xs.length);
      const pairs = xs.map((_, i) => toUser(p.mu[i]!, p.sd[i]!));
      return { parameters: [this.space[0]!.name], objective: obj.name, x: xs.map(ROUND), mean: pairs.map((q) => q[0]), sd: pairs.map((q) => q[1]) };
    }
    const [px, py] = this.space as [ParameterSpec, ParameterSpec];
    const xs = axis(px, 25);
    const ys = axis(py, 25);
    const C = new Float64Array(xs.length * ys.length * 2);
    let c = 0;
    for (const yv of ys) for (const xv of xs) C.set(this.codec.encode({ [px.name]: xv, [py.name]: yv }), 2 * c++);
    const p = post.predict(C, xs.length * ys.length);
    const mean: number[][] = [];
    const sd: number[][] = [];
    ys.forEach((_, iy) => {
      const pairs = xs.map((__, ix) => toUser(p.mu[iy * xs.length + ix]!, p.sd[iy * xs.length + ix]!));
      mean.push(pairs.map((q) => q[0]));
      sd.push(pairs.map((q) => q[1]));
    });
    return { parameters: [px.name, py.name], objective: obj.name, x: xs.map(ROUND), y: ys.map(ROUND), mean, sd };
  }
}
