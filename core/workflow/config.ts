/**
 * Execution configs (DESIGN.md §4, §6): the parameter sets of a run's iterations, one per row. Rows come
 * from a CSV file or a form (every value a string) or from JSON (typed values); both are coerced to each
 * parameter's type here, so the interpreter sees numbers as numbers.
 *
 * Rules: an empty cell, null or a missing column means "no value" and takes the parameter's default
 * (an error when there is none); a column that is not a parameter is an error; numbers are written with a
 * dot (1.5), booleans as true/false, yes/no, 1/0 or on/off. Errors name the row and column the way a person
 * counts them ("row 3, column volume"); a CSV reader passes `label` to say "line 4" instead.
 */
import { LabError, type ErrorDetail } from '../errors.js';
import type { Parameter, Workflow } from './model.js';

export interface RowOptions {
  /** How row `index` (0-based) is named in errors; default `row ${index + 1}`. */
  label?: (index: number) => string;
}

/** At most this many problems are listed (a 10,000-row file with a wrong column would list them all). */
export const MAX_DETAILS = 100;
/** The most iterations `repeat` may ask for. */
export const MAX_REPEAT = 1_000_000;

export type Coerced = { ok: true; value: unknown } | { ok: false; message: string } | { ok: 'missing' };

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE = new Set(['true', 'yes', 'y', '1', 'on']);
const FALSE = new Set(['false', 'no', 'n', '0', 'off']);

const show = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v)));

/** One value to a parameter's type. */
export function coerceValue(type: Parameter['type'], raw: unknown): Coerced {
  if (raw === undefined || raw === null) return { ok: 'missing' };
  if (typeof raw === 'string' && raw.trim() === '') return { ok: 'missing' };
  switch (type) {
    case 'number':
    case 'integer': {
      let n: number;
      if (typeof raw === 'number') n = raw;
      else if (typeof raw === 'string' && DECIMAL.test(raw.trim())) n = Number(raw.trim());
      else if (typeof raw === 'string' && /^[+-]?\d+,\d+$/.test(raw.trim())) {
        return { ok: false, message: `${show(raw)} is not a number: write decimals with a dot (${raw.trim().replace(',', '.')})` };
      } else return { ok: false, message: `${show(raw)} is not a number` };
      if (!Number.isFinite(n)) return { ok: false, message: `${show(raw)} is not a finite number` };
      if (type === 'integer' && !Number.isInteger(n)) return { ok: false, message: `${show(raw)} is not a whole number` };
      return { ok: true, value: n };
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return { ok: true, value: raw };
      const s = String(raw).trim().toLowerCase();
      if ((typeof raw === 'string' || typeof raw === 'number') && TRUE.has(s)) return { ok: true, value: true };
      if ((typeof raw === 'string' || typeof raw === 'number') && FALSE.has(s)) return { ok: true, value: false };
      return { ok: false, message: `${show(raw)} is not true or false` };
    }
    case 'string':
      if (typeof raw === 'string') return { ok: true, value: raw };
      if (typeof raw === 'number' || typeof raw === 'boolean') return { ok: true, value: String(raw) };
      return { ok: false, message: `${show(raw)} is not text` };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function configError(workflow: Pick<Workflow, 'name'>, details: ErrorDetail[]): LabError {
  const shown = details.slice(0, 3).map((d) => (d.field ? `${d.field}: ${d.message}` : d.message));
  const more = details.length > 3 ? `; and ${details.length - 3} more` : '';
  const list = details.length > MAX_DETAILS ? [...details.slice(0, MAX_DETAILS), { message: `and ${details.length - MAX_DETAILS} more problems` }] : details;
  return new LabError('invalid_input', `The config for workflow "${workflow.name}" is not valid: ${shown.join('; ')}${more}`, list);
}

/**
 * Check and coerce config rows: one parameter set per row, keys in the parameters' order. Throws one
 * LabError('invalid_input') listing every problem (`{ field: 'row 3, column volume', message }`).
 */
export function checkConfigRows(workflow: Pick<Workflow, 'name' | 'parameters'>, rows: unknown, options: RowOptions = {}): Record<string, unknown>[] {
  const label = options.label ?? ((i: number) => `row ${i + 1}`);
  if (!Array.isArray(rows)) throw configError(workflow, [{ field: 'config', message: 'must be a list of rows (one object of parameter values per iteration)' }]);
  if (rows.length === 0) throw configError(workflow, [{ field: 'config', message: 'has no rows: give at least one parameter set' }]);
  const params = workflow.parameters;
  const known = new Set(params.map((p) => p.name));
  const reported = new Set<string>();
  const details: ErrorDetail[] = [];
  const out: Record<string, unknown>[] = [];
  rows.forEach((row, i) => {
    const where = label(i);
    if (!isObject(row)) {
      details.push({ field: where, message: 'must be an object of parameter values' });
      return;
    }
    for (const column of Object.keys(row)) {
      if (known.has(column) || reported.has(column)) continue;
      reported.add(column); // once per column, at the first row that has it
      details.push({
        field: `${where}, column ${column}`,
        message: `"${column}" is not a parameter of workflow "${workflow.name}"; ${params.length ? `its parameters are ${params.map((p) => p.name).join(', ')}` : 'it has no parameters'}`,
      });
    }
    const set: Record<string, unknown> = {};
    for (const p of params) {
      const r = coerceValue(p.type, row[p.name]);
      if (r.ok === true) set[p.name] = r.value;
      else if (r.ok === false) details.push({ field: `${where}, column ${p.name}`, message: r.message });
      else if (p.default !== undefined) set[p.name] = p.default;
      else details.push({ field: `${where}, column ${p.name}`, message: `has no value, and the parameter "${p.name}" has no default: give one` });
    }
    out.push(set);
  });
  if (details.length) throw configError(workflow, details);
  return out;
}

/** `n` parameter sets of the defaults; every parameter needs a default. */
/** The one parameter row every iteration of a repeat uses (the defaults); `n` is checked, never expanded. */
export function repeatRow(workflow: Pick<Workflow, 'name' | 'parameters'>, n: number): Record<string, unknown> {
  if (!Number.isInteger(n) || n < 1 || n > MAX_REPEAT) {
    throw configError(workflow, [{ field: 'repeat', message: `must be a whole number from 1 to ${MAX_REPEAT} (got ${show(n)})` }]);
  }
  const details: ErrorDetail[] = [];
  const defaults: Record<string, unknown> = {};
  workflow.parameters.forEach((p, i) => {
    if (p.default === undefined) {
      details.push({
        field: `parameters[${i}].default`,
        message: `the parameter "${p.name}" has no default, so a repeat cannot supply it: give it a default, or run with a config that has a "${p.name}" column`,
      });
    } else defaults[p.name] = p.default;
  });
  if (details.length) throw configError(workflow, details);
  return defaults;
}

export const TYPE_NAMES = new Set(['number', 'float', 'double', 'real', 'int', 'integer', 'str', 'string', 'text', 'bool', 'boolean']);

/** True for the optional second CSV row of type names (`number, string, …`) some older tools write. */
export function isTypeRow(row: Record<string, unknown>): boolean {
  const values = Object.values(row);
  return values.length > 0 && values.every((v) => typeof v === 'string' && TYPE_NAMES.has(v.trim().toLowerCase()));
}
