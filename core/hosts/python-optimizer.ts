/**
 * Optimizers written in Python (python/labdeck_host/optimizer.py): a plugin file's `Optimizer` subclass,
 * described by the host when it loads the file, becomes a `defineOptimizer` optimizer here, so campaigns
 * check its space, options and capabilities exactly as a TypeScript one's (a feature it does not honour is
 * a 400 naming it), and call its suggest / observe in the Python host.
 *
 * Its state lives in the host, created on the first suggest or observe. The proxy keeps what it told it:
 * when the host restarted in between (the state is gone, `not_found`), it creates it again, tells it every
 * observation, and asks again, as a campaign rebuilds a TypeScript optimizer from its records.
 */
import { z } from 'zod';
import {
  defineOptimizer,
  type JSONSchema,
  type JsonValue,
  type Observation,
  type Optimizer,
  type OptimizerCapabilities,
  type OptimizerInstance,
  type ParamValues,
  type ParameterType,
} from '../contracts/index.js';
import { LabError } from '../errors.js';

/** An optimizer class as the host describes it in `load_module`'s result (`optimizers`). */
export interface HostOptimizerClass {
  /** `<file>::<ClassName>`. */
  id: string;
  name: string;
  description: string;
  /** snake_case, as the Python class writes them. */
  capabilities: {
    parameter_types: ParameterType[];
    multi_objective: boolean;
    batch: boolean;
    constraints: boolean;
    outcome_constraints: boolean;
    log_scale: boolean;
    steps: boolean;
  };
  /** JSON Schema (type object) of its options: the parameters of `__init__` after `setup`. */
  options: JSONSchema;
}

/** The host protocol's optimizer requests (docs/python.md, "The host protocol"). */
export type OptimizerRequest =
  | { type: 'optimizer_create'; class: string; handle: string; setup: Record<string, unknown>; config: Record<string, unknown> }
  | { type: 'optimizer_call'; handle: string; method: 'suggest' | 'observe'; args: Record<string, unknown> }
  | { type: 'optimizer_dispose'; handle: string };

/** What an optimizer_call answers: the method's value and the optimizer's snapshot after it. */
interface CallAnswer {
  value: unknown;
  snapshot: { [k: string]: JsonValue };
}

/** The part of the Python host the proxies use. */
export interface OptimizerHost {
  optimizerRequest(req: OptimizerRequest): Promise<unknown>;
}

/** A zod schema for one option, from the JSON Schema the host made of its type hint and default. */
function optionSchema(s: JSONSchema): z.ZodType {
  const alternatives = (s.anyOf as JSONSchema[] | undefined) ?? [s];
  const nullable = alternatives.some((a) => a.type === 'null');
  const [one] = alternatives.filter((a) => a.type !== 'null');
  let t: z.ZodType = z.unknown();
  if (alternatives.length - Number(nullable) === 1) {
    if (Array.isArray(one.enum)) t = z.literal(one.enum as (string | number | boolean)[]);
    else if (one.type === 'integer') t = z.number().int();
    else if (one.type === 'number') t = z.number();
    else if (one.type === 'boolean') t = z.boolean();
    else if (one.type === 'string') t = z.string();
  }
  if (nullable) t = t.nullable();
  if (typeof s.description === 'string') t = t.describe(s.description);
  return 'default' in s ? t.default(s.default as never) : t;
}

function capabilities(c: HostOptimizerClass['capabilities']): OptimizerCapabilities {
  return {
    parameterTypes: c.parameter_types,
    multiObjective: c.multi_objective,
    batch: c.batch,
    constraints: c.constraints,
    outcomeConstraints: c.outcome_constraints,
    logScale: c.log_scale,
    steps: c.steps,
  };
}

let handles = 0;
/** A state whose proxy is gone is dropped in the host too. */
const dropped = new FinalizationRegistry<{ host: OptimizerHost; handle: string | null }>((box) => {
  if (box.handle) box.host.optimizerRequest({ type: 'optimizer_dispose', handle: box.handle }).catch(() => undefined);
});

/** Define the optimizer of a Python class; throws a ContractError naming what its description lacks. */
export function pythonOptimizer(host: OptimizerHost, cls: HostOptimizerClass): Optimizer {
  const props = (cls.options.properties ?? {}) as Record<string, JSONSchema>;
  const config = z.object(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, optionSchema(s)])));
  return defineOptimizer({
    name: cls.name,
    description: cls.description || `${cls.name} (a Python optimizer)`,
    config,
    capabilities: capabilities(cls.capabilities),
    create({ space, objectives, config, seed, constraints, outcomeConstraints }) {
      const names = space.map((p) => p.name);
      const setup = { space, objectives, seed, constraints, outcome_constraints: outcomeConstraints };
      const box = { host, handle: null as string | null };
      const told: Observation[] = [];
      let snapshot: { [k: string]: JsonValue } = {};
      let creating: Promise<string> | null = null;

      const create = () =>
        (creating ??= (async () => {
          const handle = `${cls.name}-${++handles}`;
          await host.optimizerRequest({ type: 'optimizer_create', class: cls.id, handle, setup, config: config as Record<string, unknown> });
          box.handle = handle;
          if (told.length) await host.optimizerRequest({ type: 'optimizer_call', handle, method: 'observe', args: { rows: told } });
          return handle;
        })().catch((e) => {
          creating = null;
          throw e;
        }));
      const call = async (method: 'suggest' | 'observe', args: Record<string, unknown>): Promise<unknown> => {
        for (let attempt = 0; ; attempt++) {
          const handle = await create();
          try {
            const answer = (await host.optimizerRequest({ type: 'optimizer_call', handle, method, args })) as CallAnswer;
            snapshot = answer.snapshot;
            return answer.value;
          } catch (e) {
            // the host restarted since: its state is gone; build it again from what it was told
            if (attempt > 0 || (e as { payload?: { kind?: string } }).payload?.kind !== 'not_found') throw e;
            creating = null;
          }
        }
      };
      const instance: OptimizerInstance = {
        async suggest(n) {
          const out = await call('suggest', { n });
          if (!Array.isArray(out) || out.length !== n || !out.every((p) => p && typeof p === 'object' && names.every((k) => k in p))) {
            throw new LabError(
              'internal',
              `The Python optimizer ${cls.name} answered suggest(${n}) with ${JSON.stringify(out).slice(0, 200)}: expected ${n} parameter set(s) with ${names.join(', ')}.`,
            );
          }
          return out as ParamValues[];
        },
        async observe(rows) {
          // the optimizer sees the parameters it searches, as it suggested them
          const searched = rows.map((r) => ({ params: Object.fromEntries(names.map((k) => [k, r.params[k]])), values: r.values }));
          await call('observe', { rows: searched });
          told.push(...searched);
        },
        snapshot: () => snapshot,
      };
      dropped.register(instance, box);
      return instance;
    },
  });
}
