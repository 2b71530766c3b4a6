/**
 * The standard normal distribution and a numerically safe log expected improvement.
 *
 * Expected improvement (for minimisation) at a point with posterior mean μ and standard deviation σ, below the
 * incumbent f*: EI = σ·h(z), z = (f* − μ)/σ, h(z) = φ(z) + z·Φ(z). For very negative z (points the model is
 * sure are worse) h underflows and the naive formula cancels catastrophically, which leaves an acquisition
 * surface of exact zeros with no gradient (Ament et al., "Unexpected improvements to expected improvement for
 * Bayesian optimization", NeurIPS 2023). Here log h is computed without cancellation:
 * - z > −1: directly, h = φ(z) + zΦ(z) (no cancellation there);
 * - z ≤ −1, t = −z: h(z) = φ(t)·c/(t + c), where c = 1/R(t) − t and R is Mills' ratio Φ(−t)/φ(t). c has the
 *   continued fraction 1/(t + 2/(t + 3/(t + ...))) (Laplace's fraction for R, one level down), which has no
 *   subtraction at all, so log h = −t²/2 − log√(2π) + log c − log(t + c) is accurate for every t ≥ 1 (and
 *   behaves like −t²/2 − 2·log t as t → ∞). Its derivative d log h/dz = Φ(z)/h(z) = 1/c.
 */

const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);
const SQRT1_2 = Math.SQRT1_2;

/** erfc(x) to near machine precision: Taylor series of erf for |x| < 2.5, Lentz's continued fraction beyond. */
export function erfc(x: number): number {
  if (x < 0) return 2 - erfc(-x);
  if (x < 2.5) {
    // erf(x) = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1))
    const x2 = x * x;
    let term = x;
    let sum = x;
    for (let n = 1; n < 100; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * sum;
  }
  if (x > 27) return 0;
  // erfc(x) = exp(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))
  return (Math.exp(-x * x) / Math.sqrt(Math.PI)) * contFrac(x, 0.5);
}

/** 1/(x + k/(x + 2k/(x + 3k/(x + ...)))) by the modified Lentz method. */
function contFrac(x: number, k: number): number {
  const tiny = 1e-300;
  let f = x;
  let C = x;
  let D = 0;
  for (let n = 1; n < 5000; n++) {
    const an = n * k;
    D = x + an * D;
    if (Math.abs(D) < tiny) D = tiny;
    C = x + an / C;
    if (Math.abs(C) < tiny) C = tiny;
    D = 1 / D;
    const delta = C * D;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return 1 / f;
}

export const normPdf = (z: number): number => Math.exp(-0.5 * z * z - LOG_SQRT_2PI);
export const normCdf = (z: number): number => 0.5 * erfc(-z * SQRT1_2);

/**
 * c(t) = 1/(t + 2/(t + 3/(t + ...))) for t ≥ 1 (see the module comment). Below t = 4 the fraction converges
 * slowly (hundreds of terms at t = 1), and c = 1/R(t) − t from erfc loses at most a digit there; beyond, the
 * fraction needs a few dozen terms and has no cancellation at all.
 */
function millsTail(t: number): number {
  if (t < 4) return 1 / (erfc(t * SQRT1_2) * Math.sqrt(Math.PI / 2) * Math.exp(0.5 * t * t)) - t;
  // Lentz's method with a_n = n + 1
  const tiny = 1e-300;
  let f = t;
  let C = t;
  let D = 0;
  for (let n = 2; n < 20000; n++) {
    D = t + n * D;
    if (Math.abs(D) < tiny) D = tiny;
    C = t + n / C;
    if (Math.abs(C) < tiny) C = tiny;
    D = 1 / D;
    const delta = C * D;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return 1 / f;
}

/** log h(z), h(z) = φ(z) + zΦ(z): finite for every finite z. */
export function logH(z: number): number {
  if (z > -1) return Math.log(normPdf(z) + z * normCdf(z));
  const t = -z;
  const c = millsTail(t);
  return -0.5 * t * t - LOG_SQRT_2PI + Math.log(c) - Math.log(t + c);
}

/** d log h / dz = Φ(z)/h(z), always positive and finite. */
export function dLogH(z: number): number {
  if (z > -1) return normCdf(z) / (normPdf(z) + z * normCdf(z));
  return 1 / millsTail(-z);
}

/**
 * log EI for minimisation below `best`, with its partial derivatives in μ and σ
 * (∂/∂μ = −h'/(σh), ∂/∂σ = 1/σ − z·h'/(σh)).
 */
export function logEI(mu: number, sigma: number, best: number): { value: number; dMu: number; dSigma: number } {
  const z = (best - mu) / sigma;
  const lh = logH(z);
  const g = dLogH(z);
  return { value: lh + Math.log(sigma), dMu: -g / sigma, dSigma: (1 - z * g) / sigma };
}

/**
 * log Φ(z) and its derivative φ(z)/Φ(z), finite for every finite z (the probability that a modelled
 * outcome meets its constraint). Below z = −1: Φ(z)/φ(z) = 1/(t + c(t)) with t = −z.
 */
export function logPhi(z: number): { value: number; d: number } {
  if (z > -1) {
    const p = normCdf(z);
    return { value: Math.log(p), d: normPdf(z) / p };
  }
  const t = -z;
  const c = millsTail(t);
  return { value: -0.5 * t * t - LOG_SQRT_2PI - Math.log(t + c), d: t + c };
}
