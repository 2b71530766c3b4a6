/** The durable queue's repository (RunStore['queue'], types.ts): tasks in order, claimed by one host, moved, held. */
import { LabError } from '../errors.js';
import { notFound, oneOf, same, type Encoders } from './codec.js';
import { ORPHANED, type RepoKit } from './repo-kit.js';
import { decodeJson, encodeJson, toDate, toDateOrNull, toInt, toIntOrNull, type DbRow, type Param, type Sql } from './sql.js';
import type { QueueTaskRow, RunStore, TaskKind, TaskStatus } from './types.js';
import { queueTasks } from './tables.js';

const TASK_KINDS: readonly TaskKind[] = ['workflow', 'campaign'];
const TASK_STATUSES: readonly TaskStatus[] = ['pending', 'running', 'interrupted', 'done', 'failed', 'stopped', 'aborted'];
/** Tasks still in the queue (the runner has not finished them). */
const OPEN_STATUSES: readonly TaskStatus[] = ['pending', 'running', 'interrupted'];
const OPEN_IN = `(${OPEN_STATUSES.map((s) => `'${s}'`).join(', ')})`;
const MOVES = ['up', 'down', 'top', 'bottom'] as const;

const TASK_COLS = queueTasks.cols();

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

export function createQueueRepository(sql: Sql, { withLock, withRefs, updateById }: RepoKit): RunStore['queue'] {
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
          throw new LabError('conflict', `Queue task ${id} has finished (${task.status}); only waiting tasks can move.`, [{ field: 'id', message: `task is ${task.status}` }]);
        }
        const list = await queue.open();
        const i = list.findIndex((t) => t.id === id);
        const last = list.length - 1;
        const setPos = (t: QueueTaskRow, position: number) => sql.run(`UPDATE "queue_tasks" SET "position" = ? WHERE "id" = ?`, [position, t.id]);
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
  return queue;
}
