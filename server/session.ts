/**
 * labdeck's session middleware (it replaced express-session, issue 16: see docs/security.md, "Sessions").
 *
 * The cookie is express-session's (`labdeck.sid=s:<id>.<HMAC-SHA256>`, httpOnly, SameSite=Lax, signed with the
 * secret kept in the data folder), so sessions made before the change go on. What a request costs is what
 * changed: express-session hashed every session twice, hooked every response's headers and end, and parsed
 * every cookie; here a request with an unchanged session does none of that:
 *
 * - the signature of a cookie value is checked once per process (a value seen before is the same bytes, so
 *   its check stands; a tampered value is another string and is checked, and refused);
 * - the session comes from this process's copy (server/session-store.ts), dropped at once when any process
 *   changes sessions or accounts, so a logout or a revoked session is seen on the very next request on every
 *   host of a shared database;
 * - a change is noticed as it is made (an assignment to a field of `req.session`): only then is the cookie set
 *   and the response held until the session is written. Fields are tracked at the top level: assign a new
 *   value rather than change an object inside one;
 * - the expiry is written again at most once a minute (the store's `touch`).
 *
 * `req.session.regenerate()` (log-in: a new id, the old one deleted), `save()` and `destroy()` (log-out: the
 * row deleted before the answer says so) work as express-session's did; `req.sessionID` is the id.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { DbSessionStore } from './session-store.js';

/** What a session holds; other modules add their fields (`declare module '../session.js'`). */
export interface SessionData {
  userId: number;
  flash?: string;
}

/** `req.session`'s own methods. */
export interface SessionMethods {
  /** A new session (new id, the old one deleted): call at log-in. */
  regenerate(cb: (err?: unknown) => void): void;
  /** Write the session now (it is written before the response ends anyway when a field changed). */
  save(cb?: (err?: unknown) => void): void;
  /** Delete the session (log-out); `req.session` is gone afterwards. */
  destroy(cb?: (err?: unknown) => void): void;
}

export type Session = SessionMethods & Partial<SessionData>;

declare module 'express-serve-static-core' {
  interface Request {
    /** The browser's session; undefined on a request authenticated by token, or after `destroy()`. */
    session: Session;
    /** The session's id (not the cookie: the cookie is this id signed). */
    sessionID: string;
  }
}

export interface SessionOptions {
  /** The cookie's name. */
  name: string;
  /** The key that signs the cookie (kept in the data folder). */
  secret: string;
  store: DbSessionStore;
  /** How long a session lasts without use, ms. */
  maxAgeMs: number;
}

/** Cookie values whose signature was checked, with their session id (tampered values are never kept). */
const MAX_VERIFIED = 10_000;

/** The value of cookie `name` in a Cookie header, or undefined (the first one, as the `cookie` package reads it). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let at = 0;
  while (at < header.length) {
    while (header.charCodeAt(at) === 32 || header.charCodeAt(at) === 9) at++;
    const semi = header.indexOf(';', at);
    const end = semi < 0 ? header.length : semi;
    const eq = header.indexOf('=', at);
    if (eq > 0 && eq < end && header.slice(at, eq).trim() === name) {
      let v = header.slice(eq + 1, end).trim();
      if (v.charCodeAt(0) === 34 && v.charCodeAt(v.length - 1) === 34) v = v.slice(1, -1);
      try {
        return v.includes('%') ? decodeURIComponent(v) : v;
      } catch {
        return v;
      }
    }
    at = end + 1;
  }
  return undefined;
}

/** `s:<id>.<signature>`: express-session's signed value (cookie-signature: HMAC-SHA256, base64 without padding). */
export function sign(id: string, secret: string): string {
  return `s:${id}.${createHmac('sha256', secret).update(id).digest('base64').replace(/=+$/, '')}`;
}

/** The id in a signed value, or null when its signature is not the secret's. */
export function unsign(value: string, secret: string): string | null {
  if (!value.startsWith('s:')) return null;
  const dot = value.lastIndexOf('.');
  if (dot < 2) return null;
  const id = value.slice(2, dot);
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(createHmac('sha256', secret).update(id).digest('base64').replace(/=+$/, ''));
  return given.length === expected.length && timingSafeEqual(given, expected) ? id : null;
}

const newId = () => randomBytes(24).toString('base64url');

/** The session middleware: `req.session` and `req.sessionID` for the routes after it. */
export function sessions(opts: SessionOptions): RequestHandler {
  const { name, secret, store, maxAgeMs } = opts;
  const verified = new Map<string, string>();

  const idOf = (value: string): string | null => {
    const known = verified.get(value);
    if (known !== undefined) return known;
    const id = unsign(value, secret);
    if (id !== null) {
      verified.set(value, id);
      if (verified.size > MAX_VERIFIED) verified.delete(verified.keys().next().value!);
    }
    return id;
  };

  /** Take this session's cookie off a response not sent yet. */
  const dropCookie = (res: Response) => {
    if (res.headersSent) return;
    const prev = res.getHeader('Set-Cookie');
    if (prev === undefined) return;
    res.setHeader(
      'Set-Cookie',
      (Array.isArray(prev) ? prev : [String(prev)]).filter((c) => !c.startsWith(`${name}=`)),
    );
  };

  const setCookie = (res: Response, id: string, expires: Date) => {
    if (res.headersSent) return;
    const cookie = `${name}=${encodeURIComponent(sign(id, secret))}; Path=/; Expires=${expires.toUTCString()}; HttpOnly; SameSite=Lax`;
    const prev = res.getHeader('Set-Cookie');
    const others = (prev === undefined ? [] : Array.isArray(prev) ? prev : [String(prev)]).filter((c) => !c.startsWith(`${name}=`));
    res.setHeader('Set-Cookie', [...others, cookie]);
  };

  /**
   * One request's session: its data behind a proxy that notices assignments, this object being the proxy's
   * handler (its traps are the methods `get`, `set` and `deleteProperty`). A request that only reads its
   * session makes this object and the proxy, and nothing else (issue 16: the cookie path's extra cost was
   * mostly garbage).
   */
  class OpenSession implements SessionMethods, ProxyHandler<Record<string, unknown>> {
    dirty = false;
    ended = false;
    /** When the session expires, ms since the epoch (a Date is made only when one is written or sent). */
    expiresAt = Date.now() + maxAgeMs;
    /** The write that the response waits for (made at most once per change). */
    writing: Promise<void> | null = null;

    constructor(
      readonly req: Parameters<RequestHandler>[0],
      readonly res: Response,
      readonly id: string,
      readonly data: Record<string, unknown>,
      public stored: boolean,
    ) {
      req.session = new Proxy(data, this) as unknown as Session;
      req.sessionID = id;
    }

    /**
     * Write the session: made when it is new, changed when it is stored (after any write still under way). A
     * stored session found gone (ended elsewhere while this request was in flight) stays gone: this one ends.
     */
    write(): Promise<void> {
      if (this.ended) return Promise.resolve();
      this.dirty = false;
      const run = () => {
        if (this.ended) return Promise.resolve();
        return store.write(this.id, this.data, new Date(this.expiresAt), { create: !this.stored }).then((kept) => {
          if (kept) this.stored = true;
          else this.end();
        });
      };
      const w = this.writing ? this.writing.then(run, run) : run();
      const tracked = w.finally(() => {
        if (this.writing === tracked) this.writing = null;
      });
      tracked.catch(() => undefined); // its failure is the caller's (w), never an unhandled rejection
      this.writing = tracked;
      return w;
    }

    /** This session is over (ended elsewhere): no cookie for it, no more writes. */
    end() {
      this.ended = true;
      this.dirty = false;
      dropCookie(this.res);
    }

    /** A write failed: a session never stored gets no cookie (it names nothing). */
    failed(e: unknown) {
      if (!this.stored) dropCookie(this.res);
      return e;
    }

    /** Hold the response's end until the changed session is written (the next request must see it). */
    holdEnd() {
      const res = this.res;
      const end = res.end;
      // eslint-disable-next-line @typescript-eslint/no-this-alias
      const session = this;
      res.end = function (this: Response, ...args: unknown[]) {
        res.end = end;
        const done = () => (end as (...a: unknown[]) => Response).apply(this, args);
        const pending = session.dirty ? session.write() : session.writing;
        if (!pending) return done();
        // the answer was decided before: it goes out, without a cookie for a session that was not stored
        pending.then(done, (e: unknown) => {
          session.failed(e);
          console.error(`labdeck: the session could not be saved: ${(e as Error)?.message ?? e}`);
          done();
        });
        return this;
      } as Response['end'];
    }

    /** A field changed (or went): the cookie is sent again and the response waits for the write. */
    changed(extend: boolean) {
      if (this.ended) return;
      if (!this.dirty && !this.writing) this.holdEnd();
      this.dirty = true;
      if (extend) this.expiresAt = Date.now() + maxAgeMs;
      setCookie(this.res, this.id, new Date(this.expiresAt));
    }

    regenerate(cb: (err?: unknown) => void) {
      this.ended = true;
      const old = this.stored ? store.remove(this.id) : Promise.resolve();
      old.then(
        () => {
          new OpenSession(this.req, this.res, newId(), {}, false);
          cb();
        },
        (e: unknown) => cb(e),
      );
    }

    save(cb?: (err?: unknown) => void) {
      this.expiresAt = Date.now() + maxAgeMs;
      setCookie(this.res, this.id, new Date(this.expiresAt));
      this.write().then(
        () => cb?.(),
        (e: unknown) => cb?.(this.failed(e)),
      );
    }

    destroy(cb?: (err?: unknown) => void) {
      this.ended = true;
      this.dirty = false;
      (this.req as { session?: unknown }).session = undefined;
      (this.stored ? store.remove(this.id) : Promise.resolve()).then(
        () => cb?.(),
        (e: unknown) => cb?.(e),
      );
    }

    // the proxy's traps ------------------------------------------------------------------------------------

    get(target: Record<string, unknown>, key: PropertyKey) {
      if (!METHODS.has(key)) return Reflect.get(target, key);
      const method = key as keyof SessionMethods;
      return (cb: (err?: unknown) => void) => this[method](cb);
    }

    set(target: Record<string, unknown>, key: PropertyKey, value: unknown) {
      if (METHODS.has(key)) return false;
      if (target[key as string] !== value) this.changed(true);
      return Reflect.set(target, key, value);
    }

    deleteProperty(target: Record<string, unknown>, key: PropertyKey) {
      if (key in target) this.changed(false);
      return Reflect.deleteProperty(target, key);
    }
  }

  const METHODS = new Set<PropertyKey>(['regenerate', 'save', 'destroy'] satisfies (keyof SessionMethods)[]);

  return (req, res, next) => {
    if (req.session) return next(); // mounted twice on one path (the public routes, then the app's)
    const value = cookieValue(req.headers.cookie, name);
    const id = value === undefined ? null : idOf(value);
    if (id === null) {
      new OpenSession(req, res, newId(), {}, false);
      return next();
    }
    store.read(id).then((data) => {
      if (data === null) {
        new OpenSession(req, res, newId(), {}, false);
      } else {
        new OpenSession(req, res, id, data, true);
        store.extend(id, Date.now() + maxAgeMs); // written at most once a minute
      }
      next();
    }, next);
  };
}
