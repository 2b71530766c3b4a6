/** express-session store on labdeck's own database (MemoryStore loses sessions on restart). */
import session from 'express-session';
import type { Store } from '../core/store/types.js';

const DAY = 24 * 3600_000;

export class DbSessionStore extends session.Store {
  private pruner: NodeJS.Timeout;

  constructor(private readonly store: Store) {
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

  override set(sid: string, sess: session.SessionData, cb?: (err?: unknown) => void) {
    this.store.sessions.set(sid, JSON.stringify(sess), this.expiry(sess)).then(() => cb?.(), (e) => cb?.(e));
  }

  override touch(sid: string, sess: session.SessionData, cb?: (err?: unknown) => void) {
    this.store.sessions.touch(sid, this.expiry(sess)).then(() => cb?.(), (e) => cb?.(e));
  }

  override destroy(sid: string, cb?: (err?: unknown) => void) {
    this.store.sessions.destroy(sid).then(() => cb?.(), (e) => cb?.(e));
  }

  close() {
    clearInterval(this.pruner);
  }
}
