/**
 * The workflow builder's model: pure functions over the workflow document (DESIGN.md §4), no DOM. The page
 * (builder.ts) keeps one document as its state, changes it only through these functions, and re-renders.
 *
 * - Steps are addressed by paths, as the server's validation names them: a list is `main` or
 *   `main[2].steps` / `main[0].then` / `main[0].else`; a step is `main[2].steps[1]`.
 * - An argument field is text. `#name` is a workflow parameter ({ "param": "name" }), `$name` a variable saved
 *   by an earlier step ({ "var": "name" }); anything else is a literal typed by the argument's JSON Schema
 *   (`\#x` is the literal text "#x"). Nothing here evaluates user text: literals go through JSON.parse at most.
 *
 * Only types are imported from the zod model, so the browser bundle does not carry zod.
 */
import type { JSONSchema } from '../../core/contracts/index.js';
import { acceptedTypes, checkValue, deepEqual } from '../../core/workflow/jsonschema.js';
import type { Arg, COMPARISONS, Condition, Parameter, PARAMETER_TYPES, Phase, Step, Workflow } from '../../core/workflow/model.js';

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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/* ------------------------------------------------------------ documents */

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

/* ---------------------------------------------------------------- paths */

type Segment = string | number;

/** `main[2].then[0].steps` → ['main', 2, 'then', 0, 'steps']; throws on anything else. */
export function parsePath(path: string): Segment[] {
  const out: Segment[] = [];
  const re = /(?:^|\.)([A-Za-z_]+)|\[(\d+)\]/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < path.length && (m = re.exec(path))) {
    out.push(m[1] !== undefined ? m[1] : Number(m[2]));
    at = re.lastIndex;
  }
  if (at !== path.length || out.length === 0) throw new Error(`not a step path: ${path}`);
  return out;
}

export const stepPath = (list: string, index: number) => `${list}[${index}]`;

/** The list a path names (`main`, `main[1].steps`, `main[0].else`); an `if` without `else` gets one. */
export function listAt(doc: Workflow, path: string): Step[] {
  const segs = parsePath(path);
  if (!PHASES.includes(segs[0] as Phase)) throw new Error(`not a step list: ${path}`);
  let node: unknown = doc[segs[0] as Phase];
  for (let i = 1; i < segs.length; i++) {
    const s = segs[i];
    if (typeof s === 'number') {
      if (!Array.isArray(node) || !isObject(node[s])) throw new Error(`no step at ${path}`);
      node = node[s];
    } else {
      const obj = node as Record<string, unknown>;
      if (s === 'else' && obj.kind === 'if' && !Array.isArray(obj.else)) obj.else = [];
      node = obj[s];
    }
  }
  if (!Array.isArray(node)) throw new Error(`not a step list: ${path}`);
  return node as Step[];
}

/** Split a step path into its list and index: `main[1].steps[0]` → ['main[1].steps', 0]. */
export function splitStepPath(path: string): [string, number] {
  const m = /^(.*)\[(\d+)\]$/.exec(path);
  if (!m) throw new Error(`not a step path: ${path}`);
  return [m[1], Number(m[2])];
}

export function stepAt(doc: Workflow, path: string): Step {
  const [list, i] = splitStepPath(path);
  const step = listAt(doc, list)[i];
  if (!step) throw new Error(`no step at ${path}`);
  return step;
}

export function insertStep(doc: Workflow, list: string, index: number, step: Step): string {
  const steps = listAt(doc, list);
  const at = Math.max(0, Math.min(index, steps.length));
  steps.splice(at, 0, step);
  return stepPath(list, at);
}

export function removeStep(doc: Workflow, path: string): Step {
  const [list, i] = splitStepPath(path);
  const steps = listAt(doc, list);
  if (i >= steps.length) throw new Error(`no step at ${path}`);
  return steps.splice(i, 1)[0];
}

/**
 * Move a step from one list to another (or within one). `toIndex` is the position in the target list as
 * it is after the step was taken out (what SortableJS reports as newIndex). A block cannot move into
 * itself: false, and nothing changes.
 */
export function moveStep(doc: Workflow, fromList: string, fromIndex: number, toList: string, toIndex: number): boolean {
  const moving = stepPath(fromList, fromIndex);
  if (toList === moving || toList.startsWith(`${moving}.`)) return false;
  const source = listAt(doc, fromList);
  if (fromIndex < 0 || fromIndex >= source.length) return false;
  // Resolve the target before removing: removal shifts the indices inside the target's path.
  const target = listAt(doc, toList);
  const [step] = source.splice(fromIndex, 1);
  target.splice(Math.max(0, Math.min(toIndex, target.length)), 0, step);
  return true;
}

/** Every step with its path, in document order (prep → main → cleanup, depth first). */
export function walk(doc: Workflow, visit: (step: Step, path: string, phase: Phase) => void): void {
  const go = (steps: Step[], list: string, phase: Phase) =>
    steps.forEach((s, i) => {
      const p = stepPath(list, i);
      visit(s, p, phase);
      if (!isObject(s)) return;
      if (s.kind === 'repeat' && Array.isArray(s.steps)) go(s.steps, `${p}.steps`, phase);
      if (s.kind === 'if') {
        if (Array.isArray(s.then)) go(s.then, `${p}.then`, phase);
        if (Array.isArray(s.else)) go(s.else, `${p}.else`, phase);
      }
    });
  for (const phase of PHASES) go(doc[phase], phase, phase);
}

/* ---------------------------------------------------------------- steps */

export type BlockKind = Exclude<StepKind, 'call'>;

export function newCall(instrument: string, method: string): Step {
  return { kind: 'call', instrument, method, args: {} };
}

export function newBlock(kind: BlockKind): Step {
  switch (kind) {
    case 'wait':
      return { kind: 'wait', seconds: 1 };
    case 'pause':
      return { kind: 'pause', message: '' };
    case 'repeat':
      return { kind: 'repeat', times: 2, steps: [] };
    case 'if':
      return { kind: 'if', condition: { left: { value: 0 }, op: '>', right: { value: 0 } }, then: [], else: [] };
  }
}

/** One line about a step, for lists and the read-only view: `pump.dose(volume_ml: #volume) → dosed`. */
export function summary(step: Step): string {
  switch (step.kind) {
    case 'call': {
      const args = Object.entries(step.args ?? {}).map(([k, a]) => `${k}: ${argText(a)}`);
      return `${step.instrument}.${step.method}(${args.join(', ')})${step.save_as ? ` → ${step.save_as}` : ''}`;
    }
    case 'wait':
      return `wait ${step.seconds} s`;
    case 'pause':
      return `pause${step.message ? `: ${step.message}` : ''}`;
    case 'repeat':
      return `repeat ${step.times}×`;
    case 'if':
      return `if ${argText(step.condition.left)} ${step.condition.op} ${argText(step.condition.right)}`;
  }
}

/* ------------------------------------------------------------ arguments */

export interface ArgParse {
  /** undefined: the field is empty (the argument is left out; the method's default applies). */
  arg: Arg | undefined;
  /** A hint for the field, when the text does not fit the schema (the server will name it too). */
  problem?: string;
}

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** The JSON types a schema accepts; null when it says nothing (any JSON value). */
export function typesOf(schema: JSONSchema | null | undefined): Set<string> | null {
  if (!schema) return null;
  const t = acceptedTypes(schema);
  return t && t.size ? t : null;
}

/**
 * Field text → argument. `#name` → { param }, `$name` → { var }, empty → undefined, otherwise a literal
 * typed by the schema: a number for number fields, true/false for booleans, the text itself for strings,
 * JSON for lists, objects and untyped fields (text that is not JSON is taken as a string there).
 */
export function parseArgText(text: string, schema?: JSONSchema | null): ArgParse {
  const t = text.trim();
  if (t === '') return { arg: undefined };
  if (t[0] === '#' || t[0] === '$') {
    const name = t.slice(1);
    const arg: Arg = t[0] === '#' ? { param: name } : { var: name };
    const what = t[0] === '#' ? 'A parameter name' : 'A variable name';
    return NAME.test(name) ? { arg } : { arg, problem: `${what} ${NAME_RULE}` };
  }
  const escaped = t[0] === '\\';
  const raw = escaped ? text.replace(/^\s*\\/, '') : text;
  const types = typesOf(schema);
  const value = (v: unknown): ArgParse => {
    const problem = schema ? checkValue(schema, v) : null;
    return problem ? { arg: { value: v }, problem: `${problem}` } : { arg: { value: v } };
  };
  if (!escaped) {
    if (types && (types.has('number') || types.has('integer')) && NUMBER.test(t)) return value(Number(t));
    if (types && types.has('boolean') && (t === 'true' || t === 'false')) return value(t === 'true');
    if (types && types.has('null') && t === 'null') return value(null);
  }
  if (!types || types.has('string')) {
    if (types || escaped) return value(raw);
    // untyped: JSON when it parses, else the text
    try {
      return value(JSON.parse(t));
    } catch {
      return value(raw);
    }
  }
  if (!escaped && (types.has('array') || types.has('object'))) {
    try {
      return value(JSON.parse(t));
    } catch {
      return { arg: { value: raw }, problem: 'is not valid JSON (e.g. [1, 2] or {"a": 1})' };
    }
  }
  // The text fits none of the accepted types: keep it, so the server names the problem at its path too.
  const hint =
    types.has('number') || types.has('integer')
      ? 'is not a number: type a number, #parameter or $variable'
      : types.has('boolean')
        ? 'must be true or false (or #parameter, $variable)'
        : `does not fit this argument`;
  return { arg: { value: raw }, problem: hint };
}

/** Argument → field text; the inverse of parseArgText (a string that would read as something else is JSON). */
export function argText(arg: Arg | undefined, schema?: JSONSchema | null): string {
  if (!arg || !isObject(arg)) return '';
  if ('param' in arg) return `#${arg.param}`;
  if ('var' in arg) return `$${arg.var}`;
  const v = (arg as { value: unknown }).value;
  if (v === undefined) return '';
  const candidates: string[] = [];
  if (typeof v === 'string') candidates.push(/^\s*[#$\\]/.test(v) ? `\\${v}` : v);
  else if (typeof v === 'number' || typeof v === 'boolean' || v === null) candidates.push(String(v));
  candidates.push(JSON.stringify(v));
  for (const c of candidates) {
    const back = parseArgText(c, schema).arg;
    if (back && 'value' in back && deepEqual(back.value, v)) return c;
  }
  return candidates[candidates.length - 1];
}

/** Set or clear (undefined) one argument of a call step. */
export function setArg(step: Step, name: string, arg: Arg | undefined): void {
  if (step.kind !== 'call') return;
  const args = (step.args ??= {});
  if (arg === undefined) delete args[name];
  else args[name] = arg;
}

/** The argument properties of a method schema, in declaration order, with which are required. */
export function argFields(params: JSONSchema | undefined): { name: string; schema: JSONSchema; required: boolean }[] {
  const props = isObject(params?.properties) ? (params!.properties as Record<string, JSONSchema>) : {};
  const required = new Set(Array.isArray(params?.required) ? (params!.required as string[]) : []);
  return Object.entries(props).map(([name, schema]) => ({
    name,
    schema: isObject(schema) ? schema : {},
    required: required.has(name) && !(isObject(schema) && 'default' in schema),
  }));
}

/** `number (0 < v ≤ 50)`, `integer`, `one of a, b`: what an argument takes, for its label. */
export function describeSchema(schema: JSONSchema | undefined): string {
  if (!schema) return '';
  const types = typesOf(schema);
  const parts: string[] = [];
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  else if (types) parts.push([...types].filter((t) => t !== 'null').join(' or ') || 'null');
  else parts.push('JSON');
  const lo = typeof schema.minimum === 'number' ? `${schema.minimum} ≤ v` : typeof schema.exclusiveMinimum === 'number' ? `${schema.exclusiveMinimum} < v` : '';
  const hi = typeof schema.maximum === 'number' ? `v ≤ ${schema.maximum}` : typeof schema.exclusiveMaximum === 'number' ? `v < ${schema.exclusiveMaximum}` : '';
  if (lo && hi) parts.push(`(${lo}${hi.slice(1)})`);
  else if (lo || hi) parts.push(`(${lo || hi})`);
  return parts.join(' ');
}

/* ----------------------------------------------------------- parameters */

/** The parameter type that fits an argument's schema: what `#name` declares when the name is new. */
export function paramTypeFor(schema: JSONSchema | null | undefined): ParamType {
  const types = typesOf(schema);
  if (!types) return 'number';
  for (const t of ['number', 'integer', 'boolean', 'string'] as const) {
    // an argument taking any number takes integers too: prefer the wider one
    if (t === 'number' && types.has('number')) return 'number';
    if (types.has(t)) return t;
  }
  return 'string';
}

/** Every `{ param }` reference with where it is (`main[0].args.volume_ml`, `main[1].condition.left`). */
export function paramRefs(doc: Workflow): { name: string; field: string; step: Step }[] {
  const out: { name: string; field: string; step: Step }[] = [];
  const param = (a: unknown) => (isObject(a) && typeof a.param === 'string' ? a.param : null);
  walk(doc, (s, p) => {
    if (!isObject(s)) return;
    if (s.kind === 'call' && isObject(s.args)) {
      for (const [k, a] of Object.entries(s.args)) {
        const name = param(a);
        if (name !== null) out.push({ name, field: `${p}.args.${k}`, step: s });
      }
    } else if (s.kind === 'if' && isObject(s.condition)) {
      for (const side of ['left', 'right'] as const) {
        const name = param(s.condition[side]);
        if (name !== null) out.push({ name, field: `${p}.condition.${side}`, step: s });
      }
    }
  });
  return out;
}

/**
 * Declare every parameter a step refers to (`#name`) that the workflow does not declare yet, with the type
 * of the argument it is used for (number when unknown). Returns the names added. Invalid names are left
 * for the server to report.
 */
export function declareMissingParams(doc: Workflow, lookup: MethodLookup): string[] {
  const have = new Set(doc.parameters.map((p) => p.name));
  const added: string[] = [];
  for (const ref of paramRefs(doc)) {
    if (have.has(ref.name) || !NAME.test(ref.name)) continue;
    let schema: JSONSchema | null = null;
    if (ref.step.kind === 'call') {
      const arg = ref.field.slice(ref.field.lastIndexOf('.args.') + 6);
      schema = argFields(lookup(ref.step.instrument, ref.step.method)?.params).find((f) => f.name === arg)?.schema ?? null;
    }
    doc.parameters.push({ name: ref.name, type: paramTypeFor(schema) });
    have.add(ref.name);
    added.push(ref.name);
  }
  return added;
}

/** How many references each declared parameter has. */
export function paramUsage(doc: Workflow): Map<string, number> {
  const n = new Map(doc.parameters.map((p) => [p.name, 0]));
  for (const r of paramRefs(doc)) if (n.has(r.name)) n.set(r.name, n.get(r.name)! + 1);
  return n;
}

/** Rename a parameter and every reference to it. */
export function renameParam(doc: Workflow, from: string, to: string): void {
  if (from === to) return;
  for (const p of doc.parameters) if (p.name === from) p.name = to;
  walk(doc, (s) => {
    if (!isObject(s)) return;
    const fix = (a: unknown) => {
      if (isObject(a) && a.param === from) a.param = to;
    };
    if (s.kind === 'call' && isObject(s.args)) Object.values(s.args).forEach(fix);
    if (s.kind === 'if' && isObject(s.condition)) {
      fix(s.condition.left);
      fix(s.condition.right);
    }
  });
}

/** A default as typed in the parameters panel → the value stored (undefined: no default). */
export function parseDefault(text: string, type: ParamType): { value: string | number | boolean | undefined; problem?: string } {
  const t = text.trim();
  if (t === '') return { value: undefined };
  if (type === 'string') return { value: text };
  if (type === 'boolean') {
    if (t === 'true' || t === 'false') return { value: t === 'true' };
    return { value: text, problem: 'must be true or false' };
  }
  if (!NUMBER.test(t)) return { value: text, problem: 'is not a number' };
  const n = Number(t);
  if (type === 'integer' && !Number.isInteger(n)) return { value: n, problem: 'must be a whole number' };
  return { value: n };
}

/* ------------------------------------------------------------ variables */

/** The names call steps save (`save_as`), in document order, once each; only those in `phase` when given. */
export function savedVars(doc: Workflow, phase?: Phase): string[] {
  const out: string[] = [];
  walk(doc, (s, _p, ph) => {
    if (isObject(s) && s.kind === 'call' && typeof s.save_as === 'string' && s.save_as && (!phase || ph === phase) && !out.includes(s.save_as)) {
      out.push(s.save_as);
    }
  });
  return out;
}

/** What a block does wrong that is not an error: a repeat or an if with nothing to run. Null when fine. */
export function blockWarning(step: Step): string | null {
  if (step.kind === 'repeat') {
    if (!Array.isArray(step.steps) || step.steps.length === 0) return 'This repeat has no steps: drag steps into it, or delete it.';
    if (step.times === 0) return 'This repeat runs its steps 0 times: they never run.';
  }
  if (step.kind === 'if' && !(step.then?.length ?? 0) && !(step.else?.length ?? 0)) return 'This if has no steps in either branch: it does nothing.';
  return null;
}

/** The fields of a declared return value: an object's properties, a tuple's positions (`0`, `1`, …). */
function returnFields(returns: JSONSchema | undefined): string[] {
  if (!isObject(returns)) return [];
  if (isObject(returns.properties)) return Object.keys(returns.properties);
  if (Array.isArray(returns.prefixItems)) return returns.prefixItems.map((_, i) => String(i));
  return [];
}

/**
 * The outputs the builder offers, in document order: each variable a main step saves and, when its method
 * declares that it returns an object (`{ yield }`) or a tuple, each field of it (`run.yield`, `pos.0`).
 */
export function outputChoices(doc: Workflow, lookup: MethodLookup): string[] {
  const out: string[] = [];
  walk(doc, (s, _p, phase) => {
    if (phase !== 'main' || !isObject(s) || s.kind !== 'call' || typeof s.save_as !== 'string' || !s.save_as || out.includes(s.save_as)) return;
    out.push(s.save_as);
    for (const f of returnFields(lookup(s.instrument, s.method)?.returns)) out.push(`${s.save_as}.${f}`);
  });
  return out;
}

/**
 * After a "Save result as" changed: tick the outputs of each variable main saves now and did not before
 * (`before`: the choices offered until then): the fields of its declared return object when it has them
 * (`run.yield`, the numbers a campaign can optimise), else the variable. Returns what was ticked.
 */
export function tickNewOutputs(doc: Workflow, lookup: MethodLookup, before: readonly string[]): string[] {
  const now = outputChoices(doc, lookup);
  const ticked: string[] = [];
  for (const v of savedVars(doc, 'main')) {
    if (before.includes(v)) continue;
    const fields = now.filter((n) => n.startsWith(`${v}.`));
    for (const n of fields.length ? fields : [v]) {
      if (doc.outputs.includes(n)) continue;
      setOutput(doc, n, true);
      ticked.push(n);
    }
  }
  return ticked;
}

/**
 * Keep outputs in the order main saves them (a field beside its variable); drop none (an output no step
 * saves is reported by the server).
 */
export function setOutput(doc: Workflow, name: string, on: boolean): void {
  const saved = savedVars(doc, 'main');
  const set = new Set(doc.outputs);
  if (on) set.add(name);
  else set.delete(name);
  const rank = (n: string) => {
    const root = saved.indexOf(n.split('.')[0]!);
    return root >= 0 ? root : saved.length + doc.outputs.indexOf(n);
  };
  doc.outputs = [...set].sort((a, b) => rank(a) - rank(b));
}

/* --------------------------------------------------------------- errors */

export type ErrorPlace =
  | { where: 'step'; step: string; field: string }
  | { where: 'parameters'; index: number; field: string }
  | { where: 'outputs'; index: number }
  | { where: 'name' | 'description' | 'general' };

const STEP_FIELD = /^((?:prep|main|cleanup)\[\d+\](?:\.(?:steps|then|else)\[\d+\])*)(?:\.(.+))?$/;

/**
 * Where a server error detail belongs on the page: `main[1].args.volume_ml` → the step `main[1]`, its field
 * `args.volume_ml`; `parameters[0].default` → the parameters panel; `name` → the name field.
 */
export function placeError(field: string | undefined): ErrorPlace {
  if (!field) return { where: 'general' };
  const step = STEP_FIELD.exec(field);
  if (step) return { where: 'step', step: step[1], field: step[2] ?? '' };
  const param = /^parameters\[(\d+)\](?:\.(.+))?$/.exec(field);
  if (param) return { where: 'parameters', index: Number(param[1]), field: param[2] ?? '' };
  const out = /^outputs\[(\d+)\]$/.exec(field);
  if (out) return { where: 'outputs', index: Number(out[1]) };
  if (field === 'name' || field === 'description') return { where: field };
  return { where: 'general' };
}

/* ---------------------------------------------------------------- names */

const PHASE_TITLE: Record<Phase, string> = { prep: 'Prep', main: 'Main', cleanup: 'Cleanup' };

/** Where a list is, in words: `main[1].else` → "Main › if (step 2) › else"; `main[0].steps` → "Main › repeat (step 1)". */
export function listLabel(doc: Workflow, path: string): string {
  const m = /^(prep|main|cleanup)((?:\[\d+\]\.(?:steps|then|else))*)$/.exec(path);
  if (!m) return path;
  const out = [PHASE_TITLE[m[1] as Phase]];
  let at = m[1];
  for (const [, i, branch] of m[2].matchAll(/\[(\d+)\]\.(steps|then|else)/g)) {
    at = stepPath(at, Number(i));
    const step = stepAt(doc, at);
    out.push(`${step.kind} (step ${Number(i) + 1})`);
    if (step.kind === 'if') out.push(branch);
    at = `${at}.${branch}`;
  }
  return out.join(' › ');
}
