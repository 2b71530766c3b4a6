/**
 * The points of a campaign people carry out (issue 31), checked: a staff point's parameters against the
 * search space, a point's results against what the campaign measures, and the key that tells two points
 * apart. Pure functions: nothing here reads the store.
 */
import { checkConstraints, constraintViolation, CONSTRAINT_TOLERANCE, type OptimizerInstance, type ParamValues, type ParameterSpec } from '../contracts/index.js';
import { LabError, type ErrorDetail } from '../errors.js';
import type { CampaignPayload } from './record.js';

const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);

const refuse = (what: string, details: ErrorDetail[]): never => {
  throw new LabError('invalid_input', `${what}: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, details);
};

/** A number typed in a form (`"7.2"`, `"7,2"`) or sent as JSON; NaN when it is none. */
function numberOf(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string' || !v.trim()) return NaN;
  const t = v.trim().replace(/^([+-]?\d+),(\d+)$/, '$1.$2');
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) ? Number(t) : NaN;
}

/** Two points are the same when every parameter is (numbers to 10 significant digits, as stored and typed). */
export function pointKey(space: ParameterSpec[], params: Record<string, unknown>): string {
  return JSON.stringify(
    space.map((s) => {
      const v = params[s.name];
      return typeof v === 'number' ? Number(v.toPrecision(10)) : v;
    }),
  );
}

/** The searched and fixed parameters of a point, nothing else (a suggestion carries the workflow's fixed values too). */
export function spaceValues(space: ParameterSpec[], params: Record<string, unknown>): ParamValues {
  return Object.fromEntries(space.map((s) => [s.name, params[s.name] as number | string]));
}

/**
 * A point a person chose, checked against the space: every searched parameter given, in its bounds (an int
 * whole, a stepped one on its grid, a choice one of its choices), a fixed one at its value (filled in when
 * left out), no other key, and the linear constraints met. Errors name `parameters.<name>`.
 */
export function checkStaffPoint(p: CampaignPayload, raw: unknown): ParamValues {
  if (!isObj(raw)) return refuse('The point', [{ field: 'parameters', message: `must be an object { ${p.space.map((s) => s.name).join(', ')} }` }]);
  const details: ErrorDetail[] = [];
  const out: ParamValues = {};
  const names = new Set(p.space.map((s) => s.name));
  for (const k of Object.keys(raw)) if (!names.has(k)) details.push({ field: `parameters.${k}`, message: `is not a parameter of the campaign (its parameters: ${[...names].join(', ')})` });
  for (const s of p.space) {
    const field = `parameters.${s.name}`;
    const given = raw[s.name];
    if (s.type === 'fixed') {
      if (given !== undefined && given !== '' && String(given) !== String(s.value)) details.push({ field, message: `is fixed at ${JSON.stringify(s.value)}` });
      out[s.name] = s.value!;
      continue;
    }
    if (given === undefined || given === null || given === '') {
      details.push({ field, message: 'is required' });
      continue;
    }
    if (s.type === 'choice') {
      if (typeof given !== 'string' || !s.choices!.includes(given)) details.push({ field, message: `must be one of ${s.choices!.join(', ')} (got ${JSON.stringify(given)})` });
      else out[s.name] = given;
      continue;
    }
    const v = numberOf(given);
    const [lo, hi] = s.bounds!;
    if (!Number.isFinite(v)) details.push({ field, message: `must be a number (got ${JSON.stringify(given)})` });
    else if (v < lo || v > hi) details.push({ field, message: `must be from ${lo} to ${hi} (got ${v})` });
    else if (s.type === 'int' && !Number.isInteger(v)) details.push({ field, message: `must be a whole number (got ${v})` });
    else if (s.step && Math.abs((v - lo) / s.step - Math.round((v - lo) / s.step)) > 1e-9) details.push({ field, message: `must be ${lo} plus a multiple of ${s.step} (got ${v})` });
    else out[s.name] = v;
  }
  if (details.length) return refuse('The point does not fit the campaign', details);
  for (const c of checkConstraints(p.constraints ?? [], p.space)) {
    if (constraintViolation(c, out, p.space) > CONSTRAINT_TOLERANCE) details.push({ field: 'parameters', message: `breaks the constraint "${c.text}"` });
  }
  if (details.length) refuse('The point does not fit the campaign', details);
  return out;
}

/**
 * A point's results, checked: a finite number for each output the campaign measures (its objectives and the
 * outputs with outcome constraints), nothing else. Errors name `results.<name>` (`field` for another prefix).
 */
export function checkResults(measured: string[], raw: unknown, field = 'results'): Record<string, number> {
  if (!isObj(raw)) return refuse('The results', [{ field, message: `must be an object { ${measured.map((m) => `"${m}": number`).join(', ')} }` }]);
  const details: ErrorDetail[] = [];
  const out: Record<string, number> = {};
  for (const k of Object.keys(raw)) if (!measured.includes(k)) details.push({ field: `${field}.${k}`, message: `is not measured by the campaign (it measures ${measured.join(', ')})` });
  for (const m of measured) {
    const given = raw[m];
    const v = numberOf(given);
    if (given === undefined || given === null || given === '') details.push({ field: `${field}.${m}`, message: 'is required: a number' });
    else if (!Number.isFinite(v)) details.push({ field: `${field}.${m}`, message: `must be a number (got ${JSON.stringify(given)})` });
    else out[m] = v;
  }
  if (details.length) refuse('The results do not fit the campaign', details);
  return out;
}

/**
 * `n` suggestions from `instance`, none of them a point of `taken` (the pending ones) nor twice the same: an
 * optimizer that repeats one (it was not told, having no `restore`) is asked again, a few times.
 */
export async function freshSuggestions(instance: OptimizerInstance, p: Pick<CampaignPayload, 'space'>, n: number, taken: Set<string>): Promise<ParamValues[]> {
  const out: ParamValues[] = [];
  for (let round = 0; round < 4 && out.length < n; round++) {
    for (const s of await instance.suggest(n - out.length)) {
      const key = pointKey(p.space, s);
      if (taken.has(key) || out.length >= n) continue;
      taken.add(key);
      out.push(spaceValues(p.space, s));
    }
  }
  return out;
}
