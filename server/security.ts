/**
 * Who is calling, and may they: bearer tokens and session cookies, the Origin-based CSRF check, and the
 * login gate (pages → 302 to the login form, JSON → 401).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { tokenScope } from '../core/accounts/index.js';
import { LabError } from '../core/errors.js';
import type { Runtime } from '../core/runtime.js';
import { url } from './http.js';
import { wantsJson } from './respond.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The MCP endpoint under the mount (server/mcp): the one path an MCP token opens. */
export const MCP_PATH = '/mcp';

/**
 * Authenticate with `Authorization: Bearer <token>` when present, otherwise fall through to the session.
 * `opts.mcp`: this router serves the MCP endpoint (labdeck's own, not /ivoryos), the one place an MCP token opens.
 */
export function authenticate(runtime: Runtime, sessionMw: RequestHandler, opts: { mcp?: boolean } = {}): RequestHandler {
  return (req, res, next) => {
    const header = req.headers.authorization;
    if (header) {
      const m = /^Bearer\s+(\S+)$/i.exec(header);
      if (!m) return next(new LabError('unauthenticated', 'The Authorization header must be "Bearer <token>".'));
      if (tokenScope(m[1]) === 'agent') {
        return next(new LabError('unauthenticated', 'This is an agent token: it serves instruments through `lab agent` and calls nothing else. Use a token of your account for the API.'));
      }
      if (tokenScope(m[1]) === 'mcp') {
        if (!opts.mcp || req.path !== MCP_PATH)
          return next(new LabError('unauthenticated', `This is an MCP token: it opens ${MCP_PATH} (an AI assistant's MCP connection) and nothing else. Use a token of your account for the API.`));
        runtime.ops.accounts.mcpCaller(m[1]).then((caller) => {
          if (!caller) return next(new LabError('unauthenticated', 'This MCP token is unknown or was revoked, or its account is disabled.'));
          req.user = caller.user;
          req.agentToken = caller.token;
          req.authVia = 'mcp';
          next();
        }, next);
        return;
      }
      runtime.ops.accounts.tokenUser(m[1]).then((user) => {
        if (!user) return next(new LabError('unauthenticated', 'This API token is unknown or was revoked.'));
        req.user = user;
        req.authVia = 'token';
        next();
      }, next);
      return;
    }
    // the session's copy is checked for changes as it is read: the account's copy needs no check of its own
    const since = performance.now();
    sessionMw(req, res, (err?: unknown) => {
      if (err) return next(err);
      const id = req.session?.userId;
      if (!id) return next();
      runtime.ops.accounts.sessionUser(id, since).then((user) => {
        if (user) {
          req.user = user;
          req.authVia = 'session';
        }
        next();
      }, next);
    });
  };
}

/**
 * Who is asking, if anyone, for a public page that still shows who is logged in (the help page): as
 * `authenticate`, but never an error: an unknown token or an unreadable session reads as nobody.
 */
export function identify(runtime: Runtime, sessionMw: RequestHandler): RequestHandler {
  const auth = authenticate(runtime, sessionMw);
  return (req, res, next) => auth(req, res, () => next());
}

/**
 * CSRF: browsers say where a request comes from. An unsafe request authenticated by cookie (or about to
 * set one, like login) whose Origin or Sec-Fetch-Site names another site is refused. Scripts send neither
 * header and use tokens anyway.
 */
export function csrfGuard(): RequestHandler {
  /** The last Origin seen and its host: a browser sends the same one on every request (not parsed again). */
  let lastOrigin = '';
  let lastHost: string | null = null;
  return (req, _res, next) => {
    if (SAFE.has(req.method) || req.authVia === 'token' || req.authVia === 'mcp') return next();
    const site = req.headers['sec-fetch-site'];
    if (typeof site === 'string') {
      // Modern browsers say it outright; `none` is a user-typed navigation.
      if (site === 'same-origin' || site === 'none') return next();
      return next(new LabError('forbidden', `Cross-site request refused (Sec-Fetch-Site: ${site}).`));
    }
    const origin = req.headers.origin;
    if (origin) {
      let host: string | null = null;
      if (origin === lastOrigin) host = lastHost;
      else {
        try {
          host = origin === 'null' ? null : new URL(origin).host;
        } catch {
          host = null;
        }
        lastOrigin = origin;
        lastHost = host;
      }
      if (host !== req.headers.host) return next(new LabError('forbidden', `Cross-site request refused (Origin ${origin}).`));
    }
    next();
  };
}

/**
 * Why a GET that changes something (log-out by a link) comes from another site, or null when it comes from
 * labdeck's own pages, a typed address or a script. Browsers say where a request comes from in
 * `Sec-Fetch-Site` (`same-site` is another port or sub-name: not labdeck either); a browser too old to send
 * it is judged by `Origin`, then `Referer`. Scripts send none of these.
 */
export function crossSiteGet(req: Request): string | null {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin' || site === 'none' ? null : `Sec-Fetch-Site: ${site}`;
  for (const name of ['origin', 'referer'] as const) {
    const value = req.headers[name];
    if (typeof value !== 'string' || !value) continue;
    let host: string | null = null;
    try {
      host = value === 'null' ? null : new URL(value).host;
    } catch {
      host = null;
    }
    return host !== null && host === req.headers.host ? null : `${name === 'origin' ? 'Origin' : 'Referer'} ${value}`;
  }
  return null;
}

/** The host name of a Host header: lower case, without the port or an IPv6 literal's brackets. */
export function hostNameOf(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colon = h.lastIndexOf(':');
  return colon > 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h;
}

/** The port of a Host header: '' when it names none, null when what follows the name is not a port. */
export function hostPortOf(header: string): string | null {
  const h = header.trim();
  const end = h.startsWith('[') ? h.indexOf(']') + 1 : h.indexOf(':') === h.lastIndexOf(':') ? (h.includes(':') ? h.lastIndexOf(':') : h.length) : h.length;
  if (end <= 0 || end === h.length) return '';
  const port = h.slice(end);
  return /^:\d{1,5}$/.test(port) && Number(port.slice(1)) <= 65535 ? String(Number(port.slice(1))) : null;
}

/**
 * DNS rebinding: a web page can point its own name at the lab PC's address, but its requests still carry
 * its own name in `Host`. Only the names labdeck serves are answered: IP addresses, localhost names, this
 * machine's name, the `--host` name, and `--allowed-hosts` (a leading dot allows a domain's sub-names). A
 * port in `Host` must be the one the request came in on, or one `--allowed-hosts` names (`name:port` or
 * `:port`: a reverse proxy on another port); a Host without a port is a proxy's or the default port's.
 */
export function hostGuard(opts: { listen?: string; allowed?: string[] } = {}): RequestHandler {
  const machine = hostname().toLowerCase();
  const exact = new Set(['localhost', machine, `${machine}.local`]);
  const suffixes: string[] = ['.localhost'];
  const ports = new Set<string>();
  for (const n of [opts.listen ?? '', ...(opts.allowed ?? [])].map((x) => x.trim().toLowerCase()).filter(Boolean)) {
    const port = n.startsWith(':') ? hostPortOf(`x${n}`) : hostPortOf(n);
    if (port) ports.add(port);
    const name = n.startsWith(':') ? '' : hostNameOf(n);
    if (!name) continue;
    if (name.startsWith('.')) suffixes.push(name);
    else exact.add(name);
  }
  /** The last Host accepted and the port it came in on: a client sends the same one each time (not parsed again). */
  let lastHost = '';
  let lastPort = -1;
  return (req, _res, next) => {
    const header = req.headers.host;
    if (!header) return next(); // HTTP/1.0 without Host: not a browser
    const local = req.socket?.localPort ?? -1;
    if (header === lastHost && local === lastPort) return next();
    const name = hostNameOf(header);
    if (!(isIP(name) || exact.has(name) || suffixes.some((s) => name.endsWith(s)))) {
      return next(
        new LabError('forbidden', `This lab does not answer to the name "${name}". If that is how your lab reaches it, start labdeck with --allowed-hosts ${name}.`, [
          { field: 'Host', message: 'not an allowed host name' },
        ]),
      );
    }
    const port = hostPortOf(header);
    if (port === null || (port !== '' && port !== String(local) && !ports.has(port))) {
      return next(
        new LabError(
          'forbidden',
          `This lab answers on port ${local}, not at "${header}". If a proxy forwards that port to labdeck, start labdeck with --allowed-hosts ${name}${port ? `:${port}` : ''}.`,
          [{ field: 'Host', message: 'not the port labdeck serves' }],
        ),
      );
    }
    lastHost = header;
    lastPort = local;
    next();
  };
}

/**
 * A logged-in user, or the login form (401 for a script). `handle` asks it for every route not declared
 * public; the app puts it after every route group as well, for the paths no route declares.
 */
export function requireLogin(req: Request, res: Response, next: NextFunction) {
  if (req.user) return next();
  // (wantsJson kept: the login gate answers a script with the error handler's 401, a page with a redirect carrying `next`)
  if (wantsJson(req)) {
    return next(new LabError('unauthenticated', 'Log in first, or send "Authorization: Bearer <token>".'));
  }
  const next_ = req.method === 'GET' ? `?next=${encodeURIComponent(req.originalUrl)}` : '';
  res.redirect(302, `${url(req, '/auth/login')}${next_}`);
}
