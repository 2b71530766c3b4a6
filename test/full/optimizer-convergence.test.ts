/**
 * The optimizers' convergence: gp against random search on Branin, out of a local basin on Hartmann-6, with many
 * observations, under linear constraints. Minutes of numerics, so they are in the full suite (npm run test:full).
 */
import { gpOptimizer } from '../../plugins/optimizer-gp.js';
import { randomOptimizer } from '../../plugins/optimizer-random.js';
import { SobolSequence } from '../../plugins/opt/sobol.js';
import type { Optimizer, ParamValues } from '../../core/contracts/index.js';
import { BRANIN_MIN, BRANIN_SPACE, FAST, MIN_Y, branin, expectFeasible, median, run } from '../helpers/optimizer-bench.js';

describe('gp', () => {
  it('is far better than random search on Branin with the same seeds', async () => {
    const seeds = [0, 1, 2, 3, 4];
    const regret = async (opt: Optimizer, seed: number) => {
      const { rows } = await run(opt, BRANIN_SPACE, MIN_Y, branin, 25, seed, opt === gpOptimizer ? { fit_restarts: 1 } : {});
      return Math.min(...rows.map((r) => r.value)) - BRANIN_MIN;
    };
    const gp: number[] = [];
    const rnd: number[] = [];
    for (const s of seeds) {
      gp.push(await regret(gpOptimizer, s));
      rnd.push(await regret(randomOptimizer, s));
    }
    expect(median(gp)).toBeLessThan(0.05);
    expect(median(gp)).toBeLessThan(median(rnd) / 10);
  });
});

describe('gp with many observations', () => {
  it('keeps its hyper-parameters while the fit subset holds and grows the model, reproducibly and inside the bounds', async () => {
    const space = Array.from({ length: 4 }, (_, i) => ({ name: `x${i}`, type: 'range', bounds: [0, 1] }));
    const f = (p: ParamValues) => Object.values(p).reduce((s: number, v) => s + ((v as number) - 0.3) ** 2, 0);
    const steps = async () => {
      const o = gpOptimizer.create({ space, objectives: MIN_Y, seed: 3, config: FAST });
      const pts = new SobolSequence(4, { seed: 9 });
      await o.observe(
        Array.from({ length: 150 }, () => {
          const u = pts.next();
          const params = Object.fromEntries(space.map((q, d) => [q.name, u[d]!]));
          return { params, values: { y: f(params) } };
        }),
      );
      const out: { p: ParamValues; ls: unknown }[] = [];
      for (let k = 0; k < 6; k++) {
        const [p] = await o.suggest(1);
        await o.observe([{ params: p!, values: { y: f(p!) } }]);
        out.push({ p: p!, ls: (o.snapshot().model as { lengthscales: unknown }).lengthscales });
      }
      return out;
    };
    const a = await steps();
    expect(await steps()).toEqual(a);
    for (const { p } of a) for (const q of space) expect([(p[q.name] as number) >= 0, (p[q.name] as number) <= 1]).toEqual([true, true]);
    // fewer than 8 new rows in the fit subset: the length scales are the first step's throughout
    for (const { ls } of a) expect(ls).toEqual(a[0]!.ls);
    expect(Math.min(...a.map(({ p }) => f(p)))).toBeLessThan(0.01);
  });
});

describe('gp basin restarts', () => {
  // Hartmann-6: global minimum −3.32237; a local one at −3.20 (regret 0.12) that EI, once it has converged
  // there, never leaves. Seed 2's initial design leads it to the local basin first.
  const A = [
    [10, 3, 17, 3.5, 1.7, 8],
    [0.05, 10, 17, 0.1, 8, 14],
    [3, 3.5, 1.7, 10, 17, 8],
    [17, 8, 0.05, 10, 0.1, 14],
  ];
  const P = [
    [1312, 1696, 5569, 124, 8283, 5886],
    [2329, 4135, 8307, 3736, 1004, 9991],
    [2348, 1451, 3522, 2883, 3047, 6650],
    [4047, 8828, 8732, 5743, 1091, 381],
  ];
  const ALPHA = [1, 1.2, 3, 3.2];
  const hartmann6 = (p: ParamValues) => -ALPHA.reduce((s, a, i) => s + a * Math.exp(-A[i]!.reduce((e, aij, j) => e + aij * ((p[`x${j + 1}`] as number) - P[i]![j]! * 1e-4) ** 2, 0)), 0);
  const SPACE = Array.from({ length: 6 }, (_, i) => ({ name: `x${i + 1}`, type: 'range', bounds: [0, 1] }));
  const regret = (rows: { value: number }[]) => Math.min(...rows.map((r) => r.value)) + 3.32237;

  it('leave a converged local optimum for a deeper basin, reproducibly; without them EI stays in the local one', async () => {
    const stuck = await run(gpOptimizer, SPACE, MIN_Y, hartmann6, 50, 6, { ...FAST, basin_restarts: false });
    expect(regret(stuck.rows)).toBeGreaterThan(0.1);
    const { rows } = await run(gpOptimizer, SPACE, MIN_Y, hartmann6, 50, 6, FAST);
    expect(regret(rows)).toBeLessThan(0.01);
    // the same steps until the first restart (both runs are in the local basin by then), and the same again
    // with the same seed
    expect(regret(rows.slice(0, 26))).toBeGreaterThan(0.1);
    expect(rows.slice(0, 26)).toEqual(stuck.rows.slice(0, 26));
    expect(rows[26]).not.toEqual(stuck.rows[26]);
    const again = await run(gpOptimizer, SPACE, MIN_Y, hartmann6, 32, 6, FAST);
    expect(again.rows).toEqual(rows.slice(0, 32));
    for (const r of rows) for (const q of SPACE) expect([(r.params[q.name] as number) >= 0, (r.params[q.name] as number) <= 1]).toEqual([true, true]);
  });
});

describe('gp under linear constraints', () => {
  it('finds the best feasible point of Branin with x1 + x2 <= 8, and models inside the thin strip too', async () => {
    const constraints = ['x1 + x2 <= 8'];
    const o = gpOptimizer.create({ space: BRANIN_SPACE, objectives: MIN_Y, seed: 0, constraints, config: { fit_restarts: 1 } });
    const points: ParamValues[] = [];
    for (let i = 0; i < 25; i++) {
      const [p] = await o.suggest(1);
      points.push(p!);
      await o.observe([{ params: p!, values: { y: branin(p!) } }]);
    }
    expectFeasible(points, constraints, BRANIN_SPACE);
    expect(Math.min(...points.map(branin)) - BRANIN_MIN).toBeLessThan(0.05); // (π, 2.275) is feasible
    const strip = ['x1 - x2 <= 0.01', 'x2 - x1 <= 0.01'];
    const s = gpOptimizer.create({ space: BRANIN_SPACE, objectives: MIN_Y, seed: 1, constraints: strip, config: FAST });
    const seen: ParamValues[] = [];
    for (let i = 0; i < 10; i++) {
      const batch = await s.suggest(2);
      seen.push(...batch);
      await s.observe(batch.map((p) => ({ params: p, values: { y: branin(p) } })));
    }
    expectFeasible(seen, strip, BRANIN_SPACE);
  });
});
