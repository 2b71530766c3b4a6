/**
 * The safety guard's documents (core/safety): `file`, the lab-wide safety file on PostgreSQL, and `states`,
 * the deck's tracked states (what `set_by` calls and people said). Each write moves the row's `version`, so a
 * labdeck sees another's edit by reading one integer.
 */
import { Sql, toDate, toInt, toIntOrNull, type DbRow } from './sql.js';
import type { SafetyDocRow, Store } from './types.js';
import { safetyDocs } from './tables.js';

function docRow(r: DbRow): SafetyDocRow {
  return { name: String(r.name), body: String(r.body), version: toInt(r.version), updatedAt: toDate(r.updated_at), updatedBy: toIntOrNull(r.updated_by) };
}

export function createSafetyRepository(sql: Sql): Store['safety'] {
  return {
    async get(name) {
      const r = await sql.one(`SELECT ${safetyDocs.cols()} FROM "safety_docs" WHERE "name" = ?`, [name]);
      return r ? docRow(r) : null;
    },
    async put(name, body, userId) {
      const r = await sql.one(
        `INSERT INTO "safety_docs" ("name", "body", "version", "updated_at", "updated_by") VALUES (?, ?, 1, ?, ?) ` +
          `ON CONFLICT ("name") DO UPDATE SET "body" = excluded."body", "version" = "safety_docs"."version" + 1, "updated_at" = excluded."updated_at", "updated_by" = excluded."updated_by" ` +
          `RETURNING "version"`,
        [name, body, new Date(), userId],
      );
      return toInt(r!.version);
    },
    async versions() {
      const rows = await sql.rows(`SELECT "name", "version" FROM "safety_docs"`);
      return Object.fromEntries(rows.map((r) => [String(r.name), toInt(r.version)]));
    },
  };
}
