/**
 * How far a campaign's constrained search space reaches (issue 28 item 3): with linear parameter constraints
 * the optimizer suggests only points of the polytope box ∩ constraints, so what a parameter can be sent is
 * its least and greatest value over that polytope, not its range's ends. Each is a small linear program
 * (core/contracts/linprog.ts), solved in unit coordinates (u = (x − low)/(high − low) in [0, 1], each row
 * scaled to unit length) so that no parameter's units swamp another's.
 *
 * It errs towards refusing: when a program cannot be solved, the range's ends stand in for the extent (the
 * polytope lies inside the box). An empty polytope reaches nothing (the optimizer refuses such a campaign on
 * its own).
 */
import { linprog } from '../contracts/linprog.js';
import type { LinearConstraint, ParameterSpec } from '../contracts/index.js';

/** How much an equality may be missed by, in unit coordinates (rows of unit length), as the optimizers do. */
const SLACK = 1e-12;

/** Rounded to 12 significant digits: 120.00000000000001 from a simplex is the 120 the constraints say. */
const tidy = (v: number) => Number(v.toPrecision(12));

export type Extents = { empty: true } | { empty: false; range: Map<string, [number, number]> };

/**
 * The least and greatest value each constrained range parameter takes over the polytope (only the parameters
 * some constraint names; the others reach their range's ends).
 */
export function extents(space: readonly ParameterSpec[], constraints: readonly LinearConstraint[]): Extents {
  const names = new Set(constraints.flatMap((c) => Object.keys(c.coefficients)));
  const params = space.filter((p) => names.has(p.name) && p.type === 'range' && p.bounds);
  const range = new Map<string, [number, number]>();
  if (!params.length) return { empty: false, range };
  const n = params.length;
  const A: number[][] = [];
  const b: number[] = [];
  const row = (a: number[], r: number) => {
    const scale = Math.hypot(...a);
    if (scale === 0) {
      if (r < 0) {
        // 0 ≤ r broken: nothing is feasible
        A.push(new Array<number>(n).fill(0));
        b.push(-1);
      }
      return;
    }
    A.push(a.map((x) => x / scale));
    b.push(r / scale);
  };
  for (const c of constraints) {
    // Σ coef·(low + u·(high − low)) op rhs  →  Σ coef·(high − low)·u op rhs − Σ coef·low
    let r = c.rhs;
    const a = params.map((p) => {
      const coef = c.coefficients[p.name] ?? 0;
      const [lo, hi] = p.bounds!;
      r -= coef * lo;
      return coef * (hi - lo);
    });
    if (c.op === '==') {
      row(a, r + SLACK);
      row(
        a.map((x) => -x),
        -r + SLACK,
      );
    } else row(a, r);
  }
  params.forEach((_, j) =>
    row(
      params.map((__, k) => (k === j ? 1 : 0)),
      1,
    ),
  );
  for (const [j, p] of params.entries()) {
    const [lo, hi] = p.bounds!;
    const up = params.map((__, k) => (k === j ? 1 : 0));
    const most = linprog(A, b, up);
    const least = linprog(
      A,
      b,
      up.map((x) => -x),
    );
    if (!most && !least) {
      // infeasible for one is infeasible for all (the same polytope); a program that failed stands for the box
      if (linprog(A, b, new Array<number>(n).fill(0)) === null) return { empty: true };
    }
    const high = most ? lo + Math.min(1, Math.max(0, most.value)) * (hi - lo) : hi;
    const low = least ? lo + Math.min(1, Math.max(0, -least.value)) * (hi - lo) : lo;
    range.set(p.name, [tidy(low), tidy(high)]);
  }
  return { empty: false, range };
}
