import type { ParamValues } from '../../core/contracts/index.js';
import { LabError } from '../../core/errors.js';
import { gpOptimizer } from '../../plugins/optimizer-gp.js';
import { randomOptimizer } from '../../plugins/optimizer-random.js';
import { sobolOptimizer } from '../../plugins/optimizer-sobol.js';
import { SobolSequence } from '../../plugins/opt/sobol.js';
import { REACTOR_OPTIMUM, reactorYield } from '../../plugins/sim-reactor.js';
import { labError } from '../helpers/errors.js';
import { BRANIN_SPACE, FAST, MAX_YIELD, MIN_Y, REACTOR_SPACE, branin, expectFeasible, median, run, yieldOf } from '../helpers/optimizer-bench.js';

describe.each([
  ['random', randomOptimizer],
  ['sobol', sobolOptimizer],
  ['gp', gpOptimizer],
] as const)('%s', (name, opt) => {
  it('is reproducible: the same seed gives the same suggestions, another seed others', async () => {
    const config = name === 'gp' ? FAST : {};
    const a = await run(opt, BRANIN_SPACE, MIN_Y, branin, 10, 7, config);
    const b = await run(opt, BRANIN_SPACE, MIN_Y, branin, 10, 7, config);
    const c = await run(opt, BRANIN_SPACE, MIN_Y, branin, 10, 8, config);
    expect(b.rows).toEqual(a.rows);
    expect(c.rows.map((r) => r.params)).not.toEqual(a.rows.map((r) => r.params));
  });

  it('respects bounds, integers and choices, and gives distinct points in a batch', async () => {
    const space = [
      { name: 'x', type: 'range', bounds: [-1, 1] },
      { name: 'k', type: 'int', bounds: [2, 6] },
      { name: 'solvent', type: 'choice', choices: ['water', 'ethanol', 'acetone'] },
    ];
    const f = (p: ParamValues) => ((p.x as number) - 0.4) ** 2 + 0.1 * ((p.k as number) - 5) ** 2 + (p.solvent === 'ethanol' ? 0 : 0.5);
    const o = opt.create({ space, objectives: MIN_Y, seed: 3, config: name === 'gp' ? FAST : {} });
    const keys = new Set<string>();
    for (let round = 0; round < 4; round++) {
      const batch = await o.suggest(4);
      expect(batch).toHaveLength(4);
      expect(new Set(batch.map((p) => JSON.stringify(p))).size).toBe(4);
      for (const p of batch) {
        expect(Object.keys(p).sort()).toEqual(['k', 'solvent', 'x']);
        expect(p.x).toBeGreaterThanOrEqual(-1);
        expect(p.x).toBeLessThanOrEqual(1);
        expect(Number.isInteger(p.k)).toBe(true);
        expect(p.k).toBeGreaterThanOrEqual(2);
        expect(p.k).toBeLessThanOrEqual(6);
        expect(['water', 'ethanol', 'acetone']).toContain(p.solvent);
        keys.add(JSON.stringify(p));
      }
      await o.observe(batch.map((p) => ({ params: p, values: { y: f(p) } })));
    }
    expect(keys.size).toBe(16);
    // asked again before the results are in: new points, not the pending ones
    const first = await o.suggest(1);
    const second = await o.suggest(1);
    expect(second).not.toEqual(first);
  });

  it(`finds the optimum region of the demo reactor within its budget`, async () => {
    const budget = name === 'gp' ? 20 : 60;
    const { rows } = await run(opt, REACTOR_SPACE, MAX_YIELD, yieldOf, budget, 1);
    const best = rows.reduce((a, b) => (b.value > a.value ? b : a));
    if (name === 'gp') {
      expect(best.value).toBeGreaterThan(REACTOR_OPTIMUM.yield - 0.002);
      expect(Math.abs((best.params.temperature as number) - REACTOR_OPTIMUM.temperature)).toBeLessThan(2);
      expect(Math.abs((best.params.time as number) - REACTOR_OPTIMUM.time)).toBeLessThan(1.5);
    } else {
      expect(best.value).toBeGreaterThan(0.85);
    }
  });

  it('reports best so far in a JSON snapshot, and counts failed runs', async () => {
    const { o, rows } = await run(opt, REACTOR_SPACE, MAX_YIELD, yieldOf, 8, 2);
    await o.observe([{ params: { temperature: 50, time: 10 }, values: { yield: Number.NaN } }]);
    const snap = o.snapshot();
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
    const best = rows.reduce((a, b) => (b.value > a.value ? b : a));
    expect(snap).toMatchObject({ optimizer: name, observations: 8, failed: 1, best: { params: best.params, values: { yield: best.value } }, pareto: null });
  });
});

describe('gp', () => {
  it('starts with a quasi-random design, then models: snapshot with the fitted model and its surface', async () => {
    const { o, rows } = await run(gpOptimizer, REACTOR_SPACE, MAX_YIELD, yieldOf, 12, 4);
    // the first d + 3 = 5 points are the scrambled Sobol design
    const design = new SobolSequence(2, { seed: 4 });
    rows.slice(0, 5).forEach((r, i) => {
      const [u, v] = design.point(i);
      expect(r.params.temperature).toBeCloseTo(20 + 100 * u!, 9);
      expect(r.params.time).toBeCloseTo(1 + 59 * v!, 9);
    });
    const snap = o.snapshot() as Record<string, unknown> & {
      model: { lengthscales: Record<string, number>; noise_sd: number };
      surface: { parameters: string[]; x: number[]; y: number[]; mean: number[][]; sd: number[][] };
    };
    expect(snap.phase).toBe('model');
    expect(Object.keys(snap.model.lengthscales)).toEqual(['temperature', 'time']);
    const s = snap.surface;
    expect(s.parameters).toEqual(['temperature', 'time']);
    expect(s.x).toHaveLength(25);
    expect(s.mean).toHaveLength(25);
    expect(s.mean[0]).toHaveLength(25);
    // the model's surface agrees with the reactor near the optimum it has sampled, in yield units
    const ix = s.x.findIndex((v) => v >= 85);
    const iy = s.y.findIndex((v) => v >= 25);
    expect(Math.abs(s.mean[iy]![ix]! - reactorYield(s.x[ix]!, s.y[iy]!))).toBeLessThan(0.05);
    expect(s.sd[iy]![ix]!).toBeLessThan(0.05);
  });

  it('one range parameter: a 1-D surface', async () => {
    const { o } = await run(gpOptimizer, [{ name: 'x', type: 'range', bounds: [0, 2] }], MIN_Y, (p) => ((p.x as number) - 1.3) ** 2, 6, 0);
    const surface = o.snapshot().surface as { x: number[]; mean: number[]; sd: number[] };
    expect(surface.x).toHaveLength(50);
    expect(surface.mean).toHaveLength(50);
    const i = surface.x.findIndex((v) => v >= 1.3);
    expect(surface.mean[i]!).toBeLessThan(0.05);
  });

  it('handles integer and choice parameters and finds their best combination', async () => {
    const space = [
      { name: 'x', type: 'range', bounds: [0, 1] },
      { name: 'k', type: 'int', bounds: [1, 5] },
      { name: 'c', type: 'choice', choices: ['a', 'b', 'c'] },
    ];
    const f = (p: ParamValues) => ((p.x as number) - 0.3) ** 2 + 0.1 * ((p.k as number) - 4) ** 2 + (p.c === 'b' ? 0 : 0.5);
    const { rows } = await run(gpOptimizer, space, MIN_Y, f, 25, 3);
    const best = rows.reduce((a, b) => (b.value < a.value ? b : a));
    expect(best.params.k).toBe(4);
    expect(best.params.c).toBe('b');
    expect(Math.abs((best.params.x as number) - 0.3)).toBeLessThan(0.02);
  });

  it('batches with a Kriging believer are distinct too', async () => {
    const o = gpOptimizer.create({ space: BRANIN_SPACE, objectives: MIN_Y, seed: 5, config: { ...FAST, batch_strategy: 'kriging_believer' } });
    for (let round = 0; round < 4; round++) {
      const batch = await o.suggest(3);
      expect(new Set(batch.map((p) => JSON.stringify(p))).size).toBe(3);
      await o.observe(batch.map((p) => ({ params: p, values: { y: branin(p) } })));
    }
  });

  it('several objectives: ParEGO suggestions, and a Pareto front of non-dominated observations', async () => {
    const objectives = [
      { name: 'cost', minimize: true },
      { name: 'purity', minimize: false },
    ];
    const o = gpOptimizer.create({
      space: [
        { name: 'x', type: 'range', bounds: [0, 1] },
        { name: 'z', type: 'range', bounds: [0, 1] },
      ],
      objectives,
      seed: 1,
      config: FAST,
    });
    const values = (p: ParamValues) => ({ cost: (p.x as number) ** 2 + (p.z as number), purity: 1 - ((p.x as number) - 1) ** 2 - (p.z as number) });
    const seen: { cost: number; purity: number }[] = [];
    for (let i = 0; i < 12; i++) {
      const batch = await o.suggest(2);
      await o.observe(batch.map((p) => ({ params: p, values: values(p) })));
      seen.push(...batch.map(values));
    }
    const front = (o.snapshot().pareto as { values: { cost: number; purity: number } }[]).map((r) => r.values);
    expect(front.length).toBeGreaterThan(4);
    const dominates = (a: { cost: number; purity: number }, b: { cost: number; purity: number }) => a.cost <= b.cost && a.purity >= b.purity && (a.cost < b.cost || a.purity > b.purity);
    for (const p of front) expect(seen.some((q) => dominates(q, p))).toBe(false);
    // every observation off the front is dominated by (or equal to) one on it
    for (const q of seen) expect(front.some((p) => dominates(p, q) || (p.cost === q.cost && p.purity === q.purity))).toBe(true);
    // the true front is z = 0: the optimizer concentrates there
    const onFront = front.filter((v) => v.cost <= 1.01);
    expect(onFront.length).toBeGreaterThan(4);
  });

  it('warm start: observing a history at once, then suggesting inside the bounds', async () => {
    const r = await run(sobolOptimizer, REACTOR_SPACE, MAX_YIELD, yieldOf, 30, 9);
    const o = gpOptimizer.create({ space: REACTOR_SPACE, objectives: MAX_YIELD, seed: 9 });
    await o.observe(r.rows.map((x) => ({ params: x.params, values: { yield: x.value } })));
    const [p] = await o.suggest(1);
    expect(yieldOf(p!)).toBeGreaterThan(Math.max(...r.rows.map((x) => x.value)) - 0.05);
  });
});

describe('gp recommends', () => {
  it('the measurement the model rates best, not the one noise flatters', async () => {
    const o = gpOptimizer.create({ space: [{ name: 'x', type: 'range', bounds: [0, 1] }], objectives: MIN_Y, seed: 1, config: FAST });
    const noise = [0.03, -0.04, 0.01, 0.05, -0.02, 0.0, -0.05, 0.02, 0.04, -0.01, 0.03, -0.03, 0.02, -0.02, 0.01, 0.0, -0.04, 0.05, -0.01, 0.02, 0.04];
    const rows = noise.map((e, i) => ({ params: { x: i / 20 }, values: { y: (i / 20 - 0.5) ** 2 + e } }));
    rows.push({ params: { x: 0.93 }, values: { y: (0.93 - 0.5) ** 2 - 0.35 } }); // a lucky spike
    await o.observe(rows);
    const snap = o.snapshot() as { best: { params: { x: number } }; recommended: { params: { x: number }; mean: number; sd: number } };
    expect(snap.best.params.x).toBe(0.93);
    expect(Math.abs(snap.recommended.params.x - 0.5)).toBeLessThanOrEqual(0.1);
    expect(Math.abs(snap.recommended.mean)).toBeLessThan(0.05);
    expect(snap.recommended.sd).toBeGreaterThan(0);
    // maximising: the same point, the mean in the objective's own sign
    const m = gpOptimizer.create({ space: [{ name: 'x', type: 'range', bounds: [0, 1] }], objectives: [{ name: 'y', minimize: false }], seed: 1, config: FAST });
    await m.observe(rows.map((r) => ({ params: r.params, values: { y: -r.values.y } })));
    const ms = m.snapshot() as { recommended: { params: { x: number }; mean: number } };
    expect(ms.recommended.params.x).toBe(snap.recommended.params.x);
    expect(ms.recommended.mean).toBeCloseTo(-snap.recommended.mean, 4);
  });
});

describe('optimizer state and input checks', () => {
  it('random and sobol rebuilt from their records continue where they were', async () => {
    for (const opt of [randomOptimizer, sobolOptimizer]) {
      const { rows } = await run(opt, BRANIN_SPACE, MIN_Y, branin, 10, 4);
      const rebuilt = opt.create({ space: BRANIN_SPACE, objectives: MIN_Y, seed: 4 });
      await rebuilt.observe(rows.slice(0, 7).map((r) => ({ params: r.params, values: { y: r.value } })));
      expect(await rebuilt.suggest(3)).toEqual(rows.slice(7).map((r) => r.params));
    }
  });

  it('sobol without scrambling walks the plain sequence', async () => {
    const o = sobolOptimizer.create({ space: BRANIN_SPACE, objectives: MIN_Y, config: { scramble: false } });
    expect(await o.suggest(3)).toEqual([
      { x1: -5, x2: 0 },
      { x1: 2.5, x2: 7.5 },
      { x1: 6.25, x2: 3.75 },
    ]);
  });

  it('observe() rejects parameters outside the space, naming the row and field', async () => {
    const o = gpOptimizer.create({ space: [...BRANIN_SPACE, { name: 'c', type: 'choice', choices: ['a', 'b'] }], objectives: MIN_Y });
    let err: unknown;
    try {
      await o.observe([
        { params: { x1: 1, x2: 2, c: 'a' }, values: { y: 1 } },
        { params: { x1: 'hot', x2: 2, c: 'z' }, values: { y: 1 } },
      ]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LabError);
    expect((err as LabError).details).toEqual([
      { field: 'rows[1].params.x1', message: 'must be a number' },
      { field: 'rows[1].params.c', message: 'must be one of a, b' },
    ]);
    expect(() => o.suggest(0)).toThrow(LabError);
  });
});

const MIXTURE_SPACE = [
  { name: 'water', type: 'range', bounds: [0, 1] },
  { name: 'ethanol', type: 'range', bounds: [0, 1] },
  { name: 'dmso', type: 'range', bounds: [0, 0.5] },
  { name: 'temperature', type: 'range', bounds: [20, 80] },
  { name: 'solvent', type: 'choice', choices: ['a', 'b'] },
];
const MIXTURE = ['water + ethanol + dmso == 1', 'ethanol <= 2*water'];

describe.each([
  ['random', randomOptimizer],
  ['sobol', sobolOptimizer],
  ['gp', gpOptimizer],
] as const)('%s under linear constraints', (name, opt) => {
  const config = name === 'gp' ? FAST : {};
  it('suggests only points that satisfy them, initial design and batches included, and spreads them over the feasible part', async () => {
    const constraints = ['x1 + x2 <= 8'];
    const o = opt.create({ space: BRANIN_SPACE, objectives: MIN_Y, seed: 2, constraints, config });
    const points: ParamValues[] = [];
    for (let round = 0; round < 5; round++) {
      const batch = await o.suggest(8);
      points.push(...batch);
      await o.observe(batch.map((p) => ({ params: p, values: { y: branin(p) } })));
    }
    expectFeasible(points, constraints, BRANIN_SPACE);
    // not squeezed into a corner: both ends of x1 and x2 are reached
    expect(Math.min(...points.map((p) => p.x1 as number))).toBeLessThan(-3);
    expect(Math.max(...points.map((p) => p.x2 as number))).toBeGreaterThan(10);
    expect(new Set(points.map((p) => JSON.stringify(p))).size).toBe(40);
  });

  it('keeps a mixture on its simplex, with other parameters searched freely', async () => {
    const o = opt.create({ space: MIXTURE_SPACE, objectives: MIN_Y, seed: 1, constraints: MIXTURE, config });
    const points: ParamValues[] = [];
    for (let round = 0; round < 5; round++) {
      const batch = await o.suggest(10);
      points.push(...batch);
      // a mixture response: best near water 0.2, ethanol 0.3, dmso 0.5, at 50 °C with solvent b
      const f = (p: ParamValues) => ((p.water as number) - 0.2) ** 2 + ((p.dmso as number) - 0.5) ** 2 + (((p.temperature as number) - 50) / 60) ** 2 + (p.solvent === 'b' ? 0 : 0.1);
      await o.observe(batch.map((p) => ({ params: p, values: { y: f(p) } })));
    }
    expectFeasible(points, MIXTURE, MIXTURE_SPACE);
    for (const p of points) expect(Math.abs((p.water as number) + (p.ethanol as number) + (p.dmso as number) - 1)).toBeLessThan(1e-12);
    expect(new Set(points.map((p) => p.solvent))).toEqual(new Set(['a', 'b']));
    expect(Math.max(...points.map((p) => p.temperature as number)) - Math.min(...points.map((p) => p.temperature as number))).toBeGreaterThan(40);
    expect(Math.max(...points.map((p) => p.dmso as number))).toBeGreaterThan(0.4);
  });

  it('a thin polytope (0.2% of its bounding box) still gives feasible points along it (hit-and-run), reproducibly', async () => {
    const constraints = ['x1 - x2 <= 0.01', 'x2 - x1 <= 0.01'];
    const thin = name === 'gp' ? { ...config, initial_points: 20 } : config;
    const a = await opt.create({ space: BRANIN_SPACE, objectives: MIN_Y, seed: 3, constraints, config: thin }).suggest(20);
    const b = await opt.create({ space: BRANIN_SPACE, objectives: MIN_Y, seed: 3, constraints, config: thin }).suggest(20);
    expectFeasible(a, constraints, BRANIN_SPACE);
    expect(b).toEqual(a);
    expect(new Set(a.map((p) => JSON.stringify(p))).size).toBe(20);
    expect(Math.min(...a.map((p) => p.x1 as number))).toBeLessThan(3);
    expect(Math.max(...a.map((p) => p.x1 as number))).toBeGreaterThan(7);
  });

  it(`refuses constraints that exclude each other before anything runs (${name})`, () => {
    const e = labError(() => opt.create({ space: BRANIN_SPACE, objectives: MIN_Y, constraints: ['x1 + x2 >= 20', 'x1 - x2 >= 5'] }));
    expect(e.details).toEqual([{ field: 'parameter_constraints', message: 'no point within the bounds satisfies all of "x1 + x2 >= 20", "x1 - x2 >= 5" at once' }]);
    const eq = labError(() => opt.create({ space: MIXTURE_SPACE, objectives: MIN_Y, constraints: ['water + ethanol == 1', 'water + ethanol == 0.5'] }));
    expect(eq.details?.[0]?.message).toBe('"water + ethanol == 0.5" contradicts the equalities before it');
  });
});

describe.each([
  ['random', randomOptimizer],
  ['sobol', sobolOptimizer],
  ['gp', gpOptimizer],
] as const)('%s with fixed, log-scale and stepped parameters', (name, opt) => {
  it('keeps fixed values, steps on their grid, and spreads log-scale values evenly in log', async () => {
    const space = [
      { name: 'conc', type: 'range', bounds: [0.001, 10], log_scale: true },
      { name: 'volume', type: 'range', bounds: [0, 1], step: 0.1 },
      { name: 'rpm', type: 'int', bounds: [100, 1000], step: 50 },
      { name: 'n', type: 'int', bounds: [1, 1000], log_scale: true },
      { name: 'ph', type: 'fixed', value: 7 },
      { name: 'solvent', type: 'fixed', value: 'water' },
    ];
    // best at conc 0.01, volume 0.3, rpm 650, n 20
    const f = (p: ParamValues) => Math.log10((p.conc as number) / 0.01) ** 2 + ((p.volume as number) - 0.3) ** 2 + (((p.rpm as number) - 650) / 900) ** 2 + Math.log10((p.n as number) / 20) ** 2;
    const o = opt.create({ space, objectives: MIN_Y, seed: 5, config: name === 'gp' ? FAST : {} });
    const points: ParamValues[] = [];
    for (let round = 0; round < 6; round++) {
      const batch = await o.suggest(4);
      points.push(...batch);
      await o.observe(batch.map((p) => ({ params: p, values: { y: f(p) } })));
    }
    for (const p of points) {
      expect(p).toMatchObject({ ph: 7, solvent: 'water' });
      expect(p.conc).toBeGreaterThanOrEqual(0.001);
      expect(p.conc).toBeLessThanOrEqual(10);
      expect(Math.round((p.volume as number) * 10) / 10).toBe(p.volume); // 0.3, never 0.30000000000000004
      expect(((p.rpm as number) - 100) % 50).toBe(0);
      expect(Number.isInteger(p.n)).toBe(true);
    }
    // evenly spread in log: a quarter of the values below 0.01 (a linear spread would put almost none there)
    const low = points.filter((p) => (p.conc as number) < 0.01).length;
    expect(low).toBeGreaterThanOrEqual(name === 'gp' ? 3 : 4);
    expect(new Set(points.map((p) => p.volume)).size).toBeGreaterThan(5);
  });
});

describe('outcome constraints and weights', () => {
  const space = [
    { name: 'x', type: 'range', bounds: [0, 1] },
    { name: 'y', type: 'range', bounds: [0, 1] },
  ];
  // cost is lowest at (0.8, 0.8), but purity = 1 - (x + y)/2 must stay ≥ 0.5: the best feasible point is (0.5, 0.5), cost 0.18
  const values = (p: ParamValues) => ({ cost: ((p.x as number) - 0.8) ** 2 + ((p.y as number) - 0.8) ** 2, purity: 1 - ((p.x as number) + (p.y as number)) / 2 });
  const cost = [{ name: 'cost', minimize: true }];

  it.each([
    ['random', randomOptimizer],
    ['sobol', sobolOptimizer],
  ] as const)('%s records them: its best is the best observation that meets them', async (_name, opt) => {
    const o = opt.create({ space, objectives: cost, seed: 1, outcomeConstraints: ['purity >= 0.5'] });
    const points = await o.suggest(30);
    await o.observe(points.map((p) => ({ params: p, values: values(p) })));
    const feasible = points.filter((p) => values(p).purity >= 0.5);
    const best = feasible.reduce((a, b) => (values(b).cost < values(a).cost ? b : a));
    expect(o.snapshot()).toMatchObject({ outcome_constraints: ['purity >= 0.5'], feasible: feasible.length, best: { params: best, values: { cost: values(best).cost } } });
    expect(Math.min(...points.map((p) => values(p).cost))).toBeLessThan(values(best).cost); // the unconstrained best is infeasible
  });

  it('gp models them: it closes in on the best feasible point instead of the infeasible optimum', async () => {
    const o = gpOptimizer.create({ space, objectives: cost, seed: 2, outcomeConstraints: ['purity >= 0.5'], config: FAST });
    const seen: ParamValues[] = [];
    for (let i = 0; i < 20; i++) {
      const [p] = await o.suggest(1);
      seen.push(p!);
      await o.observe([{ params: p!, values: values(p!) }]);
    }
    const best = (o.snapshot().best as { values: { cost: number } }).values.cost;
    expect(best).toBeLessThan(0.19); // 0.18 at (0.5, 0.5)
    // after the design, most suggestions meet the constraint, and hug its boundary
    const later = seen.slice(5);
    expect(later.filter((p) => values(p).purity >= 0.5 - 0.02).length).toBeGreaterThanOrEqual(12);
    // a purity missing from an observation: the row is not modelled
    await o.observe([{ params: { x: 0.1, y: 0.1 }, values: { cost: 1 } }]);
    expect(o.snapshot()).toMatchObject({ failed: 1 });
  });

  it('weights scalarise several objectives: the best is the best weighted compromise', async () => {
    const objectives = [
      { name: 'cost', minimize: true, weight: 3 },
      { name: 'purity', minimize: false, weight: 1 },
    ];
    const o = sobolOptimizer.create({ space, objectives, seed: 4 });
    const points = await o.suggest(32);
    await o.observe(points.map((p) => ({ params: p, values: values(p) })));
    const snap = o.snapshot() as { best: { params: ParamValues }; pareto: unknown[] };
    expect(snap.pareto.length).toBeGreaterThan(1);
    // the same compromise with the weights the other way round favours purity
    const swapped = sobolOptimizer.create({
      space,
      objectives: [
        { ...objectives[0]!, weight: 1 },
        { ...objectives[1]!, weight: 3 },
      ],
      seed: 4,
    });
    await swapped.observe(points.map((p) => ({ params: p, values: values(p) })));
    const other = (swapped.snapshot() as { best: { params: ParamValues } }).best.params;
    expect(values(other).purity).toBeGreaterThan(values(snap.best.params).purity);
    expect(values(other).cost).toBeGreaterThan(values(snap.best.params).cost);
    // gp follows the weights: heavy on purity, it heads for small x + y
    const g = gpOptimizer.create({
      space,
      objectives: [
        { name: 'cost', minimize: true, weight: 1 },
        { name: 'purity', minimize: false, weight: 20 },
      ],
      seed: 4,
      config: FAST,
    });
    const seen: ParamValues[] = [];
    for (let i = 0; i < 12; i++) {
      const [p] = await g.suggest(1);
      seen.push(p!);
      await g.observe([{ params: p!, values: values(p!) }]);
    }
    expect(median(seen.slice(6).map((p) => (p.x as number) + (p.y as number)))).toBeLessThan(0.5);
  });
});
