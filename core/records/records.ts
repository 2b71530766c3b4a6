/**
 * Run records (DESIGN.md §6-7): the list with keyword and paging, one record with its phases, steps and log,
 * and deletion. Shapes here are the JSON the HTTP API answers (snake_case); nothing here knows HTTP.
 *
 * Who may delete a record: its owner (the user who queued the run) or an admin. A record is lab data other
 * people rely on, so operators cannot delete each other's; runs started headless (no user) are admins' to
 * delete. The run in progress, and an interrupted run waiting for the operator, cannot be deleted (conflict):
 * the runner still writes to (or will resume) them.
 */
import { ownerOrAdmin, type PublicUser } from '../accounts/index.js';
import { LabError } from '../errors.js';
import { campaignOfRun } from '../campaign/record.js';
import { repeatOfRun, type RunnerStatus } from '../runner/index.js';
import type { RunRow, StepRow, Store } from '../store/types.js';
import { stepPathResolver } from './paths.js';
import { SHOWN_RESULT_CHARS } from '../result-limit.js';
import { stepBounds } from './timing.js';
import type { RecordDetail, RecordList, RecordPhase, RecordSummary } from './record-schema.js';

// the shapes of a run record: declared once, as zod (record-schema.ts)
export type { RecordDetail, RecordList, RecordLog, RecordPhase, RecordStep, RecordSummary } from './record-schema.js';

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 200;
export const MAX_KEYWORD = 200;
/** Step records shown with a record (the steps CSV has all of them). */
export const DETAIL_STEP_LIMIT = 10_000;

export interface ListQuery {
  keyword: string;
  page: number;
  perPage: number;
}

/** A query value as one string; absent or empty → undefined. A repeated parameter is an error. */
function single(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') {
    throw new LabError('invalid_input', `${field} must be given once, as text.`, [{ field, message: 'must be a single value' }]);
  }
  return value.trim() === '' ? undefined : value.trim();
}

function positiveInt(value: unknown, field: string, fallback: number, max?: number): number {
  const text = single(value, field);
  if (text === undefined) return fallback;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new LabError('invalid_input', `${field} must be a positive integer, got ${JSON.stringify(text)}.`, [{ field, message: 'must be a positive integer' }]);
  }
  if (max !== undefined && n > max) {
    throw new LabError('invalid_input', `${field} must be at most ${max}, got ${n}.`, [{ field, message: `must be at most ${max}` }]);
  }
  return n;
}

/** The list's query (`keyword`, `page`, `per_page`), checked: 400 naming the field that is wrong. */
export function parseListQuery(q: { keyword?: unknown; page?: unknown; per_page?: unknown }): ListQuery {
  const keyword = single(q.keyword, 'keyword') ?? '';
  if (keyword.length > MAX_KEYWORD) {
    throw new LabError('invalid_input', `keyword must be at most ${MAX_KEYWORD} characters.`, [{ field: 'keyword', message: `at most ${MAX_KEYWORD} characters` }]);
  }
  return { keyword, page: positiveInt(q.page, 'page', 1), perPage: positiveInt(q.per_page, 'per_page', DEFAULT_PER_PAGE, MAX_PER_PAGE) };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const duration = (start: Date, end: Date | null) => (end ? end.getTime() - start.getTime() : null);

export function recordSummary(run: RunRow, user: string | null): RecordSummary {
  return {
    id: run.id,
    name: run.name,
    workflow: run.workflowName,
    workflow_version: run.workflowVersion,
    status: run.status,
    skipped_steps: run.skipped,
    error: run.error,
    task_id: run.taskId,
    user_id: run.userId,
    user,
    started_at: run.startedAt.toISOString(),
    ended_at: iso(run.endedAt),
    duration_ms: duration(run.startedAt, run.endedAt),
    iterations: Array.isArray(run.parameters) ? run.parameters.length : (repeatOfRun(run.parameters)?.repeat ?? campaignOfRun(run.parameters)?.budget ?? null),
  };
}

/** Usernames of the given user ids (one lookup per distinct id). */
async function userNames(store: Store, ids: (number | null)[]): Promise<Map<number, string>> {
  const distinct = [...new Set(ids.filter((i): i is number => i !== null))];
  const users = await Promise.all(distinct.map((id) => store.users.byId(id)));
  return new Map(users.filter((u) => u !== null).map((u) => [u.id, u.username]));
}

/** A page of records, newest first; keyword matches the run name or the workflow name. */
export async function listRecords(store: Store, q: ListQuery): Promise<RecordList> {
  const { rows, total } = await store.runs.list({ keyword: q.keyword || undefined, page: q.page, perPage: q.perPage });
  const names = await userNames(
    store,
    rows.map((r) => r.userId),
  );
  return {
    records: rows.map((r) => recordSummary(r, r.userId === null ? null : (names.get(r.userId) ?? null))),
    page: q.page,
    per_page: q.perPage,
    total,
    pages: Math.ceil(total / q.perPage),
  };
}

export function notFoundRecord(id: number): LabError {
  return new LabError('not_found', `There is no workflow record ${id}.`, [{ field: 'workflow_id', message: 'no such record' }]);
}

export async function getRun(store: Store, id: number): Promise<RunRow> {
  const run = await store.runs.get(id);
  if (!run) throw notFoundRecord(id);
  return run;
}

/** The first `limit` step records of a run, and whether there are more; each output read up to what a record shows. */
async function firstSteps(store: Store, runId: number, limit: number): Promise<{ steps: StepRow[]; more: boolean }> {
  const steps: StepRow[] = [];
  for await (const batch of store.runSteps.iterate(runId, Math.min(1000, limit + 1), SHOWN_RESULT_CHARS)) {
    for (const s of batch) {
      if (steps.length === limit) return { steps, more: true };
      steps.push(s);
    }
  }
  return { steps, more: false };
}

/** A record with its phases (each with its steps, in order), its log, and its workflow snapshot. */
export async function recordDetail(store: Store, id: number, opts: { stepLimit?: number } = {}): Promise<RecordDetail> {
  const run = await getRun(store, id);
  const limit = Math.max(0, opts.stepLimit ?? DETAIL_STEP_LIMIT);
  const [phases, logs, { steps, more }, names] = await Promise.all([store.phases.list(id), store.logs.list(id), firstSteps(store, id, limit), userNames(store, [run.userId])]);
  const bounds = await stepBounds(store, steps);
  const pathOf = stepPathResolver(run.workflow);
  const key = (phase: string | null, iteration: number | null) => `${phase}|${iteration}`;
  const out: RecordPhase[] = phases.map((p) => ({
    id: p.id,
    phase: p.phase,
    iteration: p.iteration,
    status: p.status,
    params: p.params,
    outputs: p.outputs,
    started_at: iso(p.startedAt),
    ended_at: iso(p.endedAt),
    duration_ms: duration(p.startedAt, p.endedAt),
    steps: [],
    steps_complete: true,
  }));
  const byKey = new Map(out.map((p) => [key(p.phase, p.iteration), p]));
  for (const s of steps) {
    let bucket = byKey.get(key(s.phase, s.iteration));
    if (!bucket) {
      bucket = {
        id: null,
        phase: s.phase ?? '(none)',
        iteration: s.iteration,
        status: null,
        params: null,
        outputs: null,
        started_at: null,
        ended_at: null,
        duration_ms: null,
        steps: [],
        steps_complete: true,
      };
      byKey.set(key(s.phase, s.iteration), bucket);
      out.push(bucket);
    }
    bucket.steps.push({
      task_id: s.id,
      index: s.stepIndex,
      path: pathOf(s.phase, s.stepIndex),
      instrument: s.instrument,
      method: s.method,
      args: s.args,
      output: s.output,
      status: s.status,
      error: s.error,
      started_at: s.startedAt.toISOString(),
      ended_at: iso(s.endedAt),
      duration_ms: duration(s.startedAt, s.endedAt),
      bound_ms: bounds.get(s.id)?.bound_ms ?? null,
      overdue: bounds.get(s.id)?.overdue ?? false,
    });
  }
  if (more && steps.length) {
    // phases are in the order they ran: the one of the last step shown, and every later one, are cut short
    const last = steps[steps.length - 1]!;
    const from = out.indexOf(byKey.get(key(last.phase, last.iteration))!);
    for (let i = Math.max(0, from); i < out.length; i++) out[i]!.steps_complete = false;
  } else if (more) for (const p of out) p.steps_complete = false;
  const repeat = repeatOfRun(run.parameters);
  const campaign = campaignOfRun(run.parameters);
  return {
    ...recordSummary(run, run.userId === null ? null : (names.get(run.userId) ?? null)),
    definition: run.workflow,
    // a repeat's one row; `repeat` says how many times
    parameters: repeat ? [repeat.row] : campaign ? [] : run.parameters,
    repeat: repeat?.repeat ?? null,
    campaign,
    phases: out,
    logs: logs.map((l) => ({ at: l.at.toISOString(), level: l.level, message: l.message })),
    steps_shown: steps.length,
    steps_truncated: more,
  };
}

/** May this user delete this record? Its owner or an admin. */
export function mayDelete(run: Pick<RunRow, 'userId'>, user: Pick<PublicUser, 'id' | 'role'>): boolean {
  return ownerOrAdmin(run.userId, user);
}

/**
 * Delete a record with its phases, steps and log. not_found, then forbidden (not the owner or an admin),
 * then conflict (the run is in progress, or interrupted and waiting for the operator).
 */
export async function deleteRecord(store: Store, runner: { status(): RunnerStatus }, id: number, user: Pick<PublicUser, 'id' | 'role'>): Promise<RunRow> {
  const run = await getRun(store, id);
  if (!mayDelete(run, user)) {
    throw new LabError('forbidden', `Record ${id} belongs to another user: only its owner or an admin may delete it.`, [{ field: 'workflow_id', message: 'not yours' }]);
  }
  const status = runner.status();
  if (status.current_task?.run_id === id) {
    throw new LabError('conflict', `Run ${id} is in progress: abort it (or let it finish) before deleting its record.`, [{ field: 'workflow_id', message: 'the run is in progress' }], {
      state: status.state,
    });
  }
  if (status.interrupted?.run_id === id) {
    throw new LabError('conflict', `Run ${id} was interrupted and waits for the operator: end it (abort) before deleting its record.`, [{ field: 'workflow_id', message: 'the run is interrupted' }], {
      state: status.state,
    });
  }
  if (!(await store.runs.delete(id))) throw notFoundRecord(id);
  return run;
}
