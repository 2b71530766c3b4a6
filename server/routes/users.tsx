/**
 * The users page (admins): every account, and what an admin does to one: make it an admin or an operator,
 * reset its password, disable or enable it, delete it. Each action is a form post answered with a 302 back
 * to the page and a notice, or JSON (`{ user }`) for API clients; each is audit-logged. The rules (not your
 * own account, never the last admin) live in core/accounts.
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { ROLES, type ManagedUser } from '../../core/accounts/index.js';
import type { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import type { Caller, Role } from '../../core/operations/index.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { error, json, pageOrJson, redirect, type ResponseObject } from '../api-doc.js';
import { render, statusOf, url } from '../http.js';
import { failed, redirectTo, respond } from '../respond.js';
import { ID, handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { UsersPage, type UserAction } from '../views/users.js';
import { CONFIRM_PASSWORD, NEW_PASSWORD, NO_FIELDS } from './auth.js';

const ACTIONS = ['role', 'password', 'disable', 'enable', 'delete'] as const satisfies readonly UserAction[];

const SECTION = 'Accounts';
/** The account an action is about. */
const ONE = z.object({ user_id: ID.describe('The integer id of an account (GET /app/account/users)') });

/** The answers of an admin's action on an account (POST /account/users/{user_id}/…). */
const USER_ACTION = (invalid?: string): Record<string, ResponseObject> => ({
  200: json('Done (JSON clients): the account as it is now', 'UserChanged'),
  302: redirect('Done (pages): back to the users page, which says what was done (`?done=<action>&user=<id>`)'),
  400: error(invalid ? `user_id is not a positive integer, or: ${invalid}` : 'user_id is not a positive integer'),
  404: error('No such account (or it was deleted)'),
  409: error('Not your own account (disable, delete, reset), and not the last admin who can log in (demote, disable, delete)'),
});

export const USER_ROUTES = {
  list: route({
    method: 'GET',
    path: '/account/users',
    section: SECTION,
    summary: 'Every account, its role and state; what an admin may do to each',
    access: 'admin',
    operationId: 'listUsers',
    query: z.object({
      format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header'),
      // a notice that does not fit is left out, not an error: the page is shown anyway
      done: z.enum(ACTIONS).optional().catch(undefined).describe('The action just done, for the notice: role, password, disable, enable or delete'),
      user: ID.optional().catch(undefined).describe('The id of the account it was done to'),
    }),
    responses: { 200: pageOrJson('The users page, or every account that is not deleted', 'UserList') },
  }),
  role: route({
    method: 'POST',
    path: '/account/users/{user_id}/role',
    section: SECTION,
    summary: 'Make an account an admin or an operator: { role }',
    access: 'admin',
    operationId: 'setUserRole',
    description: 'The last admin who can log in stays an admin. Audit-logged (`user.role`).',
    params: ONE,
    body: { name: 'RoleBody', schema: z.object({ role: z.enum(ROLES as [Role, ...Role[]], 'must be admin or operator') }) },
    responses: USER_ACTION('role is not admin or operator'),
  }),
  password: route({
    method: 'POST',
    path: '/account/users/{user_id}/password',
    section: SECTION,
    summary: "Set someone's new password: { new_password, confirm_password? }; their sessions end",
    access: 'admin',
    operationId: 'resetUserPassword',
    description:
      "The admin sets the new password and gives it to the user, who may change it later. The user's sessions end; their API tokens stay. Not for your own account (use POST /app/auth/change-password). Audit-logged (`user.password`, without the password).",
    params: ONE,
    body: { name: 'ResetPasswordBody', schema: z.object({ new_password: NEW_PASSWORD, confirm_password: CONFIRM_PASSWORD }) },
    responses: USER_ACTION('The new password is too short or too long, or confirm_password differs'),
  }),
  disable: route({
    method: 'POST',
    path: '/account/users/{user_id}/disable',
    section: SECTION,
    summary: 'Disable an account: no log-in; its sessions end, its API tokens are refused',
    access: 'admin',
    operationId: 'disableUser',
    description:
      'The account cannot log in; its sessions end and its API tokens are refused until it is enabled. Not your own account, not the last admin who can log in. Audit-logged (`user.disable`).',
    params: ONE,
    body: NO_FIELDS,
    responses: USER_ACTION(),
  }),
  enable: route({
    method: 'POST',
    path: '/account/users/{user_id}/enable',
    section: SECTION,
    summary: 'Enable a disabled account again',
    access: 'admin',
    operationId: 'enableUser',
    description: 'The account may log in again; its API tokens work again. Audit-logged (`user.enable`).',
    params: ONE,
    body: NO_FIELDS,
    responses: USER_ACTION(),
  }),
  delete: route({
    method: 'POST',
    path: '/account/users/{user_id}/delete',
    section: SECTION,
    summary: 'Delete an account; what it made keeps its name',
    access: 'admin',
    operationId: 'deleteUser',
    description:
      "The account's password, API tokens, sessions and method preferences go; its records, runs, queued tasks, workflows and uploads stay and keep its name, which no new account may take. Not your own account, not the last admin who can log in. Audit-logged (`user.delete`).",
    params: ONE,
    body: NO_FIELDS,
    responses: USER_ACTION(),
  }),
};

export function userRoutes(runtime: Runtime): Router {
  const r = Router();
  const ops = runtime.ops.accounts;

  /** The page, with the notice of an action just done (`?done=<action>&user=<id>`) or an error. */
  const pageOf = async (req: Request, users: ManagedUser[], extra: { error?: LabError; done?: UserAction; id?: number } = {}) => {
    const { error: err, done, id } = extra;
    const user = id === undefined ? undefined : users.find((u) => u.id === id);
    // a deleted account is no longer listed: its name is looked up for the notice
    const username = done && id !== undefined ? (user?.username ?? (await ops.userName(id))) : null;
    const notice = done && username ? { action: done, username, role: user?.role } : undefined;
    return <UsersPage ctx={await ctxOf(req)} users={users} me={req.user!} done={notice} error={err} />;
  };
  const page = async (req: Request, res: Response, extra: { error?: LabError } = {}) => {
    const err = extra.error;
    render(res, await pageOf(req, await ops.managedUsers(callerOf(req, 'app')), extra), err ? statusOf(err) : 200);
  };

  handle(r, USER_ROUTES.list, async (req, res, { query }) => {
    const users = await ops.managedUsers(callerOf(req, 'app'));
    await respond(req, res, { json: { users }, html: () => pageOf(req, users, { done: query.done, id: query.user }) });
  });

  /** An action whose input does not fit: the users page with the message (JSON clients get the error). */
  const formAgain = (req: Request, res: Response, err: LabError) => page(req, res, { error: err });

  /**
   * One admin action on the account `user_id` (the admin check and the input come first, in `handle`): the
   * action, its audit line, and the answer.
   */
  const act = async (req: Request, res: Response, name: UserAction, run: (caller: Caller) => Promise<ManagedUser>) => {
    try {
      const user = await run(callerOf(req, 'app'));
      // an admin who made themselves an operator may no longer see the users page
      const back = user.id === req.user!.id && user.role !== 'admin' ? url(req, '/account') : `${url(req, '/account/users')}?done=${name}&user=${user.id}`;
      await redirectTo(req, res, back, { user });
    } catch (e) {
      await failed(req, res, e, (err) => page(req, res, { error: err }));
    }
  };

  handle(r, USER_ROUTES.role, (req, res, { params, body }) => act(req, res, 'role', (caller) => ops.setRole(caller, params.user_id, body.role)), formAgain);
  handle(
    r,
    USER_ROUTES.password,
    (req, res, { params, body }) => act(req, res, 'password', (caller) => ops.resetPassword(caller, params.user_id, body.new_password, body.confirm_password)),
    formAgain,
  );
  handle(r, USER_ROUTES.disable, (req, res, { params }) => act(req, res, 'disable', (caller) => ops.disable(caller, params.user_id)), formAgain);
  handle(r, USER_ROUTES.enable, (req, res, { params }) => act(req, res, 'enable', (caller) => ops.enable(caller, params.user_id)), formAgain);
  handle(r, USER_ROUTES.delete, (req, res, { params }) => act(req, res, 'delete', (caller) => ops.remove(caller, params.user_id)), formAgain);

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const USERS_GROUP = routeGroup({ name: 'users', routes: USER_ROUTES, mount: userRoutes });
