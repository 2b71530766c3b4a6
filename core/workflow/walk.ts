/**
 * Walking a workflow's steps: their paths (`main[1].then[0]`), the instruments they use, the schema of an output
 * they save, how many steps a run takes. Shared by validation, the runner, the campaign and the pages.
 */
import type { InstrumentSchema, JSONSchema } from '../contracts/index.js';
import { PHASES, type Phase, type Step, type Workflow } from './model.js';

/** What validation needs from the deck: `schema` throws LabError('not_found') for an unknown instrument. */
export interface DeckSchemas {
  schema(name: string): InstrumentSchema;
  /** When present, used to list the known instruments in the "unknown instrument" message. */
  list?(): InstrumentSchema[];
}

/* ------------------------------------------------------------------ paths */

export type Segment = string | number | symbol;

/** `['main', 1, 'args', 'volume_ml']` → `main[1].args.volume_ml` */
export function formatPath(segments: readonly Segment[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out ? `.${String(s)}` : String(s);
  }
  return out;
}

export interface StepVisit {
  phase: Phase;
  path: string;
  step: Step;
}

/** Visit every step under `steps` depth first (document order); `path` prefixes the paths (`main`). */
export function walkSteps(steps: readonly Step[], path: string, visit: (step: Step, path: string) => void): void {
  steps.forEach((step, i) => {
    const p = `${path}[${i}]`;
    visit(step, p);
    if (step.kind === 'repeat') walkSteps(step.steps, `${p}.steps`, visit);
    else if (step.kind === 'if') {
      walkSteps(step.then, `${p}.then`, visit);
      if (step.else) walkSteps(step.else, `${p}.else`, visit);
    }
  });
}

/** Every step of the workflow with its path, in document order (prep → main → cleanup, depth first). */
export function stepPaths(workflow: Pick<Workflow, Phase>): StepVisit[] {
  const out: StepVisit[] = [];
  for (const phase of PHASES) walkSteps(workflow[phase] ?? [], phase, (step, path) => out.push({ phase, path, step }));
  return out;
}

/** Every instrument a step of the workflow calls, sorted and without duplicates: the runner locks these. */
export function instrumentsOf(workflow: Pick<Workflow, Phase>): string[] {
  const names = new Set<string>();
  for (const { step } of stepPaths(workflow)) if (step.kind === 'call') names.add(step.instrument);
  return [...names].sort();
}

/**
 * What the live deck declares about an output (`run`, `run.yield`, `pos.0`): the method of the main step that
 * saves its variable, and the schema of the value (a field of the declared return object or tuple). Null when
 * nothing is declared (a method without a return schema, a step the deck does not know).
 */
export function outputSchema(workflow: Pick<Workflow, 'main'>, deck: DeckSchemas, output: string): { method: string; schema: JSONSchema } | null {
  const [root, ...path] = output.split('.');
  let call: Extract<Step, { kind: 'call' }> | null = null;
  walkSteps(workflow.main, 'main', (step) => {
    if (!call && step.kind === 'call' && step.save_as === root) call = step;
  });
  if (!call) return null;
  const { instrument, method } = call as Extract<Step, { kind: 'call' }>;
  let schema: unknown;
  try {
    schema = deck.schema(instrument).methods.find((m) => m.name === method)?.returns;
  } catch {
    return null; // an instrument the deck does not have now: validation says so elsewhere
  }
  for (const key of path) {
    const s = schema as { properties?: Record<string, unknown>; prefixItems?: unknown[] } | undefined;
    schema = s?.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : Array.isArray(s?.prefixItems) ? s.prefixItems[Number(key)] : undefined;
  }
  return schema && typeof schema === 'object' ? { method: `${instrument}.${method}`, schema: schema as JSONSchema } : null;
}

/**
 * How many steps one run of `steps` executes, as the interpreter counts them (call, wait, pause and if are
 * steps; a repeat multiplies its body). For an `if`, the longer branch is counted: an upper bound, for
 * progress bars.
 */
export function countSteps(steps: readonly Step[]): number {
  let n = 0;
  for (const s of steps) {
    if (s.kind === 'repeat') n += s.times * countSteps(s.steps);
    else if (s.kind === 'if') n += 1 + Math.max(countSteps(s.then), countSteps(s.else ?? []));
    else n += 1;
  }
  return n;
}
