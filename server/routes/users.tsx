/**
 * The users page (admins): every account, and what an admin does to one: make it an admin or an operator,
 * reset its password, disable or enable it, delete it. Each action is a form post answered with a 302 back
 * to the page and a notice, or JSON (`{ user }`) for API clients; each is audit-logged. The rules (not your
 * own account, never the last admin) live in core/accounts.
 */
import { Router, type Request, type Response } from 'express';
import type { ManagedUser } from '../../core/accounts/index.js';
import type { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { ctxOf } from '../context.js';
import { MAX_ID, asLabError, intParam, render, requireAdmin, statusOf, url, wantsJson } from '../http.js';
import { UsersPage, type UserAction } from '../views/users.js';

const ACTIONS: readonly UserAction[] = ['role', 'password', 'disable', 'enable', 'delete'];

export function userRoutes(runtime: Runtime): Router {
  const r = Router();
  const { accounts } = runtime;

  /** The page, with the notice of an action just done (`?done=<action>&user=<id>`) or an error. */
  const page = async (req: Request, res: Response, error?: LabError) => {
    const users = await accounts.managedUsers(req.user!);
    const done = typeof req.query.done === 'string' && (ACTIONS as readonly string[]).includes(req.query.done) ? (req.query.done as UserAction) : undefined;
    const id = typeof req.query.user === 'string' && /^\d{1,10}$/.test(req.query.user) && Number(req.query.user) <= MAX_ID ? Number(req.query.user) : undefined;
    const user = id === undefined ? undefined : users.find((u) => u.id === id);
    // a deleted account is no longer listed: its name is looked up for the notice
    const username = done && id !== undefined ? (user?.username ?? (await accounts.userName(id))) : null;
    const notice = done && username ? { action: done, username, role: user?.role } : undefined;
    render(res, <UsersPage ctx={await ctxOf(req)} users={users} me={req.user!} done={notice} error={error} />, error ? statusOf(error) : 200);
  };

  r.get('/account/users', async (req, res) => {
    requireAdmin(req);
    if (wantsJson(req)) return res.json({ users: await accounts.managedUsers(req.user!) });
    await page(req, res);
  });

  /**
   * One admin action on the account `user_id`: the admin check comes first (an operator gets 403 whatever
   * the id), then the action, its audit line, and the answer.
   */
  const action = (name: UserAction, run: (req: Request, id: number) => Promise<{ user: ManagedUser; audit?: Record<string, unknown> }>) =>
    async (req: Request, res: Response) => {
      requireAdmin(req);
      try {
        const id = intParam(req.params.user_id, 'user_id');
        const { user, audit } = await run(req, id);
        await runtime.audit(req.user!.id, `user.${name}`, { user_id: user.id, username: user.username, ...audit });
        if (wantsJson(req)) return res.json({ user });
        // an admin who made themselves an operator may no longer see the users page
        const back = user.id === req.user!.id && user.role !== 'admin' ? url(req, '/account') : `${url(req, '/account/users')}?done=${name}&user=${user.id}`;
        res.redirect(302, back);
      } catch (e) {
        const err = asLabError(e);
        if (wantsJson(req)) throw err;
        await page(req, res, err);
      }
    };

  r.post(
    '/account/users/:user_id/role',
    action('role', async (req, id) => {
      const { user, from } = await accounts.setRole(req.user!, id, req.body?.role);
      return { user, audit: { from, to: user.role } };
    }),
  );
  r.post(
    '/account/users/:user_id/password',
    action('password', async (req, id) => {
      const { user, sessionsEnded } = await accounts.resetPasswordOf(req.user!, id, req.body?.new_password, req.body?.confirm_password);
      return { user, audit: { sessions_ended: sessionsEnded } };
    }),
  );
  r.post(
    '/account/users/:user_id/disable',
    action('disable', async (req, id) => {
      const { user, sessionsEnded } = await accounts.setDisabled(req.user!, id, true);
      return { user, audit: { sessions_ended: sessionsEnded } };
    }),
  );
  r.post(
    '/account/users/:user_id/enable',
    action('enable', async (req, id) => accounts.setDisabled(req.user!, id, false)),
  );
  r.post(
    '/account/users/:user_id/delete',
    action('delete', async (req, id) => {
      const { user, sessionsEnded } = await accounts.deleteUser(req.user!, id);
      return { user, audit: { sessions_ended: sessionsEnded } };
    }),
  );

  return r;
}
