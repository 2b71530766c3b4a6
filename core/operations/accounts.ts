/**
 * Operations on accounts (DESIGN.md §8, §15) that change who may do what: a password changed (other sessions
 * ended; audited `password.change`), a token revoked (what it asked for in the approval inbox can never run),
 * sign-up opened or closed (audited `signup.open|close`), and an admin's changes to an account (audited
 * `user.role|password|disable|enable|delete`). Logging in, signing up and reading accounts stay on core/accounts.
 */
import type { ManagedUser, PublicUser } from '../accounts/index.js';
import { LabError } from '../errors.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

/** The caller as core/accounts knows the account acting. */
function accountOf(caller: Caller): PublicUser {
  if (caller.userId === null) throw new LabError('unauthenticated', 'Log in first: this changes an account.');
  return { id: caller.userId, username: caller.name, role: caller.role ?? 'operator' };
}

export function accountOperations(lab: Lab) {
  const { accounts, store } = lab;
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
      return managed(caller, 'role', accounts.setRole(accountOf(caller), id, role).then(({ user, from }) => ({ user, audit: { from, to: user.role } })));
    },

    resetPassword(caller: Caller, id: number, password: unknown, confirm?: unknown): Promise<ManagedUser> {
      return managed(caller, 'password', accounts.resetPasswordOf(accountOf(caller), id, password, confirm).then(({ user, sessionsEnded }) => ({ user, audit: { sessions_ended: sessionsEnded } })));
    },

    disable(caller: Caller, id: number): Promise<ManagedUser> {
      return managed(caller, 'disable', accounts.setDisabled(accountOf(caller), id, true).then(({ user, sessionsEnded }) => ({ user, audit: { sessions_ended: sessionsEnded } })));
    },

    enable(caller: Caller, id: number): Promise<ManagedUser> {
      return managed(caller, 'enable', accounts.setDisabled(accountOf(caller), id, false).then(({ user }) => ({ user })));
    },

    remove(caller: Caller, id: number): Promise<ManagedUser> {
      return managed(caller, 'delete', accounts.deleteUser(accountOf(caller), id).then(({ user, sessionsEnded }) => ({ user, audit: { sessions_ended: sessionsEnded } })));
    },
  };
}
