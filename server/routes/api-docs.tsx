/**
 * The API docs: `GET /openapi.json` (the OpenAPI 3.1 document) and `GET /api` (the same, as a page).
 * Both are public like /help; the live deck's per-instrument call bodies are only in them for a logged-in
 * user (session or token), so the router goes after `authenticate` (a group's `mount`, not `bare`).
 */
import { Router, type Request } from 'express';
import { z } from 'zod';
import type { Runtime } from '../../core/runtime.js';
import { HTML } from '../api-doc.js';
import { ctxOf } from '../context.js';
import { respond } from '../respond.js';
import { handle, route } from '../route.js';
import { routeGroup, type MountContext } from '../catalogue.js';

const SECTION = 'API';

export const API_DOC_ROUTES = {
  page: route({
    method: 'GET',
    path: '/api',
    section: SECTION,
    summary: 'This API, readable: every route, its body and statuses',
    access: 'public',
    optionalLogin: true,
    operationId: 'apiPage',
    query: z.object({ format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header') }),
    responses: { 200: { description: 'This document as a page, or as JSON', content: { 'text/html': HTML, 'application/json': { schema: { type: 'object' } } } } },
  }),
  document: route({
    method: 'GET',
    path: '/openapi.json',
    section: SECTION,
    summary: "The OpenAPI 3.1 document (with your deck's call bodies when logged in)",
    access: 'public',
    optionalLogin: true,
    operationId: 'openapi',
    description: "Public. Logged in (session or token), it includes the live deck's per-instrument call bodies.",
    responses: { 200: { description: 'The OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } } },
  }),
};

// The document's schemas and page are loaded on first use: labdeck idles without them.
const openapi = () => import('../openapi.js');
const apiPage = () => import('../views/api.js');

export function apiDocRoutes(runtime: Runtime, { catalogue }: Pick<MountContext, 'catalogue'>): Router {
  const r = Router();

  const docFor = async (req: Request) =>
    (await openapi()).buildOpenApi({
      routes: catalogue.routes,
      instruments: req.user ? runtime.ops.instruments.local() : [],
      public: !req.user,
      serverUrl: `${req.protocol}://${req.get('host') ?? 'localhost'}`,
    });

  handle(r, API_DOC_ROUTES.document, async (req, res) => {
    res.json(await docFor(req));
  });

  handle(r, API_DOC_ROUTES.page, async (req, res) => {
    const doc = await docFor(req);
    await respond(req, res, {
      json: doc,
      html: async () => {
        const { ApiPage } = await apiPage();
        return <ApiPage ctx={await ctxOf(req)} doc={doc} live={!!req.user} />;
      },
    });
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const API_DOCS_GROUP = routeGroup({ name: 'api-docs', routes: API_DOC_ROUTES, mount: apiDocRoutes });
