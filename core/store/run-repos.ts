/**
 * The repositories of RunStore (types.ts): saved workflows, the durable queue, run records (runs, their
 * phases, log lines and steps) and uploaded files. Same portable SQL and row mapping as repos.ts.
 *
 * Records list: `ix_runs_search (id, name, workflow_name)` covers both the keyword filter and the
 * newest-first order, so a page is found by scanning that small index (never the rows with their workflow
 * snapshots) and only the page's rows are then read by id. The total is a COUNT over the same index.
 */
import { LabError } from '../errors.js';
import { createHostRepository } from './host-repos.js';
import { STEP_COLS, boundedStepCols, keyedLock, notFound, oneOf, same, setClause, stepRow, type Encoders } from './codec.js';
import {
  Sql,
  decodeJson,
  encodeJson,
  isForeignKeyViolation,
  isUniqueViolation,
  toDate,
  toDateOrNull,
  toInt,
  toIntOrNull,
  type DbRow,
  type Param,
} from './sql.js';
import type {
  FileKind,
  FileRow,
  LogRow,
  PhaseRow,
  QueueTaskRow,
  RunRow,
  RunStatus,
  RunStore,
  TaskKind,
  TaskStatus,
  WorkflowRow,
} from './types.js';

const TASK_KINDS: readonly TaskKind[] = ['workflow', 'campaign'];
const TASK_STATUSES: readonly TaskStatus[] = ['pending', 'running', 'interrupted', 'done', 'failed', 'stopped', 'aborted'];
/** Tasks still in the queue (the runner has not finished them). */
const OPEN_STATUSES: readonly TaskStatus[] = ['pending', 'running', 'interrupted'];
const OPEN_IN = `(${OPEN_STATUSES.map((s) => `'${s}'`).join(', ')})`;
const MOVES = ['up', 'down', 'top', 'bottom'] as const;
const RUN_STATUSES: readonly RunStatus[] = ['running', 'completed', 'failed', 'stopped', 'aborted', 'interrupted'];
const PHASES: readonly PhaseRow['phase'][] = ['prep', 'main', 'cleanup'];
const PHASE_STATUSES: readonly PhaseRow['status'][] = ['running', 'ok', 'error', 'skipped', 'stopped'];
const LOG_LEVELS: readonly LogRow['level'][] = ['info', 'warn', 'error'];
const FILE_KINDS: readonly FileKind[] = ['config', 'history'];

/** Largest page of the records list and largest batch of runSteps.iterate. */
const MAX_PER_PAGE = 1000;
const MAX_BATCH = 10_000;
const DEFAULT_BATCH = 500;

const WORKFLOW_COLS = `"id", "name", "version", "definition", "created_by", "created_at", "deleted_at"`;
const TASK_COLS =
  `"id", "name", "kind", "payload", "status", "position", "run_id", "created_by", "created_at", "started_at", "ended_at", "host_id", "holds_queue"`;
const RUN_COLS =
  `"id", "task_id", "name", "workflow_name", "workflow_version", "workflow", "parameters", "status", "error", ` +
  `"user_id", "started_at", "ended_at", "skipped", "host_id"`;
/** A running row's host has stopped (or it has none: written before hosts existed): nobody will finish it. */
const ORPHANED = `("host_id" IS NULL OR "host_id" IN (SELECT "id" FROM "hosts" WHERE "stopped_at" IS NOT NULL))`;
const PHASE_COLS = `"id", "run_id", "phase", "iteration", "params", "outputs", "status", "started_at", "ended_at"`;
const FILE_COLS =
  `"id", "kind", "stored_name", "original_name", "workflow", "rows", "columns", "size", "created_by", "created_at"`;

/** A row another row points at: [field in the input, table, id, what it is called in messages]. */
type Ref = [field: string, table: 'users' | 'runs' | 'queue_tasks', id: number | null | undefined, what: string];

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

function taskRow(r: DbRow): QueueTaskRow {
  return {
    id: toInt(r.id),
    name: String(r.name),
    kind: r.kind as TaskKind,
    payload: decodeJson(r.payload),
    status: r.status as TaskStatus,
    position: toInt(r.position),
    runId: toIntOrNull(r.run_id),
    createdBy: toIntOrNull(r.created_by),
    createdAt: toDate(r.created_at),
    startedAt: toDateOrNull(r.started_at),
    endedAt: toDateOrNull(r.ended_at),
    hostId: (r.host_id as string | null) ?? null,
    holdsQueue: Boolean(r.holds_queue),
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
  const withLock = keyedLock();
  // Case-insensitive substring match of a keyword pattern. SQLite's LIKE ignores (ASCII) case already. On
  // PostgreSQL, `lower(col) LIKE lower(?)` is what ILIKE does internally for UTF-8 text (same result),
  // measured 2.5× faster than ILIKE over 100k rows.
  const matches = (col: string) =>
    sql.dialect === 'postgres' ? `lower("${col}") LIKE lower(?) ESCAPE '!'` : `"${col}" LIKE ? ESCAPE '!'`;

  /** Runs fn; a foreign key violation becomes not_found naming the input field whose row is missing. */
  async function withRefs<T>(refs: Ref[], fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (isForeignKeyViolation(e)) {
        for (const [field, table, id, what] of refs) {
          if (id === null || id === undefined) continue;
          if (!(await sql.one(`SELECT 1 AS "x" FROM "${table}" WHERE "id" = ?`, [id]))) throw notFound(what, id, field);
        }
      }
      throw e;
    }
  }

  /** UPDATE by id; not_found when the row does not exist (also for an empty patch). */
  async function updateById<P extends object>(
    table: string,
    what: string,
    id: number,
    patch: P,
    fields: Encoders<P>,
    refs: Ref[] = [],
  ): Promise<void> {
    const { sets, params } = setClause(patch, fields);
    const n =
      sets.length === 0
        ? (await sql.rows(`SELECT 1 AS "x" FROM "${table}" WHERE "id" = ?`, [id])).length
        : await withRefs(refs, () => sql.run(`UPDATE "${table}" SET ${sets.join(', ')} WHERE "id" = ?`, [...params, id]));
    if (n === 0) throw notFound(what, id);
  }

  const workflows: RunStore['workflows'] = {
    async list() {
      const rows = await sql.rows(
        `SELECT ${WORKFLOW_COLS} FROM "workflows" w WHERE "deleted_at" IS NULL AND "version" = ` +
          `(SELECT MAX(x."version") FROM "workflows" x WHERE x."name" = w."name" AND x."deleted_at" IS NULL)`,
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
      const taken = () =>
        new LabError('conflict', `A workflow named "${name}" already exists.`, [
          { field: 'name', message: 'already exists' },
        ]);
      if (opts.expectNew && (await workflows.get(name))) throw taken();
      const version = `(SELECT COALESCE(MAX("version"), 0) + 1 FROM "workflows" WHERE "name" = ?)`;
      const params: Param[] = [name, name, def, userId, new Date()];
      for (let attempt = 0; ; attempt++) {
        try {
          const r = await withRefs(refs, () =>
            sql.one(
              `INSERT INTO "workflows" ("name", "version", "definition", "created_by", "created_at") ` +
                `VALUES (?, ${version}, ?, ?, ?) RETURNING ${WORKFLOW_COLS}`,
              params,
            ),
          );
          return workflowRow(r!);
        } catch (e) {
          if (!isUniqueViolation(e)) throw e;
          if (opts.expectNew) throw taken();
          if (attempt >= 4) throw e;
        }
      }
    },
    async delete(name) {
      return (await sql.run(`UPDATE "workflows" SET "deleted_at" = ? WHERE "name" = ? AND "deleted_at" IS NULL`, [new Date(), name])) > 0;
    },
  };

  const TASK_FIELDS: Encoders<Parameters<RunStore['queue']['update']>[1]> = {
    name: ['name', same],
    status: ['status', (v) => oneOf(v, TASK_STATUSES, 'status')],
    runId: ['run_id', same],
    startedAt: ['started_at', same],
    endedAt: ['ended_at', same],
    position: ['position', same],
    hostId: ['host_id', same],
    holdsQueue: ['holds_queue', (v) => (sql.dialect === 'postgres' ? (v as unknown as Param) : v ? 1 : 0)],
  };
  const TRUE = sql.dialect === 'postgres' ? 'TRUE' : '1';

  const queue: RunStore['queue'] = {
    async add(t) {
      const r = await withRefs([['createdBy', 'users', t.createdBy, 'user']], () =>
        sql.one(
          `INSERT INTO "queue_tasks" ("name", "kind", "payload", "status", "position", "created_by", "created_at") ` +
            `VALUES (?, ?, ?, 'pending', ` +
            `(SELECT COALESCE(MAX("position"), 0) + 1 FROM "queue_tasks" WHERE "status" IN ${OPEN_IN}), ?, ?) ` +
            `RETURNING ${TASK_COLS}`,
          [t.name, oneOf(t.kind, TASK_KINDS, 'kind'), encodeJson(t.payload, 'payload') ?? 'null', t.createdBy, new Date()],
        ),
      );
      return taskRow(r!);
    },
    async get(id) {
      const r = await sql.one(`SELECT ${TASK_COLS} FROM "queue_tasks" WHERE "id" = ?`, [id]);
      return r ? taskRow(r) : null;
    },
    async open() {
      const rows = await sql.rows(`SELECT ${TASK_COLS} FROM "queue_tasks" WHERE "status" IN ${OPEN_IN} ORDER BY "position", "id"`);
      return rows.map(taskRow);
    },
    async update(id, patch) {
      await updateById('queue_tasks', 'queue task', id, patch, TASK_FIELDS, [['runId', 'runs', patch.runId, 'run']]);
    },
    async delete(id) {
      return (await sql.run(`DELETE FROM "queue_tasks" WHERE "id" = ?`, [id])) > 0;
    },
    async claim(hostId, candidates) {
      const ids = candidates.filter(Number.isSafeInteger);
      if (!ids.length) return null;
      // One statement: the first pending candidate, marked running by this host. PostgreSQL skips rows another
      // host is claiming right now (FOR UPDATE SKIP LOCKED) instead of waiting; SQLite has one writer at a time.
      const among = `"status" = 'pending' AND "id" IN (${ids.join(', ')})`;
      for (;;) {
        const r = await sql.one(
          `UPDATE "queue_tasks" SET "status" = 'running', "host_id" = ? WHERE "status" = 'pending' AND "id" = (SELECT "id" FROM "queue_tasks" ` +
            `WHERE ${among} ORDER BY "position", "id" LIMIT 1${sql.dialect === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : ''}) RETURNING ${TASK_COLS}`,
          [hostId],
        );
        if (r) return taskRow(r);
        // PostgreSQL: the row this statement picked was taken by another host as it looked; look again while any is left
        if (!(await sql.one(`SELECT "id" FROM "queue_tasks" WHERE ${among} LIMIT 1`))) return null;
      }
    },
    async pending() {
      return (await sql.rows(`SELECT "id" FROM "queue_tasks" WHERE "status" = 'pending' ORDER BY "position", "id"`)).map((r) => toInt(r.id));
    },
    async holding() {
      return (await sql.rows(`SELECT ${TASK_COLS} FROM "queue_tasks" WHERE "holds_queue" = ${TRUE} ORDER BY "id"`)).map(taskRow);
    },
    async orphaned() {
      return (await sql.rows(`SELECT ${TASK_COLS} FROM "queue_tasks" WHERE "status" = 'running' AND ${ORPHANED} ORDER BY "id"`)).map(taskRow);
    },
    async interrupt(id) {
      return (await sql.run(`UPDATE "queue_tasks" SET "status" = 'interrupted', "holds_queue" = ${TRUE} WHERE "id" = ? AND "status" = 'running'`, [id])) === 1;
    },
    async release() {
      await sql.run(`UPDATE "queue_tasks" SET "holds_queue" = ${TRUE === '1' ? '0' : 'FALSE'} WHERE "holds_queue" = ${TRUE}`);
    },
    async move(id, direction) {
      oneOf(direction, MOVES, 'direction');
      // Read-modify-write of positions, serialised within this process.
      await withLock('queue', async () => {
        const task = await queue.get(id);
        if (!task) throw notFound('queue task', id);
        if (!OPEN_STATUSES.includes(task.status)) {
          throw new LabError('conflict', `Queue task ${id} has finished (${task.status}); only waiting tasks can move.`, [
            { field: 'id', message: `task is ${task.status}` },
          ]);
        }
        const list = await queue.open();
        const i = list.findIndex((t) => t.id === id);
        const last = list.length - 1;
        const setPos = (t: QueueTaskRow, position: number) =>
          sql.run(`UPDATE "queue_tasks" SET "position" = ? WHERE "id" = ?`, [position, t.id]);
        // Moving the first up or the last down changes nothing.
        if (direction === 'top') {
          if (i > 0) await setPos(task, list[0]!.position - 1);
        } else if (direction === 'bottom') {
          if (i < last) await setPos(task, list[last]!.position + 1);
        } else {
          const j = direction === 'up' ? i - 1 : i + 1;
          if (j < 0 || j > last) return;
          const other = list[j]!;
          if (other.position !== task.position) {
            await setPos(task, other.position);
            await setPos(other, task.position);
          } else {
            // Equal positions (two adds raced on PostgreSQL): renumber the whole queue in the new order.
            [list[i], list[j]] = [other, task];
            const base = list[0]!.position;
            for (let k = 0; k < list.length; k++) if (list[k]!.position !== base + k) await setPos(list[k]!, base + k);
          }
        }
      });
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
        sql.rows(
          `SELECT ${RUN_COLS} FROM "runs" WHERE "id" IN ` +
            `(SELECT "id" FROM "runs" ${where} ORDER BY "id" DESC LIMIT ? OFFSET ?) ORDER BY "id" DESC`,
          [...params, perPage, (page - 1) * perPage],
        ),
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
        sql.one<DbRow>(
          `INSERT INTO "phases" ("run_id", "phase", "iteration", "params", "status", "started_at") ` +
            `VALUES (?, ?, ?, ?, ?, ?) RETURNING "id"`,
          [
            p.runId,
            oneOf(p.phase, PHASES, 'phase'),
            p.iteration,
            encodeJson(p.params, 'params'),
            oneOf(p.status ?? 'running', PHASE_STATUSES, 'status'),
            p.startedAt,
          ],
        ),
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
        sql.run(`INSERT INTO "run_logs" ("run_id", "at", "level", "message") VALUES (?, ?, ?, ?)`, [
          runId,
          at,
          oneOf(level, LOG_LEVELS, 'level'),
          String(message),
        ]),
      );
    },
    async list(runId) {
      const rows = await sql.rows(`SELECT "id", "run_id", "at", "level", "message" FROM "run_logs" WHERE "run_id" = ? ORDER BY "id"`, [
        runId,
      ]);
      return rows.map(
        (r): LogRow => ({
          id: toInt(r.id),
          runId: toInt(r.run_id),
          at: toDate(r.at),
          level: r.level as LogRow['level'],
          message: String(r.message),
        }),
      );
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
        const rows = await sql.rows(
          `SELECT ${cols} FROM "steps" WHERE "run_id" = ? AND "id" > ? ORDER BY "id" LIMIT ?`,
          [runId, after, n],
        );
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
            [
              oneOf(f.kind, FILE_KINDS, 'kind'),
              f.storedName,
              f.originalName,
              f.workflow,
              f.rows,
              encodeJson(f.columns, 'columns') ?? '[]',
              f.size,
              f.createdBy,
              new Date(),
            ],
          ),
        );
        return fileRow(r!);
      } catch (e) {
        if (isUniqueViolation(e)) {
          throw new LabError('conflict', `A file is already stored as "${f.storedName}".`, [
            { field: 'storedName', message: 'already exists' },
          ]);
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
          : await sql.rows(`SELECT ${FILE_COLS} FROM "files" WHERE "kind" = ? AND "workflow" = ? ORDER BY "id" DESC`, [
              kind,
              workflow,
            ]);
      return rows.map(fileRow);
    },
  };

  return { workflows, queue, runs, phases, logs, runSteps, files, hosts: createHostRepository(sql) };
}
