/**
 * Opens the store: a TypeORM DataSource on SQLite (better-sqlite3, the embedded default) or PostgreSQL,
 * migrated to the latest schema on open (never `synchronize`), wrapped in the repositories of types.ts.
 *
 *   await openStore({ dataDir: './lab-data' })                          // SQLite, ./lab-data/labdeck.db
 *   await openStore({ dataDir, url: 'sqlite::memory:' })                // SQLite in memory
 *   await openStore({ dataDir, url: 'postgres://user@host:5432/lab' })  // PostgreSQL
 */
import fs from 'node:fs';
import path from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { LabError } from '../errors.js';
import { entitySchemas, type Dialect } from './entities.js';
import { postgresMigrations } from './migrations/postgres/index.js';
import { sqliteMigrations } from './migrations/sqlite/index.js';
import { createApprovalRepository } from './approval-repos.js';
import { createRepositories } from './repos.js';
import { createRunRepositories } from './run-repos.js';
import { announcingAuthChanges, signals } from './signals.js';
import { Sql } from './sql.js';
import type { Store } from './types.js';

export type * from './types.js';

export interface OpenStoreOptions {
  /** `sqlite:PATH`, `sqlite::memory:`, `postgres://…` or `postgresql://…`; default SQLite in dataDir. */
  url?: string;
  /** The data directory; created if missing. Holds `labdeck.db` when no url is given. */
  dataDir: string;
  /** Log every SQL statement (TypeORM's logger). */
  logging?: boolean;
}

/** File name of the default SQLite database inside the data directory. */
export const SQLITE_FILE = 'labdeck.db';

type Target = { dialect: 'sqlite'; database: string } | { dialect: 'postgres'; url: string };

/** Reads the connection target from the url option. Relative SQLite paths are taken from the cwd. */
export function parseDbUrl(url: string | undefined, dataDir: string): Target {
  if (!url) return { dialect: 'sqlite', database: path.join(dataDir, SQLITE_FILE) };
  if (/^postgres(ql)?:\/\//i.test(url)) return { dialect: 'postgres', url };
  if (/^sqlite:/i.test(url)) {
    let p = url.slice('sqlite:'.length);
    if (p.startsWith('//')) p = p.slice(2); // sqlite:///abs/path or sqlite://rel/path
    if (p === ':memory:') return { dialect: 'sqlite', database: ':memory:' };
    if (!p) throw badUrl(url);
    return { dialect: 'sqlite', database: path.resolve(p) };
  }
  throw badUrl(url);
}

function badUrl(url: string): LabError {
  return new LabError(
    'invalid_input',
    `Unsupported database URL "${redact(url)}": use sqlite:PATH, sqlite::memory: or postgres://user@host/db.`,
    [{ field: 'db', message: 'expected sqlite:PATH, sqlite::memory: or postgres://…' }],
  );
}

/** The URL without its password, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

function dataSourceOptions(t: Target, logging: boolean): DataSourceOptions {
  const common = { logging, synchronize: false, migrationsRun: false, migrationsTransactionMode: 'all' as const };
  if (t.dialect === 'postgres') {
    return {
      ...common,
      type: 'postgres',
      url: t.url,
      applicationName: 'labdeck',
      // Full durability (the server's default synchronous_commit=on): a shared lab database keeps every
      // committed record even if the database server itself crashes.
      entities: entitySchemas('postgres'),
      migrations: postgresMigrations,
    };
  }
  return {
    ...common,
    type: 'better-sqlite3',
    database: t.database,
    enableWAL: true, // readers never block the writer; the driver also turns foreign_keys on
    timeout: 5000, // busy timeout (ms) when another process holds the write lock
    // WAL + NORMAL: no fsync per commit (a power cut may lose the last commits, never corrupts). This is
    // what makes several thousand step inserts per second possible.
    prepareDatabase: (db: { pragma(s: string): unknown }) => {
      db.pragma('synchronous = NORMAL');
    },
    entities: entitySchemas('sqlite'),
    migrations: sqliteMigrations,
  };
}

/** The DataSource behind each open store, for tests (schema drift check) only. */
const dataSources = new WeakMap<Store, DataSource>();

/** Test hook: the TypeORM DataSource of a store opened by openStore. */
export function dataSourceOf(store: Store): DataSource {
  const ds = dataSources.get(store);
  if (!ds) throw new Error('not a store opened by openStore');
  return ds;
}

export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const target = parseDbUrl(opts.url, opts.dataDir);
  const dialect: Dialect = target.dialect;
  const ds = new DataSource(dataSourceOptions(target, opts.logging ?? false));
  const where = target.dialect === 'postgres' ? redact(target.url) : target.database;
  try {
    await ds.initialize();
    await ds.runMigrations({ transaction: 'all' });
    // the database holds password hashes and every record: readable by labdeck's own user only
    if (target.dialect === 'sqlite' && target.database !== ':memory:') {
      for (const f of [target.database, `${target.database}-wal`, `${target.database}-shm`]) if (fs.existsSync(f)) fs.chmodSync(f, 0o600);
    }
  } catch (e) {
    if (ds.isInitialized) await ds.destroy().catch(() => undefined);
    const msg = e instanceof Error ? e.message : String(e);
    throw new LabError('internal', `Cannot open the database ${where}: ${msg}`, [{ field: 'db', message: msg }]);
  }

  const sql = new Sql(ds, dialect, where);
  const wakeups = signals(ds, dialect);
  const store: Store = {
    dialect,
    ...announcingAuthChanges(createRepositories(sql), wakeups),
    ...createRunRepositories(sql),
    approvals: createApprovalRepository(sql),
    signals: wakeups,
    async close() {
      wakeups.close();
      if (ds.isInitialized) await ds.destroy();
    },
  };
  dataSources.set(store, ds);
  return store;
}
