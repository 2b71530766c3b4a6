/**
 * express-session store on labdeck's own database (MemoryStore loses sessions on restart).
 *
 * A request reads its session from this process's copy, dropped at once when any process logs out, ends a
 * session or changes an account (core/accounts/cache.ts), so a logout, a password change or a disabled
 * account still ends it on the very next request, on every process of a shared database. It does not write
 * it either: express-session "touches" an unchanged session on each request to slide its expiry, and that
 * UPDATE is made at most once a minute per session (a session lasts days: a minute of slack changes nothing).
 */
import session from 'express-session';
import { AuthCache } from '../core/accounts/cache.js';
import type { Store } from '../core/store/types.js';

const DAY = 24 * 3600_000;
/** A session's expiry is written again at most this often. */
export const TOUCH_EVERY_MS = 60_000;
/** Sessions whose last touch is remembered (the oldest are forgotten first: then they are touched again). */
const MAX_REMEMBERED = 10_000;

export class DbSessionStore extends session.Store {
  private pruner: NodeJS.Timeout;
  /** When each session's expiry was last written by this process, oldest first. */
  private readonly touched = new Map<string, number>();
  /** Each session as the database holds it (its JSON and expiry), or null: none. */
  private readonly copies: AuthCache<{ data: string; expiresAt: number } | null>;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.copies = new AuthCache(store.signals, (hit) => !hit || hit.expiresAt > Date.now());
    this.pruner = setInterval(() => void this.store.sessions.prune().catch(() => undefined), 3600_000);
    this.pruner.unref();
  }

  private expiry(sess: session.SessionData): Date {
    const e = sess.cookie?.expires;
    return e ? new Date(e) : new Date(Date.now() + DAY);
  }

  override get(sid: string, cb: (err: unknown, session?: session.SessionData | null) => void) {
    this.copies
      .get(sid, async () => {
        const row = await this.store.sessions.get(sid);
        return row && { data: row.data, expiresAt: row.expiresAt.getTime() };
      })
      .then((hit) => cb(null, hit && hit.expiresAt > Date.now() ? JSON.parse(hit.data) : null), cb);
  }

  override touch(sid: string, sess: session.SessionData, cb?: (err?: unknown) => void) {
    const now = this.now();
    const last = this.touched.get(sid);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return cb?.();
    this.remember(sid, now);
    const expiry = this.expiry(sess);
    this.store.sessions.touch(sid, expiry).then(
      () => {
        this.copies.update(sid, (hit) => hit && { ...hit, expiresAt: expiry.getTime() });
        cb?.();
      },
      (e) => {
        this.touched.delete(sid); // not written: the next request tries again
        cb?.(e);
      },
    );
  }

  override set(sid: string, sess: session.SessionData, cb?: (err?: unknown) => void) {
    this.remember(sid, this.now());
    this.store.sessions.set(sid, JSON.stringify(sess), this.expiry(sess)).then(() => cb?.(), (e) => cb?.(e));
  }

  override destroy(sid: string, cb?: (err?: unknown) => void) {
    this.touched.delete(sid);
    this.store.sessions.destroy(sid).then(() => cb?.(), (e) => cb?.(e));
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
