/**
 * The notification outbox (DESIGN.md §17): events written in the transaction of the state change that causes
 * them, one delivery per event and channel, each claimed by one host at a time (PostgreSQL: `FOR UPDATE SKIP
 * LOCKED`; SQLite: one conditional UPDATE, the database being one process's), marked delivered once sent.
 */
import { randomUUID } from 'node:crypto';
import { Sql, decodeJson, encodeJson, toDate, toDateOrNull, toInt, toIntOrNull, type DbRow, type Param } from './sql.js';
import type { ChannelHealth, DeliveryRow, OutboxRow, OutboxStore } from './outbox-types.js';
import { notifyOutbox } from './tables.js';

const COLS = notifyOutbox.cols({ except: ['fannedAt'], as: 'o' });
/** An open alert that has no resolution yet. */
const UNRESOLVED = `o."state" = 'open' AND NOT EXISTS (SELECT 1 FROM "notify_outbox" r WHERE r."alert_id" = o."alert_id" AND r."state" = 'resolved')`;

function outboxRow(r: DbRow): OutboxRow {
  return {
    id: toInt(r.id),
    alertId: String(r.alert_id),
    event: String(r.event),
    state: r.state === 'resolved' ? 'resolved' : 'open',
    key: String(r.key),
    runId: toIntOrNull(r.run_id),
    taskId: toIntOrNull(r.task_id),
    userId: toIntOrNull(r.user_id),
    payload: (decodeJson(r.payload) ?? {}) as Record<string, unknown>,
    createdAt: toDate(r.created_at),
  };
}

export function createOutboxRepository(sql: Sql): OutboxStore {
  const pg = sql.dialect === 'postgres';
  return {
    async write(ops) {
      const now = new Date();
      for (const op of ops) {
        if (op.op === 'open') {
          // one open alert per waiting state: a second open of the same key (a retry of the write) adds nothing
          await sql.run(
            `INSERT INTO "notify_outbox" ("alert_id", "event", "state", "key", "run_id", "task_id", "user_id", "payload", "created_at") ` +
              `SELECT ?, ?, 'open', ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM "notify_outbox" o WHERE o."key" = ? AND ${UNRESOLVED})`,
            [randomUUID(), op.event, op.key, op.runId ?? null, op.taskId ?? null, op.userId ?? null, encodeJson(op.payload, 'payload'), now, op.key],
          );
          continue;
        }
        const where: string[] = [UNRESOLVED];
        const params: Param[] = [encodeJson(op.note ? { resolution: op.note } : {}, 'payload'), now];
        const add = (clause: string, value: Param) => {
          where.push(clause);
          params.push(value);
        };
        if (op.key !== undefined) add(`o."key" = ?`, op.key);
        if (op.runId !== undefined) add(`o."run_id" = ?`, op.runId);
        if (op.event !== undefined) add(`o."event" = ?`, op.event);
        for (const e of op.except ?? []) add(`o."event" <> ?`, e);
        if (op.key === undefined && op.runId === undefined && op.event === undefined) continue; // resolves nothing rather than everything
        await sql.run(
          `INSERT INTO "notify_outbox" ("alert_id", "event", "state", "key", "run_id", "task_id", "user_id", "payload", "created_at") ` +
            `SELECT o."alert_id", o."event", 'resolved', o."key", o."run_id", o."task_id", o."user_id", ?, ? FROM "notify_outbox" o WHERE ${where.join(' AND ')}`,
          params,
        );
      }
    },
    async open(limit = 200) {
      return (await sql.rows(`SELECT ${COLS} FROM "notify_outbox" o WHERE ${UNRESOLVED} ORDER BY o."id" LIMIT ?`, [limit])).map(outboxRow);
    },
    async recent(limit) {
      return withOpenPayloads(sql, (await sql.rows(`SELECT ${COLS} FROM "notify_outbox" o ORDER BY o."id" DESC LIMIT ?`, [limit])).map(outboxRow));
    },
    async unfanned(limit) {
      return (await sql.rows(`SELECT ${COLS} FROM "notify_outbox" o WHERE o."fanned_at" IS NULL ORDER BY o."id" LIMIT ?`, [limit])).map(outboxRow);
    },
    async fanOut(outboxId, channels, now) {
      return sql.transaction(async (tx) => {
        // the row lock of this UPDATE makes a second host wait, then find it fanned: it adds nothing
        if ((await tx.run(`UPDATE "notify_outbox" SET "fanned_at" = ? WHERE "id" = ? AND "fanned_at" IS NULL`, [now, outboxId])) !== 1) return false;
        for (const ch of channels) {
          await tx.run(`INSERT INTO "notify_deliveries" ("outbox_id", "channel", "status", "attempts", "next_at") VALUES (?, ?, 'pending', 0, ?)`, [outboxId, ch, now]);
        }
        return true;
      });
    },
    async claim(host, now, until, limit, skipChannels = []) {
      const skip = skipChannels.map(() => ` AND "channel" <> ?`).join('');
      const due = `SELECT "id" FROM "notify_deliveries" WHERE ((status = 'pending' AND "next_at" <= ?) OR (status = 'sending' AND "claimed_until" < ?))${skip} ORDER BY "id" LIMIT ?`;
      const ids = await sql.rows<{ id: unknown }>(
        `UPDATE "notify_deliveries" SET "status" = 'sending', "claimed_by" = ?, "claimed_until" = ?, "attempts" = "attempts" + 1 ` +
          `WHERE "id" IN (${due}${pg ? ' FOR UPDATE SKIP LOCKED' : ''}) RETURNING "id"`,
        [host, until, now, now, ...skipChannels, limit],
      );
      if (ids.length === 0) return [];
      const list = ids.map((r) => toInt(r.id));
      const rows = await sql.rows(
        `SELECT d."id" AS "d_id", d."channel", d."status", d."attempts", d."next_at", d."last_error", ${COLS} FROM "notify_deliveries" d ` +
          `JOIN "notify_outbox" o ON o."id" = d."outbox_id" WHERE d."id" IN (${list.map(() => '?').join(', ')}) ORDER BY d."id"`,
        list,
      );
      const events = await withOpenPayloads(sql, rows.map(outboxRow));
      return rows.map((r, i): DeliveryRow => ({
        id: toInt(r.d_id),
        channel: String(r.channel),
        status: r.status as DeliveryRow['status'],
        attempts: toInt(r.attempts),
        nextAt: toDate(r.next_at),
        lastError: r.last_error === null || r.last_error === undefined ? null : String(r.last_error),
        event: events[i]!,
      }));
    },
    async delivered(ids, host, now) {
      if (ids.length === 0) return;
      await sql.run(
        `UPDATE "notify_deliveries" SET "status" = 'delivered', "delivered_at" = ?, "claimed_until" = NULL, "last_error" = NULL ` +
          `WHERE "claimed_by" = ? AND "status" = 'sending' AND "id" IN (${ids.map(() => '?').join(', ')})`,
        [now, host, ...ids],
      );
    },
    release(host, now) {
      return sql.run(`UPDATE "notify_deliveries" SET "status" = 'pending', "claimed_until" = NULL, "next_at" = ? WHERE "claimed_by" = ? AND "status" = 'sending'`, [now, host]);
    },
    async retry(id, host, error, nextAt) {
      await sql.run(`UPDATE "notify_deliveries" SET "status" = 'pending', "claimed_until" = NULL, "last_error" = ?, "next_at" = ? WHERE "id" = ? AND "claimed_by" = ? AND "status" = 'sending'`, [
        error.slice(0, 2000),
        nextAt,
        id,
        host,
      ]);
    },
    async health() {
      const rows = await sql.rows(
        `SELECT "channel", SUM(CASE WHEN "status" <> 'delivered' THEN 1 ELSE 0 END) AS "waiting", ` +
          `SUM(CASE WHEN "status" <> 'delivered' AND "last_error" IS NOT NULL THEN 1 ELSE 0 END) AS "failing", MAX("delivered_at") AS "last_delivered" ` +
          `FROM "notify_deliveries" GROUP BY "channel" ORDER BY "channel"`,
      );
      const out: ChannelHealth[] = [];
      for (const r of rows) {
        const err = await sql.one<{ last_error: unknown }>(
          `SELECT "last_error" FROM "notify_deliveries" WHERE "channel" = ? AND "last_error" IS NOT NULL AND "status" <> 'delivered' ORDER BY "id" DESC LIMIT 1`,
          [String(r.channel)],
        );
        out.push({
          channel: String(r.channel),
          waiting: toInt(r.waiting ?? 0),
          failing: toInt(r.failing ?? 0),
          lastError: err ? String(err.last_error) : null,
          lastDeliveredAt: toDateOrNull(r.last_delivered),
        });
      }
      return out;
    },
  };
}

/** A resolution carries its open event's payload (and its own `resolution` note). */
async function withOpenPayloads(sql: Sql, rows: OutboxRow[]): Promise<OutboxRow[]> {
  const ids = [...new Set(rows.filter((r) => r.state === 'resolved').map((r) => r.alertId))];
  if (ids.length === 0) return rows;
  const opens = await sql.rows(`SELECT "alert_id", "payload" FROM "notify_outbox" WHERE "state" = 'open' AND "alert_id" IN (${ids.map(() => '?').join(', ')})`, ids);
  const byId = new Map(opens.map((o) => [String(o.alert_id), (decodeJson(o.payload) ?? {}) as Record<string, unknown>]));
  return rows.map((r) => (r.state === 'resolved' ? { ...r, payload: { ...byId.get(r.alertId), ...r.payload } } : r));
}
