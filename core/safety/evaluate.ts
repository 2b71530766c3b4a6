/**
 * The guard's verdict on one call: the limits its arguments break (numbers, allowed values, tray positions;
 * the choices the driver itself declares, with nothing configured) and the rules it breaks (interlocks that
 * compare arguments, live readings, the last values sent and the deck's states). Pure: readings, last values
 * and states come from the caller (core/safety/index.ts). What cannot be determined blocks.
 *
 * Per instrument and method, what applies is worked out once and kept (`plan`), so a call costs a few
 * comparisons (scripts/bench/safety.mjs).
 */
import type { JSONSchema } from '../contracts/index.js';
import { ANY, CLASS_PREFIX, positionText, trayGrid, type ClauseDef, type LimitDef, type OperandDef, type RuleDef, type SafetyConfig } from './format.js';

/** One call as the guard sees it. */
export interface CallInfo {
  instrument: string;
  /** The driver (class) name, then its base classes when known, most derived first. */
  classes: readonly string[];
  method: string;
  /** The arguments the driver gets (validated; defaults filled in where the deck knows them). */
  args: Record<string, unknown>;
  /** JSON Schema of the method's arguments: defaults and declared choices come from it. */
  params?: JSONSchema;
}

export interface LimitInfo {
  /** Where it comes from: `limits[3]`, or `declared` (the driver's own Enum/Literal choices). */
  source: string;
  target?: string;
  min?: number;
  max?: number;
  allowed?: readonly unknown[];
  tray?: string;
  note?: string;
}

export interface SafetyProblem {
  /** The argument (dotted) a limit is about; for a rule, the argument it compares, else `(rule)`. */
  field: string;
  message: string;
  value?: unknown;
  limit?: LimitInfo;
  /** The rule's id (or `rules[i]`). */
  rule?: string;
}

export interface Verdict {
  allowed: boolean;
  problems: SafetyProblem[];
}

/** A value that could not be determined, and why. */
export class Unknown {
  constructor(readonly reason: string) {}
}

export interface Readings {
  /** A live reading `instrument.member` (bounded in time by the caller); Unknown when it fails. */
  read(ref: string): Promise<unknown>;
  /** The last value sent (`inst.method.param`) or the last method called on `inst`; Unknown if none. */
  last(ref: string): unknown;
  /** A state's value now; Unknown when nothing set it. */
  state(name: string): Promise<unknown>;
}

interface Constraint extends LimitInfo {
  param: string;
  path: string[];
  declared?: boolean;
  /** The tray's positions and blocked ones, resolved once. */
  positions?: Set<string>;
  blocked?: Set<string>;
  trayLabel?: string;
}

interface Plan {
  params: JSONSchema | undefined;
  classes: string;
  constraints: Constraint[];
  rules: { rule: RuleDef; id: string }[];
}

const MISSING = Symbol('missing');

/** The value as a number, or null (booleans, NaN and text that is not a number are not numbers). */
export function asNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export function show(v: unknown): string {
  if (typeof v === 'string') return `"${v}"`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function dig(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (cur !== null && typeof cur === 'object' && !Array.isArray(cur) && Object.hasOwn(cur, p)) cur = (cur as Record<string, unknown>)[p];
    else return MISSING;
  }
  return cur;
}

function schemaAt(params: JSONSchema | undefined, path: readonly string[]): JSONSchema | undefined {
  let s: JSONSchema | undefined = params;
  for (const p of path) {
    const props = s?.properties as Record<string, JSONSchema> | undefined;
    s = props?.[p];
    if (!s) return undefined;
  }
  return s;
}

/** What the driver receives for `path`: the given value, else the schema's default, else MISSING. */
function argument(call: CallInfo, path: readonly string[]): unknown {
  const v = dig(call.args, path);
  if (v !== MISSING) return v;
  const s = schemaAt(call.params, path);
  return s && 'default' in s ? s.default : MISSING;
}

/** Choices the driver declares per field (an enum, a Literal's consts), booleans left out. */
export function declaredChoices(params: JSONSchema | undefined, prefix = ''): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  const props = params?.properties as Record<string, JSONSchema> | undefined;
  for (const [key, s] of Object.entries(props ?? {})) {
    const path = prefix + key;
    const choices = choicesOf(s) ?? choicesOf(s.items as JSONSchema | undefined);
    if (choices) out.set(path, choices);
    else if (s.type === 'object' && s.properties) for (const [k, v] of declaredChoices(s, `${path}.`)) out.set(k, v);
  }
  return out;
}

function choicesOf(s: JSONSchema | undefined): unknown[] | null {
  if (!s || typeof s !== 'object') return null;
  const list = Array.isArray(s.enum) ? (s.enum as unknown[]) : 'const' in s ? [s.const] : null;
  if (list) return list.every((v) => typeof v === 'boolean') ? null : list.filter((v) => v !== null);
  const alts = (s.anyOf ?? s.oneOf) as JSONSchema[] | undefined;
  if (!Array.isArray(alts)) return null;
  const values: unknown[] = [];
  for (const a of alts) {
    if (a?.type === 'null') continue;
    const c = choicesOf(a);
    if (!c) return null;
    values.push(...c);
  }
  return values.length ? values : null;
}

function same(a: unknown, b: unknown): boolean {
  const x = asNumber(a);
  const y = asNumber(b);
  if (x !== null && y !== null) return x === y;
  if (typeof a === 'boolean' || typeof b === 'boolean') return String(a).trim().toLowerCase() === String(b).trim().toLowerCase();
  return String(a).trim() === String(b).trim();
}

/** true, false, or Unknown when the two cannot be compared that way. */
export function compare(left: unknown, op: ClauseDef['op'], right: unknown): boolean | Unknown {
  switch (op) {
    case '==':
      return same(left, right);
    case '!=':
      return !same(left, right);
    case 'in':
    case 'not in': {
      const inside = (Array.isArray(right) ? right : [right]).some((r) => same(left, r));
      return op === 'in' ? inside : !inside;
    }
  }
  const a = asNumber(left);
  const b = asNumber(right);
  if (a === null || b === null) return new Unknown(`${show(a === null ? left : right)} is not a number`);
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
}

const OP_WORDS: Record<ClauseDef['op'], string> = {
  '==': 'must be',
  '!=': 'must not be',
  in: 'must be one of',
  'not in': 'must not be one of',
  '<': 'must be below',
  '<=': 'must be at most',
  '>': 'must be above',
  '>=': 'must be at least',
};

export class Evaluator {
  private readonly plans = new Map<string, Plan>();
  constructor(readonly config: SafetyConfig) {}

  /** How closely `target` names this instrument: 0 its name, 1 its class, 2 a base …; -1 when it does not. */
  static closeness(target: string, instrument: string, classes: readonly string[]): number {
    if (target === instrument) return 0;
    if (target.startsWith(CLASS_PREFIX)) {
      const i = classes.indexOf(target.slice(CLASS_PREFIX.length));
      if (i >= 0) return 1 + i;
    }
    return -1;
  }

  static matches(target: string, instrument: string, classes: readonly string[]): boolean {
    return target === ANY || Evaluator.closeness(target, instrument, classes) >= 0;
  }

  /** What applies to this instrument's method: merged constraints per field and the matching rules. */
  plan(call: CallInfo): Plan {
    const key = `${call.instrument}\0${call.method}`;
    const classes = call.classes.join('\0');
    const cached = this.plans.get(key);
    if (cached && cached.params === call.params && cached.classes === classes) return cached;
    const byParam = new Map<string, Constraint>();
    for (const [param, allowed] of declaredChoices(call.params)) byParam.set(param, { param, path: param.split('.'), source: 'declared', allowed, declared: true });
    const rank = new Map<string, number>();
    this.config.limits.forEach((l: LimitDef, i) => {
      if (l.method !== call.method && l.method !== ANY) return;
      const c = Evaluator.closeness(l.target, call.instrument, call.classes);
      if (c < 0 || (rank.get(l.param) ?? Infinity) <= c) return;
      rank.set(l.param, c);
      const declared = byParam.get(l.param);
      const merged: Constraint = { param: l.param, path: l.param.split('.'), source: `limits[${i}]`, target: l.target };
      if (declared?.declared && l.allowed === undefined) merged.allowed = declared.allowed;
      if (l.min !== undefined) merged.min = l.min;
      if (l.max !== undefined) merged.max = l.max;
      if (l.allowed !== undefined) merged.allowed = l.allowed;
      if (l.note !== undefined) merged.note = l.note;
      if (l.tray !== undefined) {
        const tray = this.config.trays[l.tray];
        merged.tray = l.tray;
        merged.trayLabel = tray ? `${tray.label ?? l.tray} (${tray.rows} × ${tray.columns})` : l.tray;
        merged.positions = new Set(tray ? trayGrid(tray).flat() : []);
        merged.blocked = new Set((tray?.blocked ?? []).map(positionText));
      }
      byParam.set(l.param, merged);
    });
    const rules: Plan['rules'] = [];
    this.config.rules.forEach((rule, i) => {
      if (!rule.enabled || !Evaluator.matches(rule.when.target, call.instrument, call.classes)) return;
      if (rule.when.method !== ANY && rule.when.method !== call.method) return;
      rules.push({ rule, id: rule.id || `rules[${i}]` });
    });
    const plan: Plan = { params: call.params, classes, constraints: [...byParam.values()], rules };
    this.plans.set(key, plan);
    return plan;
  }

  /** The limits (and declared choices) the call's arguments break. Synchronous: literal values only. */
  limits(call: CallInfo): SafetyProblem[] {
    if (!this.config.enabled) return [];
    const out: SafetyProblem[] = [];
    for (const c of this.plan(call).constraints) {
      const v = argument(call, c.path);
      if (v !== MISSING) checkValue(c, v, out);
    }
    return out;
  }

  /** The whole verdict: limits, then each rule that applies (readings taken once per call). */
  async check(call: CallInfo, readings: Readings): Promise<Verdict> {
    const problems = this.limits(call);
    if (this.config.enabled) {
      const plan = this.plan(call);
      if (plan.rules.length) {
        const ctx = new ClauseContext(call, readings);
        for (const { rule, id } of plan.rules) {
          const p = await ctx.rule(rule, id);
          if (p) problems.push(p);
        }
      }
    }
    return { allowed: problems.length === 0, problems };
  }
}

/** Why `value` breaks constraint `c`, one problem per offending value (a list is checked item by item). */
export function checkValue(c: Constraint, value: unknown, out: SafetyProblem[]): void {
  const items = Array.isArray(value) ? value : [value];
  const limit: Record<string, unknown> = { source: c.source };
  for (const k of ['target', 'min', 'max', 'allowed', 'tray', 'note'] as const) if (c[k] !== undefined) limit[k] = c[k];
  const add = (item: unknown, why: string) => out.push({ field: c.param, value: item, limit: limit as unknown as LimitInfo, message: `${c.param} = ${show(item)} ${why}` });
  for (const item of items) {
    if (item === null || item === undefined || item === '') continue;
    if (c.min !== undefined || c.max !== undefined) {
      const n = asNumber(item);
      if (n === null) {
        add(item, 'is not a number, and this field has a limit');
        continue;
      }
      if (c.min !== undefined && n < c.min) add(item, `is below the minimum of ${c.min}`);
      if (c.max !== undefined && n > c.max) add(item, `is above the maximum of ${c.max}`);
    }
    if (c.allowed !== undefined && !c.allowed.some((a) => String(a) === positionText(item))) {
      add(item, c.declared ? `is not one of its choices (${c.allowed.join(', ')})` : `is not allowed here (allowed: ${c.allowed.join(', ')})`);
    }
    if (c.positions) {
      const pos = positionText(item);
      if (!c.positions.has(pos)) add(item, `is not a position on ${c.trayLabel}`);
      else if (c.blocked!.has(pos)) add(item, `is a blocked position on ${c.trayLabel}`);
    }
  }
}

/** Evaluates one call's clauses; a reading is taken once per call. */
export class ClauseContext {
  private readonly reads = new Map<string, Promise<unknown>>();
  constructor(
    private readonly call: CallInfo,
    private readonly readings: Readings,
  ) {}

  async rule(rule: RuleDef, id: string): Promise<SafetyProblem | null> {
    for (const clause of rule.if) {
      const [holds] = await this.clause(clause);
      if (holds === false) return null; // unknown counts as applying: the cautious reading
    }
    for (const clause of rule.require) {
      const [holds, detail, value] = await this.clause(clause);
      if (holds !== true) {
        const text = (rule.message || rule.name || id).replace(/[.\s]+$/, '');
        const field = 'arg' in clause.left ? clause.left.arg : '(rule)';
        return { field, rule: id, value: value instanceof Unknown ? null : value, message: `${text} (${detail}).` };
      }
    }
    return null;
  }

  /** [true | false | null (unknown), why in words, the left value]. */
  async clause(c: ClauseDef): Promise<[boolean | null, string, unknown]> {
    const [ll, left] = await this.operand(c.left);
    const [rl, right] = await this.operand(c.right);
    if (left instanceof Unknown) return [null, `${ll} is unknown: ${left.reason}`, left];
    if (right instanceof Unknown) return [null, `${rl} is unknown: ${right.reason}`, left];
    const r = compare(left, c.op, right);
    if (r instanceof Unknown) return [null, `${ll} cannot be compared: ${r.reason}`, left];
    const wanted = Array.isArray(right) ? right.map(show).join(', ') : 'value' in c.right ? show(right) : `${rl} (${show(right)})`;
    return [r, `${ll} is ${show(left)}, ${OP_WORDS[c.op]} ${wanted}`, left];
  }

  async operand(o: OperandDef): Promise<[string, unknown]> {
    if ('value' in o) return [show(o.value), o.value];
    if ('arg' in o) {
      const v = argument(this.call, o.arg.split('.'));
      return [o.arg, v === MISSING ? new Unknown('this call does not set it') : v];
    }
    if ('last' in o) return [o.last.includes('.') ? `the last ${o.last}` : `the last action on ${o.last}`, this.readings.last(o.last)];
    if ('state' in o) return [`the state ${o.state}`, await this.readings.state(o.state)];
    const label = o.path ? `${o.read}.${o.path}` : o.read;
    let p = this.reads.get(o.read);
    if (!p) this.reads.set(o.read, (p = this.readings.read(o.read)));
    const raw = await p;
    if (raw instanceof Unknown || !o.path) return [label, raw];
    const v = dig(raw, o.path.split('.'));
    return [label, v === MISSING ? new Unknown(`the reading has no field "${o.path}"`) : v];
  }
}
