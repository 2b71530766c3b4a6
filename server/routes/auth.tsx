/**
 * Accounts: login, sign-up, password change, logout, and the account page (API tokens, sign-up switch). The
 * users page (admins managing accounts) is routes/users.tsx.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { USERNAME_RE } from '../../core/accounts/index.js';
import { asLabError, render, requireAdmin, statusOf, url, wantsJson, intParam } from '../http.js';
import { ChangePasswordPage, LoginPage, SignupPage } from '../views/auth.js';
import { AccountPage } from '../views/account.js';
import { ctxOf } from '../context.js';
import { requireLogin } from '../security.js';

/** Only same-app paths are followed after login (no open redirect). */
function safeNext(req: Request): string {
  const n = typeof req.query.next === 'string' ? req.query.next : '';
  return n.startsWith('/') && !n.startsWith('//') && !n.includes('\\') ? n : url(req, '/');
}

const regenerate = (req: Request) =>
  new Promise<void>((resolve, reject) => req.session.regenerate((e) => (e ? reject(e) : resolve())));

/**
 * A browser a user has logged in from before carries a signed `labdeck.device` cookie naming them. The
 * failed-login throttle stops an attacker guessing a password; it must not lock the scientist out of a PC
 * shared with them: a known browser with the right password still gets in.
 */
const DEVICE_COOKIE = 'labdeck.device';
const deviceSig = (secret: string, username: string) => createHmac('sha256', secret).update(`device:${username}`).digest('base64url');

function knownDevice(req: Request, secret: string, username: unknown): boolean {
  if (typeof username !== 'string') return false;
  const raw = (req.headers.cookie ?? '').split(/;\s*/).find((c) => c.startsWith(`${DEVICE_COOKIE}=`));
  if (!raw) return false;
  let value: string;
  try {
    value = decodeURIComponent(raw.slice(DEVICE_COOKIE.length + 1));
  } catch {
    return false; // a malformed cookie vouches for nobody
  }
  const dot = value.lastIndexOf('.');
  if (dot < 0 || value.slice(0, dot) !== username) return false;
  const expected = Buffer.from(deviceSig(secret, username));
  const given = Buffer.from(value.slice(dot + 1));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function authRoutes(runtime: Runtime, opts: { secret: string }): Router {
  const r = Router();
  const { accounts } = runtime;

  r.get('/auth/login', async (req, res) => {
    // after sign-up the form comes with the new name filled in; after log-out it says so
    const username = typeof req.query.username === 'string' && USERNAME_RE.test(req.query.username) ? req.query.username : undefined;
    const notice = req.query.signed_up
      ? `Account created${username ? ` for ${username}` : ''}: enter your password to log in.`
      : req.query.logged_out
        ? 'You are logged out.'
        : undefined;
    render(res, <LoginPage ctx={await ctxOf(req)} next={req.query.next as string | undefined} notice={notice} username={username} />);
  });

  r.post('/auth/login', async (req, res) => {
    const { username, password } = req.body ?? {};
    try {
      // a token-authenticated request has no session to log in (it was a 500)
      if (!req.session) {
        throw new LabError('invalid_input', 'This request carries an API token (Authorization: Bearer …), which needs no log-in; to log a browser in, send the form without that header.', [
          { field: 'Authorization', message: 'not with a log-in' },
        ]);
      }
      const user = await accounts.login(username, password, req.ip, { knownDevice: knownDevice(req, opts.secret, username) });
      await regenerate(req);
      req.session.userId = user.id;
      res.cookie(DEVICE_COOKIE, `${user.username}.${deviceSig(opts.secret, user.username)}`, { httpOnly: true, sameSite: 'lax', maxAge: 365 * 24 * 3600_000 });
      res.redirect(302, safeNext(req));
    } catch (e) {
      const err = asLabError(e);
      if (err.code === 'too_many_requests') res.set('Retry-After', String(err.data?.retry_after ?? 60));
      if (wantsJson(req)) throw err;
      render(res, <LoginPage ctx={await ctxOf(req)} next={req.query.next as string | undefined} error={err} username={typeof username === 'string' ? username : ''} />, statusOf(err));
    }
  });

  r.get('/auth/signup', async (req, res) => {
    render(res, <SignupPage ctx={await ctxOf(req)} first={(await runtime.store.users.count()) === 0} />);
  });

  r.post('/auth/signup', async (req, res) => {
    const { username, password } = req.body ?? {};
    try {
      const user = await accounts.signup(username, password);
      // the spec's answer: the login form, here with the new name filled in (the password is typed once more)
      res.redirect(302, `${url(req, '/auth/login')}?signed_up=1&username=${encodeURIComponent(user.username)}`);
    } catch (e) {
      const err = asLabError(e);
      if (wantsJson(req)) throw err;
      const first = (await runtime.store.users.count()) === 0;
      render(res, <SignupPage ctx={await ctxOf(req)} error={err} first={first} username={typeof username === 'string' ? username : ''} />, statusOf(err));
    }
  });

  const logout = (req: Request, res: Response) => {
    // a GET from another site (an <img src=…/logout>) must not log anyone out
    if (req.method === 'GET' && req.get('Sec-Fetch-Site') === 'cross-site') {
      throw new LabError('forbidden', 'Log out from labdeck itself (a link or a form on another site cannot).');
    }
    req.session?.destroy(() => undefined);
    res.clearCookie('labdeck.sid');
    res.redirect(302, `${url(req, '/auth/login')}?logged_out=1`);
  };
  r.post('/auth/logout', logout);
  r.get('/auth/logout', logout);

  // Everything below needs a logged-in user.
  r.get('/auth/change-password', requireLogin, async (req, res) => {
    render(res, <ChangePasswordPage ctx={await ctxOf(req)} />);
  });

  r.post('/auth/change-password', requireLogin, async (req, res) => {
    try {
      await accounts.changePassword(req.user!.id, req.body?.old_password, req.body?.new_password, req.body?.confirm_password);
      // whoever knew the old password is logged out everywhere else; this session goes on
      const ended = await runtime.store.sessions.destroyForUser(req.user!.id, req.sessionID);
      await runtime.audit(req.user!.id, 'password.change', { other_sessions_ended: ended });
      res.redirect(302, `${url(req, '/')}?password_changed=1`);
    } catch (e) {
      const err = asLabError(e);
      if (wantsJson(req)) throw err;
      render(res, <ChangePasswordPage ctx={await ctxOf(req)} error={err} />, statusOf(err));
    }
  });

  r.get('/account', requireLogin, async (req, res) => {
    const user = req.user!;
    const data = {
      user,
      tokens: await accounts.tokens(user.id),
      signup_open: await accounts.signupOpen(),
      users: user.role === 'admin' ? await accounts.users() : undefined,
    };
    if (wantsJson(req)) {
      const tokens = data.tokens.map((t) => ({ id: t.id, name: t.name, prefix: t.prefix, created_at: t.createdAt, last_used_at: t.lastUsedAt }));
      return res.json({ ...data, tokens });
    }
    render(res, <AccountPage ctx={await ctxOf(req)} {...data} />);
  });

  r.post('/account/tokens', requireLogin, async (req, res) => {
    const name = typeof req.body?.name === 'string' ? req.body.name : '';
    const { token, row } = await accounts.createToken(req.user!.id, name);
    if (wantsJson(req)) return res.status(201).json({ token, id: row.id, name: row.name });
    const user = req.user!;
    render(
      res,
      <AccountPage
        ctx={await ctxOf(req)}
        user={user}
        tokens={await accounts.tokens(user.id)}
        signup_open={await accounts.signupOpen()}
        users={user.role === 'admin' ? await accounts.users() : undefined}
        newToken={token}
      />,
      201,
    );
  });

  r.post('/account/tokens/:id/delete', requireLogin, async (req, res) => {
    await accounts.revokeToken(req.user!.id, intParam(req.params.id, 'id'));
    if (wantsJson(req)) return res.status(204).end();
    res.redirect(302, url(req, '/account'));
  });

  r.post('/account/signup', requireLogin, async (req, res) => {
    requireAdmin(req);
    const v = req.body?.open;
    const open = v === true || v === 'true' || v === 'on' || v === '1';
    if (v === undefined) throw new LabError('invalid_input', 'open is required (true or false)', [{ field: 'open', message: 'required' }]);
    await accounts.setSignupOpen(open);
    await runtime.audit(req.user!.id, 'signup.' + (open ? 'open' : 'close'), {});
    if (wantsJson(req)) return res.json({ signup_open: open });
    res.redirect(302, url(req, '/account'));
  });

  return r;
}
