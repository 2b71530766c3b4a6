/**
 * The size bound on a call's result (issue 26 #13). A result whose JSON is over `maxResultBytes()` (256 KB by
 * default, `LABDECK_MAX_RESULT_BYTES`) is kept, stored and answered cut, as one small marker:
 *
 *   { "truncated": true, "bytes": 15728640, "limit": 262144, "preview": "[0.125, 0.25, …" }
 *
 * `bytes` is the size of the whole result's JSON (UTF-8), `limit` the bound it went over, `preview` its first
 * 1,024 characters of JSON. The same shape says "this answer shows less than there is" where a page or a list
 * reads a bounded part of a stored value (then `limit` is what that answer reads, and the call's own record,
 * `GET /instruments/task/{id}`, has the rest). A workflow cannot pass a cut result on: a `{var}` reference to
 * one fails its step (core/workflow/interpreter.ts). No imports: the deck, the store, the workflow and the
 * pages all use it.
 */

export const DEFAULT_MAX_RESULT_BYTES = 256 * 1024;
/** Characters of each call's args and output that a list reads (Recent calls, a record's steps, the live tail). */
export const SHOWN_RESULT_CHARS = 16 * 1024;
/** Characters of a cut result's JSON that its marker keeps. */
export const PREVIEW_CHARS = 1024;

export interface CutResult {
  truncated: true;
  bytes: number;
  limit: number;
  preview: string;
}

let configured: number | null = null;

/** The bound in bytes of JSON: `LABDECK_MAX_RESULT_BYTES` when set (at least 4 KB), else 256 KB. */
export function maxResultBytes(): number {
  if (configured === null) {
    const raw = process.env.LABDECK_MAX_RESULT_BYTES;
    const n = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
    configured = Number.isSafeInteger(n) && n >= 4096 ? n : DEFAULT_MAX_RESULT_BYTES;
  }
  return configured;
}

/** Set the bound for this process (tests; `null` reads the environment again). */
export function setMaxResultBytes(n: number | null): void {
  configured = n;
}

/** The first `n` characters of a text, never ending in half of a surrogate pair. */
export function headOf(text: string, n: number): string {
  if (text.length <= n) return text;
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

export function cutMarker(bytes: number, limit: number, head: string): CutResult {
  return { truncated: true, bytes, limit, preview: headOf(head, PREVIEW_CHARS) };
}

/** The marker for a result's JSON text when it is over `limit` bytes, else null. */
export function cutJson(json: string, limit = maxResultBytes()): CutResult | null {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: most texts are judged by their length alone
  if (json.length * 3 <= limit) return null;
  const bytes = Buffer.byteLength(json, 'utf8');
  return bytes <= limit ? null : cutMarker(bytes, limit, json);
}

/** A JSON value as it is kept: the value itself, or its marker when its JSON is over the bound. */
export function boundResult(value: unknown, limit = maxResultBytes()): unknown {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string' && value.length * 3 + 2 <= limit) return value;
  const json = JSON.stringify(value);
  return json === undefined ? value : (cutJson(json, limit) ?? value);
}

/** Is this a cut result's marker (exactly its four fields)? */
export function isCutResult(v: unknown): v is CutResult {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  return keys.length === 4 && o.truncated === true && typeof o.bytes === 'number' && typeof o.limit === 'number' && typeof o.preview === 'string';
}

/** `15 MB`, `256 KB`, `900 bytes`. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Number((bytes / 1024 / 1024).toFixed(1))} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/** `15 MB of JSON, cut at 256 KB`. */
export function cutText(c: CutResult): string {
  return `${sizeText(c.bytes)} of JSON, cut at ${sizeText(c.limit)}`;
}
