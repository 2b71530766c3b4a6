/**
 * Fitting the Gaussian process's hyper-parameters (the model is described in gp.ts): the Matérn-5/2 kernel's
 * bounds and priors, the Cholesky factor, the penalised log marginal likelihood with its analytic gradient, and
 * the multi-start L-BFGS fit.
 */
import { minimizeBox, type CurvaturePairs } from './lbfgs.js';

export const SQRT5 = Math.sqrt(5);
/** Observations the sd bound of `predictBound` conditions on. */
export const NEAR = 4;
const LOG_2PI = Math.log(2 * Math.PI);

/** Bounds of θ (natural units): inputs live in [0, 1], outputs are standardised. */
export const HYPER_BOUNDS = {
  lengthscale: [0.01, 20] as const,
  signal: [0.05, 20] as const,
  noise: [1e-5, 2] as const,
};
const PRIOR = { ls: [3, 6], signal: [2, 0.15], noise: [1.1, 0.05] } as const;

export interface Hyper {
  lengthscales: Float64Array;
  signal: number;
  noise: number;
}

export const hyperOf = (theta: ArrayLike<number>, D: number): Hyper => ({
  lengthscales: Float64Array.from({ length: D }, (_, d) => Math.exp(theta[d]!)),
  signal: Math.exp(theta[D]!),
  noise: Math.exp(theta[D + 1]!),
});

export function thetaBounds(D: number): { lo: Float64Array; hi: Float64Array } {
  const lo = new Float64Array(D + 2);
  const hi = new Float64Array(D + 2);
  lo.fill(Math.log(HYPER_BOUNDS.lengthscale[0]), 0, D);
  hi.fill(Math.log(HYPER_BOUNDS.lengthscale[1]), 0, D);
  lo[D] = Math.log(HYPER_BOUNDS.signal[0]);
  hi[D] = Math.log(HYPER_BOUNDS.signal[1]);
  lo[D + 1] = Math.log(HYPER_BOUNDS.noise[0]);
  hi[D + 1] = Math.log(HYPER_BOUNDS.noise[1]);
  return { lo, hi };
}

/** Lower Cholesky factor of the n×n symmetric matrix `K` (row-major; the upper triangle of the result is 0); null if not positive definite. */
export function cholesky(K: Float64Array, n: number): Float64Array | null {
  const L = Float64Array.from(K);
  if (!choleskyInPlace(L, n)) return null;
  for (let i = 0; i < n; i++) L.fill(0, i * n + i + 1, i * n + n);
  return L;
}

/** L⁻¹ of a lower-triangular L (row-major n×n; only its lower triangle is read), packed by rows: row i at offset i(i+1)/2. */
export function invertLowerPacked(L: Float64Array, n: number): Float64Array {
  // transpose once so the inner loops read contiguous memory
  const LT = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) LT[j * n + i] = L[i * n + j]!;
  const out = new Float64Array((n * (n + 1)) / 2);
  for (let i = 0, o = 0; i < n; o += ++i) {
    out[o + i] = 1 / LT[i * n + i]!;
    // L⁻¹ L = I, solved right to left: r[j] = −(Σ_{k=j+1..i} r[k] L[k][j]) / L[j][j]
    for (let j = i - 1; j >= 0; j--) {
      let s = 0;
      const base = j * n;
      for (let k = j + 1; k <= i; k++) s += out[o + k]! * LT[base + k]!;
      out[o + j] = -s / LT[base + j]!;
    }
  }
  return out;
}

/** Squared input differences per dimension for every pair i < j (packed), shared by all likelihood evaluations. */
export function pairDiffs(X: Float64Array, n: number, D: number): Float64Array {
  const P = (n * (n - 1)) / 2;
  const S = new Float64Array(P * D);
  let p = 0;
  for (let i = 1; i < n; i++) {
    for (let j = 0; j < i; j++, p++) {
      for (let d = 0; d < D; d++) {
        const t = X[i * D + d]! - X[j * D + d]!;
        S[d * P + p] = t * t;
      }
    }
  }
  return S;
}

/**
 * In-place lower Cholesky factorisation of the row-major n×n matrix A (its lower triangle becomes L; the
 * strict upper triangle is left as it was). The likelihood calls this tens of times per fit, on a reused
 * buffer: ml-matrix's CholeskyDecomposition (used for the posterior) costs about twice as much with the
 * copies in and out, which matters at a few hundred observations.
 */
export function choleskyInPlace(A: Float64Array, n: number): boolean {
  for (let j = 0; j < n; j++) {
    const rj = j * n;
    let d = A[rj + j]!;
    for (let k = 0; k < j; k++) {
      const rk = k * n;
      let s = A[rj + k]!;
      for (let i = 0; i < k; i++) s -= A[rk + i]! * A[rj + i]!;
      s /= A[rk + k]!;
      A[rj + k] = s;
      d -= s * s;
    }
    if (!(d > 0)) return false;
    A[rj + j] = Math.sqrt(d);
  }
  return true;
}

/**
 * The negative log posterior of θ (−log p(y|θ) − log prior, constants included) with its gradient in θ, as
 * a function that reuses its work buffers between calls. Returns Infinity when K is not positive definite.
 */
export function likelihood(S: Float64Array, y: Float64Array, n: number, D: number): (theta: Float64Array, grad: Float64Array) => number {
  const P = (n * (n - 1)) / 2;
  const invL2 = new Float64Array(D);
  const K = new Float64Array(n * n);
  const LT = new Float64Array(n * n);
  const Li = new Float64Array(n * n);
  const Kinv = new Float64Array(n * n);
  const G = new Float64Array(P); // σf²(5/3)(1 + √5 r)e^{−√5 r}: ∂k/∂log ℓ_d = G·S_d/ℓ_d²
  const Kp = new Float64Array(P);
  const zv = new Float64Array(n);
  const z1 = new Float64Array(n);
  const alpha = new Float64Array(n);
  const gLs = new Float64Array(D);
  return (theta, grad) => {
    for (let d = 0; d < D; d++) invL2[d] = Math.exp(-2 * theta[d]!);
    const sf2 = Math.exp(theta[D]!);
    const sn2 = Math.exp(theta[D + 1]!);
    let p = 0;
    for (let i = 1; i < n; i++) {
      for (let j = 0; j < i; j++, p++) {
        let r2 = 0;
        for (let d = 0; d < D; d++) r2 += S[d * P + p]! * invL2[d]!;
        const r = Math.sqrt(r2);
        const e = Math.exp(-SQRT5 * r);
        const k = sf2 * (1 + SQRT5 * r + (5 / 3) * r2) * e;
        K[i * n + j] = k;
        Kp[p] = k;
        G[p] = sf2 * (5 / 3) * (1 + SQRT5 * r) * e;
      }
    }
    for (let i = 0; i < n; i++) K[i * n + i] = sf2 + sn2;
    if (!choleskyInPlace(K, n)) return Infinity;
    // L⁻¹ by rows (L⁻¹L = I solved right to left), reading Lᵀ for contiguous memory
    for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) LT[j * n + i] = K[i * n + j]!;
    for (let i = 0; i < n; i++) {
      const ri = i * n;
      Li[ri + i] = 1 / LT[i * n + i]!;
      for (let j = i - 1; j >= 0; j--) {
        let s = 0;
        const rj = j * n;
        for (let k = j + 1; k <= i; k++) s += Li[ri + k]! * LT[rj + k]!;
        Li[ri + j] = -s / LT[rj + j]!;
      }
    }
    // constant mean m (generalised least squares, profiled out), then α = L⁻ᵀ L⁻¹ (y − m)
    for (let i = 0; i < n; i++) {
      let s = 0;
      let s1 = 0;
      const ri = i * n;
      for (let k = 0; k <= i; k++) {
        s += Li[ri + k]! * y[k]!;
        s1 += Li[ri + k]!;
      }
      zv[i] = s;
      z1[i] = s1;
    }
    const mHat = glsMean(zv, z1);
    for (let i = 0; i < n; i++) zv[i] = zv[i]! - mHat * z1[i]!;
    alpha.fill(0);
    for (let k = 0; k < n; k++) {
      const rk = k * n;
      const zk = zv[k]!;
      for (let i = 0; i <= k; i++) alpha[i] = alpha[i]! + Li[rk + i]! * zk;
    }
    let quad = 0;
    let logdet = 0;
    for (let i = 0; i < n; i++) {
      quad += zv[i]! * zv[i]!;
      logdet += 2 * Math.log(K[i * n + i]!);
    }
    // K⁻¹ (lower triangle) = Σ_k L⁻¹[k]ᵀ L⁻¹[k]
    Kinv.fill(0);
    for (let k = 0; k < n; k++) {
      const rk = k * n;
      for (let i = 0; i <= k; i++) {
        const v = Li[rk + i]!;
        const base = i * n;
        for (let j = 0; j <= i; j++) Kinv[base + j] = Kinv[base + j]! + v * Li[rk + j]!;
      }
    }
    // gradient: ½ Σ_ij W_ij ∂K_ij with W = K⁻¹ − ααᵀ (symmetric: off-diagonal pairs counted twice)
    let gDiag = 0;
    for (let i = 0; i < n; i++) gDiag += Kinv[i * n + i]! - alpha[i]! * alpha[i]!;
    let gSignal = 0;
    gLs.fill(0);
    p = 0;
    for (let i = 1; i < n; i++) {
      const ai = alpha[i]!;
      const base = i * n;
      for (let j = 0; j < i; j++, p++) {
        const w = Kinv[base + j]! - ai * alpha[j]!;
        gSignal += w * Kp[p]!;
        const wg = w * G[p]!;
        for (let d = 0; d < D; d++) gLs[d] = gLs[d]! + wg * S[d * P + p]!;
      }
    }
    const nlml = 0.5 * quad + 0.5 * logdet + 0.5 * n * LOG_2PI;
    for (let d = 0; d < D; d++) grad[d] = gLs[d]! * invL2[d]!; // (½·2) Σ_{i<j}
    grad[D] = gSignal + 0.5 * gDiag * sf2;
    grad[D + 1] = 0.5 * gDiag * sn2;
    // priors on the natural parameters, Gamma(a, b): log p = (a − 1) log s − b s (+ const); d/d log s = (a − 1) − b s
    let lp = 0;
    for (let d = 0; d < D; d++) {
      const l = Math.exp(theta[d]!);
      lp += (PRIOR.ls[0] - 1) * theta[d]! - PRIOR.ls[1] * l;
      grad[d] = grad[d]! - (PRIOR.ls[0] - 1 - PRIOR.ls[1] * l);
    }
    lp += (PRIOR.signal[0] - 1) * theta[D]! - PRIOR.signal[1] * sf2;
    grad[D] = grad[D]! - (PRIOR.signal[0] - 1 - PRIOR.signal[1] * sf2);
    lp += (PRIOR.noise[0] - 1) * theta[D + 1]! - PRIOR.noise[1] * sn2;
    grad[D + 1] = grad[D + 1]! - (PRIOR.noise[0] - 1 - PRIOR.noise[1] * sn2);
    return nlml - lp;
  };
}

/** One evaluation of `likelihood` (tests, one-off checks). */
export function negLogPosterior(theta: Float64Array, grad: Float64Array, S: Float64Array, y: Float64Array, n: number, D: number): number {
  return likelihood(S, y, n, D)(theta, grad);
}

/** GLS estimate of the constant mean, m = 1ᵀK⁻¹y / 1ᵀK⁻¹1, from L⁻¹y and L⁻¹1. */
export function glsMean(zy: Float64Array, z1: Float64Array): number {
  let a = 0;
  let b = 0;
  for (let i = 0; i < zy.length; i++) {
    a += z1[i]! * zy[i]!;
    b += z1[i]! * z1[i]!;
  }
  return b > 0 ? a / b : 0;
}

/**
 * The GP posterior for fixed hyper-parameters: training inputs (fantasies included), L⁻¹ packed by rows
 * (row i at offset i(i+1)/2), L⁻¹y and α.
 */

/** A start of the hyper-parameter fit, with the curvature pairs of the fit it comes from (if any). */
export interface FitStart {
  theta: Float64Array;
  pairs?: CurvaturePairs;
}

export interface FitResult {
  theta: Float64Array;
  value: number;
  evaluations: number;
  /** L-BFGS curvature pairs at the optimum: a warm start for the next fit. */
  pairs: CurvaturePairs;
}

/** Maximise the (penalised) marginal likelihood from each start; returns the best θ found. */
export function fitHyper(X: Float64Array, n: number, D: number, y: Float64Array, starts: FitStart[], maxIter: number): FitResult {
  const S = pairDiffs(X, n, D);
  const { lo, hi } = thetaBounds(D);
  const f = likelihood(S, y, n, D);
  let best: FitResult | null = null;
  let evaluations = 0;
  for (const s of starts) {
    const r = minimizeBox(f, s.theta, lo, hi, { maxIter, gtol: 1e-4, ftol: 1e-9, pairs: s.pairs });
    evaluations += r.evaluations;
    if (Number.isFinite(r.f) && (!best || r.f < best.value)) best = { theta: r.x, value: r.f, evaluations: 0, pairs: r.pairs };
  }
  if (!best) {
    // every start failed (should not happen with the noise floor): fall back to a smooth, noisy model
    const t = new Float64Array(D + 2).fill(Math.log(0.5));
    t[D] = 0;
    t[D + 1] = Math.log(0.1);
    best = { theta: t, value: Infinity, evaluations: 0, pairs: { S: [], Y: [] } };
  }
  return { ...best, evaluations };
}
