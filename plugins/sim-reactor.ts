/**
 * Simulated batch reactor for optimisation demos: `run` returns the yield (0..1) of a reaction at a
 * temperature and a time. The response surface is smooth with a single optimum inside the bounds
 * (85 °C, 25 min, yield 0.92) and a mild temperature-time interaction; `noise` adds seeded Gaussian noise.
 */
import { defineInstrument, z } from '../core/contracts/index.js';
import { gaussian, mulberry32, sleep } from './sim/bench.js';

export const REACTOR_OPTIMUM = { temperature: 85, time: 25, yield: 0.92 } as const;

/** The noise-free yield at a temperature (°C) and a time (min). */
export function reactorYield(temperature: number, time: number): number {
  const dT = (temperature - REACTOR_OPTIMUM.temperature) / 25;
  const dt = (time - REACTOR_OPTIMUM.time) / 15;
  // positive-definite quadratic form: one maximum, at (85, 25)
  const q = dT * dT + dt * dt + 0.6 * dT * dt;
  return REACTOR_OPTIMUM.yield * Math.exp(-0.5 * q);
}

interface ReactorState {
  delay_ms: number;
  noise: number;
  rng: () => number;
  runs: number;
}

export const simReactor = defineInstrument({
  name: 'sim-reactor',
  version: '1.0.0',
  description: 'Simulated reactor: yield as a smooth function of temperature and time, with one optimum.',
  options: z.object({
    delay_ms: z.number().min(0).max(60_000).default(40).describe('Simulated duration of each run, ms'),
    noise: z.number().min(0).max(1).default(0).describe('Standard deviation of the measured yield'),
    seed: z.number().int().default(42).describe('Seed of the noise generator'),
  }),
  create: (o): ReactorState => ({ delay_ms: o.delay_ms, noise: o.noise, rng: mulberry32(o.seed), runs: 0 }),
  methods: {
    run: {
      description: 'Run the reaction; returns { yield } between 0 and 1.',
      params: z.object({
        temperature: z.number().min(20).max(120).describe('Reaction temperature, °C (20-120)'),
        time: z.number().min(1).max(60).describe('Reaction time, min (1-60)'),
      }),
      returns: z.object({ yield: z.number().min(0).max(1) }),
      safety: 'hazardous',
      async run(r, { temperature, time }, ctx) {
        await sleep(r.delay_ms, ctx.signal);
        r.runs++;
        let y = reactorYield(temperature, time);
        if (r.noise > 0) y += r.noise * gaussian(r.rng);
        y = Math.min(1, Math.max(0, y));
        return { yield: Math.round(y * 1e4) / 1e4 };
      },
    },
  },
});
