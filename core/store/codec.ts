/**
 * Helpers shared by the two repository modules (repos.ts, run-repos.ts): checking a value against its
 * allowed set, not_found errors, the SET clause of a partial update, the steps row mapping (steps are
 * written by repos.ts and read per run by run-repos.ts) and an in-process lock per key.
 */
import { LabError } from '../errors.js';
import { cutJson, cutMarker } from '../result-limit.js';
import { decodeJson, encodeJson, toDate, toDateOrNull, toInt, toIntOrNull, type DbRow, type Param } from './sql.js';
import type { StepRow } from './types.js';
import { steps } from './tables.js';

/** The value if it is one of `allowed`, else an invalid_input error naming the field. */
export function oneOf<T extends string>(value: string, allowed: readonly T[], field: string): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new LabError('invalid_input', `Unknown ${field} "${value}".`, [{ field, message: `must be one of ${allowed.join(', ')}` }]);
  }
  return value as T;
}

/** `No <what> with id <id>.`, naming the input field that holds the id. */
export function notFound(what: string, id: number | string, field = 'id'): LabError {
  return new LabError('not_found', `No ${what} with id ${id}.`, [{ field, message: `no such ${what}` }]);
}

/** Field → [column, encoder] for a partial update. */
export type Encoders<P> = { [K in keyof P]-?: [column: string, encode: (v: Exclude<P[K], undefined>) => Param] };

/** `"col" = ?` pairs for the fields present in a patch (undefined = leave as is, null = clear). */
export function setClause<P extends object>(patch: P, fields: Encoders<P>): { sets: string[]; params: Param[] } {
  const sets: string[] = [];
  const params: Param[] = [];
  for (const key of Object.keys(fields) as (keyof P)[]) {
    const v = patch[key];
    if (v === undefined) continue;
    const [column, encode] = fields[key] as [string, (x: unknown) => Param];
    sets.push(`"${column}" = ?`);
    params.push(encode(v));
  }
  return { sets, params };
}

/** The encoder of a column stored as it is. */
export const same = <T extends Param>(v: T): Param => v;

export const STEP_COLS = steps.cols();

/**
 * A call's output as stored: its JSON, or its cut marker when over the result bound (core/result-limit.ts).
 * The deck cuts what it hands out already; this keeps any other writer (ivoryOS's door, a relay) to it too.
 */
export function encodeOutput(v: unknown): string | null {
  const json = encodeJson(v, 'output');
  const cut = json === null ? null : cutJson(json);
  return cut ? JSON.stringify(cut) : json;
}

/**
 * The steps columns with `args` and `output` read up to `chars` characters each (SQL `substr`, both dialects):
 * a page or list never loads a whole stored value to show its start. A longer value comes back as a cut
 * marker (stepRow) whose `bytes` is its stored size and `limit` the characters read.
 */
export function boundedStepCols(dialect: 'sqlite' | 'postgres', chars: number): string {
  const n = Math.max(1, Math.floor(chars));
  const bytes = (c: string) => (dialect === 'postgres' ? `octet_length("${c}")` : `length(CAST("${c}" AS BLOB))`);
  const col = (c: string) => `substr("${c}", 1, ${n}) AS "${c}", CASE WHEN length("${c}") > ${n} THEN ${bytes(c)} END AS "${c}_over"`;
  return STEP_COLS.replace(`"args", "output"`, `${col('args')}, ${col('output')}`);
}

/** A column read by boundedStepCols: the value, or a cut marker when it was longer than what was read. */
function boundedJson(r: DbRow, col: 'args' | 'output'): unknown {
  const over = r[`${col}_over`];
  if (over === null || over === undefined) return decodeJson(r[col]);
  const head = String(r[col] ?? '');
  return cutMarker(toInt(over), head.length, head);
}

export function stepRow(r: DbRow): StepRow {
  return {
    id: toInt(r.id),
    runId: toIntOrNull(r.run_id),
    phase: (r.phase as string | null) ?? null,
    iteration: toIntOrNull(r.iteration),
    stepIndex: toIntOrNull(r.step_index),
    instrument: String(r.instrument),
    method: String(r.method),
    args: boundedJson(r, 'args'),
    output: boundedJson(r, 'output'),
    status: r.status as StepRow['status'],
    error: (r.error as string | null) ?? null,
    userId: toIntOrNull(r.user_id),
    startedAt: toDate(r.started_at),
    endedAt: toDateOrNull(r.ended_at),
    log: (r.log as string | null) ?? null,
  };
}

/** Serialises async work per key inside this process (read-modify-write of one row or of the queue order). */
export function keyedLock() {
  const tails = new Map<string, Promise<void>>();
  return async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}
