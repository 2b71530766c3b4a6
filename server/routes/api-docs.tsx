/**
 * The API docs: `GET /openapi.json` (the OpenAPI 3.1 document) and `GET /api` (the same, as a page).
 * Both are public like /help; the live deck's per-instrument call bodies are only in them for a logged-in
 * user (session or token), so the router goes after `authenticate` and before `requireLogin`.
 */
import { Router, type Request } from 'express';
import type { Runtime } from '../../core/runtime.js';
import { ctxOf } from '../context.js';
import { render, wantsJson } from '../http.js';

// The document's schemas and page are loaded on first use: labdeck idles without them.
const openapi = () => import('../openapi.js');
const apiPage = () => import('../views/api.js');

export function apiDocRoutes(runtime: Runtime): Router {
  const r = Router();

  const docFor = async (req: Request) =>
    (await openapi()).buildOpenApi({
      instruments: req.user ? runtime.deck.list() : [],
      public: !req.user,
      serverUrl: `${req.protocol}://${req.get('host') ?? 'localhost'}`,
    });

  r.get('/openapi.json', async (req, res) => {
    res.json(await docFor(req));
  });

  r.get('/api', async (req, res) => {
    const doc = await docFor(req);
    if (wantsJson(req)) return res.json(doc);
    const { ApiPage } = await apiPage();
    render(res, <ApiPage ctx={await ctxOf(req)} doc={doc} live={!!req.user} />);
  });

  return r;
}
