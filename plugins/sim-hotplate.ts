/** Simulated hotplate: the temperature approaches the set point exponentially (time constant `tau_s`). */
import { defineInstrument, z } from '../core/contracts/index.js';
import { sleep } from './sim/bench.js';

interface HotplateState {
  delay_ms: number;
  tau_s: number;
  ambient_c: number;
  /** Temperature when the set point last changed, and since when. */
  from_c: number;
  since: number;
  set_c: number;
}

/** Temperature now: first-order approach from `from_c` to `set_c`. */
export function plateTemperature(h: HotplateState, now = Date.now()): number {
  const t = Math.max(0, now - h.since) / 1000;
  return h.set_c + (h.from_c - h.set_c) * Math.exp(-t / h.tau_s);
}

export const simHotplate = defineInstrument({
  name: 'sim-hotplate',
  version: '1.0.0',
  description: 'Simulated hotplate (20-350 °C); the plate heats or cools towards the set point over time.',
  options: z.object({
    delay_ms: z.number().min(0).max(60_000).default(25).describe('Simulated duration of each call, ms'),
    tau_s: z.number().positive().default(20).describe('Time constant of heating/cooling, s'),
    ambient_c: z.number().default(22).describe('Room temperature, °C'),
  }),
  create: (o): HotplateState => ({ ...o, from_c: o.ambient_c, since: Date.now(), set_c: o.ambient_c }),
  methods: {
    set_temperature: {
      description: 'Set the target temperature, °C.',
      params: z.object({ celsius: z.number().min(20).max(350).describe('Set point, °C (20-350)') }),
      returns: z.number(),
      safety: 'hazardous',
      async run(h, { celsius }, ctx) {
        await sleep(h.delay_ms, ctx.signal);
        const now = Date.now();
        h.from_c = plateTemperature(h, now);
        h.since = now;
        h.set_c = celsius;
        return celsius;
      },
    },
    temperature: {
      description: 'Read the plate temperature, °C.',
      params: z.object({}),
      returns: z.number(),
      safety: 'readonly',
      async run(h, _args, ctx) {
        await sleep(h.delay_ms, ctx.signal);
        return Math.round(plateTemperature(h) * 100) / 100;
      },
    },
    off: {
      description: 'Switch heating off (the plate cools to room temperature).',
      params: z.object({}),
      safety: 'idempotent',
      async run(h, _args, ctx) {
        await sleep(h.delay_ms, ctx.signal);
        const now = Date.now();
        h.from_c = plateTemperature(h, now);
        h.since = now;
        h.set_c = h.ambient_c;
        return 'off';
      },
    },
  },
});
