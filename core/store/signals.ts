/**
 * Wake-ups between the processes on one database (DESIGN.md §12), on two channels:
 *
 * - "the queue changed", sent by one host and heard by every other at once;
 * - "accounts, tokens or sessions changed", so each process may keep copies of them (core/accounts/cache.ts)
 *   and still see a revoked token, a logout or a disabled account on its very next request;
 * - messages between hosts (JSON): a run control asked on one host for a task another runs, and its answer.
 *
 * PostgreSQL: LISTEN/NOTIFY on one connection of its own, opened again after it drops; while it is down no
 * copy is trusted. SQLite: processes on one file cannot signal each other, so queue wake-ups are the hosts'
 * heartbeats, and auth copies are trusted only while `PRAGMA data_version` (which moves when another
 * connection commits) stays put: one synchronous read per check, no disk access.
 */
import { randomBytes } from 'node:crypto';
import type { Connection } from './sql.js';
import type { Store } from './types.js';

const QUEUE = 'labdeck_queue';
const AUTH = 'labdeck_auth';
const HOSTS = 'labdeck_hosts';
/** How long a change waits to hear its own notification (then every listener has been sent it). */
const ECHO_MS = 1000;

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
  /** This process's notifications carry its nonce, so it knows its own echo. */
  const nonce = randomBytes(6).toString('hex');
  let sent = 0;
  const echoes = new Map<string, () => void>();
  let client: PgClient | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const retryLater = () => {
    if (closed) return;
    retry = setTimeout(() => void connect(), 1000); // the heartbeats wake hosts meanwhile; auth is read afresh
    retry.unref();
  };

  const open = async () => {
    try {
      const pool = (ds!.driver as unknown as { master: { connect(): Promise<PgClient> } }).master;
      const c = await pool.connect();
      const lost = () => {
        if (client !== c) return;
        client = null;
        c.release(true);
        retryLater();
      };
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
        if (msg.channel !== AUTH) return;
        const mine = echoes.get(msg.payload ?? '');
        if (mine) mine();
        else if (!msg.payload?.startsWith(`${nonce}:`)) authChangedHere();
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

  /** SQLite: the data_version last seen (null: not read yet), and when it was read (performance.now()). */
  let dataVersion: unknown = null;
  let checkedAt = -Infinity;
  let versionStmt: { get(): unknown } | null = null;
  /** The read that the requests arriving now wait for (made once they have all asked: one serves them all). */
  let batch: Promise<boolean> | null = null;
  const readDataVersion = (): boolean => {
    if (conn.dialect !== 'sqlite') return false;
    versionStmt ??= conn.db.prepare('PRAGMA data_version').pluck();
    checkedAt = performance.now();
    const v = versionStmt.get();
    if (v === dataVersion) return true;
    if (dataVersion !== null) authChangedHere();
    dataVersion = v;
    return true; // the copies were just dropped: what is copied from now on is current
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
      const id = `${nonce}:${++sent}`;
      const heard = client
        ? new Promise<void>((resolve) => {
            const t = setTimeout(done, ECHO_MS);
            function done() {
              clearTimeout(t);
              echoes.delete(id);
              resolve();
            }
            echoes.set(id, done);
          })
        : null;
      await ds.query(`SELECT pg_notify($1, $2)`, [AUTH, id]);
      await heard;
    },
    onAuthChange(fn) {
      authListeners.add(fn);
      void connect();
      return () => authListeners.delete(fn);
    },
    async authCacheable(since) {
      if (closed) return false;
      if (ds) return client !== null;
      if (since !== undefined && checkedAt >= since) return true; // read after `since`: it saw what came before
      // each read takes SQLite's shared-memory lock (~5-30 µs): the requests of one turn share the next one
      batch ??= new Promise((resolve) =>
        setImmediate(() => {
          batch = null;
          resolve(!closed && readDataVersion());
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
      for (const done of echoes.values()) done();
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
    sessions: { ...sessions, set: announced(sessions.set), destroy: announced(sessions.destroy), destroyForUser: announced(sessions.destroyForUser) },
    tokens: { ...tokens, create: announced(tokens.create), revoke: announced(tokens.revoke) },
  };
}
