/**
 * createApp(runtime): the express app. One router, mounted at `/app` and at `/`; thin routes that parse,
 * call the runtime and render. Errors and unknown routes are answered in one place (JSON or a page).
 */
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LOGO_MAX_BYTES } from '../core/branding.js';
import { LabError } from '../core/errors.js';
import type { Runtime } from '../core/runtime.js';
import { ctxOf } from './context.js';
import { asLabError, logInternal, render, statusOf } from './http.js';
import { jsonError, wantsJson } from './respond.js';
import { ivoryosRouter } from './ivoryos/index.js';
import { MCP_GROUP } from './mcp/index.js';
import { API_DOCS_GROUP } from './routes/api-docs.js';
import { RESOURCES_GROUP } from './routes/resources.js';
import { APPROVALS_GROUP } from './routes/approvals.js';
import { NOTIFICATIONS_GROUP } from './routes/notifications.js';
import { SAFETY_GROUP } from './routes/safety.js';
import { AUTH_GROUP } from './routes/auth.js';
import { DEVICES_GROUP, RESERVED_NAMES } from './routes/devices.js';
import { CAMPAIGN_POINTS_GROUP } from './routes/campaign-points.js';
import { CAMPAIGNS_GROUP } from './routes/campaigns.js';
import { EXECUTIONS_GROUP } from './routes/executions.js';
import { INPUTS_GROUP } from './routes/inputs.js';
import { ATTENTION_GROUP } from './routes/attention.js';
import { FILES_GROUP } from './routes/files.js';
import { HOME_GROUP } from './routes/home.js';
import { INSTRUMENT_ROUTES, INSTRUMENTS_GROUP } from './routes/instruments.js';
import { gateRouters } from './fast/dispatch.js';
import { jsonBody } from './fast/json-body.js';
import { directLane, fixedHeaders } from './fast/lane.js';
import { fastPath } from './fast/switch.js';
import { MULTIPART_SLACK, bodyCap, limitBytes } from './body-cap.js';
import { RECORDS_GROUP } from './routes/records.js';
import { USERS_GROUP } from './routes/users.js';
import { WORKFLOWS_GROUP } from './routes/workflows.js';
import { checkAnswers } from './answer-check.js';
import { catalogueOf, checkGroup, groupRouters, type MountContext, type RouteGroup } from './catalogue.js';
import { authenticate, csrfGuard, hostGuard, identify, requireLogin } from './security.js';
import { sessions } from './session.js';
import { DbSessionStore } from './session-store.js';
import { ErrorPage } from './views/layout.js';

export interface AppOptions {
  /** Largest JSON or form body accepted (default 1 MB). */
  bodyLimit?: string;
  /** The address labdeck listens on (`--host`): a name given there is answered to. */
  listen?: string;
  /** More host names the lab reaches labdeck by (`--allowed-hosts`); `.example.org` allows its sub-names. */
  allowedHosts?: string[];
  /** The fast path (server/fast/switch.ts; default: LABDECK_FAST_PATH); off, plain Express answers, the same. */
  fastPath?: boolean;
  /**
   * Check every JSON answer against its route's declared schema, and answer a mismatch with a 500
   * (server/answer-check.ts; default: on under NODE_ENV=test, so the API tests prove the document).
   */
  checkAnswers?: boolean;
}

/**
 * Every route group, in the order they are mounted (a group's routes before the next group's: the device
 * routes' `/instruments/new` before the instruments' `/instruments/{instrument}`). The catalogue (the home
 * page's list, the API document, the clients) is made from this same list: in a section, its routes are in
 * this order.
 */
export const ROUTE_GROUPS: readonly RouteGroup[] = [
  HOME_GROUP,
  AUTH_GROUP,
  API_DOCS_GROUP,
  USERS_GROUP,
  DEVICES_GROUP,
  INSTRUMENTS_GROUP,
  WORKFLOWS_GROUP,
  EXECUTIONS_GROUP,
  CAMPAIGNS_GROUP,
  CAMPAIGN_POINTS_GROUP,
  FILES_GROUP,
  RECORDS_GROUP,
  APPROVALS_GROUP,
  NOTIFICATIONS_GROUP,
  SAFETY_GROUP,
  MCP_GROUP,
  RESOURCES_GROUP,
  INPUTS_GROUP,
  ATTENTION_GROUP,
];

/** The session secret: made on first run, kept in the data directory, readable by its owner only. */
async function sessionSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, 'session-secret');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const secret = randomBytes(32).toString('hex');
    await writeFile(file, secret, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return (await readFile(file, 'utf8')).trim();
  }
}

/** A path whose every `%` escape decodes (express refuses to match a route on one that does not). */
function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The one error handler: a JSON error body or an error page, with the status of the error's code. */
async function onError(e: unknown, req: Request, res: Response, _next: NextFunction) {
  const err = asLabError(e);
  const status = statusOf(err);
  logInternal(err);
  if (res.headersSent) return;
  // (wantsJson kept here: this is the one place every error is answered, by the rule respond's helpers share)
  if (wantsJson(req)) return jsonError(res, err);
  if (err.data?.retry_after) res.set('Retry-After', String(err.data.retry_after));
  try {
    render(res, <ErrorPage ctx={await ctxOf(req)} status={status} error={err} />, status);
  } catch {
    res.status(status).type('text').send(err.message);
  }
}

export async function createApp(runtime: Runtime, opts: AppOptions = {}) {
  const fast = opts.fastPath ?? fastPath();
  const app = express();
  app.locals.runtime = runtime;
  // the instrument routes own these path segments: no device may be named like them
  runtime.deck.reserve(RESERVED_NAMES);
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.set('etag', false);

  const secret = await sessionSecret(runtime.dataDir);
  const sessionStore = new DbSessionStore(runtime.store);
  app.locals.sessionStore = sessionStore;
  const sessionMw = sessions({ name: 'labdeck.sid', secret, store: sessionStore, maxAgeMs: 7 * 24 * 3600_000 });

  // helmet's headers are the same on every response: set in one step on the fast path
  const headers = (mw: express.RequestHandler) => (fast ? fixedHeaders(mw) : mw);
  app.use(
    headers(
      helmet({
        contentSecurityPolicy: {
          useDefaults: false,
          directives: {
            defaultSrc: ["'self'"],
            scriptSrc: ["'self'"],
            styleSrc: ["'self'"],
            imgSrc: ["'self'", 'data:'],
            fontSrc: ["'self'", 'data:'],
            connectSrc: ["'self'"],
            objectSrc: ["'none'"],
            frameAncestors: ["'self'"],
            baseUri: ["'self'"],
            formAction: ["'self'"],
          },
        },
        strictTransportSecurity: false,
        // no-referrer would make browsers send `Origin: null` on same-origin form posts
        referrerPolicy: { policy: 'same-origin' },
        crossOriginEmbedderPolicy: false,
      }),
    ),
  );

  const limit = opts.bodyLimit ?? '1mb';
  const router = Router();
  router.use(hostGuard({ listen: opts.listen, allowed: opts.allowedHosts }));
  // an over-limit body is refused before it is read (the parsers read it off whole first)
  router.use(bodyCap({ parsed: limitBytes(limit), multipart: Math.max(runtime.files.limitBytes, LOGO_MAX_BYTES) + MULTIPART_SLACK }));
  const catalogue = catalogueOf(ROUTE_GROUPS);
  app.locals.catalogue = catalogue;
  // under test, every JSON answer of a route is checked against its declaration (server/answer-check.ts)
  if (opts.checkAnswers ?? process.env.NODE_ENV === 'test') checkAnswers(app, new Set(catalogue.routes));
  const ctx: MountContext = { secret, identify: identify(runtime, sessionMw), catalogue };
  const bare = ROUTE_GROUPS.map((g) => groupRouters(g, 'bare', runtime, ctx));
  const mounted = ROUTE_GROUPS.map((g) => groupRouters(g, 'mount', runtime, ctx));
  ROUTE_GROUPS.forEach((g, i) => checkGroup(g, [...bare[i]!, ...mounted[i]!]));
  // the bare routes (health, help, assets): before authentication and body parsing
  for (const r of bare.flat()) router.use(r);
  router.use(fast ? jsonBody(express.json({ limit }), limit) : express.json({ limit }));
  router.use(express.urlencoded({ extended: false, limit, parameterLimit: 1000 }));
  router.use(express.text({ type: 'text/plain', limit }));
  router.use(authenticate(runtime, sessionMw, { mcp: true }));
  router.use(csrfGuard());
  // what no route's own access check gets to see is gated here for nobody logged in, except on a public
  // route's path: an OPTIONS (express answers it itself with the methods of the routes on the path) and a path
  // express cannot decode to match a route (`%ZZ`: its 400 would come before the route's login check)
  const unseen = (req: Request) => req.method === 'OPTIONS' || !decodable(req.path);
  router.use((req, res, next) => (!req.user && unseen(req) && !catalogue.publicPath(req.path) ? requireLogin(req, res, next) : next()));
  // every route checks its own access as declared (server/route.ts `handle`), wherever it is mounted
  for (const r of mounted.flat()) router.use(r);
  // a path no route declares: the login form (or 401) for a visitor, `not_found` for a user
  router.use(requireLogin);
  router.use((req, _res, next) => next(new LabError('not_found', `Nothing at ${req.method} ${req.originalUrl}.`)));
  router.use(onError);
  if (fast) {
    gateRouters(router); // a request skips the areas' routers that cannot answer it
    // a call to an instrument goes straight to its route (server/fast/lane.ts)
    app.use(directLane(router, INSTRUMENT_ROUTES.call, ['/app', ''], onError));
  }
  // ivoryOS's routes for its clients (docs/ivoryos.md), before `/`, which would take them otherwise
  app.use('/ivoryos', ivoryosRouter(runtime, { session: sessionMw, listen: opts.listen, allowedHosts: opts.allowedHosts, bodyLimit: limit }));
  app.use('/app', router);
  app.use('/', router);
  return app;
}

export type App = Awaited<ReturnType<typeof createApp>>;
