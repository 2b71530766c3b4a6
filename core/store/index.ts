/**
 * Opens the store, migrated to the latest schema on open (never `synchronize`), wrapped in the repositories
 * of types.ts: SQLite (better-sqlite3, the embedded default; ./sqlite.ts) or PostgreSQL (a TypeORM
 * DataSource, loaded only then).
 *
 *   await openStore({ dataDir: './lab-data' })                          // SQLite, ./lab-data/labdeck.db
 *   await openStore({ dataDir, url: 'sqlite::memory:' })                // SQLite in memory
 *   await openStore({ dataDir, url: 'postgres://user@host:5432/lab' })  // PostgreSQL
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { LabError } from '../errors.js';
import { migrations } from './migrations/index.js';
import { createApprovalRepository } from './approval-repos.js';
import { createOutboxRepository } from './outbox-repos.js';
import { createAttentionRepository } from './attention-repos.js';
import { createCampaignRepository } from './campaign-repos.js';
import { createRepositories } from './repos.js';
import { createResourceRepository } from './resource-repos.js';
import { createRunRepositories } from './run-repos.js';
import { createSafetyRepository } from './safety-repos.js';
import { announcingAuthChanges, signals } from './signals.js';
import { lockId, Sql, type Connection } from './sql.js';
import { migrateSqlite, openSqlite } from './sqlite.js';
import type { Store } from './types.js';

export type * from './types.js';

export interface OpenStoreOptions {
  /** `sqlite:PATH`, `sqlite::memory:`, `postgres://…` or `postgresql://…`; default SQLite in dataDir. */
  url?: string;
  /** The data directory; created if missing. Holds `labdeck.db` when no url is given. */
  dataDir: string;
  /** Log every SQL statement (TypeORM's logger). */
  logging?: boolean;
  /**
   * PostgreSQL: how long a statement, or getting a connection, may take before it fails with 503
   * `store_unavailable` (default 30 s, or LABDECK_DB_TIMEOUT_MS), so a silent database never holds a request
   * without bound. Migrations at start are not limited.
   */
  timeoutMs?: number;
}

/** The PostgreSQL time limit: the option, LABDECK_DB_TIMEOUT_MS, or 30 s. */
export function dbTimeoutMs(option?: number): number {
  const env = Number(process.env.LABDECK_DB_TIMEOUT_MS);
  return option !== undefined && option > 0 ? option : env > 0 ? env : 30_000;
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
  return new LabError('invalid_input', `Unsupported database URL "${redact(url)}": use sqlite:PATH, sqlite::memory: or postgres://user@host/db.`, [
    { field: 'db', message: 'expected sqlite:PATH, sqlite::memory: or postgres://…' },
  ]);
}

/** The URL without its password, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

/** The advisory lock that labdecks migrating one PostgreSQL database hold in turn. */
const MIGRATION_LOCK = lockId('labdeck.migrations');

/**
 * PostgreSQL: a TypeORM DataSource, migrated. Full durability (the server's default synchronous_commit=on): a
 * shared lab database keeps every committed record even if the database server itself crashes.
 */
async function openPostgres(url: string, logging: boolean, timeoutMs: number): Promise<DataSource> {
  const [{ DataSource }, { entitySchemas }] = await Promise.all([import('typeorm'), import('./entities.js')]);
  const options = (extra: object, poolSize?: number) =>
    new DataSource({
      type: 'postgres',
      url,
      applicationName: 'labdeck',
      logging,
      synchronize: false,
      migrationsRun: false,
      migrationsTransactionMode: 'all',
      entities: entitySchemas('postgres'),
      migrations,
      extra,
      ...(poolSize ? { poolSize } : {}),
    });
  // migrations (which may take long on a big database, or wait for another labdeck's) on a connection of
  // their own with no time limit; then the store's pool, every statement and connection bounded
  await migrate(options({}, 2));
  const ds = options({ connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, statement_timeout: timeoutMs, keepAlive: true });
  await ds.initialize();
  return ds;
}

/** Migrate the database, labdecks starting together taking turns; the DataSource is closed after. */
async function migrate(ds: DataSource): Promise<void> {
  try {
    await ds.initialize();
    // labdecks starting together on a new database take turns (as SQLite's BEGIN IMMEDIATE makes them):
    // the first migrates, the others then find nothing left to do instead of creating the same tables
    const lock = ds.createQueryRunner();
    try {
      await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await ds.runMigrations({ transaction: 'all' });
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      await lock.release();
    }
  } finally {
    if (ds.isInitialized) await ds.destroy().catch(() => undefined);
  }
}

/** SQLite: the file (or memory), migrated; the file and its WAL are readable by labdeck's own user only. */
async function openSqliteFile(database: string, logging: boolean) {
  const db = openSqlite(database, logging);
  try {
    await migrateSqlite(db, migrations);
  } catch (e) {
    db.close();
    throw e;
  }
  // the database holds password hashes and every record
  if (database !== ':memory:') {
    for (const f of [database, `${database}-wal`, `${database}-shm`]) if (fs.existsSync(f)) fs.chmodSync(f, 0o600);
  }
  return db;
}

/** The connection behind each open store, for tests only (see dataSourceOf). */
const connections = new WeakMap<Store, { conn: Connection; file?: string; typeorm?: Promise<DataSource> }>();

/**
 * Test hook: the TypeORM DataSource of a store, for schema checks and raw SQL in tests. PostgreSQL: the
 * store's own. SQLite, which the store opens without TypeORM: a stand-in with what tests use of one
 * (`query`, `showMigrations`, `driver.databaseConnection`, `driver.createSchemaBuilder().log()`), served by
 * a DataSource made on first use around the store's own better-sqlite3 handle (so `:memory:` works too),
 * with the entities, so that they are compared with what the migrations made.
 */
export function dataSourceOf(store: Store): DataSource {
  const c = connections.get(store);
  if (!c) throw new Error('not a store opened by openStore');
  const conn = c.conn;
  if (conn.dialect === 'postgres') return conn.ds;
  const db = conn.db;
  const typeorm = () =>
    (c.typeorm ??= (async () => {
      const [{ DataSource }, { entitySchemas }] = await Promise.all([import('typeorm'), import('./entities.js')]);
      const ds = new DataSource({
        type: 'better-sqlite3',
        database: c.file ?? ':memory:',
        driver: function Handle() {
          return db; // TypeORM's `new driver(file)` gets the store's handle
        },
        entities: entitySchemas('sqlite'),
        migrations,
      });
      await ds.initialize();
      return ds;
    })());
  const standIn = {
    query: async (sql: string, params?: unknown[]) => (await typeorm()).query(sql, params),
    showMigrations: async () => (await typeorm()).showMigrations(),
    driver: { databaseConnection: db, createSchemaBuilder: () => ({ log: async () => (await typeorm()).driver.createSchemaBuilder().log() }) },
  };
  return standIn as unknown as DataSource;
}

export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const target = parseDbUrl(opts.url, opts.dataDir);
  const where = target.dialect === 'postgres' ? redact(target.url) : target.database;
  const logging = opts.logging ?? false;
  let conn: Connection;
  try {
    conn =
      target.dialect === 'postgres'
        ? { dialect: 'postgres', ds: await openPostgres(target.url, logging, dbTimeoutMs(opts.timeoutMs)) }
        : { dialect: 'sqlite', db: await openSqliteFile(target.database, logging) };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new LabError('internal', `Cannot open the database ${where}: ${msg}`, [{ field: 'db', message: msg }]);
  }

  const sql = new Sql(conn, where);
  const wakeups = signals(conn);
  const stock = createResourceRepository(sql);
  const base = announcingAuthChanges(createRepositories(sql), wakeups);
  const runs = createRunRepositories(sql);
  const store: Store = {
    dialect: conn.dialect,
    ...base,
    // a call's record and what it used of the stock commit together (resource-repos.ts)
    steps: stock.wrapSteps(base.steps),
    ...runs,
    runSteps: {
      ...runs.runSteps,
      async markInDoubt(runId) {
        await stock.resources.markRunInDoubt(runId);
        return runs.runSteps.markInDoubt(runId);
      },
    },
    resources: stock.resources,
    campaigns: createCampaignRepository(sql),
    approvals: createApprovalRepository(sql),
    outbox: createOutboxRepository(sql),
    transaction: (fn) =>
      sql.transaction((tx) => {
        const repos = createRepositories(tx);
        const runsTx = createRunRepositories(tx);
        // a run marked in doubt inside the transaction puts its in-flight stock uses on hold in it too (resource-repos.ts)
        const markInDoubt = async (runId: number) => {
          await stock.within(tx).markRunInDoubt(runId);
          return runsTx.runSteps.markInDoubt(runId);
        };
        return fn({
          ...runsTx,
          runSteps: { ...runsTx.runSteps, markInDoubt },
          steps: stock.stepsWithin(tx, repos.steps),
          approvals: createApprovalRepository(tx),
          outbox: createOutboxRepository(tx),
          settings: repos.settings,
        });
      }),
    safety: createSafetyRepository(sql),
    attention: createAttentionRepository(sql),
    signals: wakeups,
    async close() {
      wakeups.close();
      if (conn.dialect === 'postgres') {
        if (conn.ds.isInitialized) await conn.ds.destroy();
      } else if (conn.db.open) {
        conn.db.close();
      }
    },
  };
  connections.set(store, { conn, file: target.dialect === 'sqlite' ? target.database : undefined });
  return store;
}
