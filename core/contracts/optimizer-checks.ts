/**
 * The checks of a campaign's input against the optimizer contract: the search space, linear and outcome
 * constraints, objectives, configuration, seed and batch size. Each throws LabError('invalid_input') listing
 * every problem with the field it is in.
 */
import type { z } from 'zod';
import { LabError, type ErrorDetail } from './errors.js';
import type { ZodObjectAny } from './index.js';
import {
  CONSTRAINT_TOLERANCE,
  OPTIMIZER_NAME_RE as NAME_RE,
  PARAMETER_TYPES,
  type LinearConstraint,
  type ObjectiveSpec,
  type OptimizerCapabilities,
  type OutcomeConstraint,
  type ParameterSpec,
  type ParameterType,
  type ParamValues,
} from './optimizer-types.js';

/* ---------------------------------------------------------------- validation of user input */

const invalid = (message: string, details: ErrorDetail[]) => new LabError('invalid_input', message, details);
const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const PARAM_KEYS = new Set(['name', 'type', 'bounds', 'choices', 'log_scale', 'step', 'value']);

/**
 * Check a search space (as parsed from JSON or the short text form) and return a clean copy. With `def`, the
 * parameter types and kinds (log scale, step) must be among its capabilities. Throws LabError invalid_input
 * listing every problem, each naming its field (`parameters[1].bounds`) and the parameter.
 */
export function checkSpace(space: unknown, def?: { name: string; capabilities: OptimizerCapabilities }): ParameterSpec[] {
  if (!Array.isArray(space) || space.length === 0) {
    throw invalid('parameters: give at least one parameter', [{ field: 'parameters', message: 'a non-empty list of parameters is required' }]);
  }
  const details: ErrorDetail[] = [];
  const out: ParameterSpec[] = [];
  const seen = new Set<string>();
  space.forEach((p, i) => {
    const at = `parameters[${i}]`;
    const bad = (field: string, message: string) => details.push({ field: `${at}${field}`, message });
    if (!isObj(p)) return bad('', 'must be an object { name, type, bounds | choices | value }');
    for (const k of Object.keys(p)) if (!PARAM_KEYS.has(k)) bad(`.${k}`, `unknown key (expected ${[...PARAM_KEYS].join(', ')})`);
    const name = p.name;
    if (typeof name !== 'string' || !NAME_RE.test(name)) bad('.name', 'must be a name made of letters, digits, _ and -');
    else if (seen.has(name)) bad('.name', `"${name}" is used twice`);
    else seen.add(name);
    const type = p.type;
    const the = `"${String(name)}"`;
    if (type === 'fixed') return checkFixed(p, the, bad, out);
    if (typeof type !== 'string' || !PARAMETER_TYPES.includes(type as ParameterType)) {
      return bad('.type', `must be one of ${PARAMETER_TYPES.join(', ')}, fixed`);
    }
    if (def && !def.capabilities.parameterTypes.includes(type as ParameterType)) {
      return bad('.type', `the optimizer "${def.name}" does not handle ${type} parameters (it handles ${def.capabilities.parameterTypes.join(', ')})`);
    }
    if (p.value !== undefined) bad('.value', `only a fixed parameter takes a value (${the} is ${type})`);
    if (type === 'choice') {
      if (p.bounds !== undefined) bad('.bounds', 'a choice parameter takes choices, not bounds');
      for (const k of ['log_scale', 'step'] as const) if (p[k] !== undefined) bad(`.${k}`, `a choice parameter has no ${k}`);
      const ch = p.choices;
      if (!Array.isArray(ch) || ch.length === 0) return bad('.choices', 'must be a non-empty list of strings');
      if (ch.some((c) => typeof c !== 'string' || c === '')) return bad('.choices', 'every choice must be a non-empty string');
      if (new Set(ch).size !== ch.length) return bad('.choices', 'a choice is listed twice');
      out.push({ name: name as string, type: 'choice', choices: [...(ch as string[])] });
      return;
    }
    if (p.choices !== undefined) bad('.choices', `a ${type} parameter takes bounds, not choices`);
    const b = p.bounds;
    if (!Array.isArray(b) || b.length !== 2 || !b.every((v) => typeof v === 'number' && Number.isFinite(v))) {
      return bad('.bounds', 'must be [low, high], two finite numbers');
    }
    const [lo, hi] = b as [number, number];
    if (!(lo < hi)) return bad('.bounds', `low (${lo}) must be below high (${hi})`);
    if (type === 'int' && !(Number.isInteger(lo) && Number.isInteger(hi))) return bad('.bounds', 'an int parameter needs integer bounds');
    const spec: ParameterSpec = { name: name as string, type: type as ParameterType, bounds: [lo, hi] };
    if (p.log_scale !== undefined && typeof p.log_scale !== 'boolean') return bad('.log_scale', 'must be true or false');
    if (p.log_scale) {
      if (def && !def.capabilities.logScale) return bad('.log_scale', `the optimizer "${def.name}" cannot search on a log scale`);
      if (lo <= 0) return bad('.bounds', `${the} is searched on a log scale: its bounds must be above 0, and low is ${lo}`);
      spec.log_scale = true;
    }
    if (p.step !== undefined) {
      const step = p.step;
      if (typeof step !== 'number' || !(step > 0) || !Number.isFinite(step)) return bad('.step', `${the}: the step must be a number above 0`);
      if (def && !def.capabilities.steps) return bad('.step', `the optimizer "${def.name}" cannot keep to a step grid`);
      if (p.log_scale) return bad('.step', `${the} is either searched on a log scale or stepped, not both`);
      if (type === 'int' && !Number.isInteger(step)) return bad('.step', `${the} is an int parameter: its step must be a whole number`);
      const k = (hi - lo) / step;
      if (Math.abs(k - Math.round(k)) > 1e-9 * Math.max(1, k)) return bad('.step', `${the}: the step ${step} does not divide the range ${lo}..${hi} (${hi - lo})`);
      spec.step = step;
    }
    out.push(spec);
  });
  if (!details.length && out.every((p) => p.type === 'fixed')) details.push({ field: 'parameters', message: 'every parameter is fixed: search at least one' });
  if (details.length) throw invalid(`Invalid parameters: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
  return out;
}

/** A fixed parameter: `{ name, type: "fixed", value }`, optionally with `bounds` or `choices` its value must fit. */
function checkFixed(p: Record<string, unknown>, the: string, bad: (field: string, message: string) => void, out: ParameterSpec[]): void {
  for (const k of ['log_scale', 'step'] as const) if (p[k] !== undefined) bad(`.${k}`, `a fixed parameter has no ${k}`);
  const v = p.value;
  if (typeof v !== 'number' && typeof v !== 'string') return bad('.value', `${the} is fixed: give its value (a number or a string)`);
  if (typeof v === 'number' && !Number.isFinite(v)) return bad('.value', `${the}: the value must be a finite number`);
  const spec: ParameterSpec = { name: p.name as string, type: 'fixed', value: v };
  if (p.bounds !== undefined) {
    const b = p.bounds;
    if (!Array.isArray(b) || b.length !== 2 || !b.every((x) => typeof x === 'number' && Number.isFinite(x)) || !(b[0] <= b[1])) {
      return bad('.bounds', 'must be [low, high], two finite numbers, low ≤ high');
    }
    if (typeof v !== 'number' || v < b[0] || v > b[1]) return bad('.value', `${the} is fixed at ${JSON.stringify(v)}, outside its bounds ${b[0]}..${b[1]}`);
    spec.bounds = [b[0], b[1]];
  }
  if (p.choices !== undefined) {
    const ch = p.choices;
    if (!Array.isArray(ch) || !ch.every((c) => typeof c === 'string')) return bad('.choices', 'must be a list of strings');
    if (!ch.includes(String(v))) return bad('.value', `${the} is fixed at ${JSON.stringify(v)}, which is not one of ${ch.join(', ')}`);
  }
  out.push(spec);
}

/* ---------------------------------------------------------------- constraints */

interface Relation {
  terms: Map<string, number>;
  op: '<=' | '>=' | '==';
  /** Σ terms op rhs */
  rhs: number;
}

const TOKEN = /\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*(?:[.-][A-Za-z0-9_]+)*)|(<=|>=|==|≤|≥|=|<|>|[-+*/()]))/y;

/**
 * Read `lhs op rhs`, both sides linear in names (`x1 + 2*x2 <= 10`, `2 x`, `x/2`, `water + ethanol == 1`).
 * A name with a hyphen that is not in `known` is read as a subtraction (`x1-x2`). Throws invalid_input
 * quoting the text and the column where it stops making sense.
 */
function parseRelation(text: string, field: string, known?: Set<string>): Relation {
  let pos = 0;
  let tok: { kind: 'num' | 'name' | 'sym' | 'end'; text: string; at: number } = { kind: 'end', text: '', at: 0 };
  const next = () => {
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(text);
    if (!m) {
      const at = text.slice(pos).search(/\S/);
      if (at < 0) tok = { kind: 'end', text: '', at: text.length };
      else fail(pos + at, `unexpected "${text.slice(pos + at, pos + at + 10)}"`);
      return;
    }
    const at = m.index + m[0].length - (m[1] ?? m[2] ?? m[3])!.length;
    let name = m[2];
    if (name && known && !known.has(name) && name.includes('-')) name = name.slice(0, name.indexOf('-'));
    tok = m[1] ? { kind: 'num', text: m[1], at } : name ? { kind: 'name', text: name, at } : { kind: 'sym', text: m[3]!, at };
    pos = at + tok.text.length;
  };
  const fail = (at: number, why: string): never => {
    const message = `cannot read "${text}" at column ${at + 1}: ${why}`;
    throw invalid(`${field}: ${message}`, [{ field, message }]);
  };
  const found = () => (tok.kind === 'end' ? 'the end' : `"${tok.text}"`);
  /** A product of numbers with at most one name: [coefficient, name | null]. */
  const product = (): [number, string | null] => {
    let coef = 1;
    let name: string | null = null;
    let op = '*';
    for (;;) {
      if (tok.kind === 'sym' && tok.text === '(') fail(tok.at, 'parentheses are not supported; write the expression out (2*x1 + 2*x2)');
      if (tok.kind === 'num' && !(Number(tok.text) < 1e100)) fail(tok.at, `${tok.text} is too large a number`);
      if (tok.kind === 'num' && op === '/' && Number(tok.text) === 0) fail(tok.at, 'division by 0');
      if (tok.kind === 'num') coef = op === '*' ? coef * Number(tok.text) : coef / Number(tok.text);
      else if (tok.kind === 'name' && op === '*' && name === null) name = tok.text;
      else if (tok.kind === 'name') fail(tok.at, name === null ? `cannot divide by "${tok.text}": the constraint must be linear` : `"${name}" times "${tok.text}" is not linear`);
      else fail(tok.at, `expected a number or a name, found ${found()}`);
      next();
      if (tok.kind === 'sym' && (tok.text === '*' || tok.text === '/')) {
        op = tok.text;
        next();
      } else if (tok.kind === 'name' || tok.kind === 'num')
        op = '*'; // 2 x, 2x
      else return [coef, name];
    }
  };
  const side = (): { terms: Map<string, number>; constant: number } => {
    const terms = new Map<string, number>();
    let constant = 0;
    let sign = 1;
    if (tok.kind === 'sym' && (tok.text === '+' || tok.text === '-')) {
      sign = tok.text === '-' ? -1 : 1;
      next();
    }
    for (;;) {
      const [coef, name] = product();
      if (name === null) constant += sign * coef;
      else terms.set(name, (terms.get(name) ?? 0) + sign * coef);
      if (tok.kind !== 'sym' || (tok.text !== '+' && tok.text !== '-')) return { terms, constant };
      sign = tok.text === '-' ? -1 : 1;
      next();
    }
  };
  next();
  const left = side();
  if (tok.kind !== 'sym' || !['<=', '>=', '==', '=', '≤', '≥', '<', '>'].includes(tok.text)) fail(tok.at, `expected <=, >= or ==, found ${found()}`);
  if (tok.text === '<' || tok.text === '>') fail(tok.at, `write ${tok.text}= (a constraint includes its boundary)`);
  const op = tok.text === '≤' ? '<=' : tok.text === '≥' ? '>=' : tok.text === '=' ? '==' : (tok.text as Relation['op']);
  next();
  const right = side();
  if (tok.kind !== 'end') fail(tok.at, `expected the end, found ${found()}`);
  const terms = new Map(left.terms);
  for (const [n, c] of right.terms) terms.set(n, (terms.get(n) ?? 0) - c);
  for (const [n, c] of terms) if (c === 0) terms.delete(n);
  return { terms, op, rhs: right.constant - left.constant };
}

/**
 * A list of constraint strings: a list, or one string with one constraint per line (or `;`). Checked
 * constraints (objects with their `text`) are read again from their text: an optimizer defined twice (a
 * plugin loaded in its own module instance) passes them on to its inner `create`.
 */
function textList(raw: unknown, field: string): string[] {
  if (raw === undefined || raw === null || raw === '') return [];
  const list =
    typeof raw === 'string'
      ? raw
          .split(/[;\n]/)
          .map((s) => s.trim())
          .filter(Boolean)
      : raw;
  const texts = Array.isArray(list) ? list.map((c: unknown) => (isObj(c) && typeof c.text === 'string' ? c.text : c)) : null;
  if (!texts || !texts.every((c): c is string => typeof c === 'string' && c.trim() !== '')) {
    throw invalid(`${field} must be a list of strings`, [{ field, message: 'must be a list of strings such as "x1 + 2*x2 <= 10"' }]);
  }
  return texts.map((c) => c.trim());
}

/**
 * Check linear parameter constraints (strings such as `x1 + 2*x2 <= 10`, `water + ethanol + dmso == 1`)
 * against a checked space: every name a continuous range parameter (a fixed one is moved to the right-hand
 * side), and each constraint satisfiable within the bounds on its own (whether they all can be at once is
 * the optimizer's check). With `def`, the optimizer must honour constraints.
 */
export function checkConstraints(raw: unknown, space: ParameterSpec[], def?: { name: string; capabilities: OptimizerCapabilities }): LinearConstraint[] {
  const field = 'parameter_constraints';
  const list = textList(raw, field);
  if (!list.length) return [];
  if (def && !def.capabilities.constraints) {
    throw invalid(`the optimizer "${def.name}" cannot honour parameter constraints`, [
      { field, message: `the optimizer "${def.name}" cannot honour parameter constraints: choose one that can (random, sobol, gp)` },
    ]);
  }
  const byName = new Map(space.map((p) => [p.name, p]));
  const searched = space.filter((p) => p.type !== 'fixed').map((p) => p.name);
  const details: ErrorDetail[] = [];
  const out: LinearConstraint[] = [];
  list.forEach((text, i) => {
    const at = `${field}[${i}]`;
    let rel: Relation;
    try {
      rel = parseRelation(text, at, new Set(byName.keys()));
    } catch (e) {
      return details.push(...((e as LabError).details ?? []));
    }
    const sign = rel.op === '>=' ? -1 : 1;
    let rhs = sign * rel.rhs;
    const coefficients: Record<string, number> = {};
    let lo = 0;
    let hi = 0;
    for (const [name, c] of rel.terms) {
      const p = byName.get(name);
      if (!p) return details.push({ field: at, message: `"${name}" in "${text}" is not a searched parameter (the parameters: ${searched.join(', ')})` });
      if (p.type === 'fixed') {
        if (typeof p.value !== 'number') return details.push({ field: at, message: `"${name}" in "${text}" is fixed at ${JSON.stringify(p.value)}, not a number` });
        rhs -= sign * c * p.value;
        continue;
      }
      const kind = p.type !== 'range' ? `an ${p.type} parameter` : p.log_scale ? 'searched on a log scale' : p.step ? 'stepped' : null;
      if (kind) return details.push({ field: at, message: `"${name}" in "${text}" is ${kind}: constraints apply to continuous range parameters` });
      coefficients[name] = sign * c;
      lo += Math.min(sign * c * p.bounds![0], sign * c * p.bounds![1]);
      hi += Math.max(sign * c * p.bounds![0], sign * c * p.bounds![1]);
    }
    if (!Object.keys(coefficients).length) return details.push({ field: at, message: `"${text}" involves no searched parameter` });
    const slack = CONSTRAINT_TOLERANCE * (hi - lo);
    if (lo > rhs + slack || (rel.op === '==' && hi < rhs - slack)) {
      // said the way it was written: the searched part of the left side minus the right
      const expr = Object.entries(coefficients)
        .map(([n, c], k) => `${sign * c < 0 ? (k ? ' - ' : '-') : k ? ' + ' : ''}${Math.abs(c) === 1 ? '' : `${Math.abs(c)}*`}${n}`)
        .join('');
      const [a, b] = sign < 0 ? [-hi, -lo] : [lo, hi];
      return details.push({ field: at, message: `no values within the bounds satisfy "${text}": ${expr} ranges over ${a}..${b} there` });
    }
    out.push({ text, coefficients, op: rel.op === '==' ? '==' : '<=', rhs });
  });
  if (details.length) throw invalid(`Invalid parameter constraints: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
  return out;
}

/**
 * Check limits on measured outputs, `purity >= 0.9` (also the form of a campaign's `stop_when`). With
 * `def`, the optimizer must honour outcome constraints.
 */
export function checkOutcomeConstraints(raw: unknown, field: string, def?: { name: string; capabilities: OptimizerCapabilities }): OutcomeConstraint[] {
  const list = textList(raw, field);
  if (list.length && def && !def.capabilities.outcomeConstraints) {
    throw invalid(`the optimizer "${def.name}" cannot honour outcome constraints`, [
      { field, message: `the optimizer "${def.name}" cannot honour outcome constraints: choose one that can (random, sobol, gp)` },
    ]);
  }
  return list.map((text, i) => {
    const at = `${field}[${i}]`;
    const rel = parseRelation(text, at);
    const [entry, ...more] = rel.terms;
    if (!entry || more.length || rel.op === '==') {
      const message = `"${text}" must compare one output with a number: "purity >= 0.9" or "cost <= 10"`;
      throw invalid(`${at}: ${message}`, [{ field: at, message }]);
    }
    const [name, c] = entry;
    const flip = c < 0 !== (rel.op === '<=');
    return { text, name, op: flip ? '<=' : '>=', bound: rel.rhs / c };
  });
}

/** How far a parameter set is outside a linear constraint, relative to the spread of its left side over the box (0: satisfied). */
export function constraintViolation(c: LinearConstraint, params: ParamValues, space: ParameterSpec[]): number {
  let lhs = 0;
  let spread = 0;
  for (const [name, a] of Object.entries(c.coefficients)) {
    const b = space.find((p) => p.name === name)!.bounds!;
    lhs += a * Number(params[name]);
    spread += Math.abs(a) * (b[1] - b[0]);
  }
  const d = lhs - c.rhs;
  return (c.op === '==' ? Math.abs(d) : Math.max(0, d)) / spread;
}

/**
 * Check the objectives and return a clean copy. With `def`, more than one objective needs a multi-objective
 * optimizer; with `space`, an objective may not share a parameter's name.
 */
export function checkObjectives(objectives: unknown, def?: { name: string; capabilities: OptimizerCapabilities }, space?: ParameterSpec[]): ObjectiveSpec[] {
  if (!Array.isArray(objectives) || objectives.length === 0) {
    throw invalid('objectives: give at least one objective', [{ field: 'objectives', message: 'a non-empty list of objectives is required' }]);
  }
  const details: ErrorDetail[] = [];
  const out: ObjectiveSpec[] = [];
  const seen = new Set<string>();
  const params = new Set((space ?? []).map((p) => p.name));
  objectives.forEach((o, i) => {
    const at = `objectives[${i}]`;
    if (!isObj(o)) return details.push({ field: at, message: 'must be an object { name, minimize }' });
    for (const k of Object.keys(o)) if (k !== 'name' && k !== 'minimize' && k !== 'weight') details.push({ field: `${at}.${k}`, message: 'unknown key (expected name, minimize, weight)' });
    const { name, minimize, weight } = o;
    if (weight !== undefined && (typeof weight !== 'number' || !(weight > 0) || !Number.isFinite(weight))) details.push({ field: `${at}.weight`, message: 'must be a number above 0' });
    // an objective names a workflow output, which may pick a field of a saved value (`run.yield`) or a
    // position of a list (`run.0`, a Python method's tuple)
    if (typeof name !== 'string' || !name.split('.').every((part, i) => NAME_RE.test(part) || (i > 0 && /^\d+$/.test(part)))) {
      details.push({ field: `${at}.name`, message: 'must be a name made of letters, digits, _ and - (a.b for a field, a.0 for a position)' });
    } else if (seen.has(name)) details.push({ field: `${at}.name`, message: `"${name}" is used twice` });
    else if (params.has(name)) details.push({ field: `${at}.name`, message: `"${name}" is also a parameter` });
    else seen.add(name);
    if (typeof minimize !== 'boolean') details.push({ field: `${at}.minimize`, message: 'must be true or false' });
    if (typeof name === 'string' && typeof minimize === 'boolean') out.push(typeof weight === 'number' ? { name, minimize, weight } : { name, minimize });
  });
  if (!details.length && out.some((o) => o.weight !== undefined) && out.some((o) => o.weight === undefined)) {
    details.push({ field: 'objectives', message: 'give every objective a weight, or none' });
  }
  if (!details.length && def && out.length > 1 && !def.capabilities.multiObjective) {
    details.push({ field: 'objectives', message: `the optimizer "${def.name}" handles one objective only` });
  }
  if (details.length) throw invalid(`Invalid objectives: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
  return out;
}

/** Parse a configuration with the optimizer's zod schema (defaults applied, unknown options refused); errors name `config.<key>`. */
export function checkConfig<C extends ZodObjectAny>(config: unknown, def: { name: string; config: C }): z.infer<C> {
  // an option the optimizer does not have is refused by name, never dropped
  const r = def.config.strict().safeParse(config ?? {});
  if (r.success) return r.data as z.infer<C>;
  const options = Object.keys(def.config.shape).join(', ') || 'none';
  const details = r.error.issues.flatMap((iss) =>
    iss.code === 'unrecognized_keys'
      ? iss.keys.map((k) => ({ field: ['config', ...iss.path.map(String), k].join('.'), message: `is not an option of the optimizer "${def.name}" (its options: ${options})` }))
      : [{ field: ['config', ...iss.path.map(String)].join('.'), message: iss.message }],
  );
  throw invalid(`Invalid configuration of the optimizer "${def.name}": ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
}

/** The seed: an integer (default 0). */
export function checkSeed(seed: unknown): number {
  if (seed === undefined || seed === null) return 0;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) {
    throw invalid('seed must be an integer', [{ field: 'seed', message: 'must be an integer' }]);
  }
  return seed;
}

/** Check a batch size against the optimizer's capabilities. */
export function checkBatchSize(n: unknown, def: { name: string; capabilities: OptimizerCapabilities }): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
    throw invalid('batch_size must be a positive integer', [{ field: 'batch_size', message: 'must be an integer ≥ 1' }]);
  }
  if (n > 1 && !def.capabilities.batch) {
    throw invalid(`the optimizer "${def.name}" suggests one point at a time`, [{ field: 'batch_size', message: `the optimizer "${def.name}" does not support batches; use 1` }]);
  }
  return n;
}
