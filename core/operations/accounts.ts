/**
 * Operations on accounts (DESIGN.md §8, §15). What changes who may do what is audited: a password changed
 * (other sessions ended; `password.change`), a token revoked (what it asked for in the approval inbox can never
 * run), sign-up opened or closed (`signup.open|close`), an admin's changes to an account
 * (`user.role|password|disable|enable|delete`), and an agent's name bound to its token (`agent.name.bound`,
 * written by core/hosts/agent.ts as it binds). Logging in, signing up, making a token and reading accounts
 * (names, lists, the password stamp a remembered device carries, who a token belongs to) are operations here
 * too, not audited, as before: no door reaches core/accounts itself.
 */
import type { ManagedUser, PublicUser, TokenScope } from '../accounts/index.js';
import { LabError } from '../errors.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

/** The caller as core/accounts knows the account acting. */
function accountOf(caller: Caller): PublicUser {
  if (caller.userId === null) throw new LabError('unauthenticated', 'Log in first: this changes an account.');
  return { id: caller.userId, username: caller.name, role: caller.role ?? 'operator' };
}

export function accountOperations(lab: Lab) {
  const { accounts, store, agents } = lab;
  /** An admin's change to an account, and its audit line `user.<action>` (with what the change says). */
  const managed = async (caller: Caller, action: string, change: Promise<{ user: ManagedUser; audit?: Record<string, unknown> }>) => {
    const { user, audit: detail } = await change;
    await audit(lab, caller, `user.${action}`, { user_id: user.id, username: user.username, ...detail });
    return user;
  };
  return {
    /** No account exists yet (the first to sign up is the admin). */
    async none(): Promise<boolean> {
      return (await store.users.count()) === 0;
    },

    /** Check a name and password (throttled per address and name; a remembered `device` is throttled on its own). */
    login(username: unknown, password: unknown, address?: string, opts?: Parameters<typeof accounts.login>[3]): Promise<PublicUser> {
      return accounts.login(username, password, address, opts);
    },

    /** What a remembered device's cookie is signed with (changes with the password), or null for no such account. */
    passwordStampOf(id: number): Promise<string | null> {
      return accounts.passwordStampOf(id);
    },

    /** Make an account (the first is an admin; refused while sign-up is closed). */
    signup(username: unknown, password: unknown): Promise<PublicUser> {
      return accounts.signup(username, password);
    },

    /** May people sign up themselves now? */
    signupOpen(): Promise<boolean> {
      return accounts.signupOpen();
    },

    /** The name of any account, deleted ones too; null: no such id. */
    userName(id: number): Promise<string | null> {
      return accounts.userName(id);
    },

    /** Every account that is not deleted (the account page shows them to an admin). */
    users(): Promise<PublicUser[]> {
      return accounts.users();
    },

    /** Every account that is not deleted, with its state (admins only: core/accounts checks). */
    managedUsers(caller: Caller): Promise<ManagedUser[]> {
      return accounts.managedUsers(accountOf(caller));
    },

    /** The caller's API tokens. */
    tokens(caller: Caller) {
      return accounts.tokens(accountOf(caller).id);
    },

    /** Make a token for the caller (its secret is in the answer, once). */
    createToken(caller: Caller, name: string, scope: TokenScope) {
      return accounts.createToken(accountOf(caller).id, name, scope);
    },

    /** Bind an agent's name to an agent token, so only that token serves under it (audited `agent.name.bound`). */
    bindAgentName(caller: Caller, agent: string, token: { id: number; name: string }): Promise<void> {
      return agents.bindName(agent, token, accountOf(caller).id);
    },

    /** The user and the token behind an agent token (`labagent_…`), or null: an agent connecting. */
    agentCaller(token: string) {
      return accounts.agentCaller(token);
    },

    /** The user behind an agent token, or null (revoked, or its account disabled): a connected agent rechecked. */
    agentTokenUser(token: string): Promise<PublicUser | null> {
      return accounts.agentTokenUser(token);
    },

    /** The user behind an API token of an account (`Authorization: Bearer …`), or null (unknown or revoked): the login gate. */
    tokenUser(token: string): Promise<PublicUser | null> {
      return accounts.userForToken(token);
    },

    /** The user and the token behind an MCP token, or null (unknown, revoked, or its account disabled): an AI assistant's connection. */
    mcpCaller(token: string) {
      return accounts.mcpCaller(token);
    },

    /** A session's account as it is now, or null (deleted or disabled); `since`: when the session was read (its changes since are seen). */
    sessionUser(id: number, since?: number): Promise<PublicUser | null> {
      return accounts.user(id, since);
    },

    /** Change the caller's own password; the caller's other sessions end (`keep`: the session it came with). */
    async changePassword(caller: Caller, input: { old: unknown; new: unknown; confirm?: unknown }, keep: string | undefined): Promise<void> {
      const me = accountOf(caller);
      await accounts.changePassword(me.id, input.old, input.new, input.confirm);
      // whoever knew the old password is logged out everywhere else; this session goes on
      const ended = await store.sessions.destroyForUser(me.id, keep);
      await audit(lab, caller, 'password.change', { other_sessions_ended: ended });
    },

    /** Revoke one of the caller's tokens: its pending approval requests are rejected, saying so. */
    async revokeToken(caller: Caller, id: number) {
      const me = accountOf(caller);
      const token = await accounts.revokeToken(me.id, id);
      await lab.approvals.tokenRevoked(token, me); // what it asked for can never run now
      return token;
    },

    /** Open or close sign-up (admins: the route says so). */
    async setSignupOpen(caller: Caller, open: boolean): Promise<void> {
      await accounts.setSignupOpen(open);
      await audit(lab, caller, `signup.${open ? 'open' : 'close'}`);
    },

    setRole(caller: Caller, id: number, role: unknown): Promise<ManagedUser> {
      return managed(
        caller,
        'role',
        accounts.setRole(accountOf(caller), id, role).then(({ user, from }) => ({ user, audit: { from, to: user.role } })),
      );
    },

    resetPassword(caller: Caller, id: number, password: unknown, confirm?: unknown): Promise<ManagedUser> {
      return managed(
        caller,
        'password',
        accounts.resetPasswordOf(accountOf(caller), id, password, confirm).then(({ user, sessionsEnded }) => ({ user, audit: { sessions_ended: sessionsEnded } })),
      );
    },

    disable(caller: Caller, id: number): Promise<ManagedUser> {
      return managed(
        caller,
        'disable',
        accounts.setDisabled(accountOf(caller), id, true).then(({ user, sessionsEnded }) => ({ user, audit: { sessions_ended: sessionsEnded } })),
      );
    },

    enable(caller: Caller, id: number): Promise<ManagedUser> {
      return managed(
        caller,
        'enable',
        accounts.setDisabled(accountOf(caller), id, false).then(({ user }) => ({ user })),
      );
    },

    remove(caller: Caller, id: number): Promise<ManagedUser> {
      return managed(
        caller,
        'delete',
        accounts.deleteUser(accountOf(caller), id).then(({ user, sessionsEnded }) => ({ user, audit: { sessions_ended: sessionsEnded } })),
      );
    },
  };
}
