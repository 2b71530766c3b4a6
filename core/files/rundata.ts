/**
 * The data of a run as a table, in the history-file shape (DESIGN.md §6): the workflow's parameter columns,
 * then its output columns, one row per iteration of `main` (from the run's phase records). A downloaded
 * run can be uploaded again as a history file of the same workflow.
 *
 * Every main iteration that started is a row, in iteration order; an iteration that failed or was stopped
 * before an output was saved has that cell empty. Columns come from the workflow snapshot of the run, plus
 * any key a phase recorded that the snapshot does not name (kept in the order first seen).
 */
import { LabError } from '../errors.js';
import type { RunRow, Store } from '../store/types.js';
import { Workflow } from '../workflow/model.js';

export interface RunData {
  run: RunRow;
  parameters: string[];
  outputs: string[];
  /** parameters then outputs */
  columns: string[];
  rows: Record<string, unknown>[];
}

/** `run-12.csv` → 12; anything else → null. */
export function runIdOfFileName(name: string): number | null {
  const m = /^run-([1-9]\d{0,15})\.csv$/.exec(name);
  if (!m) return null;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) ? id : null;
}

export const runDataFileName = (runId: number) => `run-${runId}.csv`;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function runData(store: Store, runId: number): Promise<RunData> {
  const run = await store.runs.get(runId);
  if (!run) throw new LabError('not_found', `No run record ${runId}.`, [{ field: 'run', message: 'unknown run' }]);
  const snapshot = Workflow.safeParse(run.workflow);
  const parameters = new Set(snapshot.success ? snapshot.data.parameters.map((p) => p.name) : []);
  const outputs = new Set(snapshot.success ? snapshot.data.outputs : []);

  // one phase record per iteration (the last one, should a step be re-run into a new record)
  const byIteration = new Map<number, { params: Record<string, unknown>; outputs: Record<string, unknown> }>();
  for (const p of await store.phases.list(runId)) {
    if (p.phase !== 'main' || p.iteration === null) continue;
    const params = isRecord(p.params) ? p.params : {};
    const outs = isRecord(p.outputs) ? p.outputs : {};
    for (const k of Object.keys(params)) if (!outputs.has(k)) parameters.add(k);
    for (const k of Object.keys(outs)) if (!parameters.has(k)) outputs.add(k);
    byIteration.set(p.iteration, { params, outputs: outs });
  }
  const rows = [...byIteration.entries()].sort(([a], [b]) => a - b).map(([, r]) => ({ ...r.params, ...r.outputs }));
  const params = [...parameters];
  const outs = [...outputs].filter((o) => !parameters.has(o));
  return { run, parameters: params, outputs: outs, columns: [...params, ...outs], rows };
}
