/**
 * Bound-constrained minimisation: projected L-BFGS with an Armijo backtracking search along the projected
 * path. Variables at a bound whose gradient pushes outwards are held fixed for the step (the active set), the
 * quasi-Newton direction is computed on the free variables, and every trial point is projected into the box.
 * Used for the GP hyper-parameters (log space) and for refining the acquisition function.
 */

/** f(x, grad) returns the value and writes the gradient into `grad`. */
export type Objective = (x: Float64Array, grad: Float64Array) => number;

export interface MinimizeOptions {
  maxIter?: number;
  /** Stop when every free component of the gradient is below this. */
  gtol?: number;
  /** Stop when an iteration improves f by less than ftol·max(1, |f|). */
  ftol?: number;
  /** Number of correction pairs kept. */
  memory?: number;
  /** Curvature pairs from an earlier, similar problem (a warm start's approximate Hessian). */
  pairs?: CurvaturePairs;
}

export interface CurvaturePairs {
  S: Float64Array[];
  Y: Float64Array[];
}

export interface MinimizeResult {
  x: Float64Array;
  f: number;
  iterations: number;
  evaluations: number;
  pairs: CurvaturePairs;
}

export function minimizeBox(f: Objective, x0: ArrayLike<number>, lo: ArrayLike<number>, hi: ArrayLike<number>, opts: MinimizeOptions = {}): MinimizeResult {
  const n = x0.length;
  const maxIter = opts.maxIter ?? 100;
  const gtol = opts.gtol ?? 1e-6;
  const ftol = opts.ftol ?? 1e-10;
  const m = opts.memory ?? 8;
  const clamp = (v: number, i: number) => Math.min(hi[i]!, Math.max(lo[i]!, v));

  let x = Float64Array.from(x0, clamp);
  let g = new Float64Array(n);
  let fx = f(x, g);
  let evaluations = 1;
  const S: Float64Array[] = [];
  const Y: Float64Array[] = [];
  const rho: number[] = [];
  if (!Number.isFinite(fx)) return { x, f: fx, iterations: 0, evaluations, pairs: { S, Y } };
  for (let j = 0; j < (opts.pairs?.S.length ?? 0); j++) {
    const s = opts.pairs!.S[j]!;
    const y = opts.pairs!.Y[j]!;
    let sy = 0;
    for (let i = 0; i < n; i++) sy += s[i]! * y[i]!;
    if (s.length === n && sy > 1e-12) {
      S.push(s);
      Y.push(y);
      rho.push(1 / sy);
    }
  }
  while (S.length > m) {
    S.shift();
    Y.shift();
    rho.shift();
  }
  const free = new Uint8Array(n);
  const d = new Float64Array(n);
  const alpha = new Array<number>(m);
  let xt = new Float64Array(n);
  let gt = new Float64Array(n);
  let it = 0;

  for (; it < maxIter; it++) {
    let gmax = 0;
    for (let i = 0; i < n; i++) {
      const atLo = x[i]! <= lo[i]! && g[i]! > 0;
      const atHi = x[i]! >= hi[i]! && g[i]! < 0;
      free[i] = atLo || atHi ? 0 : 1;
      if (free[i]) gmax = Math.max(gmax, Math.abs(g[i]!));
    }
    if (gmax < gtol) break;

    // two-loop recursion on the free variables
    for (let i = 0; i < n; i++) d[i] = free[i] ? -g[i]! : 0;
    const k = S.length;
    for (let j = k - 1; j >= 0; j--) {
      let a = 0;
      for (let i = 0; i < n; i++) if (free[i]) a += S[j]![i]! * d[i]!;
      a *= rho[j]!;
      alpha[j] = a;
      for (let i = 0; i < n; i++) if (free[i]) d[i] = d[i]! - a * Y[j]![i]!;
    }
    if (k > 0) {
      let sy = 0;
      let yy = 0;
      for (let i = 0; i < n; i++) {
        sy += S[k - 1]![i]! * Y[k - 1]![i]!;
        yy += Y[k - 1]![i]! * Y[k - 1]![i]!;
      }
      const gamma = sy / yy;
      for (let i = 0; i < n; i++) d[i] = d[i]! * gamma;
    }
    for (let j = 0; j < k; j++) {
      let b = 0;
      for (let i = 0; i < n; i++) if (free[i]) b += Y[j]![i]! * d[i]!;
      b *= rho[j]!;
      for (let i = 0; i < n; i++) if (free[i]) d[i] = d[i]! + S[j]![i]! * (alpha[j]! - b);
    }
    let dg = 0;
    for (let i = 0; i < n; i++) dg += d[i]! * g[i]!;
    if (!(dg < 0)) {
      // not a descent direction: forget the curvature pairs and take steepest descent
      S.length = Y.length = rho.length = 0;
      for (let i = 0; i < n; i++) d[i] = free[i] ? -g[i]! : 0;
    }

    // backtracking along the projected path
    let t = S.length === 0 ? Math.min(1, 1 / Math.max(1e-12, norm(d))) : 1;
    let ft = NaN;
    let accepted = false;
    for (let ls = 0; ls < 30; ls++) {
      let decrease = 0;
      for (let i = 0; i < n; i++) {
        xt[i] = clamp(x[i]! + t * d[i]!, i);
        decrease += g[i]! * (xt[i]! - x[i]!);
      }
      ft = f(xt, gt);
      evaluations++;
      if (Number.isFinite(ft) && ft <= fx + 1e-4 * decrease) {
        accepted = true;
        break;
      }
      t *= ft > fx + 1e3 * Math.abs(fx) + 1e3 || !Number.isFinite(ft) ? 0.1 : 0.5;
    }
    if (!accepted) {
      if (S.length === 0) break;
      S.length = Y.length = rho.length = 0; // retry from steepest descent
      continue;
    }
    const s = new Float64Array(n);
    const y = new Float64Array(n);
    let sy = 0;
    for (let i = 0; i < n; i++) {
      s[i] = xt[i]! - x[i]!;
      y[i] = gt[i]! - g[i]!;
      sy += s[i]! * y[i]!;
    }
    if (sy > 1e-12) {
      if (S.length === m) {
        S.shift();
        Y.shift();
        rho.shift();
      }
      S.push(s);
      Y.push(y);
      rho.push(1 / sy);
    }
    const improvement = fx - ft;
    [x, xt] = [xt, x];
    [g, gt] = [gt, g];
    fx = ft;
    if (improvement < ftol * Math.max(1, Math.abs(fx))) {
      it++;
      break;
    }
  }
  return { x, f: fx, iterations: it, evaluations, pairs: { S, Y } };
}

function norm(v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  return Math.sqrt(s);
}
