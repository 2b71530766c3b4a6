/** The attention list (issue 31): `GET /attention`, a page or JSON. Thin: the operation reads it (core/operations/attention.ts). */
import { Router } from 'express';
import { z } from 'zod';
import type { Runtime } from '../../core/runtime.js';
import { pageOrJson } from '../api-doc.js';
import { ctxOf } from '../context.js';
import { url } from '../http.js';
import { respond } from '../respond.js';
import { handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { AttentionPage } from '../views/attention.js';

export const ATTENTION_ROUTES = {
  list: route({
    method: 'GET',
    path: '/attention',
    section: 'Workflow execution',
    summary: 'Everything waiting for a person across the lab, with what to do and a link',
    operationId: 'attention',
    client: {
      name: 'attention',
      doc: 'What waits for a person across the lab: inputs, pause steps, failed steps, approvals, held queues, interrupted runs, labdecks offline with work. Each item has kind, title, action and link.',
    },
    query: z.object({ format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header') }),
    responses: { 200: pageOrJson('The list (JSON: { items, count })', 'AttentionList') },
  }),
};

export function attentionRoutes(runtime: Runtime): Router {
  const r = Router();
  handle(r, ATTENTION_ROUTES.list, async (req, res) => {
    const items = await runtime.ops.attention.list();
    await respond(req, res, {
      json: () => ({ items: items.map((i) => ({ ...i, url: url(req, i.link) })), count: items.length }),
      html: async () => <AttentionPage ctx={{ ...(await ctxOf(req)), attention: items.length }} items={items} />,
    });
  });
  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const ATTENTION_GROUP = routeGroup({ name: 'attention', routes: ATTENTION_ROUTES, mount: attentionRoutes });
