/**
 * Gaussian-process regression for Bayesian optimisation.
 *
 * Model: GP on standardised outputs with a constant mean (its generalised-least-squares estimate for the
 * current hyper-parameters, which discounts clusters of nearby points), Matérn-5/2 kernel with one length
 * scale per input (ARD), signal variance σf² and Gaussian noise σn²:
 *   k(x, x') = σf² (1 + √5 r + 5r²/3) exp(−√5 r),  r² = Σ_d (x_d − x'_d)² / ℓ_d².
 * Hyper-parameters θ = (log ℓ_1..log ℓ_D, log σf², log σn²) maximise the log marginal likelihood plus weak
 * priors (Gamma(3, 6) on each ℓ, Gamma(2, 0.15) on σf², Gamma(1.1, 0.05) on σn², the long-standing BoTorch
 * defaults), within bounds, from several starts, with analytic gradients:
 *   ∂ log p(y|θ)/∂θ = ½ tr((ααᵀ − K⁻¹) ∂K/∂θ),  α = K⁻¹(y − m)
 * (the mean is profiled out: at its optimum its own derivative vanishes). The noise floor (1e-5 of the
 * standardised variance) lets the model interpolate noise-free responses closely.
 * K is factored in place (Cholesky); the posterior keeps L⁻¹ (the inverse Cholesky factor) as packed
 * triangular rows, so that a batch of candidates costs one kernel row and one triangular product each, and an
 * observation (a fantasy of constant liar / Kriging believer, or a new measurement when the hyper-parameters
 * are kept: `grow`) is appended in O(n²) without refactoring:
 *   L' = [[L, 0], [lᵀ, d]] with l = L⁻¹k, d = √(k(x,x) + σn² − lᵀl), so L'⁻¹ gains the row [−lᵀL⁻¹/d, 1/d].
 */
import { NEAR, SQRT5, choleskyInPlace, glsMean, invertLowerPacked, type Hyper } from './gp-fit.js';

export { HYPER_BOUNDS, cholesky, fitHyper, hyperOf, invertLowerPacked, likelihood, negLogPosterior, pairDiffs, thetaBounds } from './gp-fit.js';
export type { FitResult, FitStart, Hyper } from './gp-fit.js';

export class Posterior {
  readonly D: number;
  readonly hyper: Hyper;
  private readonly invL2: Float64Array;
  /** Training inputs, row-major, grown by `addPoint`. */
  private X: Float64Array;
  n: number;
  private Lp: Float64Array;
  private z: Float64Array;
  private alphaCache: Float64Array | null = null;
  y: Float64Array;
  /** The constant prior mean (GLS estimate). */
  mean = 0;

  constructor(X: Float64Array, n: number, D: number, y: ArrayLike<number>, hyper: Hyper) {
    this.D = D;
    this.hyper = hyper;
    this.invL2 = hyper.lengthscales.map((l) => 1 / (l * l));
    this.X = Float64Array.from(X.subarray(0, n * D));
    this.n = n;
    this.y = Float64Array.from(y);
    // the lower triangle of K (row-major), factored in place; jitter until positive definite (only ever
    // needed for near-duplicate points at the lowest noise)
    const K = new Float64Array(n * n);
    const fill = (jitter: number) => {
      for (let i = 0; i < n; i++) {
        this.kernelRow(this.X.subarray(i * D, i * D + D), K.subarray(i * n, i * n + i), i);
        K[i * n + i] = hyper.signal + hyper.noise + jitter;
      }
    };
    let ok = false;
    for (let jitter = 0, tries = 0; !ok && tries < 8; tries++, jitter = jitter ? jitter * 10 : 1e-9 * hyper.signal) {
      fill(jitter);
      ok = choleskyInPlace(K, n);
    }
    if (!ok) throw new Error('covariance matrix is not positive definite');
    this.Lp = invertLowerPacked(K, n);
    this.z = new Float64Array(n);
    this.restandardise(this.y);
  }

  /**
   * The same hyper-parameters, more observations: `base` (no fantasies) grown to the n rows of X (whose first
   * base.n rows are base's inputs) with the outputs y (all of them: they may have been standardised anew), by
   * appending the new rows to L⁻¹ in O(n²) each instead of refactoring in O(n³).
   */
  static grow(base: Posterior, X: Float64Array, n: number, y: ArrayLike<number>): Posterior {
    const p = base.clone();
    const D = p.D;
    for (let i = base.n; i < n; i++) p.appendRow(X.subarray(i * D, i * D + D));
    p.restandardise(y);
    return p;
  }

  /** New outputs for the current inputs: the GLS mean and L⁻¹(y − m), in O(n²). */
  private restandardise(y: ArrayLike<number>): void {
    const n = this.n;
    this.y = Float64Array.from(y);
    const zy = new Float64Array(n);
    const z1 = new Float64Array(n);
    const ones = new Float64Array(n).fill(1);
    for (let i = 0; i < n; i++) {
      zy[i] = packedDot(this.Lp, i, this.y);
      z1[i] = packedDot(this.Lp, i, ones);
    }
    this.mean = glsMean(zy, z1);
    this.z = zy.map((v, i) => v - this.mean * z1[i]!);
    this.alphaCache = null;
  }

  /** An independent copy (to add fantasies to without touching the original), in O(n²). */
  clone(): Posterior {
    const c = Object.create(Posterior.prototype) as Posterior;
    Object.assign(c, this, { X: this.X.slice(), Lp: this.Lp.slice(), z: this.z.slice(), y: this.y.slice(), alphaCache: null });
    return c;
  }

  /** k(x, X_j) for j < count into out. */
  kernelRow(x: ArrayLike<number>, out: Float64Array, count = this.n): Float64Array {
    const { D, X, invL2 } = this;
    const sf2 = this.hyper.signal;
    for (let j = 0; j < count; j++) {
      let r2 = 0;
      const o = j * D;
      for (let d = 0; d < D; d++) {
        const t = x[d]! - X[o + d]!;
        r2 += t * t * invL2[d]!;
      }
      const r = Math.sqrt(r2);
      out[j] = sf2 * (1 + SQRT5 * r + (5 / 3) * r2) * Math.exp(-SQRT5 * r);
    }
    return out;
  }

  /** α = K⁻¹y = L⁻ᵀ(L⁻¹y). */
  get alpha(): Float64Array {
    if (this.alphaCache) return this.alphaCache;
    const a = new Float64Array(this.n);
    const Lp = this.Lp;
    for (let k = 0; k < this.n; k++) {
      const o = (k * (k + 1)) / 2;
      const zk = this.z[k]!;
      for (let i = 0; i <= k; i++) a[i] = a[i]! + Lp[o + i]! * zk;
    }
    return (this.alphaCache = a);
  }

  /** Posterior mean at the training points (noise removed): y − σn²α. */
  trainMean(): Float64Array {
    const a = this.alpha;
    return this.y.map((v, i) => v - this.hyper.noise * a[i]!);
  }

  /**
   * The mean at m points (row-major m×D) and an upper bound on their sd, in O(n·D) each instead of O(n²):
   * conditioning on fewer observations never lowers the posterior variance, so the variance given the
   * NEAR observations most correlated with a point bounds the variance given all of them from above.
   */
  predictBound(C: Float64Array, m: number): { mu: Float64Array; sdUpper: Float64Array } {
    const { n, D, X } = this;
    const alpha = this.alpha;
    const sf2 = this.hyper.signal;
    const diag = sf2 + this.hyper.noise;
    const floor = 1e-12 * sf2;
    const q = Math.min(NEAR, n);
    const invL2 = this.invL2;
    const mu = new Float64Array(m);
    const sdUpper = new Float64Array(m);
    const top = new Int32Array(q);
    const kS = new Float64Array(q);
    const A = new Float64Array(q * q);
    const v = new Float64Array(q);
    for (let c = 0; c < m; c++) {
      // k(x, X_j) for the mean, keeping the q largest (insertion into a short sorted list)
      const o = c * D;
      let s = 0;
      let filled = 0;
      for (let j = 0; j < n; j++) {
        let r2 = 0;
        for (let d = 0, oj = j * D; d < D; d++) {
          const t = C[o + d]! - X[oj + d]!;
          r2 += t * t * invL2[d]!;
        }
        const r = Math.sqrt(r2);
        const kj = sf2 * (1 + SQRT5 * r + (5 / 3) * r2) * Math.exp(-SQRT5 * r);
        s += kj * alpha[j]!;
        if (filled === q && kj <= kS[q - 1]!) continue;
        let at = filled < q ? filled++ : q - 1;
        while (at > 0 && kS[at - 1]! < kj) {
          kS[at] = kS[at - 1]!;
          top[at] = top[at - 1]!;
          at--;
        }
        kS[at] = kj;
        top[at] = j;
      }
      mu[c] = this.mean + s;
      // variance given those q observations: sf² − k_Sᵀ(K_SS + σn²I)⁻¹k_S, by a q×q Cholesky
      for (let a = 0; a < q; a++) {
        A[a * q + a] = diag;
        for (let b = 0; b < a; b++) A[a * q + b] = this.kernel(X, top[a]! * D, top[b]! * D);
      }
      let variance = sf2;
      if (choleskyInPlace(A, q)) {
        for (let a = 0; a < q; a++) {
          let t = kS[a]!;
          for (let b = 0; b < a; b++) t -= A[a * q + b]! * v[b]!;
          v[a] = t / A[a * q + a]!;
          variance -= v[a]! * v[a]!;
        }
      }
      // a hair of slack for rounding (and for the jitter a factorisation may have added)
      sdUpper[c] = Math.sqrt(Math.max(variance * (1 + 1e-9) + 1e-12 * sf2, floor));
    }
    return { mu, sdUpper };
  }

  /** k between two rows of a row-major input matrix (at offsets a and b). */
  private kernel(Xs: Float64Array, a: number, b: number): number {
    let r2 = 0;
    for (let d = 0; d < this.D; d++) {
      const t = Xs[a + d]! - Xs[b + d]!;
      r2 += t * t * this.invL2[d]!;
    }
    const r = Math.sqrt(r2);
    return this.hyper.signal * (1 + SQRT5 * r + (5 / 3) * r2) * Math.exp(-SQRT5 * r);
  }

  /**
   * Mean and standard deviation of the latent function at m points (row-major m×D). Candidates go through
   * the triangular product four at a time, so each row of L⁻¹ is read once per four candidates.
   */
  predict(C: Float64Array, m: number): { mu: Float64Array; sd: Float64Array } {
    const { n, D, Lp } = this;
    const alpha = this.alpha;
    const mu = new Float64Array(m);
    const sd = new Float64Array(m);
    const k = new Float64Array(n);
    const kk = new Float64Array(n * 4); // kernel rows of the block, interleaved: kk[4j + b]
    const floor = 1e-12 * this.hyper.signal;
    for (let c0 = 0; c0 < m; c0 += 4) {
      const B = Math.min(4, m - c0);
      kk.fill(0);
      for (let b = 0; b < B; b++) {
        const c = c0 + b;
        this.kernelRow(C.subarray(c * D, c * D + D), k);
        let s = 0;
        for (let j = 0; j < n; j++) {
          s += k[j]! * alpha[j]!;
          kk[4 * j + b] = k[j]!;
        }
        mu[c] = this.mean + s;
      }
      // ‖L⁻¹k‖² for the four candidates: one pass over the packed rows
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      let o = 0;
      for (let i = 0; i < n; i++) {
        let v0 = 0;
        let v1 = 0;
        let v2 = 0;
        let v3 = 0;
        for (let j = 0; j <= i; j++) {
          const l = Lp[o + j]!;
          const q = 4 * j;
          v0 += l * kk[q]!;
          v1 += l * kk[q + 1]!;
          v2 += l * kk[q + 2]!;
          v3 += l * kk[q + 3]!;
        }
        o += i + 1;
        a0 += v0 * v0;
        a1 += v1 * v1;
        a2 += v2 * v2;
        a3 += v3 * v3;
      }
      const acc = [a0, a1, a2, a3];
      for (let b = 0; b < B; b++) sd[c0 + b] = Math.sqrt(Math.max(this.hyper.signal - acc[b]!, floor));
    }
    return { mu, sd };
  }

  /** Mean, sd and their gradients in x at one point (for local search). */
  predictWithGrad(x: ArrayLike<number>): { mu: number; sd: number; dMu: Float64Array; dSd: Float64Array } {
    const { n, D, X, invL2, Lp } = this;
    const sf2 = this.hyper.signal;
    const alpha = this.alpha;
    const k = new Float64Array(n);
    const g = new Float64Array(n); // ∂k_j/∂x_d = −g_j (x_d − X_jd)/ℓ_d²
    for (let j = 0; j < n; j++) {
      let r2 = 0;
      for (let d = 0; d < D; d++) {
        const t = x[d]! - X[j * D + d]!;
        r2 += t * t * invL2[d]!;
      }
      const r = Math.sqrt(r2);
      const e = Math.exp(-SQRT5 * r);
      k[j] = sf2 * (1 + SQRT5 * r + (5 / 3) * r2) * e;
      g[j] = sf2 * (5 / 3) * (1 + SQRT5 * r) * e;
    }
    // v = L⁻¹k, w = L⁻ᵀv = K⁻¹k
    const w = new Float64Array(n);
    let vv = 0;
    let mu = this.mean;
    let o = 0;
    for (let i = 0; i < n; i++) {
      // v = (L⁻¹k)_i, then w += v·(row i of L⁻¹); four accumulators (the inner loops are most of the cost)
      let v0 = 0;
      let v1 = 0;
      let v2 = 0;
      let v3 = 0;
      let j = 0;
      for (; j + 3 <= i; j += 4) {
        v0 += Lp[o + j]! * k[j]!;
        v1 += Lp[o + j + 1]! * k[j + 1]!;
        v2 += Lp[o + j + 2]! * k[j + 2]!;
        v3 += Lp[o + j + 3]! * k[j + 3]!;
      }
      for (; j <= i; j++) v0 += Lp[o + j]! * k[j]!;
      const v = v0 + v1 + (v2 + v3);
      for (j = 0; j + 3 <= i; j += 4) {
        w[j] = w[j]! + Lp[o + j]! * v;
        w[j + 1] = w[j + 1]! + Lp[o + j + 1]! * v;
        w[j + 2] = w[j + 2]! + Lp[o + j + 2]! * v;
        w[j + 3] = w[j + 3]! + Lp[o + j + 3]! * v;
      }
      for (; j <= i; j++) w[j] = w[j]! + Lp[o + j]! * v;
      o += i + 1;
      vv += v * v;
      mu += k[i]! * alpha[i]!;
    }
    const variance = Math.max(sf2 - vv, 1e-12 * sf2);
    const sd = Math.sqrt(variance);
    const dMu = new Float64Array(D);
    const dVar = new Float64Array(D);
    for (let j = 0; j < n; j++) {
      const aj = alpha[j]! * g[j]!;
      const wj = w[j]! * g[j]!;
      for (let d = 0; d < D; d++) {
        const t = -(x[d]! - X[j * D + d]!) * invL2[d]!;
        dMu[d] = dMu[d]! + aj * t;
        dVar[d] = dVar[d]! - 2 * wj * t;
      }
    }
    const clamped = sf2 - vv <= 1e-12 * sf2;
    const dSd = dVar.map((v) => (clamped ? 0 : v / (2 * sd)));
    return { mu, sd, dMu, dSd };
  }

  /**
   * Append the input x to L⁻¹ and X (n grows by one; y and z are left to the caller); returns l = L⁻¹k and
   * the new diagonal d of L.
   */
  private appendRow(x: ArrayLike<number>): { l: Float64Array; d: number } {
    const { n, D, Lp } = this;
    const k = this.kernelRow(x, new Float64Array(n));
    const l = new Float64Array(n); // L⁻¹k
    let ll = 0;
    for (let i = 0; i < n; i++) {
      l[i] = packedDot(Lp, i, k);
      ll += l[i]! * l[i]!;
    }
    const d = Math.sqrt(Math.max(this.hyper.signal + this.hyper.noise - ll, 1e-10 * this.hyper.signal));
    // new row of L⁻¹: [−(lᵀ L⁻¹)/d, 1/d]
    const Lnew = new Float64Array(((n + 1) * (n + 2)) / 2);
    Lnew.set(Lp);
    const o = (n * (n + 1)) / 2;
    for (let i = 0; i < n; i++) {
      const oi = (i * (i + 1)) / 2;
      const li = l[i]!;
      for (let j = 0; j <= i; j++) Lnew[o + j] = Lnew[o + j]! - li * Lp[oi + j]!;
    }
    for (let j = 0; j < n; j++) Lnew[o + j] = Lnew[o + j]! / d;
    Lnew[o + n] = 1 / d;
    const X = new Float64Array((n + 1) * D);
    X.set(this.X.subarray(0, n * D));
    for (let t = 0; t < D; t++) X[n * D + t] = x[t]!;
    this.Lp = Lnew;
    this.X = X;
    this.n = n + 1;
    this.alphaCache = null;
    return { l, d };
  }

  /** Condition on one more (possibly fantasised) observation, in O(n²); the mean m stays as it was. */
  addPoint(x: ArrayLike<number>, yNew: number): void {
    const n = this.n;
    const { l, d } = this.appendRow(x);
    let lz = 0;
    for (let i = 0; i < n; i++) lz += l[i]! * this.z[i]!;
    const z = new Float64Array(n + 1);
    z.set(this.z);
    z[n] = (yNew - this.mean - lz) / d;
    const y = new Float64Array(n + 1);
    y.set(this.y);
    y[n] = yNew;
    this.z = z;
    this.y = y;
  }
}

/** Row i of a packed lower-triangular matrix times b[0..i]. */
function packedDot(Lp: Float64Array, i: number, b: Float64Array): number {
  const o = (i * (i + 1)) / 2;
  let s = 0;
  for (let j = 0; j <= i; j++) s += Lp[o + j]! * b[j]!;
  return s;
}
