/**
 * The workflow model (DESIGN.md §4): a named, versioned JSON document of steps in three phases. This file
 * is its one schema: the API validates with it, the builder and the OpenAPI document are generated from it.
 * Nothing here evaluates user strings.
 */
import { z } from 'zod';
import { InputSchema } from './input.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** Names of workflows, parameters and variables. The message follows the field path (`main[0].save_as …`). */
const name = () => z.string().regex(NAME, 'must start with a letter or _ and use only letters, digits, _ or -');

/** An argument: a literal, a workflow parameter, or a variable saved by an earlier step. */
export const Arg = z.union([z.strictObject({ value: z.unknown() }), z.strictObject({ param: z.string().min(1) }), z.strictObject({ var: z.string().min(1) })], {
  error: 'must be {"value": …}, {"param": "name"} or {"var": "name"}',
});
export type Arg = z.infer<typeof Arg>;

export const COMPARISONS = ['==', '!=', '<', '<=', '>', '>='] as const;
export const Condition = z.strictObject({ left: Arg, op: z.enum(COMPARISONS), right: Arg });
export type Condition = z.infer<typeof Condition>;

export type Step =
  | { kind: 'call'; instrument: string; method: string; args?: Record<string, Arg>; save_as?: string; label?: string }
  | { kind: 'wait'; seconds: number; label?: string }
  | { kind: 'pause'; message?: string; label?: string }
  | { kind: 'repeat'; times: number; steps: Step[]; label?: string }
  | { kind: 'if'; condition: Condition; then: Step[]; else?: Step[]; label?: string }
  /** A value a person gives while the run waits (core/workflow/input.ts), saved as `save_as`. */
  | { kind: 'input'; prompt: string; save_as: string; schema: InputSchema; label?: string };

const label = z.string().max(200).optional();

export const Step: z.ZodType<Step> = z.lazy(() =>
  z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('call'),
      instrument: z.string().min(1),
      method: z.string().min(1),
      args: z.record(z.string(), Arg).optional(),
      save_as: z
        .string()
        .regex(NAME, {
          error: (iss) =>
            typeof iss.input === 'string' && /^[A-Za-z_][A-Za-z0-9_-]*\.[^.]/.test(iss.input)
              ? `is a variable name, without a dot: save the whole result as "${iss.input.split('.')[0]}", and report its field as the output "${iss.input}"`
              : 'must start with a letter or _ and use only letters, digits, _ or -',
        })
        .optional(),
      label,
    }),
    z.strictObject({
      kind: z.literal('wait'),
      seconds: z
        .number()
        .min(0)
        .max(7 * 24 * 3600),
      label,
    }),
    z.strictObject({ kind: z.literal('pause'), message: z.string().max(2000).optional(), label }),
    z.strictObject({ kind: z.literal('repeat'), times: z.int().min(0).max(1_000_000), steps: z.array(Step), label }),
    z.strictObject({ kind: z.literal('if'), condition: Condition, then: z.array(Step), else: z.array(Step).optional(), label }),
    z.strictObject({ kind: z.literal('input'), prompt: z.string().min(1).max(2000), save_as: name(), schema: InputSchema, label }),
  ]),
);

export const PARAMETER_TYPES = ['number', 'integer', 'string', 'boolean'] as const;
export const Parameter = z.strictObject({
  name: name(),
  type: z.enum(PARAMETER_TYPES).default('number'),
  default: z.union([z.number(), z.string(), z.boolean()]).optional(),
  description: z.string().max(2000).optional(),
});
export type Parameter = z.infer<typeof Parameter>;

export const PHASES = ['prep', 'main', 'cleanup'] as const;
export type Phase = (typeof PHASES)[number];

/** An output's name: a variable, a field of one (`run.yield`, `pos.0`), or a name of its own (`power`). */
const OUTPUT_NAME = /^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;

/**
 * An output: the name of a variable a main step saves, or of a field of one (`run.yield` is `yield` of the
 * object saved as `run`); or a name of its own for such a value, `{ "name": "power", "from": "cell.power_mw" }`
 * (a Python script's `return {"power": cell["power_mw"]}`).
 */
export const Output = z.union(
  [
    z.string().min(1),
    z.strictObject({
      name: z.string().regex(OUTPUT_NAME, 'must start with a letter or _ and use only letters, digits, _, - or . between fields'),
      from: z.string().regex(OUTPUT_NAME, 'must be a variable or a field of one (cell.power_mw)'),
    }),
  ],
  { error: 'must be a variable name ("mass", "run.yield") or {"name": "power", "from": "cell.power_mw"}' },
);
export type Output = z.infer<typeof Output>;

/** The name an output is reported under (a record's key, a CSV column, an objective). */
export const outputName = (o: Output): string => (typeof o === 'string' ? o : o.name);
/** Where an output's value comes from: a variable, or a field of one. */
export const outputSource = (o: Output): string => (typeof o === 'string' ? o : o.from);

/**
 * Where the value reported as `name` comes from: an output's source, or a field of an output (`cell.current_ma`
 * of the output `cell`, `c.current_ma` of `{ name: "c", from: "cell" }`); null when it is neither.
 */
export function sourceOf(outputs: readonly Output[], name: string): string | null {
  let best: Output | null = null;
  for (const o of outputs) {
    const n = outputName(o);
    if (n === name) return outputSource(o);
    if (name.startsWith(`${n}.`) && (!best || n.length > outputName(best).length)) best = o;
  }
  return best ? outputSource(best) + name.slice(outputName(best).length) : null;
}

export const Workflow = z.strictObject({
  name: name().max(100),
  description: z.string().max(10_000).default(''),
  parameters: z.array(Parameter).default([]),
  /** Variables (`save_as`) reported as the outputs of each iteration; `run.yield` picks a field of one (see Output). */
  outputs: z.array(Output).default([]),
  prep: z.array(Step).default([]),
  main: z.array(Step).default([]),
  cleanup: z.array(Step).default([]),
});
export type Workflow = z.infer<typeof Workflow>;
export type WorkflowInput = z.input<typeof Workflow>;
