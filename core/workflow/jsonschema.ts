/**
 * A small JSON Schema check, enough to catch a wrong literal in a workflow before anything runs: type,
 * enum, const, numeric bounds (inclusive and exclusive), multipleOf, string length and pattern, array
 * length and items, required object properties, anyOf/oneOf/allOf. Keywords it does not know (and $ref)
 * are accepted: the deck validates every call with the driver's zod schema anyway, so this check must never
 * reject what the deck would accept. Messages follow a field name: "must be at most 50".
 */
import type { JSONSchema } from '../contracts/index.js';
import { compileLinear, type LinearRegex } from './linear-regex.js';

export type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON type of a value; integers are reported as 'integer' (they are numbers too). */
export function jsonTypeOf(v: unknown): JsonType | 'undefined' {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'number';
    case 'string':
      return 'string';
    case 'object':
      return 'object';
    default:
      return 'undefined';
  }
}

function hasType(t: string, v: unknown): boolean {
  switch (t) {
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isObject(v);
    default:
      return true; // an unknown type name: accept
  }
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  null: 'null',
  array: 'a list',
  object: 'an object',
};

/** "a number or a string" */
export function describeTypes(types: Iterable<string>): string {
  const words = [...new Set([...types].map((t) => TYPE_WORDS[t] ?? t))];
  return words.length <= 1 ? (words[0] ?? 'anything') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

const show = (v: unknown) => JSON.stringify(v);

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], bb[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** Longest string tested against a pattern the linear-time matcher runs (its time: this times the pattern's size). */
export const MAX_PATTERN_INPUT = 10_000;
const testers = new Map<string, { linear: LinearRegex } | { native: RegExp } | null>();

/**
 * Whether `value` fails `pattern`. A pattern the linear-time matcher runs (./linear-regex.ts: every pattern
 * from another PC, which is refused otherwise) is tested with it, on strings up to MAX_PATTERN_INPUT
 * characters (a longer one is left to the instrument's host, which checks its own arguments); any other
 * pattern comes from the lab's own drivers and is JavaScript's; one JavaScript cannot compile is left to the
 * deck. Nothing a pattern says can hold the event loop for long.
 */
function patternFails(pattern: string, value: string): boolean {
  let t = testers.get(pattern);
  if (t === undefined) {
    const c = compileLinear(pattern);
    if (c.ok) t = { linear: c.regex };
    else if (c.syntax) t = null;
    else {
      try {
        t = { native: new RegExp(pattern, 'u') };
      } catch {
        t = null;
      }
    }
    if (testers.size >= 1000) testers.clear();
    testers.set(pattern, t);
  }
  if (t === null) return false;
  if ('native' in t) return !t.native.test(value);
  return value.length <= MAX_PATTERN_INPUT && !t.linear.test(value);
}

const num = (x: unknown): number | undefined => (typeof x === 'number' ? x : undefined);

/** The first problem of `value` against `schema`, phrased to follow a field name; null when it fits. */
export function checkValue(schema: unknown, value: unknown): string | null {
  if (schema === false) return 'is not allowed';
  if (!isObject(schema)) return null;
  const s = schema as JSONSchema;

  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = s[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const problems = branches.map((b) => checkValue(b, value));
      if (problems.every((p) => p !== null)) {
        // Report the branch of the value's own type when there is one ("must be at most 5"), else the types.
        const own = branches.findIndex((b) => isObject(b) && typeof b.type === 'string' && hasType(b.type, value));
        if (own >= 0) return problems[own];
        const types = acceptedTypes(s);
        return types ? `must be ${describeTypes(types)}` : problems[0];
      }
    }
  }
  if (Array.isArray(s.allOf)) {
    for (const b of s.allOf) {
      const p = checkValue(b, value);
      if (p) return p;
    }
  }
  if ('const' in s && !deepEqual(s.const, value)) return `must be ${show(s.const)}`;
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, value))) {
    return `must be one of ${s.enum.map(show).join(', ')}`;
  }
  const type = s.type;
  if (typeof type === 'string' || Array.isArray(type)) {
    const types = (Array.isArray(type) ? type : [type]).map(String);
    if (!types.some((t) => hasType(t, value))) return `must be ${describeTypes(types)}`;
  }

  if (typeof value === 'number') {
    const min = num(s.minimum);
    const max = num(s.maximum);
    // Draft 4 wrote exclusive bounds as booleans next to minimum/maximum; 2020-12 (zod) as numbers.
    const exMin = s.exclusiveMinimum === true ? min : num(s.exclusiveMinimum);
    const exMax = s.exclusiveMaximum === true ? max : num(s.exclusiveMaximum);
    if (exMin !== undefined && !(value > exMin)) return `must be greater than ${exMin}`;
    if (exMax !== undefined && !(value < exMax)) return `must be less than ${exMax}`;
    if (min !== undefined && s.exclusiveMinimum !== true && value < min) return `must be at least ${min}`;
    if (max !== undefined && s.exclusiveMaximum !== true && value > max) return `must be at most ${max}`;
    const step = num(s.multipleOf);
    if (step !== undefined && step > 0) {
      const q = value / step;
      if (Math.abs(q - Math.round(q)) > 1e-9 * Math.max(1, Math.abs(q))) return `must be a multiple of ${step}`;
    }
  }
  if (typeof value === 'string') {
    const len = [...value].length;
    const minL = num(s.minLength);
    const maxL = num(s.maxLength);
    if (minL !== undefined && len < minL) return minL <= 1 ? 'must not be empty' : `must be at least ${minL} characters long`;
    if (maxL !== undefined && len > maxL) return `must be at most ${maxL} characters long`;
    if (typeof s.pattern === 'string' && patternFails(s.pattern, value)) return `must match the pattern ${s.pattern}`;
  }
  if (Array.isArray(value)) {
    const minI = num(s.minItems);
    const maxI = num(s.maxItems);
    if (minI !== undefined && value.length < minI) return `must have at least ${minI} item${minI === 1 ? '' : 's'}`;
    if (maxI !== undefined && value.length > maxI) return `must have at most ${maxI} item${maxI === 1 ? '' : 's'}`;
    if (isObject(s.items)) {
      for (let i = 0; i < value.length; i++) {
        const p = checkValue(s.items, value[i]);
        if (p) return `item ${i + 1} ${p}`;
      }
    }
  }
  if (isObject(value)) {
    if (Array.isArray(s.required)) {
      for (const r of s.required) if (typeof r === 'string' && !(r in value)) return `needs the field "${r}"`;
    }
    if (isObject(s.properties)) {
      for (const [k, sub] of Object.entries(s.properties)) {
        if (!(k in value)) continue;
        const p = checkValue(sub, value[k]);
        if (p) return `field "${k}" ${p}`;
      }
    }
  }
  return null;
}

/**
 * The JSON types a schema accepts, or null when it accepts any type (no `type`, or a branch without one).
 * `enum`/`const` without `type` give the types of their values.
 */
export function acceptedTypes(schema: unknown): Set<string> | null {
  if (!isObject(schema)) return schema === false ? new Set() : null;
  const type = schema.type;
  if (typeof type === 'string') return new Set([type]);
  if (Array.isArray(type)) return new Set(type.map(String));
  if ('const' in schema) return new Set([jsonTypeOf(schema.const)]);
  if (Array.isArray(schema.enum)) return new Set(schema.enum.map(jsonTypeOf));
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const out = new Set<string>();
      for (const b of branches) {
        const t = acceptedTypes(b);
        if (!t) return null;
        for (const x of t) out.add(x);
      }
      return out;
    }
  }
  return null;
}
