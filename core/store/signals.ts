/**
 * Wake-ups between the processes on one database (DESIGN.md §12), on two channels:
 *
 * - "the queue changed", sent by one host and heard by every other at once;
 * - "accounts, tokens or sessions changed", so each process may keep copies of them (core/accounts/cache.ts)
 *   and still see a revoked token, a logout or a disabled account on its very next request;
 * - messages between hosts (JSON): a run control asked on one host for a task another runs, and its answer.
 *
 * PostgreSQL: LISTEN/NOTIFY on one connection of its own, opened again after it drops; while it is down no
 * copy is trusted, and while it holds, each check for auth changes is a query on it (see `check`).
 * SQLite: processes on one file cannot signal each other, so queue wake-ups are the hosts' heartbeats, and
 * auth copies are trusted only while `PRAGMA data_version` (which moves when another connection commits)
 * stays put: one synchronous read per check, no disk access.
 */
import { randomBytes } from 'node:crypto';
import type { Connection } from './sql.js';
import type { Store } from './types.js';

const QUEUE = 'labdeck_queue';
const AUTH = 'labdeck_auth';
const HOSTS = 'labdeck_hosts';
/** How long a check for auth changes waits for the listening connection (then it is dropped and reopened). */
export const CHECK_MS = 5000;

interface PgClient {
  query(sql: string, values?: unknown[]): Promise<unknown>;
  on(event: 'notification', fn: (msg: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', fn: (e?: unknown) => void): void;
  release(destroy?: boolean): void;
}

export function signals(conn: Connection): Store['signals'] {
  /** PostgreSQL's DataSource (null on SQLite) */
  const ds = conn.dialect === 'postgres' ? conn.ds : null;
  const queueListeners = new Set<() => void>();
  const hostListeners = new Set<(message: unknown) => void>();
  const authListeners = new Set<() => void>();
  const authChangedHere = () => authListeners.forEach((fn) => fn());
  /** This process's notifications carry its nonce, so it knows its own (its copies went when it sent them). */
  const nonce = randomBytes(6).toString('hex');
  let client: PgClient | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const retryLater = () => {
    if (closed) return;
    retry = setTimeout(() => void connect(), 1000); // the heartbeats wake hosts meanwhile; auth is read afresh
    retry.unref();
  };

  /** The listening connection `c` is gone or stuck: drop it, open another in a second. */
  const drop = (c: PgClient) => {
    if (client !== c) return;
    client = null;
    c.release(true);
    retryLater();
  };

  const open = async () => {
    try {
      const pool = (ds!.driver as unknown as { master: { connect(): Promise<PgClient> } }).master;
      const c = await pool.connect();
      const lost = () => drop(c);
      c.on('notification', (msg) => {
        if (msg.channel === QUEUE) for (const fn of queueListeners) fn();
        if (msg.channel === HOSTS) {
          let message: unknown;
          try {
            message = JSON.parse(msg.payload ?? 'null');
          } catch {
            return;
          }
          for (const fn of hostListeners) fn(message);
        }
        if (msg.channel === AUTH && msg.payload !== nonce) authChangedHere();
      });
      c.on('error', lost);
      c.on('end', lost);
      await c.query(`LISTEN ${QUEUE}; LISTEN ${AUTH}; LISTEN ${HOSTS}`);
      if (closed) return c.release(true);
      client = c;
      authChangedHere(); // what was copied while nobody listened may be stale
    } catch {
      client = null;
      retryLater();
    }
  };
  const connect = async () => {
    if (closed || client || !ds) return;
    connecting ??= open().finally(() => (connecting = null));
    await connecting;
  };

  /** SQLite: the data_version last seen (null: not read yet). */
  let dataVersion: unknown = null;
  /** When changes were last checked for (performance.now()): a request that began before then is served by it. */
  let checkedAt = -Infinity;
  let versionStmt: { get(): unknown } | null = null;
  /** The check that the requests arriving now wait for (made once they have all asked: one serves them all). */
  let batch: Promise<boolean> | null = null;
  /**
   * Whether the copies may be used, checked once for all who ask in one turn of the event loop.
   * PostgreSQL: a query on the listening connection. PostgreSQL sends a connection the notifications
   * committed before its query ends ahead of the query's answer, so another host's log-out that was
   * answered before this check began has dropped the copies when it resolves, however late that host's
   * notification would otherwise have come. SQLite: data_version.
   */
  const check = async (): Promise<boolean> => {
    const at = performance.now();
    if (ds) {
      const c = client;
      if (!c) return false;
      let timer: NodeJS.Timeout | undefined;
      const answered = await Promise.race([
        c.query('SELECT 1').then(
          () => true,
          () => false,
        ), // failed: 'error' or 'end' drops it
        new Promise<false>((resolve) => (timer = setTimeout(resolve, CHECK_MS, false))),
      ]);
      clearTimeout(timer);
      if (!answered) drop(c); // a connection that does not answer (the database's PC went away) is not trusted
      if (!answered || client !== c) return false;
    } else readDataVersion();
    checkedAt = Math.max(checkedAt, at);
    return true;
  };
  /** SQLite: drops the copies when another connection committed since the last read. */
  const readDataVersion = (): void => {
    if (conn.dialect !== 'sqlite') return;
    versionStmt ??= conn.db.prepare('PRAGMA data_version').pluck();
    const v = versionStmt.get();
    if (v === dataVersion) return;
    if (dataVersion !== null) authChangedHere(); // dropped: what is copied from now on is current
    dataVersion = v;
  };

  return {
    async queueChanged() {
      if (ds) await ds.query(`SELECT pg_notify('${QUEUE}', '')`);
    },
    async onQueueChange(fn) {
      queueListeners.add(fn);
      await connect();
    },
    async tell(message) {
      if (!ds || closed) return false;
      await ds.query(`SELECT pg_notify($1, $2)`, [HOSTS, JSON.stringify(message)]);
      return true;
    },
    async onHostMessage(fn) {
      hostListeners.add(fn);
      await connect();
    },
    async authChanged() {
      authChangedHere();
      if (!ds || closed) return;
      // committed when this resolves: every other process's next check hears it (see check above)
      await ds.query(`SELECT pg_notify($1, $2)`, [AUTH, nonce]);
    },
    onAuthChange(fn) {
      authListeners.add(fn);
      void connect();
      return () => authListeners.delete(fn);
    },
    async authCacheable(since) {
      if (closed || (ds && client === null)) return false;
      if (since !== undefined && checkedAt >= since) return true; // checked after `since`: it saw what came before
      // the requests of one turn share one check, at its end (SQLite: each read takes the file's shared-memory
      // lock, ~5-30 µs)
      batch ??= new Promise((resolve) =>
        setImmediate(() => {
          batch = null;
          resolve(closed ? false : check());
        }),
      );
      return batch;
    },
    close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      c?.release(true);
    },
  };
}

/** The store's writes to accounts, tokens and sessions, each followed by `signals.authChanged()`. */
export function announcingAuthChanges<R extends Pick<Store, 'users' | 'sessions' | 'tokens'>>(repos: R, s: Store['signals']): R {
  const announced =
    <A extends unknown[], T>(fn: (...a: A) => Promise<T>) =>
    async (...a: A): Promise<T> => {
      try {
        return await fn(...a);
      } finally {
        await s.authChanged();
      }
    };
  const { users, sessions, tokens } = repos;
  return {
    ...repos,
    users: { ...users, create: announced(users.create), setPassword: announced(users.setPassword), change: announced(users.change) },
    sessions: { ...sessions, create: announced(sessions.create), update: announced(sessions.update), destroy: announced(sessions.destroy), destroyForUser: announced(sessions.destroyForUser) },
    tokens: { ...tokens, create: announced(tokens.create), revoke: announced(tokens.revoke) },
  };
}
