/**
 * The repositories behind the Store interface, in portable SQL (see sql.ts). Rows are mapped to the
 * camelCase shapes of types.ts here: dates become Date objects, JSON text is parsed, pg's bigint strings
 * become numbers.
 */
import { LabError } from '../errors.js';
import { boundedStepCols, encodeOutput, keyedLock, notFound, oneOf, same, setClause, stepRow, type Encoders } from './codec.js';
import { SHOWN_RESULT_CHARS, maxResultBytes } from '../result-limit.js';
import { Sql, decodeJson, encodeJson, isForeignKeyViolation, isUniqueViolation, toDate, toDateOrNull, toInt, toIntOrNull, type DbRow, type Param } from './sql.js';
import type { AuditRow, MethodPrefs, NewStep, Role, RunStore, StepRow, Store, TokenRow, UserRow } from './types.js';
import { apiTokens, auditLog, users } from './tables.js';

const ROLES: readonly Role[] = ['admin', 'operator'];
const STEP_STATUSES: readonly StepRow['status'][] = ['ok', 'error', 'running', 'in-doubt', 'skipped', 'blocked'];

/** A token's last-used time is written at most this often, so busy scripts do not write on every request. */
const TOKEN_TOUCH_MS = 60_000;

const USER_COLS = users.cols();
const TOKEN_COLS = apiTokens.cols({ except: ['tokenHash'] }); // the hash is never read back
export const INSERT_STEP =
  `INSERT INTO "steps" ("run_id", "phase", "iteration", "step_index", "instrument", "method", "args", ` +
  `"output", "status", "error", "user_id", "started_at", "ended_at", "log") ` +
  `VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING "id"`;

const checkStatus = (s: string) => oneOf(s, STEP_STATUSES, 'status');

/** NewStep field → column, with the encoder for its value. */
export const STEP_FIELDS: Encoders<NewStep> = {
  runId: ['run_id', same],
  phase: ['phase', same],
  iteration: ['iteration', same],
  stepIndex: ['step_index', same],
  instrument: ['instrument', same],
  method: ['method', same],
  args: ['args', (v) => encodeJson(v, 'args')],
  output: ['output', (v) => encodeOutput(v)],
  status: ['status', checkStatus],
  error: ['error', same],
  userId: ['user_id', same],
  startedAt: ['started_at', same],
  endedAt: ['ended_at', same],
  log: ['log', (v) => v ?? null],
};

/** The parameters of INSERT_STEP for a new step. */
export function stepParams(s: NewStep): Param[] {
  return [
    s.runId,
    s.phase,
    s.iteration,
    s.stepIndex,
    s.instrument,
    s.method,
    encodeJson(s.args, 'args'),
    encodeOutput(s.output),
    checkStatus(s.status),
    s.error,
    s.userId,
    s.startedAt,
    s.endedAt,
    s.log ?? null,
  ];
}

function userRow(r: DbRow): UserRow {
  return {
    id: toInt(r.id),
    username: String(r.username),
    passwordHash: String(r.password_hash),
    role: r.role as Role,
    createdAt: toDate(r.created_at),
    disabledAt: toDateOrNull(r.disabled_at),
    deletedAt: toDateOrNull(r.deleted_at),
  };
}

function tokenRow(r: DbRow): TokenRow {
  return {
    id: toInt(r.id),
    userId: toInt(r.user_id),
    name: String(r.name),
    prefix: String(r.prefix),
    createdAt: toDate(r.created_at),
    lastUsedAt: toDateOrNull(r.last_used_at),
  };
}

const userNotFound = (userId: number) => notFound('user', userId, 'userId');

/** The repositories of users, sessions, tokens, prefs, steps, audit and settings (run-repos.ts: the rest). */
export function createRepositories(
  sql: Sql,
): Omit<Store, 'dialect' | 'close' | 'signals' | 'approvals' | 'outbox' | 'transaction' | 'resources' | 'campaigns' | 'safety' | 'attention' | keyof RunStore> {
  const withLock = keyedLock();

  const users: Store['users'] = {
    async count() {
      const r = await sql.one<DbRow>(`SELECT COUNT(*) AS "n" FROM "users"`);
      return toInt(r?.n ?? 0);
    },
    async list() {
      return (await sql.rows(`SELECT ${USER_COLS} FROM "users" WHERE "deleted_at" IS NULL ORDER BY "id"`)).map(userRow);
    },
    async byId(id) {
      const r = await sql.one(`SELECT ${USER_COLS} FROM "users" WHERE "id" = ?`, [id]);
      return r ? userRow(r) : null;
    },
    async byName(username) {
      // Plain `=`: case-sensitive on both dialects (SQLite's default BINARY collation).
      const r = await sql.one(`SELECT ${USER_COLS} FROM "users" WHERE "username" = ?`, [username]);
      return r ? userRow(r) : null;
    },
    async create(u) {
      oneOf(u.role, ROLES, 'role');
      try {
        const r = await sql.one(`INSERT INTO "users" ("username", "password_hash", "role", "created_at") VALUES (?, ?, ?, ?) ` + `RETURNING ${USER_COLS}`, [
          u.username,
          u.passwordHash,
          u.role,
          new Date(),
        ]);
        return userRow(r!);
      } catch (e) {
        if (isUniqueViolation(e)) {
          throw new LabError('conflict', `The username "${u.username}" is already taken.`, [{ field: 'username', message: 'already taken' }]);
        }
        throw e;
      }
    },
    async setPassword(id, passwordHash) {
      const n = await sql.run(`UPDATE "users" SET "password_hash" = ? WHERE "id" = ? AND "deleted_at" IS NULL`, [passwordHash, id]);
      if (n === 0) throw userNotFound(id);
    },
    async change(id, patch, check) {
      // one at a time lab-wide: "is there another admin?" and the change that depends on it never interleave
      return sql.exclusive('users.change', async (tx) => {
        const r = await tx.one(`SELECT ${USER_COLS} FROM "users" WHERE "id" = ? AND "deleted_at" IS NULL`, [id]);
        if (!r) return null;
        const user = userRow(r);
        if (check) {
          const others = await tx.one<DbRow>(`SELECT COUNT(*) AS "n" FROM "users" WHERE "role" = 'admin' AND "disabled_at" IS NULL AND "deleted_at" IS NULL AND "id" <> ?`, [id]);
          check(user, toInt(others?.n ?? 0));
        }
        const sets: string[] = [];
        const params: Param[] = [];
        if (patch.role !== undefined) {
          sets.push(`"role" = ?`);
          params.push(oneOf(patch.role, ROLES, 'role'));
        }
        if (patch.disabled !== undefined) {
          sets.push(`"disabled_at" = ?`);
          params.push(patch.disabled ? (user.disabledAt ?? new Date()) : null);
        }
        if (patch.deleted) {
          // no password hash verifies against '!': the account can never log in again
          sets.push(`"deleted_at" = ?`, `"password_hash" = ?`);
          params.push(new Date(), '!');
        }
        if (sets.length) await tx.run(`UPDATE "users" SET ${sets.join(', ')} WHERE "id" = ?`, [...params, id]);
        if (patch.deleted) {
          await tx.run(`DELETE FROM "api_tokens" WHERE "user_id" = ?`, [id]);
          await tx.run(`DELETE FROM "method_prefs" WHERE "user_id" = ?`, [id]);
        }
        return userRow((await tx.one(`SELECT ${USER_COLS} FROM "users" WHERE "id" = ?`, [id]))!);
      });
    },
  };

  const sessions: Store['sessions'] = {
    async get(sid) {
      // An expired session is as good as gone, even before prune() deletes it.
      const r = await sql.one(`SELECT "data", "expires_at" FROM "sessions" WHERE "sid" = ? AND "expires_at" > ?`, [sid, new Date()]);
      return r ? { data: String(r.data), expiresAt: toDate(r.expires_at) } : null;
    },
    async create(sid, data, expiresAt) {
      await sql.run(`INSERT INTO "sessions" ("sid", "data", "expires_at") VALUES (?, ?, ?)`, [sid, data, expiresAt]);
    },
    async update(sid, data, expiresAt) {
      // never an upsert: a session deleted while a request of its cookie was in flight stays deleted
      return (await sql.run(`UPDATE "sessions" SET "data" = ?, "expires_at" = ? WHERE "sid" = ?`, [data, expiresAt, sid])) > 0;
    },
    async touch(sid, expiresAt) {
      await sql.run(`UPDATE "sessions" SET "expires_at" = ? WHERE "sid" = ?`, [expiresAt, sid]);
    },
    async destroy(sid) {
      await sql.run(`DELETE FROM "sessions" WHERE "sid" = ?`, [sid]);
    },
    async prune(now = new Date()) {
      return sql.run(`DELETE FROM "sessions" WHERE "expires_at" <= ?`, [now]);
    },
    async destroyForUser(userId, exceptSid) {
      // sessions are express-session JSON; the live ones of one lab are few, so they are read and matched here
      const rows = await sql.rows(`SELECT "sid", "data" FROM "sessions" WHERE "expires_at" > ?`, [new Date()]);
      let n = 0;
      for (const r of rows) {
        if (r.sid === exceptSid) continue;
        let owner: unknown;
        try {
          owner = (JSON.parse(String(r.data)) as { userId?: unknown }).userId;
        } catch {
          continue;
        }
        if (owner === userId) n += await sql.run(`DELETE FROM "sessions" WHERE "sid" = ?`, [String(r.sid)]);
      }
      return n;
    },
  };

  const tokens: Store['tokens'] = {
    async create(t) {
      try {
        const r = await sql.one(`INSERT INTO "api_tokens" ("user_id", "name", "token_hash", "prefix", "created_at") ` + `VALUES (?, ?, ?, ?, ?) RETURNING ${TOKEN_COLS}`, [
          t.userId,
          t.name,
          t.tokenHash,
          t.prefix,
          new Date(),
        ]);
        return tokenRow(r!);
      } catch (e) {
        if (isForeignKeyViolation(e)) throw userNotFound(t.userId);
        if (isUniqueViolation(e)) {
          throw new LabError('conflict', 'A token with this hash already exists.', [{ field: 'tokenHash', message: 'already exists' }]);
        }
        throw e;
      }
    },
    async userFor(tokenHash) {
      const r = await sql.one(
        `SELECT t."id" AS "token_id", t."name" AS "token_name", t."last_used_at" AS "token_last_used_at", ` +
          `u."id", u."username", u."password_hash", u."role", u."created_at", u."disabled_at", u."deleted_at" ` +
          `FROM "api_tokens" t JOIN "users" u ON u."id" = t."user_id" WHERE t."token_hash" = ?`,
        [tokenHash],
      );
      if (!r) return null;
      const now = new Date();
      const last = toDateOrNull(r.token_last_used_at);
      if (!last || now.getTime() - last.getTime() >= TOKEN_TOUCH_MS) {
        await sql.run(`UPDATE "api_tokens" SET "last_used_at" = ? WHERE "id" = ?`, [now, toInt(r.token_id)]);
      }
      return { ...userRow(r), token: { id: toInt(r.token_id), name: String(r.token_name) } };
    },
    async list(userId) {
      const rows = await sql.rows(`SELECT ${TOKEN_COLS} FROM "api_tokens" WHERE "user_id" = ? ORDER BY "id"`, [userId]);
      return rows.map(tokenRow);
    },
    async revoke(userId, id) {
      return (await sql.run(`DELETE FROM "api_tokens" WHERE "id" = ? AND "user_id" = ?`, [id, userId])) > 0;
    },
  };

  async function readPrefs(userId: number, instrument: string): Promise<MethodPrefs> {
    const r = await sql.one(`SELECT "method_order", "hidden" FROM "method_prefs" WHERE "user_id" = ? AND "instrument" = ?`, [userId, instrument]);
    if (!r) return { order: [], hidden: [] };
    return { order: decodeJson(r.method_order) as string[], hidden: decodeJson(r.hidden) as string[] };
  }

  /** Upserts one of the two JSON columns of a prefs row, leaving the other as it is. */
  async function writePrefs(userId: number, instrument: string, column: 'method_order' | 'hidden', list: string[]) {
    const other = column === 'hidden' ? 'method_order' : 'hidden';
    try {
      await sql.run(
        `INSERT INTO "method_prefs" ("user_id", "instrument", "${column}", "${other}") VALUES (?, ?, ?, '[]') ` +
          `ON CONFLICT ("user_id", "instrument") DO UPDATE SET "${column}" = excluded."${column}"`,
        [userId, instrument, JSON.stringify(list)],
      );
    } catch (e) {
      if (isForeignKeyViolation(e)) throw userNotFound(userId);
      throw e;
    }
  }

  const prefs: Store['prefs'] = {
    get: readPrefs,
    async setOrder(userId, instrument, order) {
      await writePrefs(userId, instrument, 'method_order', [...new Set(order)]);
    },
    async setHidden(userId, instrument, method, hidden) {
      // Read-modify-write of the hidden list, serialised per row within this process.
      await withLock(`${userId}\0${instrument}`, async () => {
        const cur = (await readPrefs(userId, instrument)).hidden.filter((m) => m !== method);
        if (hidden) cur.push(method);
        await writePrefs(userId, instrument, 'hidden', cur);
      });
    },
  };

  const steps: Store['steps'] = {
    // The hot path: one cached prepared statement, one round trip, committed at once (a call's record is
    // begun while its instrument is held: core/deck/recorder.ts)
    async insert(s) {
      return sql.insertIdNow(INSERT_STEP, stepParams(s));
    },
    async update(id, patch) {
      const { sets, params } = setClause(patch, STEP_FIELDS);
      if (sets.length === 0) {
        if (!(await steps.get(id))) throw new LabError('not_found', `No step with id ${id}.`);
        return;
      }
      const n = await sql.runQueued(`UPDATE "steps" SET ${sets.join(', ')} WHERE "id" = ?`, [...params, id]);
      if (n === 0) throw new LabError('not_found', `No step with id ${id}.`);
    },
    async delete(id) {
      return (await sql.run(`DELETE FROM "steps" WHERE "id" = ?`, [id])) > 0;
    },
    async markInDoubt(instruments, error, before) {
      if (!instruments.length) return 0;
      const marks = instruments.map(() => '?').join(', ');
      const when = before ? ` AND "started_at" < ?` : '';
      return sql.run(`UPDATE "steps" SET "status" = 'in-doubt', "error" = ? WHERE "run_id" IS NULL AND "status" = 'running' AND "instrument" IN (${marks})${when}`, [
        error,
        ...instruments,
        ...(before ? [before] : []),
      ]);
    },
    // a record is read up to the result bound (a value stored before the bound existed comes back cut)
    async get(id) {
      const r = await sql.one(`SELECT ${boundedStepCols(sql.dialect, maxResultBytes())} FROM "steps" WHERE "id" = ?`, [id]);
      return r ? stepRow(r) : null;
    },
    // a list reads of each call what it shows
    async recent(instrument, limit, chars = SHOWN_RESULT_CHARS) {
      const rows = await sql.rows(`SELECT ${boundedStepCols(sql.dialect, chars)} FROM "steps" WHERE "instrument" = ? ORDER BY "id" DESC LIMIT ?`, [instrument, limit]);
      return rows.map(stepRow);
    },
    async timings(instrument, q) {
      const rows = await sql.rows(`SELECT "id", "method", "status", "started_at", "ended_at" FROM "steps" WHERE "instrument" = ? AND "id" < ? AND "id" >= ? ORDER BY "id" DESC LIMIT ?`, [
        instrument,
        q.toId,
        q.fromId ?? 0,
        q.limit,
      ]);
      return rows.map((r) => ({ id: toInt(r.id), method: String(r.method), status: r.status as StepRow['status'], startedAt: toDate(r.started_at), endedAt: toDateOrNull(r.ended_at) }));
    },
  };

  const audit: Store['audit'] = {
    async add(a) {
      await sql.run(`INSERT INTO "audit_log" ("user_id", "action", "detail", "at") VALUES (?, ?, ?, ?)`, [a.userId, a.action, encodeJson(a.detail, 'detail'), new Date()]);
    },
    async list(limit = 100) {
      const n = Math.max(1, Math.min(10_000, Math.floor(limit) || 100));
      const rows = await sql.rows(`SELECT ${auditLog.cols()} FROM "audit_log" ORDER BY "id" DESC LIMIT ?`, [n]);
      return rows.map((r): AuditRow => ({
        id: toInt(r.id),
        userId: toIntOrNull(r.user_id),
        action: String(r.action),
        detail: decodeJson(r.detail),
        at: toDate(r.at),
      }));
    },
  };

  const settings: Store['settings'] = {
    async get<T = unknown>(key: string): Promise<T | null> {
      const r = await sql.one(`SELECT "value" FROM "settings" WHERE "key" = ?`, [key]);
      return r ? (decodeJson(r.value) as T | null) : null;
    },
    async set(key, value) {
      await sql.run(`INSERT INTO "settings" ("key", "value") VALUES (?, ?) ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value"`, [key, encodeJson(value, 'value') ?? 'null']);
    },
    async claim(key, value) {
      // one INSERT: the primary key lets exactly one of any number of concurrent claims (any process) win
      const n = await sql.run(`INSERT INTO "settings" ("key", "value") VALUES (?, ?) ON CONFLICT ("key") DO NOTHING`, [key, encodeJson(value, 'value') ?? 'null']);
      return n === 1;
    },
  };

  return { users, sessions, tokens, prefs, steps, audit, settings };
}
