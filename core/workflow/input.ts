/**
 * The `input` step (issue 31): a value a person gives while the run waits, typed by a small schema. This file
 * is its schema and the one check of a given value, shared by the runner (core/runner/input.ts), the API and
 * `lab run`. Pure: no Node, no store; the browser bundle may carry it too.
 *
 * A value from a form is text: "7.2" is read as the number 7.2 for a number input, "yes"/"true"/"on" as true
 * for a boolean. A value that does not fit is a LabError('invalid_input') naming the field (`value` by
 * default) and saying what would fit, with the prompt's variable named.
 */
import { z } from 'zod';
import { LabError } from '../errors.js';

/** The largest file an input step may take (a CSV or an image), whatever its schema says. */
export const MAX_INPUT_FILE_BYTES = 10 * 1024 * 1024;

const finite = z.number().refine(Number.isFinite, 'must be a finite number');
const unit = z.string().max(40).optional();

export const InputSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('number'), minimum: finite.optional(), maximum: finite.optional(), unit }),
  z.strictObject({ type: z.literal('integer'), minimum: z.int().optional(), maximum: z.int().optional(), unit }),
  z.strictObject({ type: z.literal('string'), enum: z.array(z.string().min(1).max(200)).min(1).max(200).optional() }),
  z.strictObject({ type: z.literal('boolean') }),
  z.strictObject({
    type: z.literal('file'),
    /** Comma-separated types or extensions, as an HTML file input takes them: `.csv,image/*`. */
    accept: z.string().max(200).optional(),
    max_bytes: z.int().min(1).max(MAX_INPUT_FILE_BYTES).optional(),
  }),
]);
export type InputSchema = z.infer<typeof InputSchema>;
export const INPUT_TYPES = ['number', 'integer', 'string', 'boolean', 'file'] as const;

/** The fields of an input step and of each schema type (for "unknown field" messages). */
export const INPUT_STEP_FIELDS = ['kind', 'prompt', 'save_as', 'schema', 'label'];

/** A file an input step took: stored by the files store, described in the run by this. */
export interface InputFile {
  filename: string;
  original_name: string;
  bytes: number;
  type: string;
}

/** What a person is asked: the prompt, the variable, the schema, in words (`a number from 0 to 14 pH`). */
export function describeInput(schema: InputSchema): string {
  switch (schema.type) {
    case 'number':
    case 'integer': {
      const what = schema.type === 'integer' ? 'a whole number' : 'a number';
      const range =
        schema.minimum !== undefined && schema.maximum !== undefined
          ? ` from ${schema.minimum} to ${schema.maximum}`
          : schema.minimum !== undefined
            ? ` of at least ${schema.minimum}`
            : schema.maximum !== undefined
              ? ` of at most ${schema.maximum}`
              : '';
      return `${what}${range}${schema.unit ? ` (${schema.unit})` : ''}`;
    }
    case 'string':
      return schema.enum ? `one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}` : 'a text';
    case 'boolean':
      return 'yes or no';
    case 'file':
      return `a file${schema.accept ? ` (${schema.accept})` : ''}${schema.max_bytes ? ` of at most ${schema.max_bytes} bytes` : ''}`;
  }
}

/** Problems of a schema beyond its shape (minimum above maximum), as field → message. */
export function schemaProblems(schema: InputSchema): { field: string; message: string }[] {
  if ((schema.type === 'number' || schema.type === 'integer') && schema.minimum !== undefined && schema.maximum !== undefined && schema.minimum > schema.maximum) {
    return [{ field: 'maximum', message: `is below the minimum (${schema.minimum})` }];
  }
  return [];
}

const TRUE = new Set(['true', 'yes', 'on', '1', 'y']);
const FALSE = new Set(['false', 'no', 'off', '0', 'n']);

/**
 * The value a person gave, checked and read into the schema's type, or a LabError naming `field`. `name` is
 * the variable it is saved as (for the message). A file input takes an InputFile (the route stores the upload).
 */
export function checkInputValue(schema: InputSchema, raw: unknown, opts: { field?: string; name?: string } = {}): unknown {
  const field = opts.field ?? 'value';
  const wanted = describeInput(schema);
  const fail = (got: string): never => {
    const message = `must be ${wanted}${got}`;
    throw new LabError('invalid_input', `${opts.name ? `${opts.name}: ` : ''}${field} ${message}.`, [{ field, message }]);
  };
  const shown = (v: unknown) => ` (got ${JSON.stringify(v) ?? String(v)})`;
  if (raw === undefined || raw === null || raw === '') fail(': it is required');
  switch (schema.type) {
    case 'number':
    case 'integer': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw.trim()) : NaN;
      if (!Number.isFinite(n)) fail(shown(raw));
      if (schema.type === 'integer' && !Number.isInteger(n)) fail(shown(raw));
      if ((schema.minimum !== undefined && n < schema.minimum) || (schema.maximum !== undefined && n > schema.maximum)) fail(shown(raw));
      return n;
    }
    case 'string': {
      if (typeof raw !== 'string' || raw.length > 10_000) fail(shown(raw));
      const s = (raw as string).trim();
      if (schema.enum && !schema.enum.includes(s)) fail(shown(raw));
      return s;
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      const s = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
      if (TRUE.has(s)) return true;
      if (FALSE.has(s)) return false;
      return fail(shown(raw));
    }
    case 'file': {
      const f = raw as Partial<InputFile>;
      if (typeof f !== 'object' || typeof f.filename !== 'string' || typeof f.bytes !== 'number') fail(': upload the file as the form field "file"');
      const limit = schema.max_bytes ?? MAX_INPUT_FILE_BYTES;
      if (f.bytes! > limit) fail(` (it has ${f.bytes} bytes)`);
      if (schema.accept && !accepts(schema.accept, f.original_name ?? '', f.type ?? '')) fail(` (got ${JSON.stringify(f.original_name)}, ${f.type || 'no type'})`);
      return { filename: f.filename!, original_name: f.original_name ?? f.filename!, bytes: f.bytes!, type: f.type ?? '' } satisfies InputFile;
    }
  }
}

/** Whether a file fits an HTML-style accept list: `.csv`, `text/csv`, `image/*`. */
export function accepts(accept: string, name: string, type: string): boolean {
  const lower = name.toLowerCase();
  return accept
    .split(',')
    .map((a) => a.trim().toLowerCase())
    .filter(Boolean)
    .some((a) => (a.startsWith('.') ? lower.endsWith(a) : a.endsWith('/*') ? type.toLowerCase().startsWith(a.slice(0, -1)) : type.toLowerCase() === a));
}
