/**
 * Test databases. By default a SQLite store in a fresh temp directory; with LABDECK_TEST_DB=postgres, a
 * fresh PostgreSQL database `labdeck_test_<random>` on the local server (LABDECK_TEST_PG_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), dropped again by cleanup().
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { openStore } from '../../core/store/index.js';
import type { Store } from '../../core/store/types.js';

const ADMIN_URL = process.env.LABDECK_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const usingPostgres = (): boolean => process.env.LABDECK_TEST_DB === 'postgres';

async function admin(sql: string): Promise<void> {
  // Through TypeORM (there are no type declarations for `pg` in this project).
  const ds = new DataSource({ type: 'postgres', url: ADMIN_URL, poolSize: 1 });
  await ds.initialize();
  try {
    await ds.query(sql);
  } finally {
    await ds.destroy();
  }
}

/**
 * A database URL for a test that opens a whole runtime itself: undefined (SQLite in the runtime's data
 * dir) by default, or a freshly created PostgreSQL database; drop() removes it.
 */
export async function testDbUrl(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  if (!usingPostgres()) return { url: undefined, drop: async () => undefined };
  return postgresTestDb();
}

const urlOf = (name: string): string => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
};

/**
 * The migrated template every test database is copied from (a copy takes ~0.1 s; migrating a new database
 * takes seconds). It is named by a hash of the migrations' sources, so a changed migration makes a new one;
 * an advisory lock lets one jest worker build it while the others wait. Older templates are dropped but the
 * newest few: test runs of several branches (other migrations) may share one server, and one must not drop
 * the template another is copying from (should it happen, postgresTestDb builds it again).
 */
const KEEP_TEMPLATES = 4;
let template: Promise<string> | undefined;
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const store = path.join(path.dirname(new URL(import.meta.url).pathname), '../../core/store');
    const hash = crypto.createHash('sha256');
    // the migrations and the words they are written in
    for (const f of [
      ...fs
        .readdirSync(path.join(store, 'migrations'))
        .sort()
        .map((f) => `migrations/${f}`),
      'columns.ts',
    ]) {
      hash.update(f).update(fs.readFileSync(path.join(store, f)));
    }
    const name = `labdeck_tpl_${hash.digest('hex').slice(0, 12)}`;
    const ds = new DataSource({ type: 'postgres', url: ADMIN_URL, poolSize: 1 });
    await ds.initialize();
    try {
      await ds.query('SELECT pg_advisory_lock(7421001)');
      if (!(await ds.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length) {
        const building = `${name}_building`;
        await ds.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
        await ds.query(`CREATE DATABASE "${building}"`);
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-tpl-'));
        try {
          await (await openStore({ url: urlOf(building), dataDir })).close();
        } finally {
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
        await ds.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
      }
      const others = (await ds.query("SELECT datname FROM pg_database WHERE datname LIKE 'labdeck\\_tpl\\_%' AND datname NOT LIKE '%\\_building' AND datname <> $1 ORDER BY oid DESC", [name])) as {
        datname: string;
      }[];
      for (const { datname } of others.slice(KEEP_TEMPLATES - 1)) await ds.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    } finally {
      await ds.query('SELECT pg_advisory_unlock(7421001)').catch(() => undefined);
      await ds.destroy();
    }
    return name;
  })();
  template.catch(() => (template = undefined)); // a failed build is tried again by the next test
  return template;
}

/**
 * A fresh PostgreSQL database (whatever LABDECK_TEST_DB says), for tests of several processes on one database:
 * a copy of the migrated template, or (`empty`) a database nothing has migrated yet.
 */
export async function postgresTestDb(opts: { empty?: boolean } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `labdeck_test_${crypto.randomBytes(6).toString('hex')}`;
  if (opts.empty) {
    await admin(`CREATE DATABASE "${name}"`);
  } else {
    try {
      await admin(`CREATE DATABASE "${name}" TEMPLATE "${await migratedTemplate()}"`);
    } catch (e) {
      // the template was dropped meanwhile (another branch's test run): built again, once
      if ((e as { driverError?: { code?: string } }).driverError?.code !== '3D000') throw e;
      template = undefined;
      await admin(`CREATE DATABASE "${name}" TEMPLATE "${await migratedTemplate()}"`);
    }
  }
  return { url: urlOf(name), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

export interface TestStore {
  store: Store;
  url: string | undefined;
  dataDir: string;
  cleanup(): Promise<void>;
}

export async function testStore(): Promise<TestStore> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-test-'));
  const db = await testDbUrl();
  let store: Store;
  try {
    store = await openStore({ url: db.url, dataDir });
  } catch (e) {
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    store,
    url: db.url,
    dataDir,
    async cleanup() {
      await store.close();
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * For a test file (or a describe block): a test store opened before its tests and handed to `use`, closed
 * and removed after them.
 */
export function withTestStore(use: (t: TestStore) => void): void {
  let cleanup: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const t = await testStore();
    cleanup = t.cleanup;
    use(t);
  });
  afterAll(async () => {
    await cleanup?.();
  });
}
