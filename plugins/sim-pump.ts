/**
 * Simulated syringe pump. Each call takes `delay_ms`; `dose` adds the dispensed liquid to the shared
 * simulated bench, so a balance on the same bench sees it. `jam()` makes the next dose fail once, to try
 * out error handling (failed steps, retry) without hardware.
 */
import { defineInstrument, z } from '../core/contracts/index.js';
import { bench, sleep } from './sim/bench.js';

interface PumpState {
  delay_ms: number;
  density_g_per_ml: number;
  bench: string;
  jammed: boolean;
  primed: boolean;
  total_ml: number;
}

export const simPump = defineInstrument({
  name: 'sim-pump',
  version: '1.0.0',
  description: 'Simulated syringe pump (up to 50 mL per dose). Dosed liquid appears on a balance on the same bench.',
  options: z.object({
    delay_ms: z.number().min(0).max(60_000).default(30).describe('Simulated duration of each call, ms'),
    density_g_per_ml: z.number().positive().default(1).describe('Density of the liquid, g/mL (what a dose weighs)'),
    bench: z.string().min(1).default('default').describe('Simulated bench shared with a balance'),
  }),
  create: (o): PumpState => ({ ...o, jammed: false, primed: false, total_ml: 0 }),
  methods: {
    dose: {
      description: 'Dispense a volume of liquid; returns the dispensed volume in mL.',
      params: z.object({ volume_ml: z.number().gt(0).max(50).describe('Volume to dispense, mL (0 < v ≤ 50)') }),
      returns: z.number(),
      safety: 'hazardous',
      async run(p, { volume_ml }, ctx) {
        await sleep(p.delay_ms, ctx.signal);
        if (p.jammed) {
          p.jammed = false;
          throw new Error('pump jammed');
        }
        p.total_ml += volume_ml;
        bench(p.bench).mass_g += volume_ml * p.density_g_per_ml;
        return volume_ml;
      },
    },
    prime: {
      description: 'Fill the line with liquid (safe to repeat).',
      params: z.object({}),
      safety: 'idempotent',
      async run(p, _args, ctx) {
        await sleep(p.delay_ms, ctx.signal);
        p.primed = true;
        return 'primed';
      },
    },
    jam: {
      description: 'Simulate a fault: the next dose fails with "pump jammed" (once).',
      params: z.object({}),
      safety: 'hazardous',
      run(p) {
        p.jammed = true;
        return 'the next dose will fail';
      },
    },
    status: {
      description: 'Total dispensed volume and state.',
      params: z.object({}),
      safety: 'readonly',
      run: (p) => ({ total_ml: Math.round(p.total_ml * 1e6) / 1e6, primed: p.primed, jammed: p.jammed }),
    },
  },
});
