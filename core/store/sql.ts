/**
 * A thin SQL layer over the store's connection: parameterised queries written once with `?` placeholders
 * (rewritten to `$1..$n` for PostgreSQL), portable date and JSON encoding, and recognition of constraint
 * errors. On SQLite it talks to better-sqlite3 itself (prepared statements cached by their text); on
 * PostgreSQL to a TypeORM DataSource, one round trip per statement.
 */
import type { DataSource, QueryRunner } from 'typeorm';
import { LabError, storeFailure } from '../errors.js';
import type { SqliteDb } from './sqlite.js';

export type Param = string | number | null | Date;

/** What a store talks to: better-sqlite3's database (SQLite), or a TypeORM DataSource (PostgreSQL). */
export type Connection = { dialect: 'sqlite'; db: SqliteDb } | { dialect: 'postgres'; ds: DataSource };

/** How many prepared SQLite statements are kept (as TypeORM's better-sqlite3 driver, which kept 100). */
const MAX_STATEMENTS = 200;

/** A better-sqlite3 statement, as the layer uses it. */
interface Statement {
  reader: boolean;
  get(...values: unknown[]): unknown;
  all(...values: unknown[]): unknown[];
  run(...values: unknown[]): { changes: number };
}

/** An INSERT waiting for the group commit. */
interface BatchItem {
  sql: string;
  values: unknown[];
  /** A statement without RETURNING (its count of changed rows is the answer), not an INSERT … RETURNING "id". */
  run?: boolean;
  resolve(id: number): void;
  reject(e: unknown): void;
}
export type DbRow = Record<string, unknown>;
/** One statement and its parameters (Sql.atomic). */
export interface Stmt {
  sql: string;
  params: Param[];
}

/** The open SQLite transaction's gate per database file, for every store of this process (see Sql.gate). */
const sqliteGates = new Map<string, Promise<void>>();

export class Sql {
  /** SQL text per dialect, so the `?` → `$n` rewrite happens once per statement. */
  private readonly texts = new Map<string, string>();

  constructor(
    readonly conn: Connection,
    /** Where the data lives (the SQLite file, or the PostgreSQL URL without password), for error messages. */
    readonly where = 'the database',
    /** Inside `exclusive` on PostgreSQL: the one connection (and transaction) every statement goes through. */
    private readonly runner?: QueryRunner,
    /** SQLite: this Sql runs inside `transaction` (its statements pass the gate the others wait at). */
    private readonly inTx = false,
  ) {}

  /**
   * SQLite: while a `transaction` runs, every other statement on that database file in this process waits for
   * it: this connection's, and another store's on the same file (two labdecks in one process, as the tests run
   * them). Outside the gate a statement would wait for the transaction's lock in better-sqlite3's synchronous
   * busy wait, which stops the event loop the transaction needs to finish (a 5 s stall, missed heartbeats).
   */
  private get gate(): Promise<void> | null {
    return this.conn.dialect === 'sqlite' ? (sqliteGates.get(this.conn.db.name) ?? null) : null;
  }

  private set gate(g: Promise<void> | null) {
    if (this.conn.dialect !== 'sqlite') return;
    if (g) sqliteGates.set(this.conn.db.name, g);
    else sqliteGates.delete(this.conn.db.name);
  }

  /**
   * Runs `fn`'s statements in one transaction: all of them commit, or none (an outbox event and the state
   * change that causes it, core/notify). PostgreSQL: one connection of the pool, BEGIN … COMMIT. SQLite, one
   * connection shared by every caller: BEGIN … COMMIT with every statement from outside `fn` held at a gate
   * until it ends, so no other request's statement lands inside it. `fn` must use only `tx`.
   */
  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    const c = this.conn;
    if (this.runner || this.inTx) return fn(this); // already inside one
    if (c.dialect === 'postgres') {
      const qr = c.ds.createQueryRunner();
      try {
        await qr.connect();
        await qr.startTransaction();
        const out = await fn(new Sql(c, this.where, qr));
        await qr.commitTransaction();
        return out;
      } catch (e) {
        if (qr.isTransactionActive) await qr.rollbackTransaction().catch(() => undefined);
        throw storeFailure(e, this.where);
      } finally {
        await qr.release();
      }
    }
    while (this.gate) await this.gate;
    if (this.batch.length) this.flush(c.db); // inserts asked for before: committed first, on their own
    let open!: () => void;
    this.gate = new Promise<void>((r) => (open = r));
    const tx = new Sql(c, this.where, undefined, true);
    try {
      c.db.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(tx);
        c.db.exec('COMMIT');
        return out;
      } catch (e) {
        if (c.db.inTransaction) c.db.exec('ROLLBACK');
        throw storeFailure(e, this.where);
      }
    } finally {
      this.gate = null;
      open();
    }
  }

  get dialect(): Connection['dialect'] {
    return this.conn.dialect;
  }

  /** In-process queue per `exclusive` key. */
  private readonly lockTails = new Map<string, Promise<void>>();

  /**
   * Runs `fn` holding the lab-wide lock `key`, for a read-check-write that must not interleave with another
   * (say, "is there another admin?" then demoting this one). Within this process the callers queue up. On
   * PostgreSQL, where several labdeck processes may share the database, `fn`'s statements also run in one
   * transaction holding an advisory lock named by the key, so other processes wait too. SQLite is one
   * process's database: the in-process queue is the lock, and the statements run one after another (a
   * transaction on the shared connection would take in other requests' statements).
   */
  async exclusive<T>(key: string, fn: (tx: Sql) => Promise<T>): Promise<T> {
    const prev = this.lockTails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = prev.then(() => new Promise<void>((r) => (release = r)));
    this.lockTails.set(key, tail);
    await prev;
    try {
      if (this.conn.dialect !== 'postgres') return await fn(this);
      const qr = this.conn.ds.createQueryRunner();
      try {
        await qr.connect();
        await qr.startTransaction();
        const tx = new Sql(this.conn, this.where, qr);
        await tx.rows(`SELECT pg_advisory_xact_lock(CAST(? AS bigint))`, [lockId(key)]);
        const out = await fn(tx);
        await qr.commitTransaction();
        return out;
      } catch (e) {
        if (qr.isTransactionActive) await qr.rollbackTransaction().catch(() => undefined);
        throw storeFailure(e, this.where);
      } finally {
        await qr.release();
      }
    } finally {
      release();
      if (this.lockTails.get(key) === tail) this.lockTails.delete(key);
    }
  }

  /**
   * Statements that commit together or not at all (a call's record and the stock it changed, issue 32):
   * `first` runs, then each statement `then` makes from first's RETURNING row (or null). SQLite: one
   * synchronous better-sqlite3 transaction, so no other request's statement falls inside it; PostgreSQL: one
   * transaction on a connection of its own. Returns first's row.
   */
  async atomic(first: Stmt, then: (row: DbRow | null) => Stmt[]): Promise<DbRow | null> {
    const c = this.conn;
    if (c.dialect === 'sqlite') {
      // a `transaction` open on the shared connection: wait at its gate, or these statements would land in it
      if (!this.inTx) while (this.gate) await this.gate;
      const exec = (st: Stmt): DbRow | null => {
        refuseNul(st.params);
        const prepared = this.statement(c.db, st.sql);
        const values = st.params.map((p) => (p instanceof Date ? this.encodeDate(p) : p));
        if (prepared.reader) return (prepared.get(...values) as DbRow | undefined) ?? null;
        prepared.run(...values);
        return null;
      };
      try {
        return c.db.transaction(() => {
          const row = exec(first);
          for (const st of then(row)) exec(st);
          return row;
        })();
      } catch (e) {
        throw storeFailure(e, this.where);
      }
    }
    const qr = this.runner ?? c.ds.createQueryRunner();
    const own = !this.runner;
    try {
      if (own) {
        await qr.connect();
        await qr.startTransaction();
      }
      const run = async (st: Stmt) => {
        refuseNul(st.params);
        const res = await qr.query(this.text(st.sql), st.params, true);
        return (Array.isArray(res.records) ? (res.records[0] as DbRow | undefined) : undefined) ?? null;
      };
      const row = await run(first);
      for (const st of then(row)) await run(st);
      if (own) await qr.commitTransaction();
      return row;
    } catch (e) {
      if (own && qr.isTransactionActive) await qr.rollbackTransaction().catch(() => undefined);
      throw storeFailure(e, this.where);
    } finally {
      if (own) await qr.release();
    }
  }

  /** Runs a statement; returns the rows it produced (SELECT, or any statement with RETURNING). */
  async rows<T = DbRow>(sql: string, params: Param[] = []): Promise<T[]> {
    return (await this.exec(sql, params)).records as T[];
  }

  /** Runs a statement; returns the first row or null. */
  async one<T = DbRow>(sql: string, params: Param[] = []): Promise<T | null> {
    const rows = await this.rows<T>(sql, params);
    return rows[0] ?? null;
  }

  /** Runs a statement without RETURNING; returns the number of rows it changed. */
  async run(sql: string, params: Param[] = []): Promise<number> {
    return (await this.exec(sql, params)).affected ?? 0;
  }

  /**
   * An INSERT … RETURNING "id" on the hot path. On SQLite, the inserts asked for in one turn of the event
   * loop are committed together in one transaction (group commit): under concurrent calls that is one WAL
   * write instead of one per call, and each caller still gets its id only after the commit. better-sqlite3 is
   * synchronous, so nothing else can run inside that transaction. A batch that fails is retried one by one,
   * so one bad row fails only its own caller. PostgreSQL: one statement per call.
   */
  insertId(sql: string, params: Param[]): Promise<number> {
    const c = this.conn;
    if (c.dialect !== 'sqlite' || this.inTx) return this.one<{ id: unknown }>(sql, params).then((r) => Number(r!.id));
    refuseNul(params);
    return new Promise((resolve, reject) => {
      this.batch.push({ sql, values: params.map((p) => (p instanceof Date ? this.encodeDate(p) : p)), resolve, reject });
      if (this.batch.length === 1) setImmediate(() => this.flush(c.db));
    });
  }

  /**
   * An INSERT … RETURNING "id" committed now, in a transaction of its own, after the inserts waiting for the
   * group commit (SQLite; PostgreSQL, or inside a transaction: as `insertId`). For a record that must exist
   * before what it records goes on, while something is held: a call's record is begun while its instrument
   * is held, and waiting for the group commit's turn of the event loop would hold the instrument that long
   * (every call to one instrument would take a turn of the loop).
   */
  insertIdNow(sql: string, params: Param[]): Promise<number> {
    const c = this.conn;
    if (c.dialect !== 'sqlite' || this.inTx || this.gate) return this.insertId(sql, params);
    try {
      refuseNul(params);
    } catch (e) {
      return Promise.reject(e);
    }
    // with what waits for the group commit, in its transaction: one commit (a call's record begun, the records
    // of calls that ended meanwhile completed); the answer is settled by the time this returns
    return new Promise((resolve, reject) => {
      this.batch.push({ sql, values: params.map((p) => (p instanceof Date ? this.encodeDate(p) : p)), resolve, reject });
      this.flush(c.db);
    });
  }

  /**
   * An UPDATE (or other statement without RETURNING) on the hot path, committed with the group commit's
   * inserts of this turn of the event loop (SQLite; PostgreSQL, or inside a transaction: `run`): a call's
   * record completed, once its instrument is let go. Answers the number of rows it changed, once committed.
   */
  runQueued(sql: string, params: Param[]): Promise<number> {
    const c = this.conn;
    if (c.dialect !== 'sqlite' || this.inTx) return this.run(sql, params);
    refuseNul(params);
    return new Promise((resolve, reject) => {
      this.batch.push({ sql, values: params.map((p) => (p instanceof Date ? this.encodeDate(p) : p)), run: true, resolve, reject });
      if (this.batch.length === 1) setImmediate(() => this.flush(c.db));
    });
  }

  private batch: BatchItem[] = [];
  /** SQLite's prepared statements, by their text. */
  private readonly statements = new Map<string, Statement>();
  /** The group commit's transactions, made once (better-sqlite3 wraps each function anew). */
  private commits: { all: (items: BatchItem[]) => number[]; one: (item: BatchItem) => number } | null = null;

  private transactions(db: SqliteDb): NonNullable<Sql['commits']> {
    if (!this.commits) {
      const insert = (i: BatchItem) => (i.run ? this.statement(db, i.sql).run(...i.values).changes : Number((this.statement(db, i.sql).get(...i.values) as { id: unknown }).id));
      this.commits = { all: db.transaction((all: BatchItem[]) => all.map(insert)), one: db.transaction(insert) };
    }
    return this.commits;
  }

  private statement(db: SqliteDb, text: string): Statement {
    let st = this.statements.get(text);
    if (!st) {
      this.statements.set(text, (st = db.prepare(text) as unknown as Statement));
      // bounded: a statement whose text varies (a list of ids, say) must not grow the cache for ever
      if (this.statements.size > MAX_STATEMENTS) this.statements.delete(this.statements.keys().next().value!);
    }
    return st;
  }

  private flush(db: SqliteDb) {
    if (this.gate) return void this.gate.then(() => this.flush(db)); // a transaction runs: after it
    const items = this.batch;
    this.batch = [];
    const { all, one } = this.transactions(db);
    try {
      const ids = all(items);
      items.forEach((i, n) => i.resolve(ids[n]!));
    } catch {
      for (const i of items) {
        try {
          // each in a transaction of its own: an id is handed out only once its commit succeeded (outside
          // one, a RETURNING row comes back even when the commit then fails, e.g. on a full disk)
          i.resolve(one(i));
        } catch (e) {
          i.reject(storeFailure(e, this.where));
        }
      }
    }
  }

  private async exec(sql: string, params: Param[]): Promise<{ records: unknown[]; affected?: number }> {
    while (this.gate && !this.inTx) await this.gate;
    refuseNul(params);
    const text = this.text(sql);
    const values = params.map((p) => (p instanceof Date ? this.encodeDate(p) : p));
    const c = this.conn;
    if (c.dialect === 'sqlite') {
      try {
        const st = this.statement(c.db, text);
        if (st.reader) return { records: st.all(...values) };
        return { records: [], affected: st.run(...values).changes };
      } catch (e) {
        throw storeFailure(e, this.where);
      }
    }
    // a pooled connection for this one statement (inside `exclusive`: its own)
    const qr = this.runner ?? c.ds.createQueryRunner();
    try {
      const res = await qr.query(text, values, true);
      return { records: Array.isArray(res.records) ? res.records : [], affected: res.affected };
    } catch (e) {
      throw storeFailure(e, this.where);
    } finally {
      if (!this.runner) await qr.release();
    }
  }

  private text(sql: string): string {
    if (this.dialect === 'sqlite') return sql;
    let t = this.texts.get(sql);
    if (t === undefined) {
      let n = 0;
      t = sql.replace(/\?/g, () => `$${++n}`);
      this.texts.set(sql, t);
    }
    return t;
  }

  /** SQLite keeps UTC text in TypeORM's own `datetime` format; pg sends a Date as a zoned timestamp. */
  private encodeDate(d: Date): string | Date {
    if (Number.isNaN(d.getTime())) throw new LabError('invalid_input', 'Invalid date.');
    if (this.dialect === 'postgres') return d;
    return d.toISOString().replace('T', ' ').slice(0, 23);
  }
}

/** The advisory lock number of an `exclusive` key (FNV-1a: the same in every process). */
export function lockId(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Text may not hold the NUL character: PostgreSQL refuses it, and no name, note or search needs it (JSON
 * values carry it escaped). Refused the same way on both databases, with a 400.
 */
function refuseNul(params: Param[]): void {
  for (const p of params) {
    if (typeof p === 'string' && p.includes('\u0000')) throw new LabError('invalid_input', 'Text may not contain the NUL character (\\u0000).');
  }
}

/** A Date from whatever the driver returned: a Date (pg), UTC text (SQLite), or epoch milliseconds. */
export function toDate(v: unknown): Date {
  if (v instanceof Date) return v;
  if (typeof v === 'number') return new Date(v);
  if (typeof v === 'string') {
    let s = v;
    if (/^\d{4}-\d\d-\d\d \d/.test(s)) s = s.replace(' ', 'T');
    // Text without a zone was written as UTC.
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(s)) s += 'Z';
    return new Date(s);
  }
  throw new LabError('internal', `Unexpected date value from the database: ${String(v)}`);
}

export function toDateOrNull(v: unknown): Date | null {
  return v === null || v === undefined ? null : toDate(v);
}

/** Integers come back as strings from pg for bigint and COUNT(*). */
export function toInt(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}

export function toIntOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : toInt(v);
}

/** JSON text for a value; undefined becomes SQL NULL. BigInts are stored as decimal strings. */
export function encodeJson(value: unknown, field: string): string | null {
  if (value === undefined) return null;
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new LabError('invalid_input', `The ${field} cannot be stored as JSON: ${msg}`, [{ field, message: `not JSON-serialisable: ${msg}` }]);
  }
}

export function decodeJson(text: unknown): unknown {
  return text === null || text === undefined ? null : JSON.parse(String(text));
}

/** The driver's error code: through TypeORM (a QueryFailedError's driverError), or straight from better-sqlite3. */
function driverCode(e: unknown): string | undefined {
  const err = e as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = err?.driverError ? err.driverError.code : err?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A UNIQUE or PRIMARY KEY violation, on either dialect. */
export function isUniqueViolation(e: unknown): boolean {
  const c = driverCode(e);
  return c === '23505' || c === 'SQLITE_CONSTRAINT_UNIQUE' || c === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A FOREIGN KEY violation, on either dialect. */
export function isForeignKeyViolation(e: unknown): boolean {
  const c = driverCode(e);
  return c === '23503' || c === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
