/** A call step's arguments: field text to argument and back, and what a method's schema asks for. */
import type { JSONSchema } from '../../../core/contracts/index.js';
import { acceptedTypes, checkValue, deepEqual } from '../../../core/workflow/jsonschema.js';
import { NAME, NAME_RULE, type Arg, type Step } from './document.js';
import { isObject, NUMBER } from './util.js';

export interface ArgParse {
  /** undefined: the field is empty (the argument is left out; the method's default applies). */
  arg: Arg | undefined;
  /** A hint for the field, when the text does not fit the schema (the server will name it too). */
  problem?: string;
}

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
