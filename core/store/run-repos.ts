/**
 * The repositories of RunStore (types.ts): saved workflows, run records (runs, their
 * phases, log lines and steps) and uploaded files; the durable queue is in queue-repos.ts. Same portable SQL and row mapping as repos.ts.
 *
 * Records list: `ix_runs_search (id, name, workflow_name)` covers both the keyword filter and the
 * newest-first order, so a page is found by scanning that small index (never the rows with their workflow
 * snapshots) and only the page's rows are then read by id. The total is a COUNT over the same index.
 */
import { LabError } from '../errors.js';
import { createHostRepository } from './host-repos.js';
import { createQueueRepository } from './queue-repos.js';
import { ORPHANED, repoKit, type Ref } from './repo-kit.js';
import { STEP_COLS, boundedStepCols, oneOf, same, stepRow, type Encoders } from './codec.js';
import { Sql, decodeJson, encodeJson, isUniqueViolation, toDate, toDateOrNull, toInt, toIntOrNull, type DbRow, type Param } from './sql.js';
import { files, phases, runLogs, runs, workflows } from './tables.js';
import type { FileKind, FileRow, LogRow, PhaseRow, RunRow, RunStatus, RunStore, WorkflowRow } from './types.js';

const RUN_STATUSES: readonly RunStatus[] = ['running', 'completed', 'failed', 'stopped', 'aborted', 'interrupted'];
const PHASES: readonly PhaseRow['phase'][] = ['prep', 'main', 'cleanup'];
const PHASE_STATUSES: readonly PhaseRow['status'][] = ['running', 'ok', 'error', 'skipped', 'stopped'];
const LOG_LEVELS: readonly LogRow['level'][] = ['info', 'warn', 'error'];
const FILE_KINDS: readonly FileKind[] = ['config', 'history'];

/** Largest page of the records list and largest batch of runSteps.iterate. */
const MAX_PER_PAGE = 1000;
const MAX_BATCH = 10_000;
const DEFAULT_BATCH = 500;

const WORKFLOW_COLS = workflows.cols();
const RUN_COLS = runs.cols();
const PHASE_COLS = phases.cols();
const FILE_COLS = files.cols();

/** Case-insensitive substring pattern for LIKE/ILIKE, with `!` escaping the wildcards. */
function containsPattern(keyword: string): string {
  return `%${keyword.replace(/[!%_]/g, '!$&')}%`;
}

function clampInt(v: number, min: number, max: number, fallback: number): number {
  const n = Math.floor(v);
  return Number.isFinite(n) ? Math.max(min, Math.min(max, n)) : fallback;
}

function workflowRow(r: DbRow): WorkflowRow {
  return {
    id: toInt(r.id),
    name: String(r.name),
    version: toInt(r.version),
    definition: decodeJson(r.definition),
    createdBy: toIntOrNull(r.created_by),
    createdAt: toDate(r.created_at),
    deletedAt: toDateOrNull(r.deleted_at),
  };
}

function runRow(r: DbRow): RunRow {
  return {
    id: toInt(r.id),
    taskId: toIntOrNull(r.task_id),
    name: String(r.name),
    workflowName: String(r.workflow_name),
    workflowVersion: toIntOrNull(r.workflow_version),
    workflow: decodeJson(r.workflow),
    parameters: decodeJson(r.parameters),
    status: r.status as RunStatus,
    error: (r.error as string | null) ?? null,
    userId: toIntOrNull(r.user_id),
    startedAt: toDate(r.started_at),
    endedAt: toDateOrNull(r.ended_at),
    skipped: toInt(r.skipped ?? 0),
    hostId: (r.host_id as string | null) ?? null,
  };
}

function phaseRow(r: DbRow): PhaseRow {
  return {
    id: toInt(r.id),
    runId: toInt(r.run_id),
    phase: r.phase as PhaseRow['phase'],
    iteration: toIntOrNull(r.iteration),
    params: decodeJson(r.params),
    outputs: decodeJson(r.outputs),
    status: r.status as PhaseRow['status'],
    startedAt: toDate(r.started_at),
    endedAt: toDateOrNull(r.ended_at),
  };
}

function fileRow(r: DbRow): FileRow {
  return {
    id: toInt(r.id),
    kind: r.kind as FileKind,
    storedName: String(r.stored_name),
    originalName: String(r.original_name),
    workflow: (r.workflow as string | null) ?? null,
    rows: toInt(r.rows),
    columns: decodeJson(r.columns) as string[],
    size: toInt(r.size),
    createdBy: toIntOrNull(r.created_by),
    createdAt: toDate(r.created_at),
  };
}

/** Workflow names are compared like a person reads them ("run 2" before "run 10"), ties by code units. */
function byName(a: { name: string }, b: { name: string }): number {
  return a.name.localeCompare(b.name, 'en', { numeric: true }) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

export function createRunRepositories(sql: Sql): RunStore {
  const kit = repoKit(sql);
  const { matches, withRefs, updateById } = kit;

  const workflows: RunStore['workflows'] = {
    async list() {
      const rows = await sql.rows(
        `SELECT ${WORKFLOW_COLS} FROM "workflows" w WHERE "deleted_at" IS NULL AND "version" = ` + `(SELECT MAX(x."version") FROM "workflows" x WHERE x."name" = w."name" AND x."deleted_at" IS NULL)`,
      );
      return rows.map(workflowRow).sort(byName);
    },
    async get(name, version) {
      const r =
        version === undefined
          ? await sql.one(`SELECT ${WORKFLOW_COLS} FROM "workflows" WHERE "name" = ? AND "deleted_at" IS NULL ORDER BY "version" DESC LIMIT 1`, [name])
          : await sql.one(`SELECT ${WORKFLOW_COLS} FROM "workflows" WHERE "name" = ? AND "version" = ?`, [name, version]);
      return r ? workflowRow(r) : null;
    },
    async first(name) {
      const r = await sql.one(`SELECT ${WORKFLOW_COLS} FROM "workflows" WHERE "name" = ? AND "deleted_at" IS NULL ORDER BY "version" LIMIT 1`, [name]);
      return r ? workflowRow(r) : null;
    },
    async save(name, definition, userId, opts = {}) {
      if (typeof name !== 'string' || name.trim() === '') {
        throw new LabError('invalid_input', 'A workflow needs a name.', [{ field: 'name', message: 'required' }]);
      }
      const def = encodeJson(definition, 'definition') ?? 'null';
      const refs: Ref[] = [['userId', 'users', userId, 'user']];
      // The next version (after every one the name ever had, deleted ones too) is computed inside the INSERT;
      // UNIQUE(name, version) turns a concurrent save of the same name (PostgreSQL) into a retry, and a
      // second "new" workflow of that name into a conflict. A new one needs no live version of the name.
      const taken = () => new LabError('conflict', `A workflow named "${name}" already exists.`, [{ field: 'name', message: 'already exists' }]);
      if (opts.expectNew && (await workflows.get(name))) throw taken();
      const version = `(SELECT COALESCE(MAX("version"), 0) + 1 FROM "workflows" WHERE "name" = ?)`;
      const params: Param[] = [name, name, def, userId, new Date()];
      for (let attempt = 0; ; attempt++) {
        try {
          const r = await withRefs(refs, () =>
            sql.one(`INSERT INTO "workflows" ("name", "version", "definition", "created_by", "created_at") ` + `VALUES (?, ${version}, ?, ?, ?) RETURNING ${WORKFLOW_COLS}`, params),
          );
          return workflowRow(r!);
        } catch (e) {
          if (!isUniqueViolation(e)) throw e;
          if (opts.expectNew) throw taken();
          // each lost race is another save's win: N savers of one name at once all land within N − 1 retries
          if (attempt >= 31) throw e;
        }
      }
    },
    async delete(name) {
      return (await sql.run(`UPDATE "workflows" SET "deleted_at" = ? WHERE "name" = ? AND "deleted_at" IS NULL`, [new Date(), name])) > 0;
    },
  };

  const RUN_FIELDS: Encoders<Parameters<RunStore['runs']['update']>[1]> = {
    status: ['status', (v) => oneOf(v, RUN_STATUSES, 'status')],
    error: ['error', same],
    endedAt: ['ended_at', same],
    parameters: ['parameters', (v) => encodeJson(v, 'parameters') ?? 'null'],
    skipped: ['skipped', same],
    hostId: ['host_id', same],
  };

  const runs: RunStore['runs'] = {
    async create(r) {
      const refs: Ref[] = [
        ['taskId', 'queue_tasks', r.taskId, 'queue task'],
        ['userId', 'users', r.userId, 'user'],
      ];
      const row = await withRefs(refs, () =>
        sql.one(
          `INSERT INTO "runs" ("task_id", "name", "workflow_name", "workflow_version", "workflow", "parameters", ` +
            `"status", "user_id", "started_at", "host_id") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${RUN_COLS}`,
          [
            r.taskId,
            r.name,
            r.workflowName,
            r.workflowVersion,
            encodeJson(r.workflow, 'workflow') ?? 'null',
            encodeJson(r.parameters, 'parameters') ?? 'null',
            oneOf(r.status, RUN_STATUSES, 'status'),
            r.userId,
            r.startedAt,
            r.hostId ?? null,
          ],
        ),
      );
      return runRow(row!);
    },
    async update(id, patch) {
      await updateById('runs', 'run', id, patch, RUN_FIELDS);
    },
    async get(id) {
      const r = await sql.one(`SELECT ${RUN_COLS} FROM "runs" WHERE "id" = ?`, [id]);
      return r ? runRow(r) : null;
    },
    async list(q) {
      const perPage = clampInt(q.perPage, 1, MAX_PER_PAGE, 20);
      const page = clampInt(q.page, 1, Number.MAX_SAFE_INTEGER, 1);
      const keyword = (q.keyword ?? '').trim();
      let where = '';
      const params: Param[] = [];
      if (keyword) {
        where = `WHERE ${matches('name')} OR ${matches('workflow_name')}`;
        const p = containsPattern(keyword);
        params.push(p, p);
      }
      // The inner query pages over the covering index; only the page's rows are read in full.
      const [rows, count] = await Promise.all([
        sql.rows(`SELECT ${RUN_COLS} FROM "runs" WHERE "id" IN ` + `(SELECT "id" FROM "runs" ${where} ORDER BY "id" DESC LIMIT ? OFFSET ?) ORDER BY "id" DESC`, [
          ...params,
          perPage,
          (page - 1) * perPage,
        ]),
        sql.one<DbRow>(`SELECT COUNT(*) AS "n" FROM "runs" ${where}`, params),
      ]);
      return { rows: rows.map(runRow), total: toInt(count?.n ?? 0) };
    },
    async delete(id) {
      // steps.run_id has no foreign key (see the migration): the run's steps go first, then the run, whose
      // phases and log lines go with it (ON DELETE CASCADE); its queue task keeps no dangling run id.
      await sql.run(`DELETE FROM "steps" WHERE "run_id" = ?`, [id]);
      return (await sql.run(`DELETE FROM "runs" WHERE "id" = ?`, [id])) > 0;
    },
    async orphaned() {
      const rows = await sql.rows(`SELECT ${RUN_COLS} FROM "runs" WHERE "status" = 'running' AND ${ORPHANED} ORDER BY "id"`);
      return rows.map(runRow);
    },
    async interrupt(id, error) {
      return (await sql.run(`UPDATE "runs" SET "status" = 'interrupted', "error" = ? WHERE "id" = ? AND "status" = 'running'`, [error, id])) === 1;
    },
  };

  const PHASE_FIELDS: Encoders<Parameters<RunStore['phases']['update']>[1]> = {
    outputs: ['outputs', (v) => encodeJson(v, 'outputs')],
    status: ['status', (v) => oneOf(v, PHASE_STATUSES, 'status')],
    endedAt: ['ended_at', same],
  };

  const phases: RunStore['phases'] = {
    async create(p) {
      const r = await withRefs([['runId', 'runs', p.runId, 'run']], () =>
        sql.one<DbRow>(`INSERT INTO "phases" ("run_id", "phase", "iteration", "params", "status", "started_at") ` + `VALUES (?, ?, ?, ?, ?, ?) RETURNING "id"`, [
          p.runId,
          oneOf(p.phase, PHASES, 'phase'),
          p.iteration,
          encodeJson(p.params, 'params'),
          oneOf(p.status ?? 'running', PHASE_STATUSES, 'status'),
          p.startedAt,
        ]),
      );
      return toInt(r!.id);
    },
    async update(id, patch) {
      await updateById('phases', 'phase', id, patch, PHASE_FIELDS);
    },
    async list(runId) {
      return (await sql.rows(`SELECT ${PHASE_COLS} FROM "phases" WHERE "run_id" = ? ORDER BY "id"`, [runId])).map(phaseRow);
    },
  };

  const logs: RunStore['logs'] = {
    async add(runId, level, message, at = new Date()) {
      await withRefs([['runId', 'runs', runId, 'run']], () =>
        sql.run(`INSERT INTO "run_logs" ("run_id", "at", "level", "message") VALUES (?, ?, ?, ?)`, [runId, at, oneOf(level, LOG_LEVELS, 'level'), String(message)]),
      );
    },
    async list(runId) {
      const rows = await sql.rows(`SELECT ${runLogs.cols()} FROM "run_logs" WHERE "run_id" = ? ORDER BY "id"`, [runId]);
      return rows.map((r): LogRow => ({
        id: toInt(r.id),
        runId: toInt(r.run_id),
        at: toDate(r.at),
        level: r.level as LogRow['level'],
        message: String(r.message),
      }));
    },
  };

  /** All of each value, or (a page, a list) up to `chars` characters of args and output. */
  const stepCols = (chars?: number) => (chars === undefined ? STEP_COLS : boundedStepCols(sql.dialect, chars));
  const runSteps: RunStore['runSteps'] = {
    async list(runId, chars) {
      return (await sql.rows(`SELECT ${stepCols(chars)} FROM "steps" WHERE "run_id" = ? ORDER BY "id"`, [runId])).map(stepRow);
    },
    // Keyset paging over ix_steps_run_id_id: each batch is one index range read, whatever its depth.
    async *iterate(runId, batch = DEFAULT_BATCH, chars) {
      const n = clampInt(batch, 1, MAX_BATCH, DEFAULT_BATCH);
      const cols = stepCols(chars);
      let after = 0;
      for (;;) {
        const rows = await sql.rows(`SELECT ${cols} FROM "steps" WHERE "run_id" = ? AND "id" > ? ORDER BY "id" LIMIT ?`, [runId, after, n]);
        if (rows.length === 0) return;
        const steps = rows.map(stepRow);
        yield steps;
        if (rows.length < n) return;
        after = steps[steps.length - 1]!.id;
      }
    },
    async markInDoubt(runId) {
      return sql.run(`UPDATE "steps" SET "status" = 'in-doubt' WHERE "run_id" = ? AND "status" = 'running'`, [runId]);
    },
  };

  const files: RunStore['files'] = {
    async add(f) {
      try {
        const r = await withRefs([['createdBy', 'users', f.createdBy, 'user']], () =>
          sql.one(
            `INSERT INTO "files" ("kind", "stored_name", "original_name", "workflow", "rows", "columns", "size", ` +
              `"created_by", "created_at") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${FILE_COLS}`,
            [oneOf(f.kind, FILE_KINDS, 'kind'), f.storedName, f.originalName, f.workflow, f.rows, encodeJson(f.columns, 'columns') ?? '[]', f.size, f.createdBy, new Date()],
          ),
        );
        return fileRow(r!);
      } catch (e) {
        if (isUniqueViolation(e)) {
          throw new LabError('conflict', `A file is already stored as "${f.storedName}".`, [{ field: 'storedName', message: 'already exists' }]);
        }
        throw e;
      }
    },
    async get(storedName) {
      const r = await sql.one(`SELECT ${FILE_COLS} FROM "files" WHERE "stored_name" = ?`, [storedName]);
      return r ? fileRow(r) : null;
    },
    /** Newest first; with a workflow, only the files uploaded for it. */
    async list(kind, workflow) {
      const rows =
        workflow === undefined
          ? await sql.rows(`SELECT ${FILE_COLS} FROM "files" WHERE "kind" = ? ORDER BY "id" DESC`, [kind])
          : await sql.rows(`SELECT ${FILE_COLS} FROM "files" WHERE "kind" = ? AND "workflow" = ? ORDER BY "id" DESC`, [kind, workflow]);
      return rows.map(fileRow);
    },
  };

  const queue = createQueueRepository(sql, kit);
  return { workflows, queue, runs, phases, logs, runSteps, files, hosts: createHostRepository(sql) };
}
