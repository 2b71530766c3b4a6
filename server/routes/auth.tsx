/**
 * Accounts: login, sign-up, password change, logout, and the account page (API tokens, sign-up switch). The
 * users page (admins managing accounts) is routes/users.tsx.
 *
 * Two routers: `authRoutes` (log in, sign up, log out: public, mounted before the login gate) and
 * `accountRoutes` (the rest: mounted behind it).
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { callerOf } from '../caller.js';
import { MIN_PASSWORD, USERNAME_RE, tokenScope } from '../../core/accounts/index.js';
import { AGENT_NAME_RE } from '../../core/contracts/host.js';
import { empty, error, json, page, pageOrJson, redirect } from '../api-doc.js';
import { asLabError, render, statusOf, url } from '../http.js';
import { failed, redirectTo, respond } from '../respond.js';
import { ID, handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { deviceOf, rememberDevice } from '../remembered-device.js';
import { crossSiteGet } from '../security.js';
import { ChangePasswordPage, LoginPage, SignupPage } from '../views/auth.js';
import { AccountPage } from '../views/account.js';
import { ctxOf } from '../context.js';

const SECTION = 'Accounts';
const FORMAT = z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header');
/** A text query parameter; anything else (a repeated key) reads as absent, as it always did. */
const text = (description: string) => z.string().optional().catch(undefined).describe(description);

const USERNAME = z.string().regex(USERNAME_RE, 'must be 1-64 letters, digits or . _ @ -').describe('1-64 letters, digits or . _ @ -');
/** A new password; the messages are the ones the accounts module gives (`lab user` uses it too). */
export const NEW_PASSWORD = z.string().min(MIN_PASSWORD, `must be at least ${MIN_PASSWORD} characters`).max(1024, 'must be at most 1024 characters').describe(`At least ${MIN_PASSWORD} characters`);
export const CONFIRM_PASSWORD = z.string().optional().describe('The new password again (the form always sends it); when sent it must match');
/** The body of a route that takes no fields: any field sent is refused by name. */
export const NO_FIELDS = { name: 'NoFields', schema: z.object({}), description: 'None: the route takes no fields (a field sent is refused by name)' };

const LOGGED_OUT = redirect('To the login form, which says so (`?logged_out=1`); the session ends');

export const AUTH_ROUTES = {
  loginForm: route({
    method: 'GET',
    path: '/auth/login',
    section: SECTION,
    summary: 'Login form',
    access: 'public',
    operationId: 'loginForm',
    query: z.object({
      next: text('A path in this app to go to after login'),
      signed_up: text('Say "Account created" (where sign-up leads)'),
      username: text('Fill in the username (where sign-up leads)'),
      logged_out: text('Say "You are logged out" (where log-out leads)'),
    }),
    responses: { 200: page('The login form') },
  }),
  login: route({
    method: 'POST',
    path: '/auth/login',
    section: SECTION,
    summary: 'Log in (302; 401 wrong password; 429 throttled)',
    access: 'public',
    operationId: 'login',
    description: 'Sets the `labdeck.sid` session cookie. Throttled per username and address.',
    query: z.object({ next: text('A path in this app to go to (anything else: the home page)') }),
    body: { name: 'LoginBody', schema: z.object({ username: z.string(), password: z.string() }) },
    responses: {
      302: redirect('Logged in: to `next` or the home page, with the session cookie'),
      400: error('A field missing, not text or unknown (details name it; pages: the login form with the message), or a log-in that carries an API token'),
      401: error('Wrong username or password: the login form with the message'),
      403: error('The right password, but an admin disabled the account'),
      429: {
        ...error('Too many failed logins: wait Retry-After seconds'),
        headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
      },
    },
  }),
  signupForm: route({
    method: 'GET',
    path: '/auth/signup',
    section: SECTION,
    summary: 'Sign-up form',
    access: 'public',
    operationId: 'signupForm',
    responses: { 200: page('The sign-up form') },
  }),
  signup: route({
    method: 'POST',
    path: '/auth/signup',
    section: SECTION,
    summary: 'Create an account (302; 409 taken)',
    access: 'public',
    operationId: 'signup',
    description: 'The first account is an admin, later ones operators.',
    body: { name: 'SignupBody', schema: z.object({ username: USERNAME, password: NEW_PASSWORD }) },
    responses: {
      302: redirect('Created: to the login form with the name filled in (`?signed_up=1&username=…`); the password is typed once more to log in'),
      400: error('Bad username or password (details name the field)'),
      403: error('Sign-up is closed'),
      409: error('The user already exists: the sign-up form with the message'),
    },
  }),
  changePasswordForm: route({
    method: 'GET',
    path: '/auth/change-password',
    section: SECTION,
    summary: 'Password change form',
    operationId: 'changePasswordForm',
    responses: { 200: page('The password change form') },
  }),
  changePassword: route({
    method: 'POST',
    path: '/auth/change-password',
    section: SECTION,
    summary: 'Change the password: old_password, new_password, confirm_password (302)',
    operationId: 'changePassword',
    description: "Ends the user's other sessions (API tokens stay). Audit-logged.",
    body: { name: 'ChangePasswordBody', schema: z.object({ old_password: z.string(), new_password: NEW_PASSWORD, confirm_password: CONFIRM_PASSWORD }) },
    responses: {
      302: redirect('Changed: to the home page, which says so (`?password_changed=1`)'),
      400: error('The new password is too short or too long, or confirm_password differs (details name the field)'),
      401: error('The current password is wrong'),
    },
  }),
  logout: route({
    method: 'POST',
    path: '/auth/logout',
    section: SECTION,
    summary: 'Log out (302 to the login form; GET works too)',
    access: 'public',
    operationId: 'logout',
    body: NO_FIELDS,
    responses: { 302: LOGGED_OUT },
  }),
  logoutLink: route({
    method: 'GET',
    path: '/auth/logout',
    section: SECTION,
    summary: 'Log out, for a plain link (same as POST; 403 from a link on another site)',
    access: 'public',
    operationId: 'logoutLink',
    responses: { 302: LOGGED_OUT, 403: error('A link or page on another site (Sec-Fetch-Site, Origin or Referer): nobody is logged out') },
  }),
  account: route({
    method: 'GET',
    path: '/account',
    section: SECTION,
    summary: 'Your account: API tokens; lab settings for admins',
    operationId: 'account',
    query: z.object({ format: FORMAT }),
    responses: { 200: pageOrJson('Your account: API tokens; all users and the sign-up switch for admins', 'Account') },
  }),
  createToken: route({
    method: 'POST',
    path: '/account/tokens',
    section: SECTION,
    summary: 'Make an API token (shown once)',
    operationId: 'createToken',
    description:
      'scope `agent` (admins only) makes a token for `lab agent` on an instrument PC: it serves instruments and opens nothing else; scope `mcp` makes one for an AI assistant: it opens the MCP server (/app/mcp) and nothing else.',
    body: {
      name: 'TokenBody',
      schema: z.object({
        name: z.string().max(64).optional().describe('A label for the token (default "token")'),
        scope: z.enum(['user', 'agent', 'mcp']).optional().describe('user (default): acts as you on every route; agent: only for `lab agent` (admins); mcp: only for an AI assistant at /app/mcp'),
        agent_name: z
          .string()
          .max(64)
          .optional()
          .describe(
            'An agent token only: the `lab agent --name` of the PC it is for. That name is bound to the new token at once (taken from any other token, audited): only it may serve under the name. Without it, a name belongs to the first agent token that connects under it.',
          ),
      }),
    },
    responses: {
      201: pageOrJson('The new token, shown once (the account page, or JSON)', 'TokenCreated'),
      403: error('An agent token asked for by someone who is not an admin'),
    },
  }),
  revokeToken: route({
    method: 'POST',
    path: '/account/tokens/{id}/delete',
    section: SECTION,
    summary: 'Revoke an API token',
    operationId: 'revokeToken',
    params: z.object({ id: ID.describe('The integer id of an API token') }),
    body: NO_FIELDS,
    responses: {
      204: empty('Revoked (JSON clients)'),
      302: redirect('Revoked: to the account page (pages)'),
      400: error('id is not a positive integer'),
      404: error('No such token on your account'),
    },
  }),
  setSignupOpen: route({
    method: 'POST',
    path: '/account/signup',
    section: SECTION,
    summary: 'Open or close sign-up',
    access: 'admin',
    operationId: 'setSignupOpen',
    description: 'Audit-logged.',
    body: {
      name: 'SignupSwitchBody',
      schema: z.object({
        open: z
          .union([z.boolean(), z.string()], { error: (issue) => (issue.input === undefined ? 'is required (true or false)' : 'must be true or false') })
          .describe('true, "true", "on" or "1" open sign-up; any other value closes it'),
      }),
    },
    responses: {
      200: json('The new state (JSON clients)', 'SignupState'),
      302: redirect('Saved: to the account page (pages)'),
      400: error('open is missing'),
    },
  }),
};

/** Only same-app paths are followed after login (no open redirect). */
function safeNext(req: Request, next: string | undefined): string {
  const n = next ?? '';
  return n.startsWith('/') && !n.startsWith('//') && !n.includes('\\') ? n : url(req, '/');
}

/** A query value as the form's pages read it when the input did not fit (the handler gets it parsed). */
const textOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const regenerate = (req: Request) => new Promise<void>((resolve, reject) => req.session.regenerate((e) => (e ? reject(e) : resolve())));
/** Write the session now: a log-in that could not be stored (a full disk: 507) says so instead of a cookie for nothing. */
const saveSession = (req: Request) => new Promise<void>((resolve, reject) => req.session.save((e) => (e ? reject(e) : resolve())));

/** Log in, sign up, log out: public, mounted before the login gate. */
export function authRoutes(runtime: Runtime, opts: { secret: string }): Router {
  const r = Router();
  const accounts = runtime.ops.accounts;

  handle(r, AUTH_ROUTES.loginForm, async (req, res, { query }) => {
    // after sign-up the form comes with the new name filled in; after log-out it says so
    const username = query.username !== undefined && USERNAME_RE.test(query.username) ? query.username : undefined;
    const notice = query.signed_up ? `Account created${username ? ` for ${username}` : ''}: enter your password to log in.` : query.logged_out ? 'You are logged out.' : undefined;
    render(res, <LoginPage ctx={await ctxOf(req)} next={query.next} notice={notice} username={username} />);
  });

  /** The login form again, with the message and the name typed. */
  const loginAgain = async (req: Request, res: Response, err: LabError, next: string | undefined, username: unknown) => {
    render(res, <LoginPage ctx={await ctxOf(req)} next={next} error={err} username={typeof username === 'string' ? username : ''} />, statusOf(err));
  };

  handle(
    r,
    AUTH_ROUTES.login,
    async (req, res, { query, body: { username, password } }) => {
      try {
        // a token-authenticated request has no session to log in (it was a 500)
        if (!req.session) {
          throw new LabError('invalid_input', 'This request carries an API token (Authorization: Bearer …), which needs no log-in; to log a browser in, send the form without that header.', [
            { field: 'Authorization', message: 'not with a log-in' },
          ]);
        }
        const device = deviceOf(req, opts.secret, username);
        const user = await accounts.login(username, password, req.ip, { device });
        await regenerate(req);
        req.session.userId = user.id;
        await saveSession(req);
        const stamp = await accounts.passwordStampOf(user.id);
        if (stamp) rememberDevice(res, opts.secret, user.username, stamp, device);
        res.redirect(302, safeNext(req, query.next));
      } catch (e) {
        const err = asLabError(e);
        if (err.code === 'too_many_requests') res.set('Retry-After', String(err.data?.retry_after ?? 60));
        await failed(req, res, err, (again) => loginAgain(req, res, again, query.next, username));
      }
    },
    (req, res, err) => loginAgain(req, res, err, textOf(req.query.next), (req.body as Record<string, unknown> | undefined)?.username),
  );

  handle(r, AUTH_ROUTES.signupForm, async (req, res) => {
    render(res, <SignupPage ctx={await ctxOf(req)} first={await accounts.none()} closed={!(await accounts.signupOpen())} />);
  });

  /** The sign-up form again, with the message and the name typed. */
  const signupAgain = async (req: Request, res: Response, err: LabError, username: unknown) => {
    const first = await accounts.none();
    render(res, <SignupPage ctx={await ctxOf(req)} error={err} first={first} closed={err.code === 'forbidden'} username={typeof username === 'string' ? username : ''} />, statusOf(err));
  };

  handle(
    r,
    AUTH_ROUTES.signup,
    async (req, res, { body: { username, password } }) => {
      try {
        const user = await accounts.signup(username, password);
        // the spec's answer: the login form, here with the new name filled in (the password is typed once more)
        res.redirect(302, `${url(req, '/auth/login')}?signed_up=1&username=${encodeURIComponent(user.username)}`);
      } catch (e) {
        await failed(req, res, e, (err) => signupAgain(req, res, err, username));
      }
    },
    (req, res, err) => signupAgain(req, res, err, (req.body as Record<string, unknown> | undefined)?.username),
  );

  const logout = async (req: Request, res: Response) => {
    // a GET from another site (an <img src=…/logout>, a link on another port) must not log anyone out
    const from = req.method === 'GET' ? crossSiteGet(req) : null;
    if (from) throw new LabError('forbidden', `Log out from labdeck itself: a link or a form on another site cannot (${from}).`);
    // ended in the database, so on every host, before the answer says so (a failure says so: 507, not "logged out")
    if (req.session) await new Promise<void>((resolve, reject) => req.session.destroy((e) => (e ? reject(e) : resolve())));
    res.clearCookie('labdeck.sid');
    res.redirect(302, `${url(req, '/auth/login')}?logged_out=1`);
  };
  handle(r, AUTH_ROUTES.logout, logout);
  handle(r, AUTH_ROUTES.logoutLink, logout);

  return r;
}

/** The password change and the account page: mounted behind the login gate. */
export function accountRoutes(runtime: Runtime): Router {
  const r = Router();
  const accounts = runtime.ops.accounts;

  handle(r, AUTH_ROUTES.changePasswordForm, async (req, res) => {
    render(res, <ChangePasswordPage ctx={await ctxOf(req)} />);
  });

  /** The password change form again, with the message. */
  const changeAgain = async (req: Request, res: Response, err: LabError) => render(res, <ChangePasswordPage ctx={await ctxOf(req)} error={err} />, statusOf(err));

  handle(
    r,
    AUTH_ROUTES.changePassword,
    async (req, res, { body }) => {
      try {
        // whoever knew the old password is logged out everywhere else; this session goes on
        await accounts.changePassword(callerOf(req, 'app'), { old: body.old_password, new: body.new_password, confirm: body.confirm_password }, req.sessionID);
        res.redirect(302, `${url(req, '/')}?password_changed=1`);
      } catch (e) {
        await failed(req, res, e, (err) => changeAgain(req, res, err));
      }
    },
    changeAgain,
  );

  handle(r, AUTH_ROUTES.account, async (req, res) => {
    const user = req.user!;
    const data = {
      user,
      tokens: await accounts.tokens(callerOf(req, 'app')),
      signup_open: await accounts.signupOpen(),
      users: user.role === 'admin' ? await accounts.users() : undefined,
    };
    await respond(req, res, {
      json: { ...data, tokens: data.tokens.map((t) => ({ id: t.id, name: t.name, prefix: t.prefix, scope: tokenScope(t.prefix), created_at: t.createdAt, last_used_at: t.lastUsedAt })) },
      html: async () => <AccountPage ctx={await ctxOf(req)} {...data} />,
    });
  });

  handle(r, AUTH_ROUTES.createToken, async (req, res, { body }) => {
    const scope = body.scope ?? 'user';
    if (scope === 'agent' && req.user!.role !== 'admin') throw new LabError('forbidden', 'Only an admin can make an agent token.', [{ field: 'scope', message: 'admins only' }]);
    const agentName = body.agent_name?.trim() || undefined;
    if (agentName !== undefined && scope !== 'agent')
      throw new LabError('invalid_input', 'agent_name is for an agent token (scope "agent") only.', [{ field: 'agent_name', message: 'only with scope agent' }]);
    if (agentName !== undefined && !AGENT_NAME_RE.test(agentName)) {
      throw new LabError('invalid_input', 'agent_name must be an agent\'s name: letters, digits, ".", "_" and "-", at most 64 (as lab agent --name).', [
        { field: 'agent_name', message: 'not an agent name' },
      ]);
    }
    const { token, row } = await accounts.createToken(callerOf(req, 'app'), body.name ?? '', scope);
    if (agentName) await accounts.bindAgentName(callerOf(req, 'app'), agentName, { id: row.id, name: row.name });
    const user = req.user!;
    await respond(req, res, {
      json: { token, id: row.id, name: row.name, scope, ...(agentName ? { agent_name: agentName } : {}) },
      html: async () => (
        <AccountPage
          ctx={await ctxOf(req)}
          user={user}
          tokens={await accounts.tokens(callerOf(req, 'app'))}
          signup_open={await accounts.signupOpen()}
          users={user.role === 'admin' ? await accounts.users() : undefined}
          newToken={token}
        />
      ),
      status: 201,
    });
  });

  handle(r, AUTH_ROUTES.revokeToken, async (req, res, { params }) => {
    await accounts.revokeToken(callerOf(req, 'app'), params.id); // what it asked for can never run now
    await redirectTo(req, res, url(req, '/account'), undefined, { status: 204 });
  });

  handle(r, AUTH_ROUTES.setSignupOpen, async (req, res, { body: { open: v } }) => {
    const open = v === true || v === 'true' || v === 'on' || v === '1';
    await accounts.setSignupOpen(callerOf(req, 'app'), open);
    await redirectTo(req, res, url(req, '/account'), { signup_open: open });
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const AUTH_GROUP = routeGroup({
  name: 'auth',
  routes: AUTH_ROUTES,
  mount: (runtime, ctx) => [authRoutes(runtime, ctx), accountRoutes(runtime)],
});
