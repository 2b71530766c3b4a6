/**
 * Type tests of the plugin contract (core/contracts), as Fastify keeps type tests of its public API: this file
 * is compiled by `npm run typecheck` (tsconfig.json includes test/) and never run. The definitions without a
 * mark are what a plugin author writes, and must compile. Each `@ts-expect-error` line is a definition that
 * breaks the contract: should the contract loosen so that it compiles, the directive is unused and the type
 * check fails (TS2578). test/unit/contract-types.test.ts checks that this file stays in the type check.
 */
import {
  defineInstrument,
  defineOptimizer,
  z,
  type CallContext,
  type Consumption,
  type DeviceSpec,
  type InstrumentDriver,
  type MethodDefinition,
  type Optimizer,
  type OptimizerInstance,
  type ParamValues,
} from '../../core/contracts/index.js';

/* ------------------------------------------------------------------ instrument drivers: kept */

type PumpState = { rate: number; total: number };

export const pump = defineInstrument({
  name: 'pump',
  version: '1.0.0',
  description: 'A syringe pump',
  options: z.object({ rate: z.number().default(1) }),
  create: (o) => ({ rate: o.rate, total: 0 }),
  methods: {
    dose: {
      description: 'Dispense a volume',
      params: z.object({ volume_ml: z.number().gt(0), source: z.string() }),
      safety: 'hazardous',
      consumes: [{ resource: 'tips' }, { resource: { arg: 'source' }, amount: { arg: 'volume_ml' } }],
      run: (p, args: { volume_ml: number }, ctx) => {
        ctx.log('dosing');
        if (ctx.signal.aborted) return 0;
        p.total += args.volume_ml;
        return p.total;
      },
    },
    total: { params: z.object({}), safety: 'readonly', hidden: true, run: (p) => p.total },
  },
  dispose: (p) => void (p.total = 0),
});
// the driver keeps its options' and instance's types, and declares devices
export const typedPump: InstrumentDriver<z.ZodObject<{ rate: z.ZodDefault<z.ZodNumber> }>, PumpState> = pump;
export const pumpDevice: DeviceSpec = pump.with({ rate: 2 });
export const defaultDevice: DeviceSpec = pump.with();
// an async create, and a method typed on its own
export const asyncDriver = defineInstrument({
  name: 'balance',
  version: '2.0.0',
  options: z.object({}),
  create: async () => ({ grams: 0 }),
  methods: { weigh: { params: z.object({}), run: async (b) => b.grams } },
});
export const method: MethodDefinition<PumpState, z.ZodObject<{ by: z.ZodNumber }>> = { params: z.object({ by: z.number() }), run: (p, { by }) => (p.rate *= by) };
export const moves: Consumption = { resource: { arg: 'sample' }, to: { arg: 'target' } };

/* ------------------------------------------------------------------ instrument drivers: broken */

const noop = { params: z.object({}), run: () => null };

// @ts-expect-error a driver needs a version
defineInstrument({ name: 'x', options: z.object({}), create: () => ({}), methods: { noop } });
// @ts-expect-error a driver needs a name
defineInstrument({ version: '1', options: z.object({}), create: () => ({}), methods: { noop } });
// @ts-expect-error options are a zod object, not a plain one
defineInstrument({ name: 'x', version: '1', options: { rate: 1 }, create: () => ({}), methods: { noop } });
// @ts-expect-error a driver makes its instances: create is required
defineInstrument({ name: 'x', version: '1', options: z.object({}), methods: { noop } });
// @ts-expect-error methods are required
defineInstrument({ name: 'x', version: '1', options: z.object({}), create: () => ({}) });
// @ts-expect-error create is given the options as parsed: rate is a number
defineInstrument({ name: 'x', version: '1', options: z.object({ rate: z.number() }), create: (o) => ({ r: o.rate.toUpperCase() }), methods: { noop } });
// one broken method each (the rest of the driver keeps the contract)
const base = { name: 'x', version: '1', options: z.object({}), create: () => ({ n: 0 }) };
// @ts-expect-error `unknown` is what nobody declared: a driver declares readonly, idempotent or hazardous
defineInstrument({ ...base, methods: { b: { params: z.object({}), safety: 'unknown', run: () => null } } });
// @ts-expect-error a safety level is one of the three
defineInstrument({ ...base, methods: { c: { params: z.object({}), safety: 'dangerous', run: () => null } } });
// @ts-expect-error a method runs: run is required
defineInstrument({ ...base, methods: { d: { params: z.object({}) } } });
// @ts-expect-error the instance is what create made: it has no `m`
defineInstrument({ ...base, methods: { e: { params: z.object({}), run: (inst) => inst.m } } });
// @ts-expect-error the call context is narrow: no deck, no store, no host
defineInstrument({ ...base, methods: { f: { params: z.object({}), run: (_i, _a, ctx) => ctx.deck } } });
// @ts-expect-error a consumption names its resource
defineInstrument({ ...base, methods: { g: { params: z.object({}), consumes: [{ amount: 1 }], run: () => null } } });
// @ts-expect-error an argument is named by { arg }
defineInstrument({ ...base, methods: { h: { params: z.object({}), consumes: [{ resource: { param: 'source' } }], run: () => null } } });
// @ts-expect-error hidden is a flag
defineInstrument({ ...base, methods: { i: { params: z.object({}), hidden: 'yes', run: () => null } } });
// @ts-expect-error a method typed on its own: its parameters are a zod object
export const untyped: MethodDefinition<PumpState, z.ZodObject<{ by: z.ZodNumber }>> = { params: { by: 1 }, run: () => null };
// @ts-expect-error and its run is given them parsed: by is a number
export const misread: MethodDefinition<PumpState, z.ZodObject<{ by: z.ZodNumber }>> = { params: z.object({ by: z.number() }), run: (_p, { by }) => by.toUpperCase() };
// @ts-expect-error a device's options are the driver's: rate is a number
pump.with({ rate: 'fast' });
// @ts-expect-error and only the driver's
pump.with({ speed: 2 });
// @ts-expect-error a call context has an abort signal and a log, nothing to be made up
export const ctx: CallContext = { signal: new AbortController().signal };

/* ------------------------------------------------------------------ optimizers: kept */

const caps = { parameterTypes: ['range', 'int'] as ('range' | 'int')[], multiObjective: false, batch: true, constraints: false };

export const grid = defineOptimizer({
  name: 'grid',
  description: 'Walks each range in even steps',
  config: z.object({ step: z.number().default(0.1) }),
  capabilities: caps,
  create: ({ space, config, seed, constraints }) => {
    const step: number = config.step;
    let i = seed + constraints.length;
    const instance: OptimizerInstance = {
      suggest: (n) => Array.from({ length: n }, (): ParamValues => Object.fromEntries(space.map((p) => [p.name, (i++ * step) % 1]))),
      observe: async (rows) => void rows.map((r) => r.values),
      snapshot: () => ({ i, step, names: space.map((p) => p.name), nested: { ok: true, none: null } }),
      restore: ({ pending, discarded }) => void (i += pending.length + discarded.length),
    };
    return instance;
  },
});
export const anyOptimizer: Optimizer = grid;

/* ------------------------------------------------------------------ optimizers: broken */

const instance = (): OptimizerInstance => ({ suggest: () => [], observe: () => undefined, snapshot: () => ({}) });

// @ts-expect-error an optimizer describes itself
defineOptimizer({ name: 'x', config: z.object({}), capabilities: caps, create: instance });
// @ts-expect-error its config is a zod object
defineOptimizer({ name: 'x', description: 'd', config: { step: 1 }, capabilities: caps, create: instance });
// @ts-expect-error capabilities say all of parameterTypes, multiObjective, batch and constraints
defineOptimizer({ name: 'x', description: 'd', config: z.object({}), capabilities: { parameterTypes: ['range'], multiObjective: false, constraints: false }, create: instance });
// @ts-expect-error parameter types are range, int and choice
defineOptimizer({ name: 'x', description: 'd', config: z.object({}), capabilities: { ...caps, parameterTypes: ['float'] }, create: instance });
// @ts-expect-error create is given the config as parsed: step is a number
defineOptimizer({ name: 'x', description: 'd', config: z.object({ step: z.number() }), capabilities: caps, create: ({ config }) => (config.step.toUpperCase(), instance()) });
// @ts-expect-error create makes an instance
defineOptimizer({ name: 'x', description: 'd', config: z.object({}), capabilities: caps, create: () => ({ suggest: () => [] }) });
export const broken: OptimizerInstance[] = [
  // @ts-expect-error a suggestion is a parameter set, not a number
  { suggest: () => [1, 2], observe: () => undefined, snapshot: () => ({}) },
  // @ts-expect-error a parameter's value is a number or a string
  { suggest: () => [{ x: true }], observe: () => undefined, snapshot: () => ({}) },
  // @ts-expect-error a snapshot is JSON: no functions
  { suggest: () => [], observe: () => undefined, snapshot: () => ({ f: () => 1 }) },
  // @ts-expect-error a snapshot is JSON: no undefined
  { suggest: () => [], observe: () => undefined, snapshot: () => ({ u: undefined }) },
  // @ts-expect-error observe is required
  { suggest: () => [], snapshot: () => ({}) },
];
