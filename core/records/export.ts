/**
 * The downloads of a run record (DESIGN.md §6): the steps CSV (one row per recorded instrument call) and
 * the log as text. Writing the CSV itself, with formula neutralisation, is core/files/csv.ts; this maps
 * records to its rows.
 */
import type { LogRow, StepRow } from '../store/types.js';

/**
 * The steps CSV's columns, in order. `iteration` counts from 1, as every page and the run's data CSV show
 * it; `step_index` counts from 0, as recorded (the index of the step within its phase run).
 */
export const STEPS_CSV_COLUMNS = ['phase', 'iteration', 'step_index', 'instrument', 'method', 'args', 'output', 'status', 'error', 'started_at', 'ended_at', 'duration_ms'] as const;

export type StepsCsvRow = Record<(typeof STEPS_CSV_COLUMNS)[number], unknown>;

/** JSON text of a value; empty for no value (a call that has not answered, or answered nothing). */
const jsonCell = (v: unknown): string => (v === undefined || v === null ? '' : (JSON.stringify(v) ?? ''));

/** One steps-CSV row of a step record. args and output are JSON (a string output is `"quoted"`). */
export function stepsCsvRow(s: StepRow): StepsCsvRow {
  return {
    phase: s.phase ?? '',
    iteration: s.iteration === null ? '' : s.iteration + 1,
    step_index: s.stepIndex ?? '',
    instrument: s.instrument,
    method: s.method,
    args: jsonCell(s.args),
    output: jsonCell(s.output),
    status: s.status,
    error: s.error ?? '',
    started_at: s.startedAt.toISOString(),
    ended_at: s.endedAt ? s.endedAt.toISOString() : '',
    duration_ms: s.endedAt ? s.endedAt.getTime() - s.startedAt.getTime() : '',
  };
}

/** Map batches of step records to batches of CSV rows, lazily (for `writeCsv`, flat memory). */
export async function* stepsCsvBatches(batches: AsyncIterable<StepRow[]>): AsyncGenerator<StepsCsvRow[]> {
  for await (const batch of batches) yield batch.map(stepsCsvRow);
}

/**
 * One log line: ISO time, level (padded to 5), message. Line breaks inside a message are written as `\n`
 * so that every entry stays one line (grep, tail and spreadsheets see one entry per line).
 */
export function logLine(l: Pick<LogRow, 'at' | 'level' | 'message'>): string {
  const message = l.message.replace(/\r\n|\r|\n/g, '\\n');
  return `${l.at.toISOString()} ${l.level.toUpperCase().padEnd(5)} ${message}\n`;
}

/** The log file of a run: one line per entry, oldest first. */
export function logText(logs: readonly Pick<LogRow, 'at' | 'level' | 'message'>[]): string {
  let out = '';
  for (const l of logs) out += logLine(l);
  return out;
}
