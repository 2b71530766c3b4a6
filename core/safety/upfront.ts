/**
 * Refused before anything moves (DESIGN.md §16): a run whose literal values or config rows break a limit, and
 * a campaign whose search space (a range's ends, its choices, fixed values; under linear parameter constraints,
 * the least and greatest value each constrained parameter takes over the polytope) reaches past one, are refused when
 * they are submitted (400 naming the row or parameter, the field and the limit), on every door: the runner's
 * and the campaigns' `prepare` call these. Values known only while it runs (`{"var"}`), readings and states are
 * the call-time guard's.
 */
import { checkConstraints, type InstrumentSchema, type ParameterSpec } from '../contracts/index.js';
import { LabError, type ErrorDetail } from '../errors.js';
import type { Arg, Step, Workflow } from '../workflow/model.js';
import type { SafetyProblem } from './evaluate.js';
import type { SafetyGuard } from './index.js';
import { extents } from './polytope.js';

/** How many problems a refusal lists: 24 rows over one limit are one fact. */
const MAX_REPORTED = 20;
/** How many a preflight lists (it shows them all on one page, so more than a refusal). */
const MAX_PREFLIGHT = 100;

type SchemaOf = (instrument: string) => InstrumentSchema | undefined;
type CallStep = Extract<Step, { kind: 'call' }>;

function* calls(steps: readonly Step[], path: string): Generator<[CallStep, string]> {
  for (const [i, s] of steps.entries()) {
    const at = `${path}[${i}]`;
    if (s.kind === 'call') yield [s, at];
    else if (s.kind === 'repeat') yield* calls(s.steps, `${at}.steps`);
    else if (s.kind === 'if') {
      yield* calls(s.then, `${at}.then`);
      if (s.else) yield* calls(s.else, `${at}.else`);
    }
  }
}

/** The guard's problems for one call step given what is known of its arguments (unknown ones left undefined). */
function stepProblems(guard: SafetyGuard, schemaOf: SchemaOf, step: CallStep, args: Record<string, unknown>): SafetyProblem[] {
  const inst = schemaOf(step.instrument);
  const method = inst?.methods.find((m) => m.name === step.method);
  if (!inst || !method) return [];
  return guard.limits({ instrument: step.instrument, classes: [inst.driver], method: step.method, args, params: method.params });
}

const detail = (field: string, at: string, step: CallStep, p: SafetyProblem, prefix = ''): ErrorDetail => ({
  field,
  step: at,
  message: `${prefix}${step.instrument}.${step.method}: ${p.message}`,
  limit: p.limit,
  value: p.value,
});

function refuse(what: string, details: ErrorDetail[]): never {
  const shown = details.slice(0, MAX_REPORTED);
  const more = details.length > shown.length ? ` And ${details.length - shown.length} more.` : '';
  throw new LabError(
    'invalid_input',
    `${what} breaks the lab's safety limits: ${shown
      .slice(0, 3)
      .map((d) => `${d.field}: ${d.message}`)
      .join('; ')}${details.length > 3 ? '; …' : ''}.${more} Nothing was queued.`,
    shown,
  );
}

/** A step's arguments for one row: literals, the row's parameter values (defaults where the row has none). */
function argsFor(step: CallStep, row: Record<string, unknown> | null, defaults: Record<string, unknown>): { args: Record<string, unknown>; from: Record<string, string> } {
  const args: Record<string, unknown> = {};
  const from: Record<string, string> = {};
  for (const [k, a] of Object.entries(step.args ?? {}) as [string, Arg][]) {
    if ('value' in a) args[k] = a.value;
    else if ('param' in a && row) {
      args[k] = Object.hasOwn(row, a.param) ? row[a.param] : defaults[a.param];
      from[k] = a.param;
    } else args[k] = undefined; // known only while it runs (a variable): the call-time guard checks it
  }
  return { args, from };
}

/** `POST /executions/config`: every literal value and every config row, checked against the limits. */
export function checkRun(guard: SafetyGuard, schemaOf: SchemaOf, definition: Workflow, rows: Record<string, unknown>[], repeat: boolean): void {
  const broken = guard.fileError();
  if (broken) throw broken;
  const details = runProblems(guard, schemaOf, definition, rows, repeat);
  if (details.length) refuse(`This run of ${definition.name}`, details);
}

/** What `checkRun` refuses a run for, each problem once (field: the row's parameter, or the step's argument). */
export function runProblems(guard: SafetyGuard, schemaOf: SchemaOf, definition: Workflow, rows: Record<string, unknown>[], repeat: boolean): ErrorDetail[] {
  const defaults = Object.fromEntries((definition.parameters ?? []).map((p) => [p.name, p.default]));
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  const add = (d: ErrorDetail) => {
    const key = `${d.field}\0${d.message}`;
    if (seen.has(key)) return;
    details.push(d);
    seen.add(key);
  };
  for (const phase of ['prep', 'main', 'cleanup'] as const) {
    for (const [step, at] of calls(definition[phase] ?? [], phase)) {
      const each = phase === 'main' ? rows : [null];
      each.forEach((row, i) => {
        const { args, from } = argsFor(step, row, defaults);
        for (const p of stepProblems(guard, schemaOf, step, args)) {
          const param = from[p.field.split('.')[0]];
          const field = param ? (repeat ? `repeat.${param}` : `config[${i}].${param}`) : `${at}.args.${p.field}`;
          add(detail(field, at, step, p, param && !repeat ? `row ${i + 1}, ${param}: ` : ''));
        }
      });
    }
  }
  return details;
}

/**
 * `POST /executions/campaign`: the search space (a range's ends, each choice, fixed values) checked against the
 * limits. Under linear parameter constraints (`constraints`, as written) a constrained range parameter is held
 * to what the polytope lets it reach, its least and greatest value there (./polytope.ts).
 */
export function checkSpace(guard: SafetyGuard, schemaOf: SchemaOf, definition: Workflow, space: ParameterSpec[], fixed: Record<string, unknown>, constraints: readonly string[] = []): void {
  const broken = guard.fileError();
  if (broken) throw broken;
  const details = spaceProblems(guard, schemaOf, definition, space, fixed, constraints);
  if (details.length) refuse(`This campaign over ${definition.name}`, details);
}

/** What `checkSpace` refuses a campaign for (field: the parameter's bounds or choices, a fixed value, or a step's argument). */
export function spaceProblems(
  guard: SafetyGuard,
  schemaOf: SchemaOf,
  definition: Workflow,
  space: ParameterSpec[],
  fixed: Record<string, unknown>,
  constraints: readonly string[] = [],
): ErrorDetail[] {
  const defaults = Object.fromEntries((definition.parameters ?? []).map((p) => [p.name, p.default]));
  const details: ErrorDetail[] = [];
  const index = new Map(space.map((s, i) => [s.name, i]));
  const linear = constraints.length ? checkConstraints([...constraints], space) : [];
  const reach = extents(space, linear);
  const constrained = new Set(linear.flatMap((c) => Object.keys(c.coefficients)));
  for (const phase of ['prep', 'main', 'cleanup'] as const) {
    for (const [step, at] of calls(definition[phase] ?? [], phase)) {
      const { args: literal, from } = argsFor(step, phase === 'main' ? { ...defaults, ...fixed } : null, defaults);
      // the literal values and the fixed parameters once; each searched parameter at its ends and choices
      const searched = Object.entries(from).filter(([, p]) => index.has(p) && space[index.get(p)!]!.type !== 'fixed');
      const base = { ...literal };
      for (const [k] of searched) base[k] = undefined;
      for (const p of stepProblems(guard, schemaOf, step, base)) {
        const param = from[p.field.split('.')[0]];
        details.push(detail(param ? `fixed.${param}` : `${at}.args.${p.field}`, at, step, p));
      }
      for (const [k, param] of searched) {
        const i = index.get(param)!;
        const s = space[i]!;
        // an empty polytope: no point of the space is ever sent, so none of its constrained parameters reaches a limit
        if (reach.empty && constrained.has(param)) continue;
        const polytope = reach.empty ? undefined : reach.range.get(param);
        const values: unknown[] = s.type === 'choice' ? (s.choices ?? []) : (polytope ?? s.bounds ?? []);
        const what = s.type === 'choice' ? 'choices' : 'bounds';
        const reaches = (v: unknown) =>
          polytope
            ? `under the parameter constraints ${param} reaches ${JSON.stringify(v)} (its range is ${s.bounds![0]}..${s.bounds![1]}): `
            : `the search range of ${param} reaches ${JSON.stringify(v)}: `;
        for (const v of values) {
          for (const p of stepProblems(guard, schemaOf, step, { ...base, [k]: v })) {
            if (p.field.split('.')[0] !== k) continue;
            details.push(detail(`parameters[${i}].${what}`, at, step, p, s.type === 'choice' ? `the choice ${JSON.stringify(v)} of ${param}: ` : reaches(v)));
          }
        }
      }
    }
  }
  return details;
}

/** The safety guard's verdict in a preflight (issue 28): what is known before the task moves. */
export interface SafetyPreflight {
  allowed: boolean;
  /** Each limit a known value breaks: field (row or parameter), step, message, limit, value. */
  problems: ErrorDetail[];
  /** Why every call is blocked (the file does not parse or validate), or null. */
  error: string | null;
  /** Where the file is (a path, or the database). */
  source: string;
  /** What is left to the call-time guard. */
  note: string;
}

const LEFT_TO_CALLS = "Limits are checked here for literal values and each row's (or the search space's) values; readings, states, rules and values known only while it runs are checked at each call.";

/** The verdict of a prepared task: a workflow run's rows (or its repeat row), or a campaign's space. */
export function preflightVerdict(
  guard: SafetyGuard,
  schemaOf: SchemaOf,
  kind: string,
  p: { definition: Workflow; rows?: Record<string, unknown>[]; repeat?: { row: Record<string, unknown> }; space?: ParameterSpec[]; fixed?: Record<string, unknown>; constraints?: string[] },
): SafetyPreflight {
  const source = guard.source;
  const broken = guard.fileError();
  if (broken) return { allowed: false, problems: [{ field: 'safety', message: broken.message }], error: broken.message, source, note: LEFT_TO_CALLS };
  const problems =
    kind === 'campaign'
      ? spaceProblems(guard, schemaOf, p.definition, p.space ?? [], p.fixed ?? {}, p.constraints ?? [])
      : runProblems(guard, schemaOf, p.definition, p.rows ?? (p.repeat ? [p.repeat.row] : []), !p.rows);
  const shown = problems.slice(0, MAX_PREFLIGHT);
  if (problems.length > shown.length) shown.push({ field: 'safety', message: `and ${problems.length - shown.length} more problem(s) of the same kind` });
  return { allowed: problems.length === 0, problems: shown, error: null, source, note: LEFT_TO_CALLS };
}
