/**
 * The data of a run as a table, in the history-file shape (DESIGN.md §6): the workflow's parameter columns,
 * then its output columns, one row per iteration of `main` (from the run's phase records). A downloaded
 * run can be uploaded again as a history file of the same workflow.
 *
 * Every main iteration that started is a row, in iteration order; an iteration that failed or was stopped
 * before an output was saved has that cell empty. The first two columns say which iteration a row is
 * (counted from 1, as every page shows them) and how it ended (`ok`, `skipped` — a failed step was skipped,
 * so its outputs are not data —, `error`, `stopped`, `running`); they are named `run_iteration` and
 * `run_status` instead when the workflow has a parameter or output called `iteration` or `status`. Then
 * come the workflow snapshot's parameters and outputs, plus any key a phase recorded that the snapshot does
 * not name (kept in the order first seen). Read back as a history file, only `ok` rows are observations.
 */
import { LabError } from '../errors.js';
import type { RunRow, Store } from '../store/types.js';
import { plotData } from '../records/plot.js';
import { columnUnits, withUnit } from '../workflow/units.js';
import type { DeckSchemas } from '../workflow/validate.js';

export interface RunData {
  run: RunRow;
  parameters: string[];
  outputs: string[];
  /** the iteration and status columns, then parameters, then outputs */
  columns: string[];
  /** the CSV's header: each column, with its unit when the deck declares one (`volume (mL)`) */
  header: string[];
  /** `{ column: unit }` of the columns with a unit (core/workflow/units.ts) */
  units: Record<string, string>;
  rows: Record<string, unknown>[];
}

/** The data CSV's own columns, clear of the workflow's names: `iteration` and `status`, else `run_…`. */
export function bookkeepingColumns(names: readonly string[]): { iteration: string; status: string } {
  const pick = (n: string) => (names.includes(n) ? `run_${n}` : n);
  return { iteration: pick('iteration'), status: pick('status') };
}

/** Column names a history file may carry besides parameters and outputs: a data CSV's own. */
export const BOOKKEEPING_NAMES: ReadonlySet<string> = new Set(['iteration', 'status', 'run_iteration', 'run_status']);

/** `run-12.csv` → 12; anything else → null. */
export function runIdOfFileName(name: string): number | null {
  const m = /^run-([1-9]\d{0,15})\.csv$/.exec(name);
  if (!m) return null;
  const id = Number(m[1]);
  return id <= 2_147_483_647 ? id : null; // ids are 32-bit: a larger one names no run
}

export const runDataFileName = (runId: number) => `run-${runId}.csv`;

export async function runData(store: Store, runId: number, deck?: DeckSchemas): Promise<RunData> {
  const run = await store.runs.get(runId);
  if (!run) throw new LabError('not_found', `No run record ${runId}.`, [{ field: 'run', message: 'unknown run' }]);
  // the same columns and iterations as the run's plot data: one row per iteration of main
  const plot = plotData(run, await store.phases.list(runId));
  const own = bookkeepingColumns([...plot.parameters, ...plot.outputs]);
  const rows = plot.iterations.map((it) => ({ [own.iteration]: it.iteration + 1, [own.status]: it.status, ...it.params, ...it.outputs }));
  const columns = [own.iteration, own.status, ...plot.parameters, ...plot.outputs];
  const units = deck ? columnUnits(run.workflow, deck, plot.outputs) : {};
  return { run, parameters: plot.parameters, outputs: plot.outputs, columns, header: columns.map((c) => withUnit(c, units)), units, rows };
}
