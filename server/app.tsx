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
import { mcpRoutes } from './mcp/index.js';
import { apiDocRoutes } from './routes/api-docs.js';
import { resourceRoutes } from './routes/resources.js';
import { approvalRoutes } from './routes/approvals.js';
import { notificationRoutes } from './routes/notifications.js';
import { safetyRoutes } from './routes/safety.js';
import { accountRoutes, authRoutes } from './routes/auth.js';
import { RESERVED_NAMES, deviceRoutes } from './routes/devices.js';
import { campaignPointRoutes } from './routes/campaign-points.js';
import { campaignRoutes } from './routes/campaigns.js';
import { executionRoutes } from './routes/executions.js';
import { inputRoutes } from './routes/inputs.js';
import { attentionRoutes } from './routes/attention.js';
import { fileRoutes } from './routes/files.js';
import { homeRoutes, publicRoutes } from './routes/home.js';
import { INSTRUMENT_ROUTES, instrumentRoutes } from './routes/instruments.js';
import { gateRouters } from './fast/dispatch.js';
import { jsonBody } from './fast/json-body.js';
import { directLane, fixedHeaders } from './fast/lane.js';
import { fastPath } from './fast/switch.js';
import { MULTIPART_SLACK, bodyCap, limitBytes } from './body-cap.js';
import { recordRoutes } from './routes/records.js';
import { userRoutes } from './routes/users.js';
import { workflowRoutes } from './routes/workflows.js';
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
}

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
    headers(helmet({
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
    })),
  );

  const limit = opts.bodyLimit ?? '1mb';
  const router = Router();
  router.use(hostGuard({ listen: opts.listen, allowed: opts.allowedHosts }));
  // an over-limit body is refused before it is read (the parsers read it off whole first)
  router.use(bodyCap({ parsed: limitBytes(limit), multipart: Math.max(runtime.files.limitBytes, LOGO_MAX_BYTES) + MULTIPART_SLACK }));
  router.use(publicRoutes(runtime, { identify: identify(runtime, sessionMw) }));
  router.use(fast ? jsonBody(express.json({ limit }), limit) : express.json({ limit }));
  router.use(express.urlencoded({ extended: false, limit, parameterLimit: 1000 }));
  router.use(express.text({ type: 'text/plain', limit }));
  router.use(authenticate(runtime, sessionMw, { mcp: true }));
  router.use(csrfGuard());
  router.use(authRoutes(runtime, { secret }));
  router.use(apiDocRoutes(runtime));
  router.use(requireLogin);
  router.use(homeRoutes(runtime));
  router.use(accountRoutes(runtime));
  router.use(userRoutes(runtime));
  router.use(deviceRoutes(runtime));
  router.use(instrumentRoutes(runtime));
  router.use(workflowRoutes(runtime));
  router.use(executionRoutes(runtime));
  router.use(inputRoutes(runtime));
  router.use(attentionRoutes(runtime));
  router.use(campaignRoutes(runtime));
  router.use(campaignPointRoutes(runtime));
  router.use(fileRoutes(runtime));
  router.use(recordRoutes(runtime));
  router.use(approvalRoutes(runtime));
  router.use(notificationRoutes(runtime));
  router.use(resourceRoutes(runtime));
  router.use(safetyRoutes(runtime));
  router.use(mcpRoutes(runtime));

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
