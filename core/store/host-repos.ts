/**
 * The hosts of a lab (DESIGN.md §12): every labdeck process that touches instruments registers with a
 * heartbeat, its lease; an instrument is driven by the one host that leases its name. The logic that
 * decides when a lease has expired and what happens to that host's runs is the runner's (core/runner/hosts.ts).
 */
import { Sql, decodeJson, encodeJson, toDate, toDateOrNull, toInt, type DbRow } from './sql.js';
import type { HostKind, HostRow, RunStore } from './types.js';
import { hosts as hostsTable } from './tables.js';

const HOST_COLS = hostsTable.cols();

function hostRow(r: DbRow): HostRow {
  return {
    id: String(r.id),
    name: String(r.name),
    kind: r.kind as HostKind,
    machine: String(r.machine),
    pid: toInt(r.pid),
    startedAt: toDate(r.started_at),
    heartbeatAt: toDate(r.heartbeat_at),
    stoppedAt: toDateOrNull(r.stopped_at),
  };
}

export function createHostRepository(sql: Sql): RunStore['hosts'] {
  const hosts: RunStore['hosts'] = {
    async register(h) {
      const at = new Date();
      const r = await sql.one(`INSERT INTO "hosts" ("id", "name", "kind", "machine", "pid", "started_at", "heartbeat_at") VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING ${HOST_COLS}`, [
        h.id,
        h.name,
        h.kind,
        h.machine,
        h.pid,
        at,
        at,
      ]);
      return hostRow(r!);
    },
    async get(id) {
      const r = await sql.one(`SELECT ${HOST_COLS} FROM "hosts" WHERE "id" = ?`, [id]);
      return r ? hostRow(r) : null;
    },
    async beat(id) {
      return (await sql.run(`UPDATE "hosts" SET "heartbeat_at" = ? WHERE "id" = ? AND "stopped_at" IS NULL`, [new Date(), id])) === 1;
    },
    async live() {
      return (await sql.rows(`SELECT ${HOST_COLS} FROM "hosts" WHERE "stopped_at" IS NULL ORDER BY "started_at", "id"`)).map(hostRow);
    },
    async stop(id) {
      const n = await sql.run(`UPDATE "hosts" SET "stopped_at" = ? WHERE "id" = ? AND "stopped_at" IS NULL`, [new Date(), id]);
      await hosts.release(id);
      return n === 1;
    },
    async lease(id, instruments) {
      if (!instruments.length) return [];
      const names = instruments.map((i) => i.name);
      const at = new Date();
      for (const { name, schema } of instruments) {
        // free: never leased, or leased by a host that has stopped; ours already: its schema kept current
        await sql.run(
          `INSERT INTO "instrument_leases" ("name", "host_id", "since", "schema") VALUES (?, ?, ?, ?) ON CONFLICT ("name") DO UPDATE ` +
            `SET "host_id" = excluded."host_id", "since" = CASE WHEN "instrument_leases"."host_id" = excluded."host_id" THEN "instrument_leases"."since" ELSE excluded."since" END, ` +
            `"schema" = excluded."schema" ` +
            `WHERE "instrument_leases"."host_id" = excluded."host_id" OR "instrument_leases"."host_id" IN (SELECT "id" FROM "hosts" WHERE "stopped_at" IS NOT NULL)`,
          [name, id, at, encodeJson(schema, 'schema')],
        );
      }
      const marks = names.map(() => '?').join(', ');
      const taken = await sql.rows(
        `SELECT l."name" AS "lease_name", ${hostsTable.cols({ as: 'h' })} FROM "instrument_leases" l JOIN "hosts" h ON h."id" = l."host_id" ` +
          `WHERE l."name" IN (${marks}) AND l."host_id" <> ? ORDER BY l."name"`,
        [...names, id],
      );
      return taken.map((r) => ({ name: String(r.lease_name), host: hostRow(r) }));
    },
    async catalogue() {
      const rows = await sql.rows(
        `SELECT l."name", l."schema", l."host_id", h."name" AS "host_name" FROM "instrument_leases" l JOIN "hosts" h ON h."id" = l."host_id" ` + `WHERE h."stopped_at" IS NULL ORDER BY l."name"`,
      );
      return rows.map((r) => ({ name: String(r.name), schema: decodeJson(r.schema), hostId: String(r.host_id), host: String(r.host_name) }));
    },
    async release(id, names) {
      if (!names) {
        await sql.run(`DELETE FROM "instrument_leases" WHERE "host_id" = ?`, [id]);
        return;
      }
      for (const name of names) await sql.run(`DELETE FROM "instrument_leases" WHERE "host_id" = ? AND "name" = ?`, [id, name]);
    },
  };
  return hosts;
}
