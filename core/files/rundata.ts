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
 * not name (kept in the order first seen). A campaign's run (issue 31) has two more columns at the end, as
 * the campaign's own data CSV has: `suggested_by` (`optimizer:<name>`: its optimizer chose every iteration)
 * and `measured_by` (`run:<id>`: its workflow measured it), `run_suggested_by` and `run_measured_by` when
 * the workflow has a name of theirs. Read back as a history file, only `ok` rows are observations, and these
 * columns are left out.
 */
import { campaignOfRun } from '../campaign/record.js';
import { LabError } from '../errors.js';
import type { RunRow, Store } from '../store/types.js';
import { plotData } from '../records/plot.js';
import { columnUnits, withUnit } from '../workflow/units.js';
import type { DeckSchemas } from '../workflow/validate.js';

export interface RunData {
  run: RunRow;
  parameters: string[];
  outputs: string[];
  /** the iteration and status columns, then parameters, then outputs (a campaign's run: then suggested_by and measured_by) */
  columns: string[];
  /** the CSV's header: each column, with its unit when the deck declares one (`volume (mL)`) */
  header: string[];
  /** `{ column: unit }` of the columns with a unit (core/workflow/units.ts) */
  units: Record<string, string>;
  rows: Record<string, unknown>[];
}

/** The data CSV's own columns, clear of the workflow's names: `iteration`, `status`, `suggested_by` and `measured_by`, else `run_…`. */
export function bookkeepingColumns(names: readonly string[]): { iteration: string; status: string; suggestedBy: string; measuredBy: string } {
  const pick = (n: string) => (names.includes(n) ? `run_${n}` : n);
  return { iteration: pick('iteration'), status: pick('status'), suggestedBy: pick('suggested_by'), measuredBy: pick('measured_by') };
}

/** Column names a history file may carry besides parameters and outputs: a data CSV's own. */
export const BOOKKEEPING_NAMES: ReadonlySet<string> = new Set(['iteration', 'status', 'suggested_by', 'measured_by'].flatMap((n) => [n, `run_${n}`]));

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
  // a campaign's run: who suggested and who measured each iteration, after the documented columns
  const campaign = campaignOfRun(run.parameters);
  const who = campaign ? { [own.suggestedBy]: `optimizer:${campaign.optimizer}`, [own.measuredBy]: `run:${run.id}` } : {};
  const rows = plot.iterations.map((it) => ({ [own.iteration]: it.iteration + 1, [own.status]: it.status, ...it.params, ...it.outputs, ...who }));
  const columns = [own.iteration, own.status, ...plot.parameters, ...plot.outputs, ...Object.keys(who)];
  const units = deck ? columnUnits(run.workflow, deck, plot.outputs) : {};
  return { run, parameters: plot.parameters, outputs: plot.outputs, columns, header: columns.map((c) => withUnit(c, units)), units, rows };
}
