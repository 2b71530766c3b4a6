/**
 * Accounts: sign-up, login with throttling, password changes and API tokens. Used by the web app and by
 * `lab user`; knows nothing of HTTP. Passwords are hashed with scrypt, its parameters stored with the hash.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, createHash, type ScryptOptions } from 'node:crypto';
import { LabError } from '../errors.js';
import type { Role, Store, UserRow } from '../store/types.js';

const scrypt = (pw: string, salt: Buffer, len: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(pw, salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );

const SCRYPT = { N: 16384, r: 8, p: 1 };
const KEY_LEN = 32;

/** `scrypt$N$r$p$salt$hash` (base64): the parameters travel with the hash so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LEN, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(key, expected);
}

export const USERNAME_RE = /^[A-Za-z0-9_.@-]{1,64}$/;
export const MIN_PASSWORD = 8;
/** Most username+address pairs the failed-login throttle remembers; the oldest are forgotten first. */
const MAX_FAILURE_KEYS = 10_000;

export function checkCredentials(username: unknown, password: unknown, passwordField = 'password') {
  const details = [];
  if (typeof username !== 'string' || !USERNAME_RE.test(username)) {
    details.push({ field: 'username', message: 'use 1-64 letters, digits or . _ @ -' });
  }
  if (typeof password !== 'string' || password.length < MIN_PASSWORD) {
    details.push({ field: passwordField, message: `must be at least ${MIN_PASSWORD} characters` });
  } else if (password.length > 1024) {
    details.push({ field: passwordField, message: 'must be at most 1024 characters' });
  }
  if (details.length) throw new LabError('invalid_input', details.map((d) => `${d.field}: ${d.message}`).join('; '), details);
  return { username: username as string, password: password as string };
}

export interface PublicUser {
  id: number;
  username: string;
  role: Role;
}

export const publicUser = (u: UserRow): PublicUser => ({ id: u.id, username: u.username, role: u.role });

/**
 * The one rule for what belongs to someone (a record, a queued task, a workflow): its owner or an admin may
 * change or delete it. Things made headless (no owner) are admins'.
 */
export function ownerOrAdmin(ownerId: number | null, user: Pick<PublicUser, 'id' | 'role'>): boolean {
  return user.role === 'admin' || (ownerId !== null && ownerId === user.id);
}

/**
 * The new password typed twice: when the second copy is sent (the forms always send it; API clients may
 * leave it out) it must match.
 */
function checkConfirmation(password: string, confirm: unknown) {
  if (confirm !== undefined && confirm !== password) {
    throw new LabError('invalid_input', 'The two new passwords differ: type the same new password in both fields.', [
      { field: 'confirm_password', message: 'does not match new_password' },
    ]);
  }
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface AccountsOptions {
  /** Failed logins allowed per username+address within the window before 429. */
  maxFailures?: number;
  windowMs?: number;
}

export class Accounts {
  private failures = new Map<string, { count: number; first: number }>();
  private tokenCache = new Map<string, { user: PublicUser | null; at: number }>();
  private readonly maxFailures: number;
  private readonly windowMs: number;

  constructor(
    private readonly store: Store,
    opts: AccountsOptions = {},
  ) {
    this.maxFailures = opts.maxFailures ?? 5;
    this.windowMs = opts.windowMs ?? 15 * 60_000;
  }

  /** Create an account: the first one is an admin, later ones operators. Sign-up may be closed by an admin. */
  async signup(username: unknown, password: unknown, opts: { role?: Role; bypassClosed?: boolean } = {}) {
    const creds = checkCredentials(username, password);
    const count = await this.store.users.count();
    if (count > 0 && !opts.bypassClosed && !(await this.signupOpen())) {
      throw new LabError('forbidden', 'Sign-up is closed on this lab; ask an admin for an account.');
    }
    if (await this.store.users.byName(creds.username)) {
      throw new LabError('conflict', `The user "${creds.username}" already exists; log in instead.`, [
        { field: 'username', message: 'already taken' },
      ]);
    }
    // the first account is the admin: of many sign-ups racing on an empty lab (in any process), one claims it
    const role: Role = opts.role ?? (count === 0 && (await this.store.settings.claim('first_admin', creds.username)) ? 'admin' : 'operator');
    const user = await this.store.users.create({
      username: creds.username,
      passwordHash: await hashPassword(creds.password),
      role,
    });
    return publicUser(user);
  }

  async signupOpen(): Promise<boolean> {
    return (await this.store.settings.get<boolean>('signup_open')) ?? true;
  }

  async setSignupOpen(open: boolean) {
    await this.store.settings.set('signup_open', open);
  }

  /**
   * Check a login. Throws 429 after too many failures for this username from this address, unless the
   * caller vouches for the browser (`knownDevice`: one this user logged in from before): the throttle is for
   * the one guessing, not for the scientist on the same lab PC.
   */
  async login(username: unknown, password: unknown, address = 'unknown', opts: { knownDevice?: boolean } = {}): Promise<PublicUser> {
    // a name no account can have is refused before anything is kept about it
    if (typeof username !== 'string' || !USERNAME_RE.test(username)) throw new LabError('unauthenticated', 'Wrong username or password.');
    const key = `${username}\u0000${address}`;
    const now = Date.now();
    this.forgetOldFailures(now);
    const f = this.failures.get(key);
    if (f && now - f.first < this.windowMs && f.count >= this.maxFailures && !opts.knownDevice) {
      const retry = Math.ceil((f.first + this.windowMs - now) / 1000);
      throw new LabError('too_many_requests', `Too many failed logins; try again in ${retry} s.`, undefined, {
        retry_after: retry,
      });
    }
    const user = typeof username === 'string' ? await this.store.users.byName(username) : null;
    const ok = user && typeof password === 'string' ? await verifyPassword(password, user.passwordHash) : false;
    if (!user || !ok) {
      const entry = f && now - f.first < this.windowMs ? f : { count: 0, first: now };
      entry.count += 1;
      this.failures.delete(key); // re-inserted last: the map stays in age order for forgetOldFailures
      this.failures.set(key, entry);
      throw new LabError('unauthenticated', 'Wrong username or password.');
    }
    // a known browser getting in does not give whoever else is guessing at this address fresh tries
    if (!opts.knownDevice) this.failures.delete(key);
    return publicUser(user);
  }

  /** Failed-login memory is bounded in time (the window) and in size (MAX_FAILURE_KEYS, oldest first). */
  private forgetOldFailures(now: number): void {
    for (const [k, f] of this.failures) {
      if (now - f.first < this.windowMs && this.failures.size < MAX_FAILURE_KEYS) break; // room for one more
      this.failures.delete(k);
    }
  }

  /** How many username+address pairs the throttle remembers (for tests and the bench). */
  get throttled(): number {
    return this.failures.size;
  }

  /** A user's own password change: the current password, then the new one (and its confirmation, when sent). */
  async changePassword(userId: number, oldPassword: unknown, newPassword: unknown, confirmPassword?: unknown) {
    const user = await this.store.users.byId(userId);
    if (!user) throw new LabError('not_found', 'This account no longer exists.');
    if (typeof oldPassword !== 'string' || !(await verifyPassword(oldPassword, user.passwordHash))) {
      throw new LabError('unauthenticated', 'The current password is wrong.', [
        { field: 'old_password', message: 'does not match' },
      ]);
    }
    const { password } = checkCredentials(user.username, newPassword, 'new_password');
    checkConfirmation(password, confirmPassword);
    await this.store.users.setPassword(userId, await hashPassword(password));
  }

  /** Set a password without the old one (the `lab user passwd` command, run by whoever owns the machine). */
  async resetPassword(username: string, newPassword: unknown) {
    const user = await this.store.users.byName(username);
    if (!user) throw new LabError('not_found', `No user "${username}".`);
    const { password } = checkCredentials(username, newPassword);
    await this.store.users.setPassword(user.id, await hashPassword(password));
  }

  async user(id: number): Promise<PublicUser | null> {
    const u = await this.store.users.byId(id);
    return u ? publicUser(u) : null;
  }

  async users(): Promise<PublicUser[]> {
    return (await this.store.users.list()).map(publicUser);
  }

  /** A new API token; the plain token is returned once and only its hash is stored. */
  async createToken(userId: number, name: string) {
    const clean = name.trim().slice(0, 64) || 'token';
    const token = `lab_${randomBytes(24).toString('base64url')}`;
    const row = await this.store.tokens.create({ userId, name: clean, tokenHash: hashToken(token), prefix: token.slice(0, 8) });
    return { token, row };
  }

  async revokeToken(userId: number, id: number) {
    const ok = await this.store.tokens.revoke(userId, id);
    this.tokenCache.clear();
    if (!ok) throw new LabError('not_found', `No token ${id} on this account.`);
  }

  tokens(userId: number) {
    return this.store.tokens.list(userId);
  }

  /** The user behind a bearer token, cached briefly: scripts call at thousands of requests a second. */
  async userForToken(token: string): Promise<PublicUser | null> {
    const hash = hashToken(token);
    const hit = this.tokenCache.get(hash);
    if (hit && Date.now() - hit.at < 30_000) return hit.user;
    const row = await this.store.tokens.userFor(hash);
    const user = row ? publicUser(row) : null;
    if (this.tokenCache.size > 10_000) this.tokenCache.clear();
    this.tokenCache.set(hash, { user, at: Date.now() });
    return user;
  }
}
