/**
 * Form fields (always strings) → typed argument values, guided by a method's JSON Schema. Used by the web
 * forms and the CLI; JSON clients send typed values and skip this.
 */
import type { JSONSchema } from '../contracts/index.js';
import { LabError, type ErrorDetail } from '../errors.js';

type Kind = 'number' | 'integer' | 'boolean' | 'string' | 'enum' | 'json';

/** The effective kind of a property schema (nullable unions and `type: [x, "null"]` resolve to x). */
function kindOf(s: JSONSchema): { kind: Kind; schema: JSONSchema } {
  if (Array.isArray(s.enum)) return { kind: 'enum', schema: s };
  if (s.const !== undefined) return { kind: 'enum', schema: { ...s, enum: [s.const] } };
  let type = s.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null');
  if (type === undefined) {
    const branches = (s.anyOf ?? s.oneOf) as JSONSchema[] | undefined;
    const real = branches?.filter((b) => b.type !== 'null');
    if (real && real.length === 1) return kindOf(real[0]);
    if (real && real.length > 1 && real.every((b) => b.const !== undefined)) {
      return { kind: 'enum', schema: { enum: real.map((b) => b.const) } };
    }
  }
  if (type === 'number' || type === 'integer' || type === 'boolean' || type === 'string') return { kind: type, schema: s };
  return { kind: 'json', schema: s };
}

const TRUE = new Set(['on', 'true', '1', 'yes']);
const FALSE = new Set(['off', 'false', '0', 'no']);

/**
 * Convert form fields to typed values per `params` (a JSON Schema of type object):
 * number/integer → Number (an empty field is omitted so the default applies); boolean → 'on'/'true'/'1'/'yes'
 * or 'false'/'0'/'off'/'no' (several values, as from a hidden "false" input before a checkbox: the last
 * wins); enum → the matching option (numbers included); string → as typed; arrays, objects and untyped
 * fields → JSON.parse (bad JSON → LabError invalid_input naming the field). Fields the schema does not
 * name (method, csrf tokens, ...) are dropped. All bad fields are reported together.
 */
export function coerceFormArgs(params: JSONSchema, fields: Record<string, string | string[]>): Record<string, unknown> {
  const props = (params.properties ?? {}) as Record<string, JSONSchema>;
  const out: Record<string, unknown> = {};
  const errors: ErrorDetail[] = [];
  for (const [name, schema] of Object.entries(props)) {
    const raw = fields[name];
    if (raw === undefined) continue;
    const { kind, schema: s } = kindOf(schema);
    // repeated fields: a list for array properties, else the last value
    if (Array.isArray(raw) && kind === 'json' && s.type === 'array') {
      const items = (s.items ?? {}) as JSONSchema;
      const vals: unknown[] = [];
      for (const [i, r] of raw.entries()) {
        const v = coerceOne(`${name}.${i}`, r, kindOf(items), errors);
        if (v !== undefined) vals.push(v);
      }
      out[name] = vals;
      continue;
    }
    const text = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (typeof text !== 'string') continue;
    const v = coerceOne(name, text, { kind, schema: s }, errors);
    if (v !== undefined) out[name] = v;
  }
  if (errors.length) {
    throw new LabError('invalid_input', errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors);
  }
  return out;
}

function coerceOne(field: string, text: string, k: { kind: Kind; schema: JSONSchema }, errors: ErrorDetail[]): unknown {
  const t = text.trim();
  switch (k.kind) {
    case 'number':
    case 'integer': {
      if (t === '') return undefined;
      const n = Number(t);
      if (!Number.isFinite(n)) {
        errors.push({ field, message: `must be a number, got "${text}"` });
        return undefined;
      }
      return n;
    }
    case 'boolean': {
      const l = t.toLowerCase();
      if (l === '') return undefined;
      if (TRUE.has(l)) return true;
      if (FALSE.has(l)) return false;
      errors.push({ field, message: `must be true or false, got "${text}"` });
      return undefined;
    }
    case 'enum': {
      const options = k.schema.enum as unknown[];
      if (options.includes(text)) return text;
      if (t === '') return undefined;
      const match = options.find((o) => String(o) === t);
      return match !== undefined ? match : text; // not an option: validation names the choices
    }
    case 'string':
      return text;
    default: {
      if (t === '') return undefined;
      try {
        return JSON.parse(t);
      } catch {
        // a wells field (ivoryOS's Wells marker) takes its text as written: assay_plate[A1:H1]
        if (k.schema['x-wells'] !== undefined) return t;
        errors.push({ field, message: 'must be valid JSON (write text in "double quotes")' });
        return undefined;
      }
    }
  }
}
