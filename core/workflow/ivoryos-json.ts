/**
 * ivoryOS's workflow JSON as a labdeck workflow, and back (issue 29 item 5). Read, never run. Two shapes:
 *
 * - the next generation's (`ivoryos-edge`): `{ name, description, prep, script, cleanup }`, each step
 *   `{ id, instrument, action, args, arg_types, return, return_bindings: [{ path, var }], batch_action }`;
 *   flow steps have the instrument `Flow_Control` (`If` with `args.condition`, `Else`, `End_If`, `Comment` with
 *   `args.message`, `User_Input`, `Wait`, `Pause`, `Repeat`/`End_Repeat`);
 * - Classic's `script_dict` (1.6, 1.7): the same phases, calls on `deck.<name>`, flow steps named by their
 *   instrument (`if`/`else`/`endif`, `repeat`/`endrepeat`, `pause`, `wait`, `input`, `comment`), values in
 *   `args.statement`.
 *
 * An argument `"#name"` is a result bound by an earlier step (a variable) or else a parameter of the workflow,
 * typed by `arg_types`. What labdeck has no step for (`pro_code`, `for`/`endfor`, `while`, variables, batch
 * steps) is a 400 naming the step (`script[3]`) and saying what to do instead: arbitrary code is never run.
 * A `Comment` becomes a wait of 0 s labelled `Comment: …` (shown in the run's log), and goes back as a Comment.
 */
import { LabError, type ErrorDetail } from '../errors.js';
import { COMPARISONS, type Arg, type Condition, type Parameter, type Step, type Workflow, type WorkflowInput } from './model.js';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const COMMENT = 'Comment: ';
/** The phases of an ivoryOS workflow file (`script` is labdeck's `main`). */
type SourcePhase = 'prep' | 'script' | 'cleanup';

/** `float`, `<class 'float'>`, `int`, `str`, `bool`, `wells` → a parameter type. */
function typeOf(t: unknown): Parameter['type'] {
  const s = String(t ?? '')
    .replace(/^<class '(.*)'>$/, '$1')
    .toLowerCase();
  if (s === 'int' || s === 'integer') return 'integer';
  if (s === 'str' || s === 'string' || s === 'wells' || s === 'literal') return 'string';
  if (s === 'bool' || s === 'boolean') return 'boolean';
  return 'number';
}

const typeName = (t: Parameter['type']) => ({ number: 'float', integer: 'int', string: 'str', boolean: 'bool' })[t];

/** Classic's flow steps, named by their instrument (normalised: lower case, no `_`, `-` or space). */
const CLASSIC_FLOW = new Set(['if', 'repeat', 'while', 'pause', 'wait', 'input', 'comment', 'variable', 'for', 'procode', 'mathvariable']);
const norm = (s: unknown) =>
  String(s ?? '')
    .toLowerCase()
    .replace(/[\s_-]/g, '');

/** The flow step kind of a step (`if`, `else`, `endif`, `comment`, `userinput`, …), or null for a call: both halves' spellings. */
function flowOf(step: Record<string, unknown>): string | null {
  const instrument = norm(step.instrument);
  const action = norm(step.action);
  if (instrument === 'flowcontrol') return action;
  if (!CLASSIC_FLOW.has(instrument)) return null;
  return instrument === 'variable' || instrument === 'procode' || instrument === 'mathvariable' ? instrument : action || instrument;
}

class Reader {
  readonly params = new Map<string, Parameter>();
  readonly vars = new Set<string>();
  readonly outputs: string[] = [];
  readonly problems: ErrorDetail[] = [];

  refuse(field: string, message: string): never {
    throw new LabError('invalid_input', `The ivoryOS workflow cannot be imported: ${field} ${message}`, [{ field, message }]);
  }

  arg(value: unknown, type: unknown): Arg {
    if (typeof value === 'string' && /^#[A-Za-z_][A-Za-z0-9_]*$/.test(value)) {
      const name = value.slice(1);
      if (this.vars.has(name)) return { var: name };
      if (!this.params.has(name)) this.params.set(name, { name, type: typeOf(type) });
      return { param: name };
    }
    return { value };
  }

  /** `absorbance > 1.5`, `#x <= 3`, `mode == 'fast'` */
  condition(text: unknown, field: string): Condition {
    const m = typeof text === 'string' ? /^\s*(\S+?)\s*(==|!=|<=|>=|<|>)\s*(.+?)\s*$/.exec(text) : null;
    if (!m || !(COMPARISONS as readonly string[]).includes(m[2]!)) this.refuse(field, `is not a comparison labdeck reads (name, ==, !=, <, <=, > or >=, then a value), got ${JSON.stringify(text)}`);
    const side = (s: string): Arg => {
      if (/^#?[A-Za-z_][A-Za-z0-9_]*$/.test(s) && !['True', 'False', 'None'].includes(s)) {
        const name = s.replace(/^#/, '');
        return this.vars.has(name) ? { var: name } : this.arg(`#${name}`, 'float');
      }
      if (/^(['"]).*\1$/.test(s)) return { value: s.slice(1, -1) };
      if (s === 'True' || s === 'False') return { value: s === 'True' };
      const n = Number(s);
      if (!Number.isFinite(n)) this.refuse(field, `has ${JSON.stringify(s)}, which is neither a name nor a value`);
      return { value: n };
    };
    return { left: side(m[1]!), op: m[2] as Condition['op'], right: side(m[3]!) };
  }

  /** The steps of one phase, nesting if/else and repeat by their markers. */
  phase(list: unknown, phase: SourcePhase): Step[] {
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list)) this.refuse(phase, 'must be a list of steps');
    const root: Step[] = [];
    const stack: { kind: 'if' | 'repeat'; step: Step; into: Step[]; field: string }[] = [];
    const here = () => (stack.length ? stack[stack.length - 1]!.into : root);
    list.forEach((raw, i) => {
      const field = `${phase}[${i}]`;
      if (!isRecord(raw)) this.refuse(field, 'must be a step object');
      const args = isRecord(raw.args) ? raw.args : {};
      const types = isRecord(raw.arg_types) ? raw.arg_types : {};
      const first = (...keys: string[]) => keys.map((k) => args[k]).find((v) => v !== undefined);
      if (raw.batch_action === true) this.refuse(field, 'is a batch step (batch_action): labdeck runs one row at a time; clear batch_action and run the rows as a config');
      const flow = flowOf(raw);
      if (flow === null) {
        const instrument = String(raw.instrument ?? '').replace(/^deck\./, '');
        const action = String(raw.action ?? '');
        if (!instrument || !action) this.refuse(field, 'names no instrument and action');
        const setter = /^(.*)_\(setter\)$/.exec(action);
        const step: Extract<Step, { kind: 'call' }> = { kind: 'call', instrument, method: setter ? `set_${setter[1]}` : action };
        const a = Object.entries(args).map(([k, v]) => [k, this.arg(v, types[k])] as const);
        if (a.length) step.args = Object.fromEntries(a);
        const ret = this.returnOf(raw, field);
        if (ret) {
          step.save_as = ret;
          if (phase === 'script' && !this.outputs.includes(ret)) this.outputs.push(ret);
        }
        here().push(step);
        return;
      }
      switch (flow) {
        case 'if': {
          const step: Step = { kind: 'if', condition: this.condition(first('condition', 'statement'), `${field}.args.condition`), then: [] };
          here().push(step);
          stack.push({ kind: 'if', step, into: step.then, field });
          return;
        }
        case 'else': {
          const top = stack[stack.length - 1];
          if (top?.kind !== 'if' || top.step.kind !== 'if' || top.step.else) this.refuse(field, 'is an Else without its If');
          top.step.else = [];
          top.into = top.step.else;
          return;
        }
        case 'endif':
        case 'endrepeat': {
          const top = stack.pop();
          if (!top || top.kind !== (flow === 'endif' ? 'if' : 'repeat')) this.refuse(field, `closes no ${flow === 'endif' ? 'If' : 'Repeat'}`);
          return;
        }
        case 'repeat': {
          const times = Number(first('repeat_count', 'times', 'count', 'statement'));
          if (!Number.isInteger(times) || times < 0) this.refuse(`${field}.args`, 'must give the number of times as a whole number (a parameter is not read: write the number)');
          const step: Step = { kind: 'repeat', times, steps: [] };
          here().push(step);
          stack.push({ kind: 'repeat', step, into: step.steps, field });
          return;
        }
        case 'wait':
        case 'sleep': {
          const seconds = Number(first('time', 'seconds', 'duration', 'statement'));
          if (!Number.isFinite(seconds) || seconds < 0) this.refuse(`${field}.args`, 'must give the seconds to wait as a number');
          here().push({ kind: 'wait', seconds });
          return;
        }
        case 'pause': {
          const message = first('reason', 'message', 'statement');
          here().push({ kind: 'pause', ...(typeof message === 'string' && message ? { message } : {}) });
          return;
        }
        case 'comment': {
          const message = first('message', 'comment', 'statement');
          here().push({ kind: 'wait', seconds: 0, label: `${COMMENT}${String(message ?? '')}`.slice(0, 200) });
          return;
        }
        case 'userinput':
        case 'input': {
          const ret = this.returnOf(raw, field) ?? (typeof args.variable === 'string' ? args.variable : undefined);
          if (!ret) this.refuse(field, 'saves its answer nowhere: give it a return name');
          const prompt = String(first('prompt', 'message', 'statement') ?? `Enter ${ret}`) || `Enter ${ret}`;
          const t = typeOf(types.prompt ?? types.value ?? first('type') ?? 'str');
          here().push({ kind: 'input', prompt, save_as: ret, schema: { type: t } });
          return;
        }
        case 'procode':
          this.refuse(field, 'is Python code (pro_code): labdeck never runs code from a workflow; write it as instrument calls, or as a method of a driver');
        case 'for':
        case 'endfor':
          this.refuse(field, `is a ${flow} marker: labdeck has no for loop over values; use a Repeat with a number, or run the workflow over a config's rows`);
        case 'while':
        case 'endwhile':
          this.refuse(field, 'is a while loop: a labdeck loop runs a number of times written out; to go on until a result says so, run the workflow from a campaign or a config');
        case 'variable':
        case 'mathvariable':
          this.refuse(field, 'is a variable: make it a parameter of the workflow, or write the value where it is used');
        default:
          this.refuse(field, `is the flow step ${JSON.stringify(raw.action)} (${JSON.stringify(raw.instrument)}), which labdeck has no step for`);
      }
    });
    const open = stack.pop();
    if (open) this.refuse(open.field, `is a ${open.kind === 'if' ? 'If' : 'Repeat'} that is never closed`);
    return root;
  }

  /** The name a step's result is saved as: `return`, or its one whole-result binding. */
  returnOf(raw: Record<string, unknown>, field: string): string | undefined {
    const bindings = Array.isArray(raw.return_bindings) ? raw.return_bindings : [];
    for (const [j, b] of bindings.entries()) {
      if (!isRecord(b) || (b.path !== undefined && b.path !== ''))
        this.refuse(`${field}.return_bindings[${j}]`, 'binds a field of the result: labdeck saves the whole result; bind it with an empty path and name the field as an output (result.field)');
    }
    const bound = bindings.map((b) => (b as { var?: unknown }).var).find((v) => typeof v === 'string' && v);
    const ret = (typeof raw.return === 'string' && raw.return) || (bound as string | undefined);
    if (!ret) return undefined;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(ret)) this.refuse(`${field}.return`, `must be a variable name, got ${JSON.stringify(ret)}`);
    this.vars.add(ret);
    return ret;
  }
}

/** The workflow document of an ivoryOS workflow JSON: the next generation's, Classic's `script_dict`, or a Classic library row. */
export function fromIvoryosJson(doc: unknown, name?: string): WorkflowInput {
  if (!isRecord(doc)) throw new LabError('invalid_input', 'The ivoryOS workflow must be a JSON object.', [{ field: 'workflow', message: 'must be an object' }]);
  const row = isRecord(doc.script_dict) ? doc : null;
  const body = row ? (row.script_dict as Record<string, unknown>) : doc;
  if (!('script' in body) && !('prep' in body) && !('cleanup' in body)) {
    throw new LabError('invalid_input', 'The ivoryOS workflow has no prep, script or cleanup: is it a workflow JSON (or a Classic script_dict)?', [
      { field: 'workflow.script', message: 'is missing' },
    ]);
  }
  const r = new Reader();
  const prep = r.phase(body.prep, 'prep');
  const main = r.phase(body.script, 'script');
  const cleanup = r.phase(body.cleanup, 'cleanup');
  const wfName = name ?? (typeof doc.name === 'string' ? doc.name : typeof row?.name === 'string' ? row.name : undefined);
  if (!wfName) throw new LabError('invalid_input', 'The ivoryOS workflow has no name: give one (name).', [{ field: 'name', message: 'is required' }]);
  return {
    // ivoryOS names workflows freely ("UV-Vis linearity check"): the labdeck name keeps letters, digits, _ and -
    name: wfName
      .trim()
      .replace(/[^A-Za-z0-9_-]+/g, '_')
      .replace(/^([^A-Za-z_])/, '_$1')
      .slice(0, 100),
    description: typeof doc.description === 'string' ? doc.description : '',
    parameters: [...r.params.values()],
    outputs: r.outputs,
    prep,
    main,
    cleanup,
  };
}

/** A labdeck workflow as the next generation's workflow JSON (importing it back gives the same workflow). */
export function toIvoryosJson(wf: Workflow): Record<string, unknown> {
  const types = new Map(wf.parameters.map((p) => [p.name, p.type]));
  let id = 0;
  const value = (a: Arg): unknown => ('param' in a ? `#${a.param}` : 'var' in a ? `#${a.var}` : a.value);
  const side = (a: Arg) =>
    'value' in a ? (typeof a.value === 'string' ? `'${a.value}'` : a.value === true ? 'True' : a.value === false ? 'False' : String(a.value)) : 'param' in a ? `#${a.param}` : a.var;
  const step = (instrument: string, action: string, args: Record<string, unknown> = {}, argTypes: Record<string, string> = {}, ret = '') => ({
    id: ++id,
    instrument,
    action,
    args,
    arg_types: argTypes,
    return: ret,
    ...(ret ? { return_bindings: [{ path: '', var: ret }] } : {}),
    batch_action: false,
    consolidate_batch_args: false,
  });
  const flow = (action: string, args: Record<string, unknown> = {}, argTypes: Record<string, string> = {}, ret = '') => step('Flow_Control', action, args, argTypes, ret);
  const phase = (steps: Step[]): Record<string, unknown>[] => {
    id = 0;
    const out: Record<string, unknown>[] = [];
    const walk = (list: Step[]) => {
      for (const s of list) {
        if (s.kind === 'call') {
          const args = Object.fromEntries(Object.entries(s.args ?? {}).map(([k, a]) => [k, value(a)]));
          const argTypes = Object.fromEntries(
            Object.entries(s.args ?? {}).map(([k, a]) => [
              k,
              'param' in a
                ? typeName(types.get(a.param) ?? 'number')
                : 'value' in a
                  ? typeName(typeof a.value === 'string' ? 'string' : typeof a.value === 'boolean' ? 'boolean' : Number.isInteger(a.value) ? 'integer' : 'number')
                  : 'float',
            ]),
          );
          out.push(step(s.instrument, s.method, args, argTypes, s.save_as ?? ''));
        } else if (s.kind === 'if') {
          out.push(flow('If', { condition: `${side(s.condition.left)} ${s.condition.op} ${side(s.condition.right)}` }, { condition: 'str' }));
          walk(s.then);
          if (s.else) {
            out.push(flow('Else'));
            walk(s.else);
          }
          out.push(flow('End_If'));
        } else if (s.kind === 'repeat') {
          out.push(flow('Repeat', { repeat_count: s.times }, { repeat_count: 'int' }));
          walk(s.steps);
          out.push(flow('End_Repeat'));
        } else if (s.kind === 'wait' && s.seconds === 0 && s.label?.startsWith(COMMENT)) {
          out.push(flow('Comment', { message: s.label.slice(COMMENT.length) }, { message: 'str' }));
        } else if (s.kind === 'wait') out.push(flow('Wait', { time: s.seconds }, { time: 'float' }));
        else if (s.kind === 'pause') out.push(flow('Pause', s.message ? { reason: s.message } : {}, s.message ? { reason: 'str' } : {}));
        else if (s.kind === 'input')
          out.push(
            flow('User_Input', { prompt: s.prompt }, { prompt: s.schema.type === 'number' ? 'float' : s.schema.type === 'integer' ? 'int' : s.schema.type === 'boolean' ? 'bool' : 'str' }, s.save_as),
          );
      }
    };
    walk(steps);
    return out;
  };
  return { name: wf.name, description: wf.description, prep: phase(wf.prep), script: phase(wf.main), cleanup: phase(wf.cleanup) };
}
