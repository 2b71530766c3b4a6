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
 */
import { minimizeBox } from './lbfgs.js';
import { logEI } from './normal.js';
import type { Posterior } from './gp.js';
import type { Rng } from './rng.js';
import { SobolSequence } from './sobol.js';
import type { SpaceCodec } from './space.js';

export interface AcquisitionOptions {
  codec: SpaceCodec;
  rng: Rng;
  /** Incumbent (standardised, minimisation) EI improves on. */
  best: number;
  /** Model-space points around which local candidates are drawn (best first). */
  incumbents: Float64Array[];
  candidates: number;
  localStarts: number;
  /** Keys (SpaceCodec.key) of points not to return. */
  exclude: Set<string>;
}

export interface AcquisitionResult {
  x: Float64Array;
  logEI: number;
}

const LOCAL_SCALES = [0.2, 0.05, 0.01, 0.002];

export function maximizeLogEI(post: Posterior, o: AcquisitionOptions): AcquisitionResult {
  const { codec, rng } = o;
  const D = codec.dim;
  const m = Math.max(8, o.candidates);
  const mLocal = o.incumbents.length ? Math.floor(m / 4) : 0;
  const mGlobal = m - mLocal;
  const C = new Float64Array(m * D);

  const sobol = new SobolSequence(codec.params.length, { seed: rng.uint32() });
  for (let c = 0; c < mGlobal; c++) codec.encode(codec.fromUnit(sobol.next()), C.subarray(c * D, c * D + D));
  for (let c = 0; c < mLocal; c++) {
    const x = C.subarray((mGlobal + c) * D, (mGlobal + c + 1) * D);
    x.set(o.incumbents[c % o.incumbents.length]!);
    const scale = LOCAL_SCALES[Math.floor(c / o.incumbents.length) % LOCAL_SCALES.length]!;
    for (const d of codec.numeric) x[d] = Math.min(1, Math.max(0, x[d]! + scale * rng.normal()));
    codec.params.forEach((p, i) => {
      if (p.type !== 'choice' || rng.next() > 0.2) return;
      const off = codec.offsets[i]!;
      const pick = rng.int(p.choices!.length);
      for (let k = 0; k < p.choices!.length; k++) x[off + k] = k === pick ? 1 : 0;
    });
    codec.snap(x);
  }

  const { mu, sd } = post.predict(C, m);
  const score = new Float64Array(m);
  for (let c = 0; c < m; c++) score[c] = logEI(mu[c]!, sd[c]!, o.best).value;
  const order = Array.from({ length: m }, (_, c) => c).sort((a, b) => score[b]! - score[a]!);

  const results: AcquisitionResult[] = [];
  const started = new Set<string>();
  for (const c of order) {
    if (started.size >= o.localStarts) break;
    const x0 = C.slice(c * D, c * D + D);
    const key = codec.key(codec.decode(x0));
    if (started.has(key)) continue;
    started.add(key);
    results.push(refine(post, codec, x0, o.best));
  }
  // the raw candidates stay in the running (refinement may round badly for ints)
  for (const c of order.slice(0, Math.max(64, o.localStarts))) results.push({ x: C.slice(c * D, c * D + D), logEI: score[c]! });
  results.sort((a, b) => b.logEI - a.logEI);
  for (const r of results) if (!o.exclude.has(codec.key(codec.decode(r.x)))) return r;
  for (const c of order) {
    const x = C.slice(c * D, c * D + D);
    if (!o.exclude.has(codec.key(codec.decode(x)))) return { x, logEI: score[c]! };
  }
  return results[0]!; // everything is excluded (a tiny discrete space): repeat the best
}

/** Local search from x0 on the numeric coordinates; returns the snapped result and its log EI. */
function refine(post: Posterior, codec: SpaceCodec, x0: Float64Array, best: number): AcquisitionResult {
  const idx = codec.numeric;
  const x = Float64Array.from(x0);
  if (idx.length) {
    const f = (u: Float64Array, g: Float64Array): number => {
      for (let i = 0; i < idx.length; i++) x[idx[i]!] = u[i]!;
      const p = post.predictWithGrad(x);
      const a = logEI(p.mu, p.sd, best);
      for (let i = 0; i < idx.length; i++) g[i] = -(a.dMu * p.dMu[idx[i]!]! + a.dSigma * p.dSd[idx[i]!]!);
      return -a.value;
    };
    const u0 = Float64Array.from(idx, (d) => x0[d]!);
    const r = minimizeBox(f, u0, new Float64Array(idx.length), new Float64Array(idx.length).fill(1), { maxIter: 40, gtol: 1e-7, ftol: 1e-9 });
    for (let i = 0; i < idx.length; i++) x[idx[i]!] = r.x[i]!;
  }
  codec.snap(x);
  const p = post.predict(x, 1);
  return { x, logEI: logEI(p.mu[0]!, p.sd[0]!, best).value };
}
