/**
 * Operations on the records (DESIGN.md §6, §15): the run list and one run with its phases and steps, the tail
 * of the current run, the latest run that ended, and deleting a record (its owner or an admin; audited).
 */
import { deleteRecord, getRun, listRecords, plotData, recordDetail, runTail, type ListQuery } from '../records/index.js';
import { LabError } from '../errors.js';
import { runData, type RunData } from '../files/rundata.js';
import { columnUnits } from '../workflow/units.js';
import type { LogRow, PhaseRow, RunRow, StepRow } from '../store/types.js';
import type { Caller } from './caller.js';
import { audit, userOf, type Lab } from './lab.js';

/** The latest run that has ended (the execution page links its record). */
export interface LastRun {
  run_id: number;
  name: string;
  status: string;
  skipped: number;
}

export function recordOperations(lab: Lab) {
  const { store, runner, deck } = lab;
  const ops = {
    /** A page of runs, newest first, `keyword` matching the run or workflow name. */
    list(q: ListQuery) {
      return listRecords(store, q);
    },

    /** Runs as stored, a page of them (`total`: how many match). */
    runs(q: { keyword?: string; page: number; perPage: number }) {
      return store.runs.list(q);
    },

    /** One run's record as the API shows it (`stepLimit`: at most so many steps, for a page). */
    detail(id: number, opts: { stepLimit?: number } = {}) {
      return recordDetail(store, id, opts);
    },

    /** A run's steps in batches, for a download (404 before anything is read when there is no such run). */
    async stepBatches(id: number, batch: number): Promise<AsyncIterable<StepRow[]>> {
      await getRun(store, id);
      return store.runSteps.iterate(id, batch);
    },

    /** A run's log lines (404 when there is no such run). */
    async log(id: number): Promise<LogRow[]> {
      await getRun(store, id);
      return store.logs.list(id);
    },

    /** A run's data as a history file has it: parameter columns then output columns, one row per iteration. */
    data(runId: number): Promise<RunData> {
      return runData(store, runId, deck);
    },

    /** The parameters and outputs of each iteration of a run, for plotting. */
    async plot(id: number) {
      const run = await getRun(store, id);
      const data = plotData(run, await store.phases.list(id));
      // units (ivoryOS's Unit marker on the deck's schemas) for the axes
      const units = columnUnits(run.workflow, deck, data.outputs);
      return Object.keys(units).length ? { ...data, units } : data;
    },

    /** One run with its phases and steps (404 naming `field` when there is none). */
    async run(id: number, field = 'workflow_id'): Promise<{ run: RunRow; phases: PhaseRow[]; steps: StepRow[] }> {
      const run = await store.runs.get(id);
      if (!run) throw new LabError('not_found', `There is no run ${id}.`, [{ field, message: 'unknown run' }]);
      const [phases, steps] = await Promise.all([store.phases.list(id), store.runSteps.list(id)]);
      return { run, phases, steps };
    },

    /** A run as stored, or null. */
    async find(id: number): Promise<RunRow | null> {
      return store.runs.get(id);
    },

    /** The steps of a run so far. */
    steps(runId: number): Promise<StepRow[]> {
      return store.runSteps.list(runId);
    },

    /** The current (or last) run's log and steps so far, for a live view opened mid-run. */
    tail(runId: number | null | undefined) {
      return runTail(store, runId);
    },

    /** The latest run that has ended, or null. */
    async lastEnded(): Promise<LastRun | null> {
      const run = (await store.runs.list({ page: 1, perPage: 3 })).rows.find((r) => r.status !== 'running');
      return run ? { run_id: run.id, name: run.name, status: run.status, skipped: run.skipped ?? 0 } : null;
    },

    /** Whether a campaign has run (the latest plot has something to show). */
    async campaignRan(): Promise<boolean> {
      return (await store.settings.get<number>('campaign.latest')) != null;
    },

    /** Delete a run's record: its owner or an admin, never a running one; audited `record.delete`. */
    async remove(caller: Caller, id: number): Promise<RunRow> {
      const run = await deleteRecord(store, runner, id, userOf(caller) ?? { id: -1, role: 'operator' });
      await audit(lab, caller, 'record.delete', { run_id: id, name: run.name, workflow: run.workflowName, status: run.status });
      return run;
    },
  };
  return ops;
}

export type RecordOperations = ReturnType<typeof recordOperations>;
