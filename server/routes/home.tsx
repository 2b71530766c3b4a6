/** Home, help, health, the logo setting and the static assets (all served from our own origin). */
import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import multer from 'multer';
import { join } from 'node:path';
import { LOGO_MAX_BYTES } from '../../core/branding.js';
import { LabError } from '../../core/errors.js';
import { projectRoot } from '../../core/paths.js';
import type { Runtime } from '../../core/runtime.js';
import { routes } from '../catalogue.js';
import { ctxOf } from '../context.js';
import { render, requireAdmin, url, wantsJson } from '../http.js';
import { requireLogin } from '../security.js';
import { HelpPage, HomePage } from '../views/home.js';

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

/**
 * What is served before authentication and body parsing. `identify` tells the help page who is logged in
 * (so its nav says so) without ever refusing anyone.
 */
export function publicRoutes(runtime: Runtime, opts: { identify?: RequestHandler } = {}): Router {
  const r = Router();
  const identify: RequestHandler = opts.identify ?? ((_req, _res, next) => next());
  const cache = { maxAge: '1h' };
  r.get('/healthz', (_req, res) => {
    res.json({ ok: true, instruments: runtime.deck.list().length });
  });
  r.get('/static/vendor/:file', (req, res, next) => {
    const rel = Object.hasOwn(VENDOR, req.params.file) ? VENDOR[req.params.file] : undefined; // not `constructor`
    if (!rel) return next();
    res.sendFile(join(modules, rel), cache);
  });
  r.get('/static/app.js', (_req, res) => res.sendFile(join(projectRoot, 'dist', 'client', 'app.js'), cache));
  r.use('/static', express.static(here, { ...cache, index: false, dotfiles: 'deny' }));
  // an unknown asset is a 404 for everyone (not a login redirect)
  r.use('/static', (req, _res, next) => next(new LabError('not_found', `No asset ${req.path}.`)));
  r.get('/logo', async (_req, res) => {
    const logo = await runtime.branding.logo();
    if (!logo) return res.status(404).end();
    res.type(logo.type).set('Cache-Control', 'no-cache').send(logo.data);
  });
  r.get('/help', identify, async (req, res) => {
    render(res, <HelpPage ctx={await ctxOf(req)} />);
  });
  return r;
}

export function homeRoutes(runtime: Runtime): Router {
  const r = Router();
  const upload = multer({ storage: multer.memoryStorage(), limits: { fileSize: LOGO_MAX_BYTES, files: 1, fields: 10 } });

  r.get('/', requireLogin, async (req, res) => {
    if (wantsJson(req)) {
      return res.json({ routes: routes().map((x) => ({ ...x, path: url(req, x.path) })) });
    }
    const notice = req.query.password_changed ? 'Your password was changed. Browsers logged in as you elsewhere were logged out; API tokens still work.' : undefined;
    render(res, <HomePage ctx={await ctxOf(req)} routes={routes()} instruments={runtime.deck.list()} notice={notice} />);
  });

  // who may send it is checked before the body is parsed
  const adminOnly = (req: Request, _res: Response, next: NextFunction) => (requireAdmin(req), next());
  r.post('/customize-logo', requireLogin, adminOnly, upload.single('logo'), async (req, res) => {
    const branding = await runtime.branding.update(req.body?.mode, req.file?.buffer);
    await runtime.audit(req.user!.id, 'customize-logo', { mode: branding.mode, logo: !!req.file });
    res.redirect(302, url(req, '/'));
  });
  return r;
}
