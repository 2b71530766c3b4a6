/** Simulated analytical balance: reads the mass on its simulated bench (see sim-pump), with a little noise. */
import { defineInstrument, z } from '../core/contracts/index.js';
import { bench, gaussian, mulberry32, sleep } from './sim/bench.js';

interface BalanceState {
  delay_ms: number;
  noise: number;
  bench: string;
  rng: () => number;
  tare_g: number;
}

export const simBalance = defineInstrument({
  name: 'sim-balance',
  version: '1.0.0',
  description: 'Simulated balance: weighs what a pump on the same bench dosed (mL × density), with reading noise.',
  options: z.object({
    delay_ms: z.number().min(0).max(60_000).default(30).describe('Simulated duration of each call, ms'),
    noise: z.number().min(0).default(0.002).describe('Standard deviation of a reading, g'),
    seed: z.number().int().default(1).describe('Seed of the noise generator'),
    bench: z.string().min(1).default('default').describe('Simulated bench shared with a pump'),
  }),
  create: (o): BalanceState => ({ delay_ms: o.delay_ms, noise: o.noise, bench: o.bench, rng: mulberry32(o.seed), tare_g: 0 }),
  methods: {
    weigh: {
      description: 'Read the mass, g (net of the last tare).',
      params: z.object({}),
      returns: z.number(),
      safety: 'readonly',
      async run(b, _args, ctx) {
        await sleep(b.delay_ms, ctx.signal);
        const g = bench(b.bench).mass_g - b.tare_g + (b.noise > 0 ? b.noise * gaussian(b.rng) : 0);
        return Math.round(g * 1e4) / 1e4;
      },
    },
    tare: {
      description: 'Zero the balance on what is on it now.',
      params: z.object({}),
      safety: 'idempotent',
      async run(b, _args, ctx) {
        await sleep(b.delay_ms, ctx.signal);
        b.tare_g = bench(b.bench).mass_g;
        return 0;
      },
    },
  },
});
