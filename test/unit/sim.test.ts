import type { CallContext, InstrumentDriver } from '../../core/contracts/index.js';
import { simBalance } from '../../plugins/sim-balance.js';
import { plateTemperature, simHotplate } from '../../plugins/sim-hotplate.js';
import { simNoop } from '../../plugins/sim-noop.js';
import { simPump } from '../../plugins/sim-pump.js';
import { REACTOR_OPTIMUM, reactorYield, simReactor } from '../../plugins/sim-reactor.js';
import { bench, mulberry32 } from '../../plugins/sim/bench.js';
import { waitForValue } from '../helpers/wait.js';

const ctx = (signal = new AbortController().signal): CallContext => ({ signal, log: () => undefined });

/** Create an instance with validated options, and call methods with validated args, as the deck does. */
async function device(driver: InstrumentDriver, options: Record<string, unknown> = {}) {
  const inst = await driver.create(driver.options.parse(options));
  return (method: string, args: Record<string, unknown> = {}, c = ctx()) => Promise.resolve(driver.methods[method].run(inst, driver.methods[method].params.parse(args), c));
}

describe('sim pump', () => {
  it('doses, and after jam() fails exactly once with "pump jammed"', async () => {
    const pump = await device(simPump, { delay_ms: 1, bench: 'pump-test' });
    expect(await pump('dose', { volume_ml: 2 })).toBe(2);
    await pump('jam');
    await expect(pump('dose', { volume_ml: 1 })).rejects.toThrow('pump jammed');
    expect(await pump('dose', { volume_ml: 1 })).toBe(1);
    expect(await pump('status')).toEqual({ total_ml: 3, primed: false, jammed: false });
    expect(await pump('prime')).toBe('primed');
  });

  it('validates the volume (0 < v ≤ 50) and declares its safety', () => {
    const p = simPump.methods.dose.params;
    expect(p.safeParse({ volume_ml: 0 }).success).toBe(false);
    expect(p.safeParse({ volume_ml: 50.01 }).success).toBe(false);
    expect(p.safeParse({ volume_ml: 50 }).success).toBe(true);
    expect(p.safeParse({}).success).toBe(false);
    expect([simPump.methods.dose.safety, simPump.methods.jam.safety, simPump.methods.prime.safety]).toEqual(['hazardous', 'hazardous', 'idempotent']);
  });

  it('takes its time and honours the abort signal', async () => {
    const pump = await device(simPump, { delay_ms: 40 });
    const t0 = Date.now();
    await pump('dose', { volume_ml: 1 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
    const ac = new AbortController();
    const p = pump('dose', { volume_ml: 1 }, ctx(ac.signal));
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('sim balance', () => {
  it('weighs what a pump on the same bench dosed (mL × density), net of tare', async () => {
    const pump = await device(simPump, { delay_ms: 0, density_g_per_ml: 1.5, bench: 'bal-test' });
    const balance = await device(simBalance, { delay_ms: 0, noise: 0, bench: 'bal-test' });
    bench('bal-test').mass_g = 10;
    await balance('tare');
    expect(await balance('weigh')).toBe(0);
    await pump('dose', { volume_ml: 2 });
    expect(await balance('weigh')).toBeCloseTo(3, 6);
  });

  it('adds small seeded noise', async () => {
    const a = await device(simBalance, { delay_ms: 0, noise: 0.01, seed: 5, bench: 'noise-test' });
    const b = await device(simBalance, { delay_ms: 0, noise: 0.01, seed: 5, bench: 'noise-test' });
    const ra = [await a('weigh'), await a('weigh'), await a('weigh')] as number[];
    expect([await b('weigh'), await b('weigh'), await b('weigh')]).toEqual(ra);
    expect(new Set(ra).size).toBeGreaterThan(1);
    for (const r of ra) expect(Math.abs(r)).toBeLessThan(0.06);
  });
});

describe('sim hotplate', () => {
  it('validates the set point and approaches it over time', async () => {
    expect(simHotplate.methods.set_temperature.params.safeParse({ celsius: 19 }).success).toBe(false);
    expect(simHotplate.methods.set_temperature.params.safeParse({ celsius: 351 }).success).toBe(false);
    const h = { delay_ms: 0, tau_s: 10, ambient_c: 22, from_c: 22, since: 0, set_c: 100 };
    const temps = [0, 5_000, 10_000, 30_000, 120_000].map((t) => plateTemperature(h, t));
    expect(temps[0]).toBeCloseTo(22);
    for (let i = 1; i < temps.length; i++) expect(temps[i]).toBeGreaterThan(temps[i - 1]);
    expect(temps[2]).toBeCloseTo(100 - 78 * Math.exp(-1), 5);
    expect(temps[4]).toBeCloseTo(100, 2);
    const plate = await device(simHotplate, { delay_ms: 0, tau_s: 0.02 });
    await plate('set_temperature', { celsius: 80 });
    // it heats towards the setpoint as time passes (tau 20 ms), and gets there
    const first = (await plate('temperature')) as number;
    expect(
      await waitForValue(
        () => plate('temperature') as Promise<number>,
        (t) => Math.abs(t - 80) < 0.5,
        'the plate to reach 80 °C',
      ),
    ).toBeCloseTo(80, 0);
    expect(first).toBeLessThan(80);
  });
});

describe('sim reactor', () => {
  it('has one optimum inside the bounds, and yields in 0..1 everywhere', () => {
    let best = { y: -1, T: 0, t: 0 };
    let lowest = Infinity;
    for (let T = 20; T <= 120; T += 1) {
      for (let t = 1; t <= 60; t += 0.5) {
        const y = reactorYield(T, t);
        lowest = Math.min(lowest, y);
        if (y > best.y) best = { y, T, t };
      }
    }
    expect(lowest).toBeGreaterThanOrEqual(0);
    expect(best.y).toBeLessThanOrEqual(1);
    expect(best.T).toBe(REACTOR_OPTIMUM.temperature);
    expect(best.t).toBe(REACTOR_OPTIMUM.time);
    expect(best.y).toBeCloseTo(0.92, 6);
    // corners are far worse than the optimum: there is something to optimise
    expect(Math.max(reactorYield(20, 1), reactorYield(120, 60), reactorYield(20, 60), reactorYield(120, 1))).toBeLessThan(0.3);
  });

  it('returns { yield }, validates its bounds and is reproducible with a seed', async () => {
    const run = simReactor.methods.run.params;
    expect(run.safeParse({ temperature: 19, time: 10 }).success).toBe(false);
    expect(run.safeParse({ temperature: 50, time: 61 }).success).toBe(false);
    const exact = await device(simReactor, { delay_ms: 0 });
    expect(await exact('run', { temperature: 85, time: 25 })).toEqual({ yield: 0.92 });
    const a = await device(simReactor, { delay_ms: 0, noise: 0.05, seed: 3 });
    const b = await device(simReactor, { delay_ms: 0, noise: 0.05, seed: 3 });
    const ya = [await a('run', { temperature: 60, time: 10 }), await a('run', { temperature: 60, time: 10 })];
    expect([await b('run', { temperature: 60, time: 10 }), await b('run', { temperature: 60, time: 10 })]).toEqual(ya);
    expect(ya[0]).not.toEqual(ya[1]);
    const noisy = await device(simReactor, { delay_ms: 0, noise: 1, seed: 1 });
    for (let i = 0; i < 20; i++) {
      const { yield: y } = (await noisy('run', { temperature: 85, time: 25 })) as { yield: number };
      expect(y).toBeGreaterThanOrEqual(0);
      expect(y).toBeLessThanOrEqual(1);
    }
  });
});

describe('sim noop and helpers', () => {
  it('answers pong at once', async () => {
    const noop = await simNoop.create(simNoop.options.parse({}));
    expect(simNoop.methods.ping.run(noop, {}, ctx())).toBe('pong');
  });

  it('mulberry32 is deterministic and uniform-ish', () => {
    const r1 = mulberry32(9);
    const r2 = mulberry32(9);
    const xs = Array.from({ length: 1000 }, () => r1());
    expect(xs.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => r2()));
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
  });
});
