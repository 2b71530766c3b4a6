/**
 * What the deck makes of a call's values and outcome: schemas as JSON Schema, outputs as JSON (cut over the
 * result bound), a call's log, a failure as its record keeps it, a lock's owner in words.
 */
import { z, type JSONSchema } from '../contracts/index.js';
import { errorText } from './util.js';
import { boundResult, cutJson } from '../result-limit.js';

export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JSONSchema {
  try {
    const js = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JSONSchema;
    delete js.$schema;
    return js;
  } catch {
    return {};
  }
}

/** Make an instrument's return value JSON: undefined → null, non-finite numbers → null, Dates → strings; cut over the result bound. */
export function toJsonValue(v: unknown): unknown {
  switch (typeof v) {
    case 'undefined':
    case 'function':
    case 'symbol':
      return null;
    case 'number':
      return Number.isFinite(v) ? v : null;
    case 'string':
      return boundResult(v);
    case 'boolean':
      return v;
    case 'bigint':
      return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    default: {
      if (v === null) return null;
      // over the bound (core/result-limit.ts) it is kept as its marker: never parsed back whole
      const json = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)) ?? 'null';
      return cutJson(json) ?? JSON.parse(json);
    }
  }
}

export const errorMessage = (e: unknown) => errorText(e) || 'unknown error';

/** What one call printed or logged, kept for its record up to a limit. */
export class CallLog {
  static readonly MAX_CHARS = 64_000;
  private lines: string[] = [];
  private size = 0;
  private dropped = 0;
  add(line: string): void {
    if (this.size + line.length > CallLog.MAX_CHARS) {
      this.dropped++;
      return;
    }
    this.lines.push(line);
    this.size += line.length + 1;
  }
  text(): string | null {
    if (this.dropped) return `${this.lines.join('\n')}\n[${this.dropped} more line(s) not kept]`;
    return this.lines.length ? this.lines.join('\n') : null;
  }
}

/** A failed call as its record keeps it: the message, then the traceback when the instrument sent one. */
export function failureRecord(e: unknown): string {
  const tb = (e as { traceback?: unknown } | null)?.traceback;
  return typeof tb === 'string' && tb ? `${errorMessage(e)}\n\n${tb.trimEnd()}` : errorMessage(e);
}

/** "task 12" for owners "12", "task:12", "task-12"; the owner string otherwise. */
export function ownerText(owner: string): string {
  const m = /^(?:task[\s:#-]*)?(\d+)$/i.exec(owner);
  return m ? `task ${m[1]}` : owner;
}
