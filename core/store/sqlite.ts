/**
 * SQLite without an ORM: the embedded default database, opened with better-sqlite3 and migrated by a small
 * runner of our own. TypeORM (about 3 MB of code, 150+ ms of a cold start) is loaded only for PostgreSQL;
 * the files stay what TypeORM made and reads: the same connection settings, and the same `migrations` table,
 * so a database made by either opens with the other (test/unit/store*.test.ts check both ways).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { MigrationInterface, QueryRunner } from 'typeorm';

export type SqliteDb = Database.Database;
export type Migration = new () => MigrationInterface;

/** How long a statement waits for another process's write lock before it fails with SQLITE_BUSY (ms). */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating it and its folder if need be) the database file, or `:memory:`: WAL (readers never block
 * the writer), foreign keys on, and synchronous NORMAL (no fsync per commit: a power cut may lose the last
 * commits, never corrupts; this is what makes several thousand step inserts per second possible).
 * `logging` prints every statement.
 */
export function openSqlite(file: string, logging = false): SqliteDb {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS, verbose: logging ? (s) => console.log(`sql: ${String(s)}`) : undefined });
  try {
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('journal_mode = WAL');
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

/** TypeORM's table of the migrations a database has run (its DDL, so that TypeORM reads ours and we read its). */
const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "migrations" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "timestamp" bigint NOT NULL, "name" varchar NOT NULL)`;

/**
 * Runs the migrations the database has not run yet, in order, all in one transaction (as TypeORM's
 * `transaction: 'all'`), and records each in the `migrations` table as TypeORM does: by its name, with the
 * timestamp its name ends with. A database with nothing to run is only read. Otherwise the transaction
 * takes the write lock first, so a second process opening the same new file waits for the first and then
 * finds nothing left to do. Returns the names it ran.
 */
export async function migrateSqlite(db: SqliteDb, migrations: Migration[]): Promise<string[]> {
  // Two stores opening one file in this process take turns: the second's BEGIN IMMEDIATE would otherwise
  // block the thread (better-sqlite3 waits synchronously) that the first needs to finish and commit.
  const previous = migrating.get(db.name) ?? Promise.resolve();
  const mine = previous.then(() => migrate(db, migrations));
  const tail = mine.catch(() => undefined);
  migrating.set(db.name, tail);
  try {
    return await mine;
  } finally {
    if (migrating.get(db.name) === tail) migrating.delete(db.name);
  }
}

/** A migration's name, as TypeORM records it (its `name`, else its class's). */
const nameOf = (M: Migration): string => new M().name ?? M.name;

/** The names in the `migrations` table (none when there is no such table yet). */
function ranBefore(db: SqliteDb): Set<unknown> {
  const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE "type" = 'table' AND "name" = 'migrations'`).get();
  return new Set(table ? db.prepare('SELECT "name" FROM "migrations"').pluck().all() : []);
}

/** The migration in progress per database file in this process. */
const migrating = new Map<string, Promise<unknown>>();

async function migrate(db: SqliteDb, migrations: Migration[]): Promise<string[]> {
  // the migrations' `up(queryRunner)` use only `query(sql, params)`: TypeORM's answer for a statement
  // that returns rows is the rows, for one that does not the last inserted row id; and the dialect
  // (migrations/ddl.ts reads it from `connection.options.type`, as on TypeORM's own runners)
  const runner = {
    connection: { options: { type: 'better-sqlite3' } },
    query: async (sql: string, params: unknown[] = []) => {
      const st = db.prepare(sql);
      return st.reader ? st.all(...params) : st.run(...params).lastInsertRowid;
    },
  } as unknown as QueryRunner;
  const ran: string[] = [];
  // an up-to-date database (every start but the first) is only read: no write lock to wait for
  const before = ranBefore(db);
  if (migrations.every((M) => before.has(nameOf(M)))) return ran;
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(MIGRATIONS_TABLE);
    const done = ranBefore(db);
    const record = db.prepare('INSERT INTO "migrations" ("timestamp", "name") VALUES (?, ?)');
    for (const M of migrations) {
      const name = nameOf(M);
      if (done.has(name)) continue;
      const timestamp = Number(name.slice(-13));
      if (!Number.isInteger(timestamp)) throw new Error(`Migration ${name}: its name must end with a 13-digit timestamp.`);
      await new M().up(runner);
      record.run(timestamp, name);
      ran.push(name);
    }
    db.exec('COMMIT');
  } catch (e) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw e;
  }
  return ran;
}
