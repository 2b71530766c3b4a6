/**
 * express-session store on labdeck's own database (MemoryStore loses sessions on restart).
 *
 * Every request reads its session (so a logout, a password change or a disabled account ends it at once, on
 * every process of a shared database), but does not write it: express-session "touches" an unchanged
 * session on each request to slide its expiry, and that UPDATE is made at most once a minute per session
 * (a session lasts days: a minute of slack changes nothing).
 */
import session from 'express-session';
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

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.pruner = setInterval(() => void this.store.sessions.prune().catch(() => undefined), 3600_000);
    this.pruner.unref();
  }

  private expiry(sess: session.SessionData): Date {
    const e = sess.cookie?.expires;
    return e ? new Date(e) : new Date(Date.now() + DAY);
  }

  override get(sid: string, cb: (err: unknown, session?: session.SessionData | null) => void) {
    this.store.sessions.get(sid).then(
      (row) => cb(null, row && row.expiresAt.getTime() > Date.now() ? JSON.parse(row.data) : null),
      cb,
    );
  }

  override touch(sid: string, sess: session.SessionData, cb?: (err?: unknown) => void) {
    const now = this.now();
    const last = this.touched.get(sid);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return cb?.();
    this.remember(sid, now);
    this.store.sessions.touch(sid, this.expiry(sess)).then(
      () => cb?.(),
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
  }
}
