/**
 * Accounts: sign-up, login with throttling, password changes, API tokens, and what an admin does to other
 * accounts (role, password reset, disable, delete). Used by the web app and by `lab user`; knows nothing of
 * HTTP. Passwords are hashed with scrypt, its parameters stored with the hash.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, createHash, type ScryptOptions } from 'node:crypto';
import { LabError } from '../errors.js';
import type { Role, Store, UserPatch, UserRow } from '../store/types.js';
import { AuthCache } from './cache.js';

/**
 * What a token may do: act as its user (`user`), only serve instruments as a `lab agent` (`agent`), or only
 * speak MCP at /app/mcp for an AI assistant (`mcp`): such an agent cannot go around the approval inbox.
 */
export type TokenScope = 'user' | 'agent' | 'mcp';
export const AGENT_TOKEN_PREFIX = 'labagent_';
export const MCP_TOKEN_PREFIX = 'labmcp_';
const PREFIXES: Record<TokenScope, string> = { user: 'lab_', agent: AGENT_TOKEN_PREFIX, mcp: MCP_TOKEN_PREFIX };
/** Longer than any token labdeck makes (a prefix and 32 characters). */
const MAX_TOKEN_LENGTH = 64;
/** A token's scope, read from the token (or from the 8-character prefix the account page shows). */
export const tokenScope = (tokenOrPrefix: string): TokenScope => (tokenOrPrefix.startsWith(AGENT_TOKEN_PREFIX.slice(0, 8)) ? 'agent' : tokenOrPrefix.startsWith(MCP_TOKEN_PREFIX) ? 'mcp' : 'user');

const scrypt = (pw: string, salt: Buffer, len: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(pw, salt, len, opts, (err, key) => (err ? reject(err) : resolve(key))));

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

/**
 * A short mark of a password hash, which changes with every password change or reset (each hash has its own
 * salt): what a remembered browser's cookie is signed with, so that a change forgets every such browser.
 */
export const passwordStamp = (passwordHash: string): string => createHash('sha256').update(`stamp:${passwordHash}`).digest('base64url').slice(0, 16);

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

/** An account as an admin manages it (the users page). */
export interface ManagedUser extends PublicUser {
  disabled: boolean;
  created_at: string;
}

export const managedUser = (u: UserRow): ManagedUser => ({ ...publicUser(u), disabled: u.disabledAt !== null, created_at: u.createdAt.toISOString() });

/** Whether an account may be used at all: not disabled, not deleted. */
const active = (u: UserRow): boolean => u.disabledAt === null && u.deletedAt === null;

/** The roles an admin may give (`role` of POST /account/users/{user_id}/role). */
export const ROLES: readonly Role[] = ['admin', 'operator'];

/**
 * The new password typed twice: when the second copy is sent (the forms always send it; API clients may
 * leave it out) it must match.
 */
function checkConfirmation(password: string, confirm: unknown) {
  if (confirm !== undefined && confirm !== password) {
    throw new LabError('invalid_input', 'The two new passwords differ: type the same new password in both fields.', [{ field: 'confirm_password', message: 'does not match new_password' }]);
  }
}

const noSuchUser = (id: number) => new LabError('not_found', `No user with id ${id} (it may have been deleted): pick one from the users list.`, [{ field: 'user_id', message: 'no such user' }]);

/**
 * The check `users.change` runs under its lock: the last admin who can log in keeps the role, stays enabled
 * and is not deleted, so the lab always has someone who can manage it.
 */
const keepAnAdmin =
  (then: string) =>
  (u: UserRow, otherActiveAdmins: number): void => {
    if (u.role === 'admin' && active(u) && otherActiveAdmins === 0) {
      throw new LabError('conflict', `${u.username} is the last admin who can log in: make another account an admin first, then ${then}.`, [{ field: 'user_id', message: 'the last admin' }]);
    }
  };

/**
 * The one rule for what belongs to someone (a record, a queued task, a workflow): its owner or an admin may
 * change or delete it. Things made headless (no owner) are admins'.
 */
export function ownerOrAdmin(ownerId: number | null, user: Pick<PublicUser, 'id' | 'role'>): boolean {
  return user.role === 'admin' || (ownerId !== null && ownerId === user.id);
}

function mustBeAdmin(by: Pick<PublicUser, 'role'>) {
  if (by.role !== 'admin') throw new LabError('forbidden', 'Only an admin may manage accounts.');
}

/** A token's copy is read again after this long, which also keeps its last use (written at most once a minute). */
const TOKEN_REREAD_MS = 60_000;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface AccountsOptions {
  /** Failed logins allowed per username+address within the window before 429. */
  maxFailures?: number;
  windowMs?: number;
}

export class Accounts {
  private failures = new Map<string, { count: number; first: number }>();
  /**
   * Copies of who a token or a session's account is, dropped at once when any process changes accounts,
   * tokens or sessions (./cache.ts). A token's is also read again after a minute, which keeps its last use.
   */
  private readonly tokenUsers: AuthCache<{ user: PublicUser | null; at: number }>;
  private readonly sessionUsers: AuthCache<PublicUser | null>;
  private readonly maxFailures: number;
  private readonly windowMs: number;

  constructor(
    private readonly store: Store,
    opts: AccountsOptions = {},
  ) {
    this.maxFailures = opts.maxFailures ?? 5;
    this.windowMs = opts.windowMs ?? 15 * 60_000;
    this.tokenUsers = new AuthCache(store.signals, (hit) => Date.now() - hit.at < TOKEN_REREAD_MS);
    this.sessionUsers = new AuthCache(store.signals);
  }

  /** Create an account: the first one is an admin, later ones operators. Sign-up may be closed by an admin. */
  async signup(username: unknown, password: unknown, opts: { role?: Role; bypassClosed?: boolean } = {}) {
    const creds = checkCredentials(username, password);
    const count = await this.store.users.count();
    if (count > 0 && !opts.bypassClosed && !(await this.signupOpen())) {
      throw new LabError('forbidden', 'Sign-up is closed on this lab; ask an admin for an account.');
    }
    const existing = await this.store.users.byName(creds.username);
    if (existing?.deletedAt) {
      throw new LabError('conflict', `The name "${creds.username}" belonged to an account that was deleted (its records still carry it); choose another name.`, [
        { field: 'username', message: 'already taken' },
      ]);
    }
    if (existing) {
      throw new LabError('conflict', `The user "${creds.username}" already exists; log in instead.`, [{ field: 'username', message: 'already taken' }]);
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
   * Check a login. Throws 429 after too many failures for this username from this address. A browser the
   * user logged in from before (`device`: its id, and whether its cookie vouches for the account as its
   * password now is, see passwordStamp) is throttled on its own instead: the throttle is for the one guessing,
   * not for the scientist on the same lab PC, and a remembered browser gets no more guesses than anyone.
   */
  async login(username: unknown, password: unknown, address = 'unknown', opts: { device?: { id: string; vouches(stamp: string): boolean } } = {}): Promise<PublicUser> {
    // a name no account can have is refused before anything is kept about it
    if (typeof username !== 'string' || !USERNAME_RE.test(username)) throw new LabError('unauthenticated', 'Wrong username or password.');
    const user = await this.store.users.byName(username);
    // a remembered browser's cookie names the password it was given under: after a change it vouches for nothing
    const device = user && opts.device?.vouches(passwordStamp(user.passwordHash)) ? opts.device : undefined;
    const key = device ? `${username}\u0000device\u0000${device.id}` : `${username}\u0000${address}`;
    const now = Date.now();
    this.forgetOldFailures(now);
    const f = this.failures.get(key);
    if (f && now - f.first < this.windowMs && f.count >= this.maxFailures) {
      const retry = Math.ceil((f.first + this.windowMs - now) / 1000);
      throw new LabError('too_many_requests', `Too many failed logins; try again in ${retry} s.`, undefined, {
        retry_after: retry,
      });
    }
    const ok = user && typeof password === 'string' ? await verifyPassword(password, user.passwordHash) : false;
    if (!user || !ok) {
      const entry = f && now - f.first < this.windowMs ? f : { count: 0, first: now };
      entry.count += 1;
      this.failures.delete(key); // re-inserted last: the map stays in age order for forgetOldFailures
      this.failures.set(key, entry);
      throw new LabError('unauthenticated', 'Wrong username or password.');
    }
    // the right password, but an admin disabled the account (a deleted one has no password that verifies)
    if (!active(user)) throw new LabError('forbidden', `The account "${user.username}" is disabled: ask an admin of this lab to enable it.`);
    // (a known browser getting in gives whoever else is guessing at this address no fresh tries: its own key)
    this.failures.delete(key);
    return publicUser(user);
  }

  /** The stamp of a user's password as it is now (passwordStamp), or null: no such account. */
  async passwordStampOf(id: number): Promise<string | null> {
    const u = await this.store.users.byId(id);
    return u ? passwordStamp(u.passwordHash) : null;
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
    if (!user || user.deletedAt) throw new LabError('not_found', 'This account no longer exists.');
    if (typeof oldPassword !== 'string' || !(await verifyPassword(oldPassword, user.passwordHash))) {
      throw new LabError('unauthenticated', 'The current password is wrong.', [{ field: 'old_password', message: 'does not match' }]);
    }
    const { password } = checkCredentials(user.username, newPassword, 'new_password');
    checkConfirmation(password, confirmPassword);
    await this.store.users.setPassword(userId, await hashPassword(password));
  }

  /**
   * Set a password without the old one (the `lab user passwd` command, run by whoever owns the machine). The
   * account's sessions end, as after an admin's reset (whoever knew the old password is logged out); returns how many.
   */
  async resetPassword(username: string, newPassword: unknown): Promise<number> {
    const user = await this.store.users.byName(username);
    if (!user || user.deletedAt) throw new LabError('not_found', `No user "${username}".`);
    const { password } = checkCredentials(username, newPassword);
    await this.store.users.setPassword(user.id, await hashPassword(password));
    return this.store.sessions.destroyForUser(user.id);
  }

  /**
   * The user behind a session; null when the account is gone, disabled or deleted (the session is void).
   * `since` (performance.now() when the request began): see AuthCache.get.
   */
  user(id: number, since?: number): Promise<PublicUser | null> {
    return this.sessionUsers.get(
      String(id),
      async () => {
        const u = await this.store.users.byId(id);
        return u && active(u) ? publicUser(u) : null;
      },
      since,
    );
  }

  /** Every account that is not deleted (disabled ones too). */
  async users(): Promise<PublicUser[]> {
    return (await this.store.users.list()).map(publicUser);
  }

  /** The name of any account, deleted ones too (what they made still carries it); null: no such id. */
  async userName(id: number): Promise<string | null> {
    return (await this.store.users.byId(id))?.username ?? null;
  }

  // ---- what an admin does to accounts. Each takes the admin acting (`by`) and the account's id. ---------

  /** Every account that is not deleted, with its state, for the users page. */
  async managedUsers(by: PublicUser): Promise<ManagedUser[]> {
    mustBeAdmin(by);
    return (await this.store.users.list()).map(managedUser);
  }

  /** Make an account an admin or an operator. The last admin who can log in stays one (409). */
  async setRole(by: PublicUser, id: number, role: unknown): Promise<{ user: ManagedUser; from: Role }> {
    mustBeAdmin(by);
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
      throw new LabError('invalid_input', `role must be "admin" or "operator", got ${JSON.stringify(role)}.`, [{ field: 'role', message: 'must be admin or operator' }]);
    }
    let from: Role = role as Role;
    const user = await this.change(id, { role: role as Role }, (u, others) => {
      from = u.role;
      if (role === 'operator') keepAnAdmin('make this one an operator')(u, others);
    });
    return { user, from };
  }

  /**
   * An admin sets a new password for someone who lost theirs (typed twice on the page). Their sessions end;
   * their API tokens stay (disable the account to stop those). Your own: change it on your account page,
   * which asks for the current one.
   */
  async resetPasswordOf(by: PublicUser, id: number, newPassword: unknown, confirmPassword?: unknown): Promise<{ user: ManagedUser; sessionsEnded: number }> {
    mustBeAdmin(by);
    if (id === by.id) {
      throw new LabError('conflict', 'This is your own account: change your password on the Change password page (it asks for the current one).', [{ field: 'user_id', message: 'your own account' }]);
    }
    const user = await this.store.users.byId(id);
    if (!user || user.deletedAt) throw noSuchUser(id);
    const { password } = checkCredentials(user.username, newPassword, 'new_password');
    checkConfirmation(password, confirmPassword);
    await this.store.users.setPassword(id, await hashPassword(password));
    const sessionsEnded = await this.store.sessions.destroyForUser(id);
    return { user: managedUser(user), sessionsEnded };
  }

  /**
   * Disable an account (it cannot log in; its sessions end and its API tokens are refused) or enable it
   * again (its tokens work again; it logs in anew). Not your own, and not the last admin who can log in.
   */
  async setDisabled(by: PublicUser, id: number, disabled: boolean): Promise<{ user: ManagedUser; sessionsEnded: number }> {
    mustBeAdmin(by);
    if (disabled && id === by.id) {
      throw new LabError('conflict', 'You cannot disable your own account: you would be locked out. Ask another admin.', [{ field: 'user_id', message: 'your own account' }]);
    }
    const user = await this.change(id, { disabled }, disabled ? keepAnAdmin('disable this one') : undefined);
    const sessionsEnded = disabled ? await this.store.sessions.destroyForUser(id) : 0;
    return { user, sessionsEnded };
  }

  /**
   * Delete an account. What it made (records, runs, queued tasks, workflows, uploads, the audit log) stays
   * and keeps its name, which no new account may take; the account's password, API tokens, sessions and
   * method preferences go. Not your own, and not the last admin who can log in.
   */
  async deleteUser(by: PublicUser, id: number): Promise<{ user: ManagedUser; sessionsEnded: number }> {
    mustBeAdmin(by);
    if (id === by.id) {
      throw new LabError('conflict', 'You cannot delete your own account. Ask another admin.', [{ field: 'user_id', message: 'your own account' }]);
    }
    const user = await this.change(id, { deleted: true }, keepAnAdmin('delete this one'));
    const sessionsEnded = await this.store.sessions.destroyForUser(id);
    return { user, sessionsEnded };
  }

  /** `users.change`, or 404 (a token or session acts with its user's new role and state at once: ./cache.ts). */
  private async change(id: number, patch: UserPatch, check?: (u: UserRow, otherActiveAdmins: number) => void): Promise<ManagedUser> {
    const user = await this.store.users.change(id, patch, check);
    if (!user) throw noSuchUser(id);
    return managedUser(user);
  }

  /**
   * A new API token; the plain token is returned once and only its hash is stored. Its scope is written in
   * the token itself, as GitHub's token prefixes do: `lab_…` acts as its user on every route, `labagent_…`
   * (scope `agent`) only serves instruments through `lab agent` (DESIGN.md §12), `labmcp_…` (scope `mcp`)
   * only opens /app/mcp (DESIGN.md §13).
   */
  async createToken(userId: number, name: string, scope: TokenScope = 'user') {
    const clean = name.trim().slice(0, 64) || 'token';
    const token = `${PREFIXES[scope]}${randomBytes(24).toString('base64url')}`;
    const row = await this.store.tokens.create({ userId, name: clean, tokenHash: hashToken(token), prefix: token.slice(0, 8) });
    return { token, row };
  }

  /** Revoke one of the user's tokens; the token as it was. */
  async revokeToken(userId: number, id: number) {
    const token = (await this.store.tokens.list(userId)).find((t) => t.id === id);
    if (!token || !(await this.store.tokens.revoke(userId, id))) throw new LabError('not_found', `No token ${id} on this account.`);
    return token;
  }

  tokens(userId: number) {
    return this.store.tokens.list(userId);
  }

  /** The user behind an agent token (`labagent_…`), or null: the only thing such a token opens. */
  async agentTokenUser(token: string): Promise<PublicUser | null> {
    return tokenScope(token) === 'agent' ? this.userForToken(token, 'agent') : null;
  }

  /** The user behind an agent token and which token it is, read from the database (an agent connecting). */
  async agentCaller(token: string): Promise<{ user: PublicUser; token: { id: number; name: string } } | null> {
    if (tokenScope(token) !== 'agent' || token.length > MAX_TOKEN_LENGTH) return null;
    const row = await this.store.tokens.userFor(hashToken(token));
    return row && active(row) ? { user: publicUser(row), token: row.token } : null;
  }

  /**
   * The user behind an MCP token (`labmcp_…`) and which token it is, read from the database each time (an
   * assistant calls a few times a minute; a revoked token or a disabled account is refused at once).
   */
  async mcpCaller(token: string): Promise<{ user: PublicUser; token: { id: number; name: string } } | null> {
    if (tokenScope(token) !== 'mcp') return null;
    const row = await this.store.tokens.userFor(hashToken(token));
    return row && active(row) ? { user: publicUser(row), token: row.token } : null;
  }

  /** The user behind a bearer token (a copy: scripts call at thousands of requests a second). */
  async userForToken(token: string, scope: TokenScope = 'user'): Promise<PublicUser | null> {
    // every token labdeck makes is a prefix and 32 characters: a longer one is no token (and is not kept)
    if (tokenScope(token) !== scope || token.length > MAX_TOKEN_LENGTH) return null;
    // the copy is found by the token itself (as the session's is by the cookie's value, server/session.ts):
    // it is hashed only when read from the database, not on every request
    const hit = await this.tokenUsers.get(token, async () => {
      const row = await this.store.tokens.userFor(hashToken(token));
      return { user: row && active(row) ? publicUser(row) : null, at: Date.now() };
    });
    return hit.user;
  }
}
