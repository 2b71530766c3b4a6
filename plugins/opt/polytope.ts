/**
 * The feasible part of a search space under linear constraints, and sampling in it (issue 14).
 *
 * Coordinates. The unit cube has one coordinate per parameter (SpaceCodec.fromUnit); for a range parameter
 * it is also its GP model-space coordinate. Constraints only involve continuous range parameters, S. Their
 * unit coordinates are written u_S = u0 + N·z: u0 satisfies the equalities and N (orthonormal columns) spans
 * their null space, so every z satisfies the equalities exactly. The box 0 ≤ u_S ≤ 1 and the inequalities
 * become G·z ≤ h (rows of unit length). Linear programs (a small dense simplex) say whether that polytope is
 * empty (the campaign is refused before it starts), give its bounding box [zlo, zhi] and its Chebyshev centre
 * (the point deepest inside).
 *
 * The sampler cube: the other parameters' unit coordinates, then z scaled to its bounding box. A cube point
 * is feasible when G·z ≤ h. `random` draws cube points until one is feasible (uniform in the polytope),
 * `sobol` takes the feasible points of its sequence in order; when fewer than 1 in 100 land inside (a thin
 * polytope), a hit-and-run walk from the centre (seeded, so reproducible) gives the point instead; every
 * other step of the walk follows the line between two extreme points (the LP optima), so it travels the
 * length of a thin polytope rather than bouncing across it.
 *
 * Tolerance: a point is feasible when every row of G·z − h is at most 1e-12 (unit rows in unit coordinates),
 * well inside CONSTRAINT_TOLERANCE (1e-9 of a constraint's spread over the box).
 */
import { LabError, type LinearConstraint, type ParamValues } from '../../core/contracts/index.js';
import { linprog } from '../../core/contracts/linprog.js';
import type { Rng } from './rng.js';
import type { SpaceCodec } from './space.js';

const INSIDE = 1e-12;
/** Cube draws per point before hit-and-run takes over. */
const TRIES = 100;

export { linprog } from '../../core/contracts/linprog.js';

const infeasible = (message: string) => new LabError('invalid_input', `parameter_constraints: ${message}`, [{ field: 'parameter_constraints', message }]);

export class FeasibleSpace {
  readonly codec: SpaceCodec;
  /** Indices (in codec.params) of the constrained parameters, and of the others. */
  readonly constrained: number[];
  readonly free: number[];
  /** Dimension of z, and of the sampler cube (free parameters + z). */
  readonly k: number;
  readonly cubeDim: number;
  private readonly u0: Float64Array;
  /** N, |S| × k, row-major. */
  private readonly N: Float64Array;
  private readonly G: number[][] = [];
  private readonly h: number[] = [];
  private readonly zlo: Float64Array;
  private readonly zhi: Float64Array;
  private readonly center: Float64Array;
  /** Extreme points of the polytope (the LP optima): their differences are long directions in a thin polytope. */
  private readonly extremes: Float64Array[] = [];

  constructor(codec: SpaceCodec, constraints: LinearConstraint[]) {
    this.codec = codec;
    const names = new Set(constraints.flatMap((c) => Object.keys(c.coefficients)));
    this.constrained = codec.params.flatMap((p, i) => (names.has(p.name) ? [i] : []));
    this.free = codec.params.flatMap((p, i) => (names.has(p.name) ? [] : [i]));
    const s = this.constrained.length;
    // each constraint in unit coordinates: Σ a_j·u_j (op) r, a of unit length
    const rows = constraints.map((c) => {
      const a = new Float64Array(s);
      let r = c.rhs;
      this.constrained.forEach((pi, j) => {
        const p = codec.params[pi]!;
        const coef = c.coefficients[p.name] ?? 0;
        const [lo, hi] = p.bounds!;
        a[j] = coef * (hi - lo);
        r -= coef * lo;
      });
      const norm = Math.hypot(...a);
      return { a: a.map((v) => v / norm), r: r / norm, eq: c.op === '==', text: c.text };
    });
    // equalities: Gram-Schmidt on their rows gives u0 (the least-norm solution) and the null space N
    const Q: Float64Array[] = [];
    const g: number[] = [];
    for (const row of rows.filter((x) => x.eq)) {
      const v = Float64Array.from(row.a);
      let r = row.r;
      Q.forEach((q, i) => {
        const d = dot(v, q);
        for (let j = 0; j < s; j++) v[j]! -= d * q[j]!;
        r -= d * g[i]!;
      });
      const norm = Math.hypot(...v);
      if (norm < 1e-9) {
        if (Math.abs(r) > 1e-9) throw infeasible(`"${row.text}" contradicts the equalities before it`);
        continue;
      }
      Q.push(v.map((x) => x / norm));
      g.push(r / norm);
    }
    this.u0 = new Float64Array(s);
    Q.forEach((q, i) => q.forEach((x, j) => (this.u0[j]! += g[i]! * x)));
    const basis: Float64Array[] = [];
    for (let e = 0; e < s && Q.length + basis.length < s; e++) {
      const v = new Float64Array(s);
      v[e] = 1;
      for (const q of [...Q, ...basis]) {
        const d = dot(v, q);
        for (let j = 0; j < s; j++) v[j]! -= d * q[j]!;
      }
      const norm = Math.hypot(...v);
      if (norm > 1e-6) basis.push(v.map((x) => x / norm));
    }
    this.k = basis.length;
    this.cubeDim = this.free.length + this.k;
    this.N = new Float64Array(s * this.k);
    basis.forEach((v, l) => v.forEach((x, j) => (this.N[j * this.k + l] = x)));
    // inequalities in z: a·(u0 + N z) ≤ r, and the box 0 ≤ u0 + N z ≤ 1
    const addRow = (a: Float64Array, r: number, text: string) => {
      const gz = Array.from({ length: this.k }, (_, l) => a.reduce((acc, x, j) => acc + x * this.N[j * this.k + l]!, 0));
      const rhs = r - dot(a, this.u0);
      const norm = Math.hypot(...gz);
      if (norm < 1e-9) {
        if (rhs < -1e-9) throw infeasible(`"${text}" cannot hold together with the equalities`);
        return;
      }
      this.G.push(gz.map((x) => x / norm));
      this.h.push(rhs / norm);
    };
    for (const row of rows) if (!row.eq) addRow(row.a, row.r, row.text);
    this.constrained.forEach((pi, j) => {
      const e = new Float64Array(s);
      e[j] = 1;
      const name = codec.params[pi]!.name;
      addRow(e, 1, `${name} ≤ its upper bound`);
      e[j] = -1;
      addRow(e, 0, `${name} ≥ its lower bound`);
    });
    this.zlo = new Float64Array(this.k);
    this.zhi = new Float64Array(this.k);
    this.center = new Float64Array(this.k);
    if (!s) return;
    // LPs over y = z + R ≥ 0 (|z| ≤ R on the box): the centre first (which also says whether any point exists)
    const R = Math.sqrt(s) + Math.hypot(...this.u0) + 1;
    const hy = this.G.map((row, i) => this.h[i]! + R * row.reduce((a, b) => a + b, 0));
    const centre = linprog(
      this.G.map((row) => [...row, 1]),
      hy,
      [...new Array<number>(this.k).fill(0), 1],
    );
    if (!centre) {
      throw infeasible(`no point within the bounds satisfies all of ${constraints.map((c) => `"${c.text}"`).join(', ')} at once`);
    }
    for (let l = 0; l < this.k; l++) this.center[l] = centre.x[l]! - R;
    for (let l = 0; l < this.k; l++) {
      const c = new Array<number>(this.k).fill(0);
      c[l] = 1;
      const hi = linprog(this.G, hy, c);
      c[l] = -1;
      const lo = linprog(this.G, hy, c);
      this.zhi[l] = hi ? hi.value - R : this.center[l]!;
      this.zlo[l] = lo ? -lo.value - R : this.center[l]!;
      for (const r of [hi, lo]) if (r) this.extremes.push(Float64Array.from(r.x, (v) => v - R));
    }
  }

  /** Whether any parameter is constrained. */
  get active(): boolean {
    return this.constrained.length > 0;
  }

  private feasibleZ(z: ArrayLike<number>): boolean {
    for (let i = 0; i < this.G.length; i++) {
      const row = this.G[i]!;
      let a = -this.h[i]!;
      for (let l = 0; l < this.k; l++) a += row[l]! * z[l]!;
      if (a > INSIDE) return false;
    }
    return true;
  }

  /** A sampler-cube point → the unit-cube point (one coordinate per parameter), or null when infeasible. */
  private unitOfCube(v: ArrayLike<number>): Float64Array | null {
    const u = new Float64Array(this.codec.params.length);
    this.free.forEach((pi, i) => (u[pi] = v[i]!));
    const z = Float64Array.from({ length: this.k }, (_, l) => this.zlo[l]! + v[this.free.length + l]! * (this.zhi[l]! - this.zlo[l]!));
    if (!this.feasibleZ(z)) return null;
    this.writeZ(
      z,
      u,
      this.constrained.map((pi) => pi),
    );
    return u;
  }

  /** u_S = u0 + N z, written at the given coordinates of `out` (clamped to [0, 1] against rounding). */
  private writeZ(z: ArrayLike<number>, out: Float64Array, at: number[]): void {
    at.forEach((o, j) => {
      let v = this.u0[j]!;
      for (let l = 0; l < this.k; l++) v += this.N[j * this.k + l]! * z[l]!;
      out[o] = Math.min(1, Math.max(0, v));
    });
  }

  /** A sampler-cube point → parameter values, or null when it falls outside the constraints. */
  fromCube(v: ArrayLike<number>): ParamValues | null {
    if (!this.active) return this.codec.fromUnit(v);
    const u = this.unitOfCube(v);
    return u && this.codec.fromUnit(u);
  }

  /** A random feasible point: uniform cube draws until one is inside, else a hit-and-run walk. */
  sample(rng: Rng): ParamValues {
    for (let t = 0; t < (this.active ? TRIES : 1); t++) {
      const p = this.fromCube(Array.from({ length: this.cubeDim }, () => rng.next()));
      if (p) return p;
    }
    return this.walk(rng);
  }

  /** A point from a hit-and-run walk started at the centre (free parameters uniform). */
  walk(rng: Rng): ParamValues {
    const z = Float64Array.from(this.center);
    const d = new Float64Array(this.k);
    for (let step = 0; step < 20 * this.k + 20; step++) {
      // every other step along the line between two extreme points (long moves in a thin polytope)
      const [a, b] = [this.extremes[rng.int(this.extremes.length)]!, this.extremes[rng.int(this.extremes.length)]!];
      for (let l = 0; l < this.k; l++) d[l] = step % 2 && a !== b ? a[l]! - b[l]! : rng.normal();
      let lo = -Infinity;
      let hi = Infinity;
      this.G.forEach((row, i) => {
        let gd = 0;
        let gz = 0;
        for (let l = 0; l < this.k; l++) {
          gd += row[l]! * d[l]!;
          gz += row[l]! * z[l]!;
        }
        const slack = Math.max(0, this.h[i]! - gz);
        if (gd > 1e-15) hi = Math.min(hi, slack / gd);
        else if (gd < -1e-15) lo = Math.max(lo, slack / gd);
      });
      if (!(hi > lo) || !Number.isFinite(hi) || !Number.isFinite(lo)) continue;
      const t = lo + rng.next() * (hi - lo);
      for (let l = 0; l < this.k; l++) z[l]! += t * d[l]!;
    }
    const u = new Float64Array(this.codec.params.length);
    this.free.forEach((pi) => (u[pi] = rng.next()));
    this.writeZ(z, u, this.constrained);
    return this.codec.fromUnit(u);
  }

  /* ------------------------------------------------------------ the GP's model space */

  /** Model-space coordinates of the constrained parameters. */
  modelAt(): number[] {
    return this.constrained.map((pi) => this.codec.offsets[pi]!);
  }

  /** The gradient with respect to z of a function of the model-space point, from its model-space gradient. */
  zGrad(gModel: ArrayLike<number>, out: Float64Array): void {
    out.fill(0);
    this.modelAt().forEach((o, j) => {
      for (let l = 0; l < this.k; l++) out[l]! += gModel[o]! * this.N[j * this.k + l]!;
    });
  }

  /** z of a model-space point: Nᵀ(u_S − u0). */
  zOf(x: ArrayLike<number>): Float64Array {
    const at = this.modelAt();
    const z = new Float64Array(this.k);
    at.forEach((o, j) => {
      const du = x[o]! - this.u0[j]!;
      for (let l = 0; l < this.k; l++) z[l]! += this.N[j * this.k + l]! * du;
    });
    return z;
  }

  /** Set the constrained coordinates of a model-space point from z. */
  setZ(z: ArrayLike<number>, x: Float64Array): void {
    this.writeZ(z, x, this.modelAt());
  }

  /** Bounds of z (its bounding box). */
  zBounds(): { lo: Float64Array; hi: Float64Array } {
    return { lo: Float64Array.from(this.zlo), hi: Float64Array.from(this.zhi) };
  }

  /** Σ max(0, G z − h)², and its gradient added to `grad`. */
  penalty(z: ArrayLike<number>, grad: Float64Array): number {
    let total = 0;
    this.G.forEach((row, i) => {
      let a = -this.h[i]!;
      for (let l = 0; l < this.k; l++) a += row[l]! * z[l]!;
      if (a <= 0) return;
      total += a * a;
      for (let l = 0; l < this.k; l++) grad[l]! += 2 * a * row[l]!;
    });
    return total;
  }

  /** Whether a model-space point satisfies the constraints (equalities included). */
  feasibleModel(x: ArrayLike<number>): boolean {
    if (!this.active) return true;
    const z = this.zOf(x);
    if (!this.feasibleZ(z)) return false;
    const back = Float64Array.from(x);
    this.setZ(z, back);
    return this.modelAt().every((o) => Math.abs(back[o]! - x[o]!) < 1e-9);
  }

  /**
   * The feasible point nearest `x` on the segment from the feasible `from` (the set is convex): `x` itself
   * when it is feasible. Only the constrained coordinates move.
   */
  pullBack(from: Float64Array, x: Float64Array): Float64Array {
    if (this.feasibleModel(x)) return x;
    const z0 = this.zOf(from);
    const z1 = this.zOf(x);
    let lo = 0;
    let hi = 1;
    const z = new Float64Array(this.k);
    const at = (t: number) => {
      for (let l = 0; l < this.k; l++) z[l] = z0[l]! + t * (z1[l]! - z0[l]!);
      return z;
    };
    for (let it = 0; it < 40; it++) {
      const mid = (lo + hi) / 2;
      if (this.feasibleZ(at(mid))) lo = mid;
      else hi = mid;
    }
    const out = Float64Array.from(x);
    this.setZ(at(lo), out);
    return out;
  }
}

/**
 * The feasible points of a quasi-random sequence, in order: the j-th is the j-th point of `point(i)` that
 * lies inside; when fewer than 1 in 100 do, a seeded hit-and-run point stands in for it.
 */
export class FeasibleSequence {
  private readonly accepted: { p: ParamValues; i: number }[] = [];
  private scanned = 0;

  constructor(
    private readonly space: FeasibleSpace,
    private readonly point: (i: number) => ArrayLike<number>,
    private readonly fallback: (j: number) => Rng,
  ) {}

  /** The j-th point: a function of j alone (the j-th feasible one among the first 100·(j + 1) + 1000). */
  at(j: number): ParamValues {
    const limit = TRIES * (j + 1) + 1000;
    while (this.accepted.length <= j && this.scanned < limit) {
      const p = this.space.fromCube(this.point(this.scanned));
      if (p) this.accepted.push({ p, i: this.scanned });
      this.scanned++;
    }
    const hit = this.accepted[j];
    return hit && hit.i < limit ? hit.p : this.space.walk(this.fallback(j));
  }
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
