/**
 * Sessions on labdeck's own database (server/session.ts is the middleware that uses them).
 *
 * A request reads its session from this process's copy, dropped at once when any process logs out, ends a
 * session or changes an account (core/accounts/cache.ts), so a logout, a password change or a disabled
 * account still ends it on the very next request, on every process of a shared database. It does not write
 * it either: a session's expiry slides with its use, and that UPDATE is made at most once a minute per
 * session (a session lasts days: a minute of slack changes nothing).
 *
 * Rows hold express-session's JSON (`{"cookie":{…,"expires":…},"userId":…}`), so sessions made before the
 * middleware changed go on, and `sessions.destroyForUser` reads `userId` as it did.
 */
import { AuthCache } from '../core/accounts/cache.js';
import { LabError, isLabError } from '../core/errors.js';
import type { Store } from '../core/store/types.js';

const DAY = 24 * 3600_000;
/** A session's expiry is written again at most this often. */
export const TOUCH_EVERY_MS = 60_000;
/** Sessions whose last touch is remembered (the oldest are forgotten first: then they are touched again). */
const MAX_REMEMBERED = 10_000;

type Data = Record<string, unknown>;

/**
 * A session write the database refused for want of room (507, core/errors.ts's storageFailure), said as what
 * it means for the person: `what` instead of "The record".
 */
function restated(e: unknown, what: string): unknown {
  if (!isLabError(e) || e.code !== 'insufficient_storage') return e;
  return new LabError(e.code, e.message.replace(/^The record could not be stored/, what), e.details, e.data);
}
const NOT_LOGGED_IN = 'You are not logged in: the session could not be stored';
const NOT_LOGGED_OUT = 'You are still logged in: the end of the session could not be stored';
/** A session as a row's JSON carries it: its fields and the cookie's attributes. */
interface Stored {
  cookie?: { expires?: string | Date | null; originalMaxAge?: number | null };
  [field: string]: unknown;
}

export class DbSessionStore {
  private pruner: NodeJS.Timeout;
  /** When each session's expiry was last written by this process, oldest first. */
  private readonly touched = new Map<string, number>();
  /** Each session as the database holds it (its fields and expiry), or null: none. */
  private readonly copies: AuthCache<{ data: Readonly<Data>; expiresAt: number } | null>;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {
    this.copies = new AuthCache(store.signals, (hit) => !hit || hit.expiresAt > Date.now());
    this.pruner = setInterval(() => void this.store.sessions.prune().catch(() => undefined), 3600_000);
    this.pruner.unref();
  }

  /** The fields of session `sid` (a copy of its own for the caller), or null when there is none or it expired. */
  async read(sid: string): Promise<Data | null> {
    const hit = await this.copies.get(sid, async () => {
      const row = await this.store.sessions.get(sid);
      if (!row) return null;
      let parsed: Stored;
      try {
        parsed = JSON.parse(row.data) as Stored;
      } catch {
        return null; // not a session this labdeck wrote
      }
      const { cookie: _cookie, ...data } = parsed;
      return { data: Object.freeze(data), expiresAt: row.expiresAt.getTime() };
    });
    return hit && hit.expiresAt > Date.now() ? { ...hit.data } : null;
  }

  /**
   * Write session `sid` with its expiry: `create` a new one (an id just drawn), or change one that exists.
   * Resolves false when a change finds the session gone (logged out, or ended by a password change or an
   * admin while the request was in flight): then nothing is written, and the session is never made again.
   */
  async write(sid: string, data: Data, expires: Date, opts: { create: boolean }): Promise<boolean> {
    this.remember(sid, this.now());
    const row: Stored = { cookie: { originalMaxAge: expires.getTime() - Date.now(), expires: expires.toISOString(), httpOnly: true, path: '/', sameSite: 'lax' } as Stored['cookie'], ...data };
    const text = JSON.stringify(row);
    try {
      if (opts.create) await this.store.sessions.create(sid, text, expires);
      else if (!(await this.store.sessions.update(sid, text, expires))) {
        this.touched.delete(sid);
        return false;
      }
      return true;
    } catch (e) {
      this.touched.delete(sid);
      throw restated(e, opts.create ? NOT_LOGGED_IN : 'The change to your session could not be stored');
    }
  }

  /**
   * Slide session `sid`'s expiry to `expires` (a Date, or ms since the epoch): written when this process has
   * not written it for a minute.
   */
  extend(sid: string, expires: Date | number): Promise<void> {
    const now = this.now();
    const last = this.touched.get(sid);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return Promise.resolve();
    this.remember(sid, now);
    const at = typeof expires === 'number' ? expires : expires.getTime();
    return this.store.sessions.touch(sid, new Date(at)).then(
      () => this.copies.update(sid, (hit) => hit && { ...hit, expiresAt: at }),
      () => {
        this.touched.delete(sid); // not written: the next request tries again
      },
    );
  }

  /** Delete session `sid` (log-out, log-in's new id): on every host before this resolves. */
  async remove(sid: string): Promise<void> {
    this.touched.delete(sid);
    await this.store.sessions.destroy(sid).catch((e: unknown) => {
      throw restated(e, NOT_LOGGED_OUT);
    });
  }

  // express-session's store interface, kept for callers written against it (not `set`: an upsert would bring
  // an ended session back; see write) ----------------------------------------------------------------------

  get(sid: string, cb: (err: unknown, session?: Data | null) => void) {
    this.read(sid).then((d) => cb(null, d), cb);
  }

  touch(sid: string, sess: Stored, cb?: (err?: unknown) => void) {
    const now = this.now();
    const last = this.touched.get(sid);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return cb?.();
    this.remember(sid, now);
    const expiry = expiryOf(sess.cookie);
    this.store.sessions.touch(sid, expiry).then(
      () => {
        this.copies.update(sid, (hit) => hit && { ...hit, expiresAt: expiry.getTime() });
        cb?.();
      },
      (e) => {
        this.touched.delete(sid);
        cb?.(e);
      },
    );
  }

  destroy(sid: string, cb?: (err?: unknown) => void) {
    this.remove(sid).then(
      () => cb?.(),
      (e) => cb?.(e),
    );
  }

  private remember(sid: string, at: number) {
    this.touched.delete(sid); // re-inserted: the newest last
    this.touched.set(sid, at);
    if (this.touched.size > MAX_REMEMBERED) this.touched.delete(this.touched.keys().next().value!);
  }

  close() {
    clearInterval(this.pruner);
    this.copies.close();
  }
}

function expiryOf(cookie: Stored['cookie']): Date {
  const e = cookie?.expires;
  return e ? new Date(e) : new Date(Date.now() + DAY);
}
