/**
 * Workflow validation (DESIGN.md §4): parse a document with the zod model, then check it against the live
 * deck's method schemas, and report EVERY problem at once as one LabError('invalid_input') whose details
 * name the step path (`main[1].args.volume_ml`, `prep[0].then[2].method`, `parameters[1].name`) and say
 * what to do about it.
 *
 * The deck checks run over the raw document too when the zod parse failed, so a scientist sees all the
 * problems in one go; a deck problem inside a part zod already rejected is not reported twice.
 *
 * Variables follow document order: prep → main → cleanup, depth first, the branches of an `if` and the body
 * of a `repeat` included. A `{var}` is valid once any earlier step in that order saves it (the interpreter
 * reports a variable that is still unset at run time, e.g. from a branch not taken, as an error of its step).
 */
import type { InstrumentSchema, JSONSchema, MethodSchema, z } from '../contracts/index.js';
import { issueMessage } from '../deck/validate.js';
import { LabError, isLabError, type ErrorDetail } from '../errors.js';
import { acceptedTypes, checkValue, describeTypes, jsonTypeOf } from './jsonschema.js';
import { PHASES, Workflow } from './model.js';
import { INPUT_STEP_FIELDS, InputSchema, schemaProblems } from './input.js';
import { formatPath, type DeckSchemas, type Segment } from './walk.js';

export { countSteps, formatPath, instrumentsOf, outputSchema, stepPaths, walkSteps, type DeckSchemas, type StepVisit } from './walk.js';

/* ----------------------------------------------------------- zod problems */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const STEP_FIELDS: Record<string, string[]> = {
  call: ['kind', 'instrument', 'method', 'args', 'save_as', 'label'],
  wait: ['kind', 'seconds', 'label'],
  pause: ['kind', 'message', 'label'],
  repeat: ['kind', 'times', 'steps', 'label'],
  if: ['kind', 'condition', 'then', 'else', 'label'],
  input: INPUT_STEP_FIELDS,
};
const STEP_KINDS = Object.keys(STEP_FIELDS);
const WORKFLOW_FIELDS = ['name', 'description', 'parameters', 'outputs', 'prep', 'main', 'cleanup'];
const PARAMETER_FIELDS = ['name', 'type', 'default', 'description'];
const CONDITION_FIELDS = ['left', 'op', 'right'];

function valueAt(doc: unknown, path: readonly Segment[]): unknown {
  let v = doc;
  for (const s of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[s as string | number];
  }
  return v;
}

/** Which fields the object at `path` may have, as a phrase, for an "unknown field" message. */
function knownFields(doc: unknown, path: readonly Segment[]): string {
  const last = path[path.length - 1];
  const obj = valueAt(doc, path);
  let what: string;
  let fields: string[];
  if (path.length === 0) [what, fields] = ['a workflow', WORKFLOW_FIELDS];
  else if (path.length === 2 && path[0] === 'parameters') [what, fields] = ['a parameter', PARAMETER_FIELDS];
  else if (last === 'condition') [what, fields] = ['a condition', CONDITION_FIELDS];
  else if (isObject(obj) && typeof obj.kind === 'string' && STEP_FIELDS[obj.kind]) {
    [what, fields] = [`${/^[aeiu]/.test(obj.kind) ? 'an' : 'a'} "${obj.kind}" step`, STEP_FIELDS[obj.kind]];
  } else return 'is not a known field';
  return `is not a field of ${what} (its fields are ${fields.join(', ')})`;
}

function argFormMessage(raw: unknown): string {
  const base = 'must be {"value": …}, {"param": "name"} or {"var": "name"}';
  if (!isObject(raw)) return `${base}: to pass ${JSON.stringify(raw) ?? 'a literal'} as it is, write {"value": ${JSON.stringify(raw) ?? '…'}}`;
  const keys = Object.keys(raw);
  if (keys.length > 1 && keys.every((k) => k === 'value' || k === 'param' || k === 'var')) {
    return `${base}, with exactly one of these keys (it has ${keys.join(', ')})`;
  }
  return base;
}

/** zod issues → details with step paths and messages a scientist can act on. */
function zodDetails(issues: readonly z.core.$ZodIssue[], doc: unknown): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const issue of issues) {
    const field = formatPath(issue.path);
    const last = issue.path[issue.path.length - 1];
    const before = issue.path[issue.path.length - 2];
    if (issue.code === 'unrecognized_keys') {
      const msg = knownFields(doc, issue.path);
      for (const k of issue.keys) out.push({ field: field ? `${field}.${k}` : k, message: msg });
      continue;
    }
    if (issue.code === 'invalid_union' && (issue as { discriminator?: string }).discriminator === 'kind') {
      const given = valueAt(doc, issue.path);
      out.push({
        field,
        message: `${given === undefined ? 'is required and' : `${JSON.stringify(given)} is not a step kind:`} must be one of ${STEP_KINDS.join(', ')}`,
      });
      continue;
    }
    if (issue.code === 'invalid_union' && (before === 'args' || last === 'left' || last === 'right')) {
      out.push({ field, message: argFormMessage(valueAt(doc, issue.path)) });
      continue;
    }
    if (issue.code === 'invalid_format' && (issue.message.startsWith('must') || issue.message.startsWith('is '))) {
      out.push({ field, message: issue.message });
      continue;
    }
    if (issue.code === 'invalid_type' && issue.expected === 'object' && typeof last === 'number' && valueAt(doc, issue.path) !== undefined) {
      out.push({ field, message: 'must be an object (a step, or a parameter)' });
      continue;
    }
    out.push({ field: field || '(workflow)', message: field ? issueMessage(issue) : 'must be a JSON object with name, parameters and steps' });
  }
  return out;
}

/* ---------------------------------------------------------- deck problems */

interface ParamInfo {
  /** The declared type, or undefined when the declaration itself is broken (zod reports it). */
  type: string | undefined;
  hasDefault: boolean;
  default: unknown;
}

const PARAM_JSON_TYPES: Record<string, string[]> = {
  number: ['number', 'integer'],
  integer: ['integer', 'number'],
  string: ['string'],
  boolean: ['boolean'],
};

const list = (names: Iterable<string>) => [...names].join(', ');

class Checker {
  readonly details: ErrorDetail[] = [];
  private readonly params = new Map<string, ParamInfo>();
  /** Variables saved so far in document order. */
  private readonly saved = new Set<string>();
  /** Where each variable is first saved (for "only saved later, at …"). */
  private readonly saves = new Map<string, string>();
  private readonly mainSaves = new Set<string>();
  private readonly instruments = new Map<string, InstrumentSchema | LabError>();

  constructor(private readonly deck: DeckSchemas | null) {}

  private problem(field: string, message: string): void {
    this.details.push({ field, message });
  }

  run(doc: Record<string, unknown>): void {
    this.checkParameters(doc.parameters);
    for (const phase of PHASES) this.collectSaves(doc[phase], phase, phase === 'main');
    for (const phase of PHASES) this.checkSteps(doc[phase], phase);
    this.checkOutputs(doc.outputs);
  }

  private checkParameters(raw: unknown): void {
    if (!Array.isArray(raw)) return;
    const first = new Map<string, number>();
    raw.forEach((p, i) => {
      if (!isObject(p) || typeof p.name !== 'string') return;
      const at = `parameters[${i}]`;
      const seen = first.get(p.name);
      if (seen !== undefined) {
        this.problem(`${at}.name`, `"${p.name}" is declared twice (first at parameters[${seen}]): give each parameter its own name`);
        return;
      }
      first.set(p.name, i);
      const type = p.type === undefined ? 'number' : typeof p.type === 'string' && Object.hasOwn(PARAM_JSON_TYPES, p.type) ? p.type : undefined;
      let hasDefault = p.default !== undefined;
      if (type && hasDefault) {
        const ok = type === 'integer' ? Number.isInteger(p.default) : PARAM_JSON_TYPES[type].includes(jsonTypeOf(p.default));
        if (!ok) {
          this.problem(`${at}.default`, `${JSON.stringify(p.default)} is not ${describeTypes([type])}, the parameter's type: change the default or the type`);
          hasDefault = false; // reported here once, not again at every use
        }
      }
      this.params.set(p.name, { type, hasDefault, default: p.default });
    });
  }

  private collectSaves(raw: unknown, path: string, main: boolean): void {
    if (!Array.isArray(raw)) return;
    raw.forEach((s, i) => {
      if (!isObject(s)) return;
      const p = `${path}[${i}]`;
      if ((s.kind === 'call' || s.kind === 'input') && typeof s.save_as === 'string') {
        if (!this.saves.has(s.save_as)) this.saves.set(s.save_as, p);
        if (main) this.mainSaves.add(s.save_as);
      }
      this.collectSaves(s.steps, `${p}.steps`, main);
      this.collectSaves(s.then, `${p}.then`, main);
      this.collectSaves(s.else, `${p}.else`, main);
    });
  }

  private checkSteps(raw: unknown, path: string): void {
    if (!Array.isArray(raw)) return;
    raw.forEach((s, i) => {
      if (!isObject(s)) return;
      const p = `${path}[${i}]`;
      switch (s.kind) {
        case 'call':
          this.checkCall(s, p);
          break;
        case 'repeat':
          this.checkSteps(s.steps, `${p}.steps`);
          break;
        case 'input': {
          // a person's value: saved like a call's output; a schema whose minimum is above its maximum is refused
          const schema = InputSchema.safeParse(s.schema);
          if (schema.success) for (const d of schemaProblems(schema.data)) this.problem(`${p}.schema.${d.field}`, d.message);
          if (typeof s.save_as === 'string') this.saved.add(s.save_as);
          break;
        }
        case 'if':
          if (isObject(s.condition)) {
            this.checkArg(s.condition.left, `${p}.condition.left`, null);
            this.checkArg(s.condition.right, `${p}.condition.right`, null);
          }
          this.checkSteps(s.then, `${p}.then`);
          this.checkSteps(s.else, `${p}.else`);
          break;
      }
    });
  }

  private instrument(name: string): InstrumentSchema | LabError {
    let got = this.instruments.get(name);
    if (!got) {
      try {
        got = this.deck!.schema(name);
      } catch (e) {
        if (!isLabError(e) || e.code !== 'not_found') throw e;
        got = e;
      }
      this.instruments.set(name, got);
    }
    return got;
  }

  private knownInstruments(notFound: LabError): string {
    if (this.deck?.list) {
      const names = this.deck.list().map((s) => s.name);
      return names.length ? `the deck has ${list(names)}` : 'the deck has no instruments';
    }
    return notFound.message;
  }

  private checkCall(s: Record<string, unknown>, p: string): void {
    const args = isObject(s.args) ? s.args : {};
    let method: MethodSchema | undefined;
    let who = '';
    if (this.deck && typeof s.instrument === 'string' && s.instrument) {
      const inst = this.instrument(s.instrument);
      if (inst instanceof LabError) {
        this.problem(`${p}.instrument`, `"${s.instrument}" is not an instrument of the deck; ${this.knownInstruments(inst)}`);
      } else if (typeof s.method === 'string' && s.method) {
        method = inst.methods.find((m) => m.name === s.method);
        who = `${s.instrument}.${s.method}`;
        if (!method) {
          const names = inst.methods.map((m) => m.name);
          this.problem(`${p}.method`, `${s.instrument} has no method "${s.method}"; its methods are ${list(names) || '(none)'}`);
        }
      }
    }
    const params: JSONSchema = method?.params ?? {};
    const props = isObject(params.properties) ? params.properties : {};
    const extra = params.additionalProperties;
    const takesExtra = extra !== undefined && extra !== false;
    for (const [name, arg] of Object.entries(args)) {
      const at = `${p}.args.${name}`;
      let schema: unknown = null;
      if (method) {
        if (Object.prototype.hasOwnProperty.call(props, name)) schema = props[name];
        else if (takesExtra) schema = extra;
        else {
          const names = Object.keys(props);
          this.problem(at, `${who} has no argument "${name}"; ${names.length ? `its arguments are ${list(names)}` : 'it takes no arguments'}`);
        }
      }
      this.checkArg(arg, at, schema, who);
    }
    if (method && Array.isArray(params.required)) {
      for (const r of params.required) {
        if (typeof r !== 'string' || r in args) continue;
        const sub = props[r];
        if (isObject(sub) && 'default' in sub) continue;
        const desc = isObject(sub) && typeof sub.description === 'string' ? ` (${sub.description})` : '';
        this.problem(`${p}.args.${r}`, `is required by ${who}${desc}: give a value, a parameter or a variable`);
      }
    }
    if (typeof s.save_as === 'string') this.saved.add(s.save_as);
  }

  /** One argument: its reference must be defined; its value (or parameter) must fit `schema` when known. */
  private checkArg(arg: unknown, at: string, schema: unknown, who = ''): void {
    if (!isObject(arg)) return;
    const keys = Object.keys(arg);
    if (keys.length !== 1) return; // a malformed argument: zod reports it
    if (keys[0] === 'value') {
      if (schema === null) return;
      const problem = checkValue(schema, arg.value);
      if (problem) this.problem(at, `${problem} (got ${JSON.stringify(arg.value)})`);
    } else if (keys[0] === 'param' && typeof arg.param === 'string') {
      const name = arg.param;
      const info = this.params.get(name);
      if (!info) {
        const names = [...this.params.keys()];
        this.problem(
          at,
          `uses the parameter "${name}", which the workflow does not declare; ${names.length ? `its parameters are ${list(names)}` : 'it declares no parameters'} (declare it under "parameters")`,
        );
        return;
      }
      if (schema === null || !info.type) return;
      const accepted = acceptedTypes(schema);
      if (accepted && !PARAM_JSON_TYPES[info.type].some((t) => accepted.has(t))) {
        this.problem(at, `the parameter "${name}" is ${describeTypes([info.type])}, but ${who ? `this argument of ${who}` : 'this argument'} must be ${describeTypes(accepted)}`);
        return;
      }
      if (info.hasDefault) {
        const problem = checkValue(schema, info.default);
        if (problem) this.problem(at, `the parameter "${name}" defaults to ${JSON.stringify(info.default)}, which ${problem.replace(/^must/, 'does not fit here: it must')}`);
      }
    } else if (keys[0] === 'var' && typeof arg.var === 'string') {
      const name = arg.var;
      if (this.saved.has(name)) return;
      const later = this.saves.get(name);
      this.problem(
        at,
        later
          ? `uses the variable "${name}" before it is saved: it is first saved later, at ${later}; move that step earlier`
          : `uses the variable "${name}", which no step saves; add "save_as": "${name}" to an earlier call step`,
      );
    }
  }

  private checkOutputs(raw: unknown): void {
    if (!Array.isArray(raw)) return;
    const seen = new Set<string>();
    raw.forEach((entry, i) => {
      // "run.yield": the field `yield` of the variable `run`; { name, from }: such a value under a name of its own
      const named = isObject(entry) && typeof entry.name === 'string' && typeof entry.from === 'string';
      const name = named ? (entry.name as string) : entry;
      const o = named ? (entry.from as string) : entry;
      if (typeof name !== 'string' || typeof o !== 'string') return;
      const at = named ? `outputs[${i}].from` : `outputs[${i}]`;
      if (seen.has(name)) this.problem(named ? `outputs[${i}].name` : at, `"${name}" is listed twice`);
      seen.add(name);
      const root = o.split('.')[0];
      if (this.mainSaves.has(root)) return;
      const elsewhere = this.saves.get(root);
      this.problem(
        at,
        elsewhere
          ? `"${o}" is saved only at ${elsewhere}, outside main: outputs are the variables a main step saves`
          : root !== o
            ? `"${o}" is the field "${o.slice(root.length + 1)}" of "${root}", which no main step saves; give the call step that returns it "save_as": "${root}", or remove it from outputs`
            : `"${o}" is not saved by any main step; add "save_as": "${o}" to a call step in main, or remove it from outputs`,
      );
    });
  }
}

/* ------------------------------------------------------------ the entry */

const within = (field: string, parent: string) => field === parent || field.startsWith(`${parent}.`) || field.startsWith(`${parent}[`);

/** One error for all the problems: "Workflow "x" has 2 problems: main[1].args.v must …; …". */
function workflowError(doc: unknown, details: ErrorDetail[]): LabError {
  const name = isObject(doc) && typeof doc.name === 'string' ? `Workflow "${doc.name}"` : 'The workflow';
  const shown = details.slice(0, 5).map((d) => (d.field ? `${d.field} ${d.message}` : d.message));
  const more = details.length > 5 ? `; and ${details.length - 5} more` : '';
  const count = details.length === 1 ? 'a problem' : `${details.length} problems`;
  return new LabError('invalid_input', `${name} has ${count}: ${shown.join('; ')}${more}`, details);
}

/**
 * Parse and check a workflow document against the deck. Returns the parsed workflow (defaults filled in);
 * throws one LabError('invalid_input') listing every problem. `deck` null checks the document alone (names,
 * parameters, variables, outputs) without instruments.
 */
/** How deep `repeat` and `if` blocks may nest: deeper documents are refused before anything walks them. */
export const MAX_NESTING = 32;

/** The path of the first block nested deeper than MAX_NESTING, or null. Iterative: any depth is safe. */
function tooDeep(doc: unknown): string | null {
  const todo: { v: unknown; path: string; depth: number }[] = [];
  if (isObject(doc)) for (const p of ['prep', 'main', 'cleanup']) todo.push({ v: doc[p], path: p, depth: 0 });
  while (todo.length) {
    const { v, path, depth } = todo.pop()!;
    if (!Array.isArray(v)) continue;
    if (depth > MAX_NESTING) return path;
    v.forEach((step, i) => {
      if (!isObject(step)) return;
      for (const key of ['steps', 'then', 'else']) if (key in step) todo.push({ v: step[key], path: `${path}[${i}].${key}`, depth: depth + 1 });
    });
  }
  return null;
}

export function validateWorkflow(doc: unknown, deck: DeckSchemas | null): Workflow {
  const deep = tooDeep(doc);
  if (deep) throw workflowError(doc, [{ field: deep, message: `nests blocks more than ${MAX_NESTING} deep` }]);
  const parsed = Workflow.safeParse(doc);
  if (!isObject(doc)) throw workflowError(doc, parsed.success ? [] : zodDetails(parsed.error.issues, doc));
  const zodProblems = parsed.success ? [] : zodDetails(parsed.error.issues, doc);
  const checker = new Checker(deck);
  checker.run(doc);
  const details = [...zodProblems, ...checker.details.filter((d) => !zodProblems.some((z) => within(d.field ?? '', z.field ?? '')))];
  if (details.length > 0 || !parsed.success) throw workflowError(doc, details);
  return parsed.data;
}
