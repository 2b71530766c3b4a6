/**
 * The schema the migrations make, compared with the committed snapshot of the dialect
 * (test/fixtures/store-schema/sqlite.txt, postgres.txt): tables, columns, types, nullability, defaults,
 * indexes, constraints. And a database as the labs have it (made by the statements the migrations of
 * 1733700000000 ran, recorded in test/fixtures/store-schema/<dialect>-1733700000000.sql) opens without
 * running anything again and has the same schema. Run on both: `LABDECK_TEST_DB=postgres` for PostgreSQL.
 * A migration that changes the schema on purpose rewrites the snapshot with `LABDECK_WRITE_SCHEMA=1` (and
 * the diff is reviewed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { dataSourceOf, openStore, SQLITE_FILE } from '../../core/store/index.js';
import { migrateSqlite, openSqlite, type Migration } from '../../core/store/sqlite.js';
import type { Store } from '../../core/store/types.js';
import { postgresTestDb, usingPostgres, withTestStore } from '../helpers/db.js';
import { schemaSnapshot } from '../helpers/schema-snapshot.js';

const dialect = usingPostgres() ? 'postgres' : 'sqlite';
const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '../fixtures/store-schema');
const snapshotFile = path.join(FIXTURES, `${dialect}.txt`);

/** The migrations as a lab's database ran them: one class per recorded migration, running its statements. */
function recordedMigrations(): Migration[] {
  const text = fs.readFileSync(path.join(FIXTURES, `${dialect}-1733700000000.sql`), 'utf8');
  const out: Migration[] = [];
  let statements: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^-- migration (\w+)$/.exec(line);
    if (m) {
      const name = m[1]!;
      const mine = (statements = []);
      out.push(
        class implements MigrationInterface {
          name = name;
          async up(q: QueryRunner) {
            for (const s of mine) await q.query(s);
          }
          async down() {}
        },
      );
    } else if (line && !line.startsWith('--')) {
      statements.push(line.replace(/;$/, ''));
    }
  }
  return out;
}

let store: Store;
withTestStore((t) => (store = t.store));

describe(`the store's schema (${dialect})`, () => {
  it('is the committed snapshot', async () => {
    const now = await schemaSnapshot(store);
    if (process.env.LABDECK_WRITE_SCHEMA === '1') fs.writeFileSync(snapshotFile, now);
    expect(now).toBe(fs.readFileSync(snapshotFile, 'utf8'));
  });

  it('opens a database the migrations of 1733700000000 made without running anything again, with its rows', async () => {
    const old = recordedMigrations();
    expect(old.map((M) => new M().name)).toEqual(((await dataSourceOf(store).query('SELECT "name" FROM "migrations" ORDER BY "id"')) as { name: string }[]).map((r) => r.name));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-schema-'));
    const pg = usingPostgres() ? await postgresTestDb({ empty: true }) : undefined;
    try {
      // migrated as today's main did: TypeORM on PostgreSQL, our own runner on SQLite
      const insertUser = `INSERT INTO "users" ("username", "password_hash", "role", "created_at") VALUES ('ada', 'scrypt$x', 'admin', '2024-01-01 00:00:00.000')`;
      if (pg) {
        const ds = new DataSource({ type: 'postgres', url: pg.url, migrations: old, migrationsTransactionMode: 'all' });
        await ds.initialize();
        await ds.runMigrations({ transaction: 'all' });
        await ds.query(insertUser);
        await ds.destroy();
      } else {
        const db = openSqlite(path.join(dataDir, SQLITE_FILE));
        await migrateSqlite(db, old);
        db.exec(insertUser);
        db.close();
      }
      const s = await openStore({ url: pg?.url, dataDir });
      try {
        const ran = (await dataSourceOf(s).query('SELECT "id", "name" FROM "migrations" ORDER BY "id"')) as { id: unknown; name: string }[];
        expect(ran.map((r) => [Number(r.id), r.name])).toEqual(old.map((M, i) => [i + 1, new M().name]));
        expect(await schemaSnapshot(s)).toBe(fs.readFileSync(snapshotFile, 'utf8'));
        expect((await s.users.byName('ada'))?.role).toBe('admin');
      } finally {
        await s.close();
      }
    } finally {
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
