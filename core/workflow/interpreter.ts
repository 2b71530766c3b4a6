/**
 * The workflow interpreter: runs ONE phase's steps with the runner in control (DESIGN.md §4-5). It knows
 * nothing of queues, records or instruments: every effect goes through `RunControl`, so the runner decides
 * what pausing, failing and aborting mean, and records what happened.
 *
 * What counts as a step: `call`, `wait`, `pause`, `input` and `if` are steps — each is announced with
 * `beforeStep`, gets the next `index`, and ends with `afterStep` (an `if` step's result is the value of its
 * condition). A `repeat` is structure only: its body's steps are the steps, each repetition continuing the
 * index count (paths stay `main[1].steps[0]`; the index shows which repetition ran).
 *
 * Errors: an error of the step itself — resolving an argument, the instrument call, evaluating a condition —
 * goes to `control.onError`: 'retry' announces the same step again (same index, arguments resolved again),
 * 'skip' goes on with the next step (a skipped `if` runs neither branch; a skipped call saves nothing). A
 * rejection of beforeStep, wait, pauseStep or onError is the runner's own decision (stop, abort) and ends the
 * phase: runSteps rejects with it.
 *
 * Cost: no parsing, no cloning; a step is one small object and a few awaits. Nothing user-written is
 * evaluated: conditions compare two values with one of six operators.
 */
import { LabError } from '../errors.js';
import { cutText, isCutResult } from '../result-limit.js';
import { deepEqual } from './jsonschema.js';
import { outputName, outputSource, type Arg, type Condition, type Phase, type Step, type Workflow } from './model.js';

export interface StepAt {
  phase: Phase;
  iteration: number | null;
  /** Where the step is in the document: `main[2].then[0]`. */
  path: string;
  /** Running count of executed steps in this phase run, from 0 (a retry keeps its step's index). */
  index: number;
  step: Step;
}

export interface RunControl {
  /** Called before every step (and before each retry of it). May block (paused) or reject (stop). */
  beforeStep(at: StepAt): Promise<void>;
  call(at: StepAt, instrument: string, method: string, args: Record<string, unknown>): Promise<unknown>;
  wait(at: StepAt, seconds: number): Promise<void>;
  /** The operator must continue. */
  pauseStep(at: StepAt, message: string): Promise<void>;
  /** A person must give a value (an `input` step): resolves with it, checked against the step's schema. */
  inputStep?(at: StepAt, step: Extract<Step, { kind: 'input' }>): Promise<unknown>;
  /** A step failed: retry it, skip it, or reject to end the phase. */
  onError(at: StepAt, error: unknown): Promise<'retry' | 'skip'>;
  /** A step succeeded: the call's output, the if's condition value, undefined for wait and pause. */
  afterStep?(at: StepAt, result: unknown): void;
}

/** Values a run reads: the iteration's parameters and the variables saved so far (mutated by save_as). */
export interface Scope {
  params: Record<string, unknown>;
  vars: Record<string, unknown>;
}

const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** The message a pause step shows when it has none of its own. */
export const DEFAULT_PAUSE_MESSAGE = 'Paused by the workflow: continue when ready.';

/* -------------------------------------------------------------- values */

/** The value of one argument in `scope`; `field` names it in the error when it is undefined. */
export function resolveArg(arg: Arg, scope: Scope, field: string): unknown {
  if ('value' in arg) return arg.value;
  if ('param' in arg) {
    if (!has(scope.params, arg.param)) {
      throw new LabError('invalid_input', `The parameter "${arg.param}" has no value in this run.`, [{ field, message: `the parameter "${arg.param}" has no value` }]);
    }
    return scope.params[arg.param];
  }
  if (!has(scope.vars, arg.var)) {
    throw new LabError('invalid_input', `The variable "${arg.var}" is not set: the step that saves it has not run (skipped, failed, or in a branch not taken).`, [
      { field, message: `the variable "${arg.var}" is not set` },
    ]);
  }
  const value = scope.vars[arg.var];
  // a result over the bound was kept as its marker (core/result-limit.ts): it is no data to pass on
  if (isCutResult(value)) {
    throw new LabError(
      'invalid_input',
      `The variable "${arg.var}" holds a result that was cut (${cutText(value)}): it cannot be passed on. Return less from the method, or raise LABDECK_MAX_RESULT_BYTES.`,
      [{ field, message: `the variable "${arg.var}" holds a cut result` }],
    );
  }
  return value;
}

function resolveArgs(args: Record<string, Arg> | undefined, scope: Scope, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (args) for (const k in args) out[k] = resolveArg(args[k], scope, `${path}.args.${k}`);
  return out;
}

const describe = (v: unknown) => `${v === null ? 'null' : Array.isArray(v) ? 'list' : typeof v} ${JSON.stringify(v) ?? String(v)}`;

/**
 * `left op right`: == and != compare by value (deep for lists and objects, no type coercion: 1 != "1");
 * < <= > >= need two numbers, two strings or two booleans (false < true), else throw.
 */
export function compare(left: unknown, op: Condition['op'], right: unknown, field = 'condition'): boolean {
  if (op === '==') return deepEqual(left, right);
  if (op === '!=') return !deepEqual(left, right);
  const t = typeof left;
  if (t !== typeof right || !(t === 'number' || t === 'string' || t === 'boolean') || Number.isNaN(left) || Number.isNaN(right)) {
    const message = `cannot compare ${describe(left)} ${op} ${describe(right)}: both sides must be numbers, both strings or both booleans`;
    throw new LabError('invalid_input', `Cannot ${message.slice(7)}.`, [{ field, message }]);
  }
  const a = left as number | string | boolean;
  const b = right as number | string | boolean;
  switch (op) {
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    default:
      throw new LabError('invalid_input', `Unknown comparison "${String(op)}".`);
  }
}

export function evaluateCondition(c: Condition, scope: Scope, path = 'condition'): boolean {
  return compare(resolveArg(c.left, scope, `${path}.left`), c.op, resolveArg(c.right, scope, `${path}.right`), path);
}

/* ------------------------------------------------------------ running */

interface Run {
  scope: Scope;
  control: RunControl;
  phase: Phase;
  iteration: number | null;
  index: number;
}

/** Run one phase's steps in order; resolves when they are done, rejects when the runner ends the phase. */
export async function runSteps(steps: Step[], scope: Scope, control: RunControl, where: { phase: Phase; iteration: number | null }): Promise<void> {
  await runList(steps, where.phase, { scope, control, phase: where.phase, iteration: where.iteration, index: 0 });
}

async function runList(steps: readonly Step[], prefix: string, run: Run): Promise<void> {
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    const path = `${prefix}[${i}]`;
    if (step.kind === 'repeat') {
      const body = `${path}.steps`;
      for (let r = 0; r < step.times; r++) await runList(step.steps, body, run);
    } else {
      const next = await runStep(step, path, run);
      if (next) await runList(next.steps, next.prefix, run);
    }
  }
}

/** Run one step, retrying as the runner asks; an `if` returns the branch to run next. */
async function runStep(step: Exclude<Step, { kind: 'repeat' }>, path: string, run: Run): Promise<{ steps: Step[]; prefix: string } | null> {
  const { control, scope } = run;
  const at: StepAt = { phase: run.phase, iteration: run.iteration, path, index: run.index++, step };
  for (;;) {
    await control.beforeStep(at);
    switch (step.kind) {
      case 'wait':
        await control.wait(at, step.seconds);
        control.afterStep?.(at, undefined);
        return null;
      case 'pause':
        await control.pauseStep(at, step.message || DEFAULT_PAUSE_MESSAGE);
        control.afterStep?.(at, undefined);
        return null;
      case 'input': {
        if (!control.inputStep) throw new LabError('invalid_input', `${path} asks a person for ${step.save_as}, and nobody can answer here.`);
        const value = await control.inputStep(at, step);
        scope.vars[step.save_as] = value;
        control.afterStep?.(at, value);
        return null;
      }
      case 'call': {
        let output: unknown;
        try {
          output = await control.call(at, step.instrument, step.method, resolveArgs(step.args, scope, path));
        } catch (e) {
          if ((await control.onError(at, e)) === 'retry') continue;
          return null;
        }
        if (step.save_as) scope.vars[step.save_as] = output;
        control.afterStep?.(at, output);
        return null;
      }
      case 'if': {
        let value: boolean;
        try {
          value = evaluateCondition(step.condition, scope, `${path}.condition`);
        } catch (e) {
          if ((await control.onError(at, e)) === 'retry') continue;
          return null;
        }
        control.afterStep?.(at, value);
        if (value) return { steps: step.then, prefix: `${path}.then` };
        return step.else ? { steps: step.else, prefix: `${path}.else` } : null;
      }
      default: {
        const unknown: never = step;
        throw new LabError('internal', `Unknown step kind ${JSON.stringify((unknown as { kind?: unknown }).kind)} at ${path}.`);
      }
    }
  }
}

/**
 * The iteration's outputs: each named variable's value, null when no step saved it in this run. A dotted
 * name picks a field of a variable: `run.yield` is `yield` of the object saved as `run`; `{ name: "power",
 * from: "cell.power_mw" }` reports the field `power_mw` of `cell` as `power`.
 */
export function outputsOf(workflow: Pick<Workflow, 'outputs'>, scope: Scope): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of workflow.outputs) out[outputName(o)] = outputValue(scope.vars, outputSource(o));
  return out;
}

/** The value of an output among saved variables: `run` itself, or a field of it (`run.yield`, `pos.0`); null when absent. */
export function outputValue(vars: Record<string, unknown>, name: string): unknown {
  const [root, ...path] = name.split('.');
  let v: unknown = has(vars, root!) ? vars[root!] : null;
  for (const key of path) v = v !== null && typeof v === 'object' && has(v, key) ? (v as Record<string, unknown>)[key] : null;
  return v ?? null;
}
