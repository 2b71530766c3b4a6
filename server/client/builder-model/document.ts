/** The workflow document as the builder holds it and as it saves it; the names, types and lists it is made of. */
import type { JSONSchema } from '../../../core/contracts/index.js';
import type { Arg, COMPARISONS, Condition, Parameter, PARAMETER_TYPES, Phase, Step, Workflow } from '../../../core/workflow/model.js';

export type { Arg, Condition, Parameter, Phase, Step, Workflow };
export type ParamType = (typeof PARAMETER_TYPES)[number];
export type Comparison = (typeof COMPARISONS)[number];
export type StepKind = Step['kind'];
export type CallStep = Extract<Step, { kind: 'call' }>;

export const PHASES: readonly Phase[] = ['prep', 'main', 'cleanup'];
export const PARAM_TYPES: readonly ParamType[] = ['number', 'integer', 'string', 'boolean'];
export const OPS: readonly Comparison[] = ['==', '!=', '<', '<=', '>', '>='];
/** Names of workflows, parameters and variables (the same rule as the server's model). */
export const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
export const NAME_RULE = 'must start with a letter or _ and use only letters, digits, _ or -';

/** What the builder knows about a method of the deck (from the live deck's schemas). */
export interface MethodInfo {
  name: string;
  description: string;
  safety: string;
  params: JSONSchema;
  returns?: JSONSchema;
}
export interface InstrumentInfo {
  name: string;
  driver: string;
  description: string;
  methods: MethodInfo[];
}
export type MethodLookup = (instrument: string, method: string) => MethodInfo | undefined;
import { clone, isObject } from './util.js';

export function emptyDoc(name = ''): Workflow {
  return { name, description: '', parameters: [], outputs: [], prep: [], main: [], cleanup: [] };
}

/**
 * A document as the builder holds it: a deep copy with every list present (an `if` always has `else`).
 * Anything the model does not know is kept as it is, so the server reports it rather than the builder
 * dropping it silently.
 */
export function normalise(input: unknown): Workflow {
  const src = isObject(input) ? clone(input) : {};
  const doc = { ...emptyDoc(), ...src } as Workflow;
  if (typeof doc.name !== 'string') doc.name = '';
  if (typeof doc.description !== 'string') doc.description = '';
  for (const k of ['parameters', 'outputs', ...PHASES] as const) if (!Array.isArray(doc[k])) (doc as Record<string, unknown>)[k] = [];
  const fix = (steps: Step[]) => {
    for (const s of steps) {
      if (!isObject(s)) continue;
      if (s.kind === 'repeat') {
        if (!Array.isArray(s.steps)) s.steps = [];
        fix(s.steps);
      } else if (s.kind === 'if') {
        if (!Array.isArray(s.then)) s.then = [];
        if (!Array.isArray(s.else)) s.else = [];
        fix(s.then);
        fix(s.else);
      } else if (s.kind === 'call' && !isObject(s.args)) s.args = {};
    }
  };
  for (const p of PHASES) fix(doc[p]);
  return doc;
}

/**
 * The document to save: empty optional texts and lists left out (an empty `else`, a blank label, an unset
 * default), keys in a stable order. Comparing two of these tells whether there are unsaved changes.
 */
export function toDocument(doc: Workflow): Workflow {
  const step = (s: Step): Step => {
    if (!isObject(s)) return s;
    const label = typeof s.label === 'string' && s.label.trim() ? { label: s.label } : {};
    switch (s.kind) {
      case 'call': {
        const args = isObject(s.args) ? Object.fromEntries(Object.entries(s.args).filter(([, a]) => a !== undefined)) : {};
        return {
          kind: 'call',
          instrument: s.instrument,
          method: s.method,
          args,
          ...(typeof s.save_as === 'string' && s.save_as.trim() ? { save_as: s.save_as.trim() } : {}),
          ...label,
        };
      }
      case 'wait':
        return { kind: 'wait', seconds: s.seconds, ...label };
      case 'pause':
        return { kind: 'pause', ...(typeof s.message === 'string' && s.message.trim() ? { message: s.message } : {}), ...label };
      case 'input':
        return { kind: 'input', prompt: s.prompt, save_as: typeof s.save_as === 'string' ? s.save_as.trim() : s.save_as, schema: s.schema, ...label };
      case 'repeat':
        return { kind: 'repeat', times: s.times, steps: (s.steps ?? []).map(step), ...label };
      case 'if':
        return {
          kind: 'if',
          condition: s.condition,
          then: (s.then ?? []).map(step),
          ...(s.else && s.else.length ? { else: s.else.map(step) } : {}),
          ...label,
        };
      default:
        return s; // unknown kind: the server names it
    }
  };
  const param = (p: Parameter): Parameter => ({
    name: p.name,
    type: p.type,
    ...(p.default !== undefined && p.default !== '' ? { default: p.default } : {}),
    ...(typeof p.description === 'string' && p.description.trim() ? { description: p.description } : {}),
  });
  return {
    name: doc.name.trim(),
    description: doc.description,
    parameters: doc.parameters.map(param),
    outputs: [...doc.outputs],
    prep: doc.prep.map(step),
    main: doc.main.map(step),
    cleanup: doc.cleanup.map(step),
  };
}
