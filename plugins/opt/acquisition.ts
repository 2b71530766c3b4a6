/**
 * Maximising log expected improvement over the search space.
 *
 * 1. Score many candidates at once: a scrambled Sobol set over the whole space (one coordinate per
 *    parameter, ints and choices drawn in equal bins), plus Gaussian perturbations of the best points seen
 *    so far at several scales (the region where the optimum is refined).
 * 2. Refine the best few by projected L-BFGS on −log EI with analytic gradients, moving the range and int
 *    coordinates (ints relaxed) with the choices held fixed; the result is snapped back (ints rounded) and
 *    scored again.
 * 3. Return the best point that is not excluded (already suggested in this batch or still pending).
 *
 * With outcome constraints the criterion is log EI + Σ log P(outcome meets its constraint), each outcome
 * modelled by its own GP (log P alone while no observation meets them all).
 *
 * With `avoid` (a ball in length-scale units, the converged incumbent's basin during a restart), points inside
 * it score −∞: they are never returned while any candidate lies outside.
 *
 * Under linear constraints every candidate is feasible (./polytope.ts): the Sobol set keeps its feasible
 * points (topped up by the feasible sampler in a thin polytope), a perturbation moves the constrained
 * parameters within the equalities (in z) and is pulled back towards its incumbent until it satisfies the
 * inequalities, and local search moves z within its bounding box with a quadratic penalty on the
 * inequalities, its result pulled back onto the segment from its (feasible) start.
 */
import { minimizeBox } from './lbfgs.js';
import { logEI, logPhi } from './normal.js';
import type { Posterior } from './gp.js';
import type { FeasibleSpace } from './polytope.js';
import type { Rng } from './rng.js';
import { SobolSequence } from './sobol.js';
import type { SpaceCodec } from './space.js';

/** A modelled outcome constraint: met where the model's value is at most `threshold` (standardised). */
export interface OutcomeModel {
  post: Posterior;
  threshold: number;
}

export interface AcquisitionOptions {
  codec: SpaceCodec;
  /** The constraints' feasible set: every candidate lies in it. */
  feasible: FeasibleSpace;
  rng: Rng;
  /**
   * Incumbent (standardised, minimisation) EI improves on; null when no observation meets the outcome
   * constraints yet (the probability of meeting them is maximised alone).
   */
  best: number | null;
  /** Outcome constraints: log EI + Σ log P(met) is maximised. */
  outcomes?: OutcomeModel[];
  /** Model-space points around which local candidates are drawn (best first). */
  incumbents: Float64Array[];
  candidates: number;
  localStarts: number;
  /** Keys (SpaceCodec.key) of points not to return. */
  exclude: Set<string>;
  /** A region the search keeps out of (its points score −∞). */
  avoid?: Ball;
}

/** The points within `radius` of `center` in the metric Σ_d ((x_d − c_d)/ℓ_d)² (model space, ℓ: length scales). */
export interface Ball {
  center: Float64Array;
  lengthscales: Float64Array;
  radius: number;
}

/** Distance from the ball's centre in its length-scale metric. */
export function ballDistance(b: Ball, x: ArrayLike<number>, offset = 0): number {
  let r2 = 0;
  for (let d = 0; d < b.center.length; d++) {
    const t = (x[offset + d]! - b.center[d]!) / b.lengthscales[d]!;
    r2 += t * t;
  }
  return Math.sqrt(r2);
}

export interface AcquisitionResult {
  x: Float64Array;
  logEI: number;
}

const LOCAL_SCALES = [0.2, 0.05, 0.01, 0.002];

export function maximizeLogEI(post: Posterior, o: AcquisitionOptions): AcquisitionResult {
  const { codec, rng, feasible } = o;
  const D = codec.dim;
  const m = Math.max(8, o.candidates);
  const incumbents = o.incumbents.filter((x) => feasible.feasibleModel(x)); // a warm start may hold infeasible points
  const mLocal = incumbents.length ? Math.floor(m / 4) : 0;
  const mGlobal = m - mLocal;
  const C = new Float64Array(m * D);

  const sobol = new SobolSequence(feasible.cubeDim, { seed: rng.uint32() });
  const row = (i: number) => C.subarray(i * D, i * D + D);
  let c = 0;
  for (let scanned = 0; c < mGlobal && scanned < 4 * mGlobal; scanned++) {
    const p = feasible.fromCube(sobol.next());
    if (p) codec.encode(p, row(c++));
  }
  for (; c < mGlobal / 4; c++) codec.encode(feasible.sample(rng), row(c)); // a thin polytope
  const zAt = feasible.modelAt();
  for (let j = 0; j < mLocal; j++, c++) {
    const x = row(c);
    const from = incumbents[j % incumbents.length]!;
    x.set(from);
    const scale = LOCAL_SCALES[Math.floor(j / incumbents.length) % LOCAL_SCALES.length]!;
    for (const d of codec.numeric) if (!zAt.includes(d)) x[d] = Math.min(1, Math.max(0, x[d]! + scale * rng.normal()));
    if (feasible.active) {
      const z = feasible.zOf(x).map((v) => v + scale * rng.normal());
      feasible.setZ(z, x);
      x.set(feasible.pullBack(from, x));
    }
    codec.params.forEach((p, i) => {
      if (p.type !== 'choice' || rng.next() > 0.2) return;
      const off = codec.offsets[i]!;
      const pick = rng.int(p.choices!.length);
      for (let k = 0; k < p.choices!.length; k++) x[off + k] = k === pick ? 1 : 0;
    });
    codec.snap(x);
  }
  const n = c;

  const { score, order } = rank(post, o, C, n, Math.max(RAW_KEPT, o.localStarts));

  const results: AcquisitionResult[] = [];
  const started = new Set<string>();
  for (const i of order) {
    if (started.size >= o.localStarts || score[i] === -Infinity) break;
    const x0 = C.slice(i * D, i * D + D);
    const key = codec.key(codec.decode(x0));
    if (started.has(key)) continue;
    started.add(key);
    results.push(refine(post, o, x0));
  }
  // the raw candidates stay in the running (refinement may round badly for ints)
  for (const i of order.slice(0, Math.max(RAW_KEPT, o.localStarts))) results.push({ x: C.slice(i * D, i * D + D), logEI: score[i]! });
  results.sort((a, b) => b.logEI - a.logEI);
  for (const r of results) if (!o.exclude.has(codec.key(codec.decode(r.x)))) return r;
  for (const i of order) {
    const x = C.slice(i * D, i * D + D);
    if (!o.exclude.has(codec.key(codec.decode(x)))) return { x, logEI: scoreAll(post, o, x, 1)[0]! };
  }
  return results[0]!; // everything is excluded (a tiny discrete space): repeat the best
}

/** Best raw candidates kept beside the refined ones. */
const RAW_KEPT = 64;
/** Observations from which candidates are screened by a bound before the exact criterion (see `rank`). */
const SCREEN_FROM = 64;
/** Candidates scored exactly at a time while screening. */
const SCREEN_BLOCK = 32;

/**
 * The candidates best first, with their criterion. The exact sd costs O(n²) per candidate (the triangular
 * product), so with many observations and EI alone they are screened: an upper bound on each one's log EI
 * from its exact mean and an upper bound on its sd (Posterior.predictBound, O(n·D)), then exact scores in
 * the bound's order until the `need`-th best exact score is at least the next bound. The first `need`
 * candidates of the order are then exactly those of a full evaluation; the rest follow in the bound's
 * order, scored by their bound.
 */
export function rank(post: Posterior, o: AcquisitionOptions, C: Float64Array, n: number, need: number): { score: Float64Array; order: number[] } {
  const byScore = (score: Float64Array, idx: number[]) => idx.sort((a, b) => score[b]! - score[a]! || a - b);
  const all = Array.from({ length: n }, (_, i) => i);
  if (o.best === null || o.outcomes?.length || post.n < SCREEN_FROM || n <= need) {
    const score = scoreAll(post, o, C, n);
    return { score, order: byScore(score, all) };
  }
  const D = post.D;
  const { mu, sdUpper } = post.predictBound(C, n);
  const score = new Float64Array(n);
  for (let i = 0; i < n; i++) score[i] = logEI(mu[i]!, sdUpper[i]!, o.best).value;
  const ball = o.avoid;
  if (ball) for (let i = 0; i < n; i++) if (ballDistance(ball, C, i * D) <= ball.radius) score[i] = -Infinity;
  const pending = byScore(Float64Array.from(score), all); // by bound
  const exact: number[] = [];
  const kth: number[] = []; // the best exact scores, at most `need`, descending
  let next = 0;
  while (next < n && score[pending[next]!]! > -Infinity && (kth.length < need || kth[need - 1]! < score[pending[next]!]!)) {
    const block = pending.slice(next, next + SCREEN_BLOCK);
    next += block.length;
    const Cb = new Float64Array(block.length * D);
    block.forEach((i, b) => Cb.set(C.subarray(i * D, i * D + D), b * D));
    const s = scoreAll(post, o, Cb, block.length);
    block.forEach((i, b) => {
      score[i] = s[b]!;
      exact.push(i);
      kth.push(s[b]!);
    });
    kth.sort((a, b) => b - a).length = Math.min(kth.length, need);
  }
  return { score, order: [...byScore(score, exact), ...pending.slice(next)] };
}

/** Weight of the penalty on violated inequalities during local search (the result is pulled back anyway). */
const PENALTY = 1e3;

/**
 * Local search from x0 on the numeric coordinates (the constrained ones through z); returns the snapped
 * result, pulled back into the feasible set, and its criterion.
 */
function refine(post: Posterior, o: AcquisitionOptions, x0: Float64Array): AcquisitionResult {
  const { codec, feasible } = o;
  const zAt = feasible.modelAt();
  const idx = codec.numeric.filter((d) => !zAt.includes(d));
  const k = feasible.active ? feasible.k : 0;
  const x = Float64Array.from(x0);
  if (idx.length + k) {
    const gModel = new Float64Array(codec.dim);
    const gz = new Float64Array(k);
    const f = (w: Float64Array, g: Float64Array): number => {
      for (let i = 0; i < idx.length; i++) x[idx[i]!] = w[i]!;
      const z = w.subarray(idx.length);
      if (k) feasible.setZ(z, x);
      const value = scoreWithGrad(post, o, x, gModel);
      for (let i = 0; i < idx.length; i++) g[i] = -gModel[idx[i]!]!;
      if (!k) return -value;
      feasible.zGrad(gModel, gz);
      const pg = new Float64Array(k);
      const pen = feasible.penalty(z, pg);
      for (let l = 0; l < k; l++) g[idx.length + l] = -gz[l]! + PENALTY * pg[l]!;
      return -value + PENALTY * pen;
    };
    const { lo: zlo, hi: zhi } = feasible.zBounds();
    const w0 = Float64Array.from([...idx.map((d) => x0[d]!), ...(k ? feasible.zOf(x0) : [])]);
    const lo = Float64Array.from([...idx.map(() => 0), ...(k ? zlo : [])]);
    const hi = Float64Array.from([...idx.map(() => 1), ...(k ? zhi : [])]);
    const r = minimizeBox(f, w0, lo, hi, { maxIter: 40, gtol: 1e-7, ftol: 1e-9 });
    for (let i = 0; i < idx.length; i++) x[idx[i]!] = r.x[i]!;
    if (k) {
      feasible.setZ(r.x.subarray(idx.length), x);
      x.set(feasible.pullBack(x0, x));
    }
  }
  codec.snap(x);
  return { x, logEI: scoreAll(post, o, x, 1)[0]! };
}

/** The criterion at n model-space points (rows of C). */
function scoreAll(post: Posterior, o: AcquisitionOptions, C: Float64Array, n: number): Float64Array {
  const out = new Float64Array(n);
  if (o.best !== null) {
    const { mu, sd } = post.predict(C, n);
    for (let i = 0; i < n; i++) out[i] = logEI(mu[i]!, sd[i]!, o.best).value;
  }
  for (const c of o.outcomes ?? []) {
    const { mu, sd } = c.post.predict(C, n);
    for (let i = 0; i < n; i++) out[i]! += logPhi((c.threshold - mu[i]!) / sd[i]!).value;
  }
  const ball = o.avoid;
  if (ball) for (let i = 0; i < n; i++) if (ballDistance(ball, C, i * ball.center.length) <= ball.radius) out[i] = -Infinity;
  return out;
}

/** The criterion at x, its gradient in model space written to `grad`. */
function scoreWithGrad(post: Posterior, o: AcquisitionOptions, x: Float64Array, grad: Float64Array): number {
  grad.fill(0);
  let value = 0;
  const add = (p: { dMu: ArrayLike<number>; dSd: ArrayLike<number> }, dMu: number, dSd: number) => {
    for (let d = 0; d < grad.length; d++) grad[d]! += dMu * p.dMu[d]! + dSd * p.dSd[d]!;
  };
  if (o.best !== null) {
    const p = post.predictWithGrad(x);
    const a = logEI(p.mu, p.sd, o.best);
    value += a.value;
    add(p, a.dMu, a.dSigma);
  }
  for (const c of o.outcomes ?? []) {
    const p = c.post.predictWithGrad(x);
    const z = (c.threshold - p.mu) / p.sd;
    const l = logPhi(z);
    value += l.value;
    add(p, -l.d / p.sd, (-l.d * z) / p.sd);
  }
  return value;
}
