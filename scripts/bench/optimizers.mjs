import { line, built } from './common.mjs';

const BRANIN = {
  space: [
    { name: 'x1', type: 'range', bounds: [-5, 10] },
    { name: 'x2', type: 'range', bounds: [0, 15] },
  ],
  min: 0.397887,
  f: ({ x1, x2 }) => (x2 - (5.1 / (4 * Math.PI ** 2)) * x1 * x1 + (5 / Math.PI) * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * Math.PI)) * Math.cos(x1) + 10,
};
const H6_A = [
  [10, 3, 17, 3.5, 1.7, 8],
  [0.05, 10, 17, 0.1, 8, 14],
  [3, 3.5, 1.7, 10, 17, 8],
  [17, 8, 0.05, 10, 0.1, 14],
];
const H6_P = [
  [1312, 1696, 5569, 124, 8283, 5886],
  [2329, 4135, 8307, 3736, 1004, 9991],
  [2348, 1451, 3522, 2883, 3047, 6650],
  [4047, 8828, 8732, 5743, 1091, 381],
];
const H6_ALPHA = [1, 1.2, 3, 3.2];
const HARTMANN6 = {
  space: Array.from({ length: 6 }, (_, i) => ({ name: `x${i + 1}`, type: 'range', bounds: [0, 1] })),
  min: -3.32237,
  f: (p) => {
    let s = 0;
    for (let i = 0; i < 4; i++) {
      let e = 0;
      for (let j = 0; j < 6; j++) e += H6_A[i][j] * (p[`x${j + 1}`] - H6_P[i][j] * 1e-4) ** 2;
      s += H6_ALPHA[i] * Math.exp(-e);
    }
    return -s;
  },
};

/** Branin under x1 + x2 <= 8: the global minimum at (π, 2.275) is feasible, the ones at (−π, 12.275) and (9.42, 2.475) are not. */
const BRANIN_CUT = { ...BRANIN, constraints: ['x1 + x2 <= 8'] };
/** A 3-component mixture (fractions summing to 1) and a temperature: best at water 0.6, ethanol 0.3, dmso 0.1, 60 °C. */
const MIXTURE = {
  space: [
    { name: 'water', type: 'range', bounds: [0, 1] },
    { name: 'ethanol', type: 'range', bounds: [0, 1] },
    { name: 'dmso', type: 'range', bounds: [0, 1] },
    { name: 'temperature', type: 'range', bounds: [20, 100] },
  ],
  constraints: ['water + ethanol + dmso == 1'],
  min: 0,
  f: (p) => 10 * ((p.water - 0.6) ** 2 + (p.ethanol - 0.3) ** 2 + (p.dmso - 0.1) ** 2) + ((p.temperature - 60) / 40) ** 2,
};

/** Branin's range over its domain (a 301×301 grid), for the noise of the noisy Branin: sd 1% of it. */
function braninRange() {
  let hi = -Infinity;
  for (let i = 0; i <= 300; i++) for (let j = 0; j <= 300; j++) hi = Math.max(hi, BRANIN.f({ x1: -5 + (15 * i) / 300, x2: (15 * j) / 300 }));
  return hi - BRANIN.min;
}

/** Quantile with linear interpolation (numpy's default), so medians of 20 runs are the usual ones. */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const i = q * (s.length - 1);
  const lo = Math.floor(i);
  return s[lo] + (s[Math.ceil(i)] - s[lo]) * (i - lo);
}

/**
 * Simple regret after `budget` sequential evaluations, for seeds 0..seeds-1 (20) or the seeds listed; `feasible(p)` (constrained problems)
 * counts the suggestions that satisfy the constraints, in `tally`.
 */
async function regrets(opt, fn, budget, feasible = null, tally = { ok: 0, all: 0 }, seeds = 20) {
  const out = [];
  for (const seed of Array.isArray(seeds) ? seeds : Array.from({ length: seeds }, (_, i) => i)) {
    const o = opt.create({ space: fn.space, objectives: [{ name: 'y', minimize: true }], seed, constraints: fn.constraints });
    let best = Infinity;
    for (let i = 0; i < budget; i++) {
      const [p] = await o.suggest(1);
      if (feasible) {
        tally.all++;
        if (feasible(p)) tally.ok++;
      }
      const y = fn.f(p);
      best = Math.min(best, y);
      await o.observe([{ params: p, values: { y } }]);
    }
    out.push(best - fn.min);
  }
  return out;
}

/**
 * Noisy Branin: each measurement is f + N(0, sd²), seeded per run. The regret is measured on the TRUE function at
 * the point the optimizer recommends after `budget` measurements, which is what a lab would go on with: gp's
 * `recommended` (the measured point with the lowest posterior mean), sobol's and random's `best` (the best single
 * measurement, all they have). `oracle`: the best true value among the measured points, which no lab knows.
 */
async function noisyRegrets(opt, budget, sd, seeds = 20) {
  const rec = [];
  const oracle = [];
  for (let seed = 0; seed < seeds; seed++) {
    const o = opt.create({ space: BRANIN.space, objectives: [{ name: 'y', minimize: true }], seed });
    let s = (seed * 7919 + 17) % 2147483647;
    const u = () => (s = (s * 16807) % 2147483647) / 2147483647;
    const gauss = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
    let best = Infinity;
    for (let i = 0; i < budget; i++) {
      const [p] = await o.suggest(1);
      const y = BRANIN.f(p);
      best = Math.min(best, y);
      await o.observe([{ params: p, values: { y: y + sd * gauss() } }]);
    }
    const snap = await o.snapshot();
    rec.push(BRANIN.f((snap.recommended ?? snap.best).params) - BRANIN.min);
    oracle.push(best - BRANIN.min);
  }
  return { rec, oracle };
}

export default async function optimizers() {
  console.log('\n== optimizers (issues 4, 14): simple regret, median over seeds 0-19 [interquartile range]; constrained problems; gp suggestion time ==');
  const { gpOptimizer } = await built('plugins/optimizer-gp.js');
  const { sobolOptimizer } = await built('plugins/optimizer-sobol.js');
  const { randomOptimizer } = await built('plugins/optimizer-random.js');
  const fmt = (xs) => `${quantile(xs, 0.5).toPrecision(2)} [${quantile(xs, 0.25).toPrecision(2)}-${quantile(xs, 0.75).toPrecision(2)}]`;
  // targets: median (and for Hartmann-6 the upper quartile: issue 14 item 4); Branin's median was 0.0012 before
  for (const [label, fn, budget, target, q75] of [
    ['Branin', BRANIN, 30, 0.002],
    ['Hartmann-6', HARTMANN6, 50, 0.001, 0.01],
  ]) {
    for (const [name, opt] of [
      ['gp', gpOptimizer],
      ['sobol', sobolOptimizer],
      ['random', randomOptimizer],
    ]) {
      const t0 = performance.now();
      const r = await regrets(opt, fn, budget);
      const med = quantile(r, 0.5);
      const secs = `${((performance.now() - t0) / 1000).toFixed(0)} s`;
      if (name === 'gp') {
        line(`${label} regret after ${budget}: gp (${secs})`, fmt(r), `median < ${target}`, med < target);
        if (q75) line(`  upper quartile (75th percentile)`, quantile(r, 0.75).toPrecision(2), `< ${q75}`, quantile(r, 0.75) < q75);
      } else line(`${label} regret after ${budget}: ${name}`, fmt(r), '(reported)');
      if (name === 'gp' && label === 'Hartmann-6') {
        const hits = r.filter((v) => v < 0.05).length;
        console.log(`  (gp reached the global optimum's basin, regret < 0.05, in ${hits}/20 runs; the others ended in the local optimum at -3.20, regret 0.12)`);
        // the basin restarts were tuned on seeds 0-19: how they do on seeds they were not tuned on
        const noRestarts = { create: (a) => opt.create({ ...a, config: { basin_restarts: false } }) };
        const global = (xs) => `global basin in ${xs.filter((v) => v < 0.05).length}/20`;
        const off = await regrets(noRestarts, fn, budget);
        line(`  without basin restarts`, fmt(off), '(reported)');
        console.log(`  (${global(off)}, upper quartile ${quantile(off, 0.75).toPrecision(2)})`);
        const other = Array.from({ length: 20 }, (_, i) => 20 + i);
        const held = await regrets(opt, fn, budget, null, undefined, other);
        const heldOff = await regrets(noRestarts, fn, budget, null, undefined, other);
        line(`  seeds 20-39 (not tuned on)`, fmt(held), '(reported)');
        console.log(`  (${global(held)}, upper quartile ${quantile(held, 0.75).toPrecision(2)}; without basin restarts ${fmt(heldOff)}, ${global(heldOff)})`);
      }
    }
  }
  console.log('  (for scale: the best Python libraries reach 0.004-0.016 on Branin at 30 and 0.002-0.025 on Hartmann-6 at 50; random search 1.2 and 1.7)');

  // noisy Branin: regret on the true function of the recommended point (see noisyRegrets)
  const sd = 0.01 * braninRange();
  for (const [name, opt] of [
    ['gp', gpOptimizer],
    ['sobol', sobolOptimizer],
    ['random', randomOptimizer],
  ]) {
    const t0 = performance.now();
    const { rec, oracle } = await noisyRegrets(opt, 30, sd);
    const secs = name === 'gp' ? ` (${((performance.now() - t0) / 1000).toFixed(0)} s)` : '';
    line(`Noisy Branin after 30, recommended: ${name}${secs}`, fmt(rec), '(reported)');
    console.log(
      `  (true regret of ${name === 'gp' ? "gp's recommended point, the measured point with the lowest posterior mean" : `${name}'s best measurement`}; the best true value among its measured points, which no lab knows: ${fmt(oracle)})`,
    );
  }
  console.log(`  (noise: Gaussian, sd ${sd.toFixed(2)} = 1% of Branin's range over the domain; seeds 0-19)`);

  // constrained problems (issue 14): regret, and the share of suggestions that satisfy the constraints,
  // measured with the contract's own yardstick (violation / spread of the left side ≤ CONSTRAINT_TOLERANCE)
  const { CONSTRAINT_TOLERANCE, checkConstraints, checkSpace, constraintViolation } = await built('core/contracts/index.js');
  for (const [label, fn, budget, target] of [
    ['Branin x1+x2<=8', BRANIN_CUT, 30, 0.01],
    ['Mixture (sum 1)', MIXTURE, 30, 0.01],
  ]) {
    const space = checkSpace(fn.space);
    const cs = checkConstraints(fn.constraints, space);
    const feasible = (p) => cs.every((c) => constraintViolation(c, p, space) <= CONSTRAINT_TOLERANCE);
    for (const [name, opt] of [
      ['gp', gpOptimizer],
      ['sobol', sobolOptimizer],
      ['random', randomOptimizer],
    ]) {
      const tally = { ok: 0, all: 0 };
      const t0 = performance.now();
      const r = await regrets(opt, fn, budget, feasible, tally);
      const secs = `${((performance.now() - t0) / 1000).toFixed(0)} s`;
      const share = tally.ok / tally.all;
      if (name === 'gp') line(`${label} regret after ${budget}: gp (${secs})`, fmt(r), `< ${target}`, quantile(r, 0.5) < target);
      else line(`${label} regret after ${budget}: ${name}`, fmt(r), '(reported)');
      line(`  ${name} suggestions within the constraints`, `${(100 * share).toFixed(1)}% of ${tally.all}`, '100%', share === 1);
    }
  }

  // one suggestion in 6-D: n - 1 observations loaded at once (a cold model: warm start from a history or a
  // server restart), then campaign steps: observe the last suggestion, suggest the next (warm model)
  for (const n of [50, 200, 500]) {
    const o = gpOptimizer.create({ space: HARTMANN6.space, objectives: [{ name: 'y', minimize: true }], seed: 1 });
    let s = 12345;
    const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
    const rows = Array.from({ length: n - 1 }, () => {
      const p = Object.fromEntries(HARTMANN6.space.map((q) => [q.name, rnd()]));
      return { params: p, values: { y: HARTMANN6.f(p) } };
    });
    await o.observe(rows);
    let t = performance.now();
    let [p] = await o.suggest(1);
    const cold = performance.now() - t;
    const steps = [];
    for (let k = 0; k < 7; k++) {
      await o.observe([{ params: p, values: { y: HARTMANN6.f(p) } }]);
      t = performance.now();
      [p] = await o.suggest(1);
      steps.push(performance.now() - t);
    }
    const med = quantile(steps, 0.5);
    const limit = { 200: 250, 500: 200 }[n];
    line(`gp suggestion at ${n} observations, 6-D`, `${(med / 1000).toFixed(3)} s`, limit ? `< ${limit / 1000} s` : '(reported)', limit ? med < limit : undefined);
    console.log(`  (campaign steps ${n}-${n + 6}: median of 7, slowest ${(Math.max(...steps) / 1000).toFixed(3)} s; first suggestion after loading ${n - 1} at once: ${(cold / 1000).toFixed(3)} s)`);
  }
  await pythonOptuna(gpOptimizer, fmt);
}

/* ------------------------------------------------------------------------------------------ python */

/**
 * The Optuna adapter (examples/optimizers/optuna_optimizer.py, a Python optimizer run in the Python host)
 * against gp on Branin after 30, seeds 0-4: what wrapping a Python library costs and gives.
 */
async function pythonOptuna(gpOptimizer, fmt) {
  const { PythonModules, pythonCommand } = await built('core/hosts/index.js');
  const python = new PythonModules({ log: () => undefined });
  const file = new URL('../../examples/optimizers/optuna_optimizer.py', import.meta.url).pathname;
  try {
    const [optuna] = (await python.loadModule(file)).optimizers;
    const seeds = 5;
    for (const [name, opt] of [
      ['optuna (Python, TPE)', optuna],
      ['gp', gpOptimizer],
    ]) {
      const t0 = performance.now();
      const r = await regrets(opt, BRANIN, 30, null, undefined, seeds);
      line(`Branin regret after 30, seeds 0-${seeds - 1}: ${name} (${((performance.now() - t0) / 1000).toFixed(1)} s)`, fmt(r), '(reported)');
    }
  } catch (e) {
    console.log(`  (the Optuna adapter was not measured: ${pythonCommand()} cannot run it: ${e.message.split('\n')[0]}; install python3-optuna and set LABDECK_PYTHON=/usr/bin/python3)`);
  } finally {
    await python.close();
  }
}
