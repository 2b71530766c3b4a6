/**
 * The `ivoryos-safety/1` file: its shape (zod) and the checks a shape cannot say (a tray that is not defined,
 * a minimum above its maximum, two limits on one field, a state nobody defined). `validate` names every
 * problem by its path in the file (`limits[3].max`, `rules[0].require[1].left`), so a person can find it.
 *
 * The format is ivoryOS's own (its next generation's `edge_server/ivoryos_edge/safety.py` documents it); it is
 * read unchanged. labdeck adds `levels` (a method's safety level, without touching the driver): see
 * docs/safety.md.
 */
import { z } from 'zod';

export const SAFETY_FORMAT = 'ivoryos-safety/1';
export const NAMINGS = ['A1', 'A01', '1', '0'] as const;
export const ORDERS = ['row', 'column'] as const;
export const OPS = ['<', '<=', '>', '>=', '==', '!=', 'in', 'not in'] as const;
export const LEVELS = ['readonly', 'idempotent', 'hazardous'] as const;
export const MAX_TRAY_SIDE = 100;
export const CLASS_PREFIX = 'class:';
export const ANY = '*';

export type Op = (typeof OPS)[number];
export type Level = (typeof LEVELS)[number];

const name = z.string().trim().min(1, 'must not be empty');
const scalar = z.union([z.string(), z.number(), z.boolean()]);

const Tray = z.strictObject({
  label: z.string().optional(),
  rows: z.int().min(1).max(MAX_TRAY_SIDE),
  columns: z.int().min(1).max(MAX_TRAY_SIDE),
  naming: z.enum(NAMINGS).default('A1'),
  order: z.enum(ORDERS).default('row'),
  blocked: z.array(z.union([z.string(), z.int()])).default([]),
});

const Operand = z.union([
  z.strictObject({ arg: name }),
  z.strictObject({
    read: z
      .string()
      .trim()
      .regex(/^[^.\s]+\.[^.\s]+$/, 'is written instrument.member, e.g. reactor.read_temperature'),
    path: z.string().trim().optional(),
  }),
  z.strictObject({
    last: z
      .string()
      .trim()
      .regex(/^[^.\s]+(\.[^.\s]+\.[^\s]+)?$/, 'is an instrument (its last action) or instrument.method.param (the last value sent)'),
  }),
  z.strictObject({ state: name }),
  z.strictObject({ value: z.unknown() }),
]);

const Clause = z.strictObject({ left: Operand, op: z.enum(OPS), right: Operand });

const Limit = z.strictObject({
  target: name,
  method: name,
  param: name,
  min: z.number().optional(),
  max: z.number().optional(),
  allowed: z.array(scalar).min(1).optional(),
  tray: name.optional(),
  note: z.string().optional(),
});

const Rule = z.strictObject({
  id: z.string().trim().optional(),
  name: z.string().optional(),
  enabled: z.boolean().default(true),
  when: z.strictObject({ target: name, method: name.default(ANY) }),
  if: z.array(Clause).default([]),
  require: z.array(Clause).min(1, 'needs at least one condition that must hold'),
  message: z.string().default(''),
});

const Effect = z.strictObject({
  target: name,
  method: name,
  value: z.union([scalar, z.strictObject({ arg: name }), z.strictObject({ result: z.string().trim() })]),
  if: z.array(Clause).optional(),
});

const State = z.strictObject({
  label: z.string().optional(),
  values: z.array(z.string()).default([]),
  read: z.union([z.string(), z.strictObject({ read: z.string(), path: z.string().optional(), map: z.record(z.string(), scalar).optional() })]).optional(),
  set_by: z.array(Effect).default([]),
});

/** One method's level: `{target, method, level}` (target as in a limit; method `*` for every method). */
const LevelEntry = z.strictObject({ target: name, method: name, level: z.enum(LEVELS) });

export const SafetyFile = z.strictObject({
  format: z.literal(SAFETY_FORMAT, { error: `must be "${SAFETY_FORMAT}"` }).default(SAFETY_FORMAT),
  enabled: z.boolean().default(true),
  trays: z.record(name, Tray).default({}),
  limits: z.array(Limit).default([]),
  rules: z.array(Rule).default([]),
  states: z.record(name, State).default({}),
  /** labdeck's own: safety levels of methods, without touching the driver. */
  levels: z.array(LevelEntry).default([]),
});

export type SafetyConfig = z.output<typeof SafetyFile>;
export type TrayDef = z.output<typeof Tray>;
export type LimitDef = z.output<typeof Limit>;
export type RuleDef = z.output<typeof Rule>;
export type ClauseDef = z.output<typeof Clause>;
export type OperandDef = z.output<typeof Operand>;
export type StateDef = z.output<typeof State>;
export type EffectDef = z.output<typeof Effect>;

export interface Problem {
  /** Where in the file: `limits[2].max`, `trays.rack.blocked[0]`. */
  path: string;
  message: string;
}

export const emptyConfig = (): SafetyConfig => SafetyFile.parse({});

function pathText(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || '(file)';
}

/** Row letters: 0 → A, 25 → Z, 26 → AA. */
export function rowLabel(index: number): string {
  let label = '';
  let i = index + 1;
  while (i > 0) {
    const rem = (i - 1) % 26;
    label = String.fromCharCode(65 + rem) + label;
    i = Math.floor((i - 1) / 26);
  }
  return label;
}

/** Every position's name, as rows of columns, the way the tray looks from above. */
export function trayGrid(tray: Pick<TrayDef, 'rows' | 'columns' | 'naming' | 'order'>): string[][] {
  const { rows, columns, naming, order } = tray;
  const grid: string[][] = [];
  for (let r = 0; r < rows; r++) {
    const row: string[] = [];
    for (let c = 0; c < columns; c++) {
      if (naming === 'A1' || naming === 'A01') {
        const n = String(c + 1);
        row.push(rowLabel(r) + (naming === 'A01' ? n.padStart(Math.max(2, String(columns).length), '0') : n));
      } else {
        const index = order === 'column' ? c * rows + r : r * columns + c;
        row.push(String(index + (naming === '1' ? 1 : 0)));
      }
    }
    grid.push(row);
  }
  return grid;
}

/** A value as a position name: 3.0 → "3", " A1 " → "A1". */
export const positionText = (v: unknown): string => String(v).trim();

/** Shape-check a file and check what the shape cannot say. The config is null when there is any problem. */
export function validate(raw: unknown): { config: SafetyConfig | null; problems: Problem[] } {
  const r = SafetyFile.safeParse(raw);
  if (!r.success) {
    const problems = r.error.issues.map((i) => ({ path: pathText(i.path), message: issueMessage(i) }));
    return { config: null, problems };
  }
  const config = r.data;
  const problems: Problem[] = [];
  const err = (path: string, message: string) => problems.push({ path, message });

  for (const [tname, tray] of Object.entries(config.trays)) {
    const positions = new Set(trayGrid(tray).flat());
    tray.blocked.forEach((b, i) => {
      if (!positions.has(positionText(b))) err(`trays.${tname}.blocked[${i}]`, `"${positionText(b)}" is not a position of tray "${tname}" (${tray.rows} × ${tray.columns}, naming ${tray.naming})`);
    });
  }
  const stateNames = new Set(Object.keys(config.states));
  const checkClauses = (clauses: ClauseDef[], at: string, method: string) =>
    clauses.forEach((c, j) => {
      for (const side of ['left', 'right'] as const) {
        const o = c[side];
        if ('state' in o && !stateNames.has(o.state)) err(`${at}[${j}].${side}.state`, `the state "${o.state}" is not defined in "states"`);
        if ('arg' in o && method === ANY) err(`${at}[${j}].${side}.arg`, `reads the argument "${o.arg}", so its rule must name one method, not "*"`);
      }
      if ((c.op === 'in' || c.op === 'not in') && !('value' in c.right && Array.isArray(c.right.value) && c.right.value.length)) {
        err(`${at}[${j}].right`, `"${c.op}" compares against a list of values: {"value": [...]}`);
      }
    });

  const seen = new Map<string, number>();
  config.limits.forEach((l, i) => {
    const at = `limits[${i}]`;
    if (l.min === undefined && l.max === undefined && l.allowed === undefined && l.tray === undefined) err(at, `${l.target}.${l.method}.${l.param} sets nothing: give it min, max, allowed or tray`);
    if (l.min !== undefined && l.max !== undefined && l.min > l.max) err(`${at}.min`, `the minimum (${l.min}) is above the maximum (${l.max})`);
    if (l.tray !== undefined && !(l.tray in config.trays)) err(`${at}.tray`, `the tray "${l.tray}" is not defined in "trays"`);
    const key = `${l.target}\0${l.method}\0${l.param}`;
    const first = seen.get(key);
    if (first !== undefined) err(at, `${l.target}.${l.method}.${l.param} already has a limit (limits[${first}]): keep one`);
    else seen.set(key, i);
  });

  const ids = new Set<string>();
  config.rules.forEach((rule, i) => {
    const at = `rules[${i}]`;
    if (rule.id) {
      if (ids.has(rule.id)) err(`${at}.id`, `the id "${rule.id}" is used by another rule`);
      ids.add(rule.id);
    }
    checkClauses(rule.if, `${at}.if`, rule.when.method);
    checkClauses(rule.require, `${at}.require`, rule.when.method);
  });

  for (const [sname, state] of Object.entries(config.states)) {
    const at = `states.${sname}`;
    if (sname.includes('.')) err(at, 'a state name has no dot in it');
    const values = new Set(state.values);
    state.set_by.forEach((e, i) => {
      if (e.method === ANY) err(`${at}.set_by[${i}].method`, 'say which method sets it (not "*")');
      if (values.size && typeof e.value !== 'object' && !values.has(String(e.value)))
        err(`${at}.set_by[${i}].value`, `${JSON.stringify(e.value)} is not one of its values (${state.values.join(', ')})`);
      if (e.if) checkClauses(e.if, `${at}.set_by[${i}].if`, e.method);
    });
    const read = typeof state.read === 'string' ? { read: state.read } : state.read;
    if (read && !/^[^.\s]+\.[^.\s]+$/.test(read.read.trim())) err(`${at}.read`, 'is written instrument.member, e.g. balance.door_state');
  }
  return problems.length ? { config: null, problems } : { config, problems };
}

function issueMessage(i: z.core.$ZodIssue): string {
  if (i.code === 'unrecognized_keys') return `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `"${k}"`).join(', ')}`;
  if (i.code === 'invalid_union') return 'is not one of the forms it can take (see docs/safety.md)';
  return i.message;
}

/** Parse JSON text and validate it; a syntax error is a problem at `(file)`. */
export function parseText(text: string): { config: SafetyConfig | null; raw: unknown; problems: Problem[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { config: null, raw: undefined, problems: [{ path: '(file)', message: `is not JSON: ${e instanceof Error ? e.message : String(e)}` }] };
  }
  return { raw, ...validate(raw) };
}
