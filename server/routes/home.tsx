/**
 * Home, help, health, the logo setting and the static assets (all served from our own origin). One group,
 * two routers: `publicRoutes` (its `bare` routes, before authentication and body parsing) and `homeRoutes`
 * (after them; each route checks its own access).
 */
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import { multipart } from '../uploads.js';
import { join } from 'node:path';
import { z } from 'zod';
import { LOGO_MAX_BYTES } from '../../core/branding.js';
import { LabError } from '../../core/errors.js';
import { projectRoot } from '../../core/paths.js';
import type { Runtime } from '../../core/runtime.js';
import { ctxOf } from '../context.js';
import { empty, error, json, page, pageOrJson, redirect, type ResponseObject } from '../api-doc.js';
import { asLabError, render, url } from '../http.js';
import { respond } from '../respond.js';
import { handle, route } from '../route.js';
import { routeGroup, type MountContext } from '../catalogue.js';
import { HelpPage, LabHome, type LabHomeData } from '../views/home.js';
import { callerOf } from '../caller.js';
import { queueStatusLabel } from '../../core/runner/controls.js';

const SECTION = 'Home';

export const HOME_ROUTES = {
  home: route({
    method: 'GET',
    path: '/',
    section: SECTION,
    summary: "The lab's front page: the runner, the queue, the latest runs, the instruments, what to do next, and every route of the app",
    operationId: 'home',
    query: z.object({
      format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header'),
      // anything that is not text (a repeated key) reads as absent, as it always did
      password_changed: z.string().optional().catch(undefined).describe('Say that the password was changed (where POST /app/auth/change-password leads)'),
    }),
    responses: { 200: pageOrJson('The home page, or every route as JSON', 'RouteList') },
  }),
  help: route({
    method: 'GET',
    path: '/help',
    section: SECTION,
    summary: 'How labdeck works',
    access: 'public',
    operationId: 'help',
    bare: true,
    responses: { 200: page('The help page') },
  }),
  health: route({
    method: 'GET',
    path: '/healthz',
    section: SECTION,
    summary: 'Health check (200 when ready)',
    access: 'public',
    operationId: 'health',
    bare: true,
    responses: { 200: json('Ready', 'Health') },
  }),
  customizeLogo: route({
    method: 'POST',
    path: '/customize-logo',
    section: SECTION,
    summary: 'Set the lab logo and light/dark mode',
    access: 'admin',
    operationId: 'customizeLogo',
    description: 'A file upload (multipart); `mode` alone may also be sent as a form or JSON. Audit-logged.',
    body: {
      name: 'LogoBody',
      kinds: ['multipart', 'form', 'json'],
      description: 'The logo file (multipart only) and the mode; without a file, the mode only',
      schema: z.object({
        logo: z
          .custom<Express.Multer.File>(
            (v) => typeof v === 'object' && v !== null && Buffer.isBuffer((v as { buffer?: unknown }).buffer),
            'must be a file: upload the image as the multipart field "logo"',
          )
          .meta({ type: 'string', contentMediaType: 'application/octet-stream', description: 'A PNG, JPEG, GIF or WebP image, at most 1 MB (checked by its bytes)' })
          .optional(),
        mode: z.enum(['light', 'dark']).optional(),
      }),
    },
    responses: {
      302: redirect('Saved: to the home page (JSON clients too)'),
      400: error('Not an image, or mode not light/dark (details name the field)'),
      413: error('The logo is over 1 MB'),
      507: error('The logo could not be written: the data folder is full or read-only (the message names the folder); the old logo stays'),
    },
  }),
  logo: route({
    method: 'GET',
    path: '/logo',
    section: SECTION,
    summary: 'The lab logo (404 when none is set)',
    access: 'public',
    operationId: 'logo',
    bare: true,
    responses: {
      200: { description: 'The logo image', content: { 'image/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
      404: empty('No logo is set (empty body)'),
    },
  }),
};

const here = join(projectRoot, 'server', 'static');
const modules = join(projectRoot, 'node_modules');

/** Vendor files by public name: only these leave node_modules. */
const VENDOR: Record<string, string> = {
  'bootstrap.min.css': 'bootstrap/dist/css/bootstrap.min.css',
  'bootstrap.bundle.min.js': 'bootstrap/dist/js/bootstrap.bundle.min.js',
  'htmx.min.js': 'htmx.org/dist/htmx.min.js',
  'Sortable.min.js': 'sortablejs/Sortable.min.js',
  'uPlot.iife.min.js': 'uplot/dist/uPlot.iife.min.js',
  'uPlot.min.css': 'uplot/dist/uPlot.min.css',
};

/** Any file: its type is its name's. */
const A_FILE = (description: string): ResponseObject => ({ description, content: { '*/*': { schema: { type: 'string' } } } });
/** An unknown asset is a 404 for everyone (not a login redirect). */
const NO_ASSET = error('No such file (for everyone: assets are public)');

/**
 * The assets: public, served before authentication and body parsing (`bare`), from our own origin.
 *
 * `GET /static/{file}` is served by a middleware, not a handler: `express.static` on the `/static` prefix
 * (in `publicRoutes`). It is declared here for the route list and the API document only and never passed to
 * `handle`; test/api/openapi.test.ts accepts a declared route that is not registered when a middleware
 * mounted on a prefix of its path serves it (and requires every such middleware to have one).
 */
export const ASSET_ROUTES = {
  file: route({
    method: 'GET',
    path: '/static/{file}',
    section: 'Assets',
    summary: "labdeck's own stylesheet and icon",
    access: 'public',
    operationId: 'staticFile',
    bare: true,
    params: z.object({ file: z.string().describe("A file of labdeck's own (server/static: app.css, favicon.svg)") }),
    responses: { 200: A_FILE('The file'), 404: NO_ASSET },
  }),
  favicon: route({
    method: 'GET',
    path: '/favicon.ico',
    section: 'Assets',
    summary: "The icon, where a browser looks for it by itself (a response that is not a page: a CSV, a page's fragment)",
    access: 'public',
    operationId: 'favicon',
    bare: true,
    responses: { 200: { description: "labdeck's icon (SVG)", content: { 'image/svg+xml': { schema: { type: 'string' } } } } },
  }),
  appScript: route({
    method: 'GET',
    path: '/static/app.js',
    section: 'Assets',
    summary: 'The browser script (bundled by esbuild)',
    access: 'public',
    operationId: 'appScript',
    bare: true,
    responses: { 200: { description: 'The script', content: { 'text/javascript': { schema: { type: 'string' } } } } },
  }),
  vendor: route({
    method: 'GET',
    path: '/static/vendor/{file}',
    section: 'Assets',
    summary: 'Bootstrap, htmx, SortableJS and uPlot, served from our own origin',
    access: 'public',
    operationId: 'vendorFile',
    bare: true,
    // any name reaches the handler, which answers 404 for one that is not listed
    params: z.object({
      file: z
        .string()
        .meta({ enum: Object.keys(VENDOR) })
        .describe('A vendored file'),
    }),
    responses: { 200: A_FILE('The file'), 404: NO_ASSET },
  }),
};

/**
 * What is served before authentication and body parsing. `identify` tells the help page who is logged in
 * (so its nav says so) without ever refusing anyone.
 */
export function publicRoutes(runtime: Runtime, opts: { identify?: RequestHandler } = {}): Router {
  const r = Router();
  const identify: RequestHandler = opts.identify ?? ((_req, _res, next) => next());
  const cache = { maxAge: '1h' };
  handle(r, HOME_ROUTES.health, (_req, res) => {
    res.json({ ok: true, instruments: runtime.ops.instruments.local().length });
  });
  handle(r, ASSET_ROUTES.vendor, (_req, res, { params: { file } }) => {
    const rel = Object.hasOwn(VENDOR, file) ? VENDOR[file] : undefined; // not `constructor`
    if (!rel) throw new LabError('not_found', `No asset /vendor/${file}.`);
    res.sendFile(join(modules, rel), cache);
  });
  handle(r, ASSET_ROUTES.favicon, (_req, res) => res.type('image/svg+xml').sendFile(join(here, 'favicon.svg'), cache));
  handle(r, ASSET_ROUTES.appScript, (_req, res) => res.sendFile(join(projectRoot, 'dist', 'client', 'app.js'), cache));
  // GET /static/{file} (ASSET_ROUTES.file): the middleware serves it, there is no handler to declare it on
  r.use('/static', express.static(here, { ...cache, index: false, dotfiles: 'deny' }));
  // an unknown asset is a 404 for everyone (not a login redirect)
  r.use('/static', (req, _res, next) => next(new LabError('not_found', `No asset ${req.path}.`)));
  handle(r, HOME_ROUTES.logo, async (_req, res) => {
    const logo = await runtime.ops.settings.logo();
    if (!logo) return res.status(404).end();
    res.type(logo.type).set('Cache-Control', 'no-cache').send(logo.data);
  });
  handle(r, HOME_ROUTES.help, async (req, res) => {
    await new Promise<void>((done) => identify(req, res, () => done()));
    render(res, <HelpPage ctx={await ctxOf(req)} />);
  });
  return r;
}

/** The home page and the logo setting: behind the login gate. */
export function homeRoutes(runtime: Runtime, { catalogue }: Pick<MountContext, 'catalogue'>): Router {
  const r = Router();
  const upload = multipart({ limits: { fileSize: LOGO_MAX_BYTES, files: 1, fields: 10 } }, 'logo');
  /** Read a multipart body once the role is known (the file joins the fields as `logo`); others pass. */
  const receive = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) =>
      upload(req, res, (e?: unknown) => {
        if (e) return reject(asLabError(e));
        if (req.file) req.body = { ...req.body, logo: req.file };
        resolve();
      }),
    );

  handle(r, HOME_ROUTES.home, async (req, res, { query }) => {
    await respond(req, res, {
      json: () => ({ routes: catalogue.info.map((x) => ({ ...x, path: url(req, x.path) })) }),
      // the lab's home page: what runs and waits, the latest records, and every route
      html: async () => {
        const notice = query.password_changed ? 'Your password was changed. Browsers logged in as you elsewhere were logged out; API tokens still work.' : undefined;
        const { runs, records, workflows: saved, instruments } = runtime.ops;
        const [queue, list, workflows] = await Promise.all([runs.queue(), records.list({ keyword: '', page: 1, perPage: 5 }), saved.list()]);
        const status = runs.status();
        const waiting = queue.tasks.filter((t) => t.status !== 'running');
        const data: LabHomeData = {
          status,
          queue: waiting.slice(0, 5).map((t) => ({ id: t.id, name: t.name, label: queueStatusLabel(t, status) })),
          waiting: waiting.length,
          recent: list.records,
          workflows: workflows.length,
          instruments: instruments.list(), // the Instruments page's list: this deck's and other labdecks'
          deckChanged: runtime.ops.settings.deckChanged(),
        };
        return <LabHome ctx={await ctxOf(req)} data={data} routes={catalogue.info} notice={notice} />;
      },
    });
  });

  handle(
    r,
    HOME_ROUTES.customizeLogo,
    async (req, res, { body }) => {
      await runtime.ops.settings.setBranding(callerOf(req, 'app'), body.mode, body.logo?.buffer);
      res.redirect(302, url(req, '/'));
    },
    { receive },
  );
  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const HOME_GROUP = routeGroup({
  name: 'home',
  routes: [...Object.values(HOME_ROUTES), ...Object.values(ASSET_ROUTES)],
  bare: publicRoutes,
  mount: homeRoutes,
  servedByMiddleware: [ASSET_ROUTES.file],
});
