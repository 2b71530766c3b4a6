/**
 * Campaigns people carry out (issue 31): a campaign's page and points, suggestions, a person's own points,
 * results entered per point or uploaded as the filled-in pending CSV. Thin: parse, call
 * runtime.ops.campaigns, answer (JSON, a CSV, or the page / a redirect back to it for the page's forms).
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { csvDownload, error, json, pageOrJson, redirect, ref } from '../api-doc.js';
import { render, statusOf, url } from '../http.js';
import { failed, redirectTo, respond } from '../respond.js';
import { ID, handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { multipart } from '../uploads.js';
import { CampaignPointsPage, CampaignsPage } from '../views/campaign/points.js';
import { campaignPlotSvg } from '../views/plot-svg.js';

const SECTION = 'Workflow execution';
const ONE = z.object({ id: ID.describe('The campaign (campaign_id)') });
const POINT = z.object({ id: ID.describe('The campaign (campaign_id)'), n: ID.describe("The point's number in its campaign") });
const NUMBERS = z.record(z.string(), z.union([z.number(), z.string()]));
const ENTER = z.object({
  results: NUMBERS.optional().describe('What was measured: a number per objective (and per output with an outcome constraint)'),
  discarded: z.union([z.boolean(), z.string()]).optional().describe('true: the point is given up, with a reason'),
  reason: z.string().max(1000).optional().describe('Why it is discarded'),
});
const FIELDS = /^(results|parameters)\./;
const NO_CAMPAIGN = error('No such campaign or point');

export const CAMPAIGN_POINT_ROUTES = {
  list: route({
    method: 'GET',
    path: '/executions/campaigns',
    section: SECTION,
    summary: 'Campaigns people can add points to: manual ones and robot ones, newest first',
    operationId: 'listCampaigns',
    responses: { 200: pageOrJson('The list page, or { campaigns }', 'CampaignList') },
  }),
  one: route({
    method: 'GET',
    path: '/executions/campaigns/{id}',
    section: SECTION,
    summary: 'A campaign and its points (n, parameters, state, results, suggested_by, measured_by)',
    operationId: 'campaign',
    client: {
      name: 'campaign',
      doc: 'A campaign carried out by people (or a robot campaign) with its points: n, parameters, state (pending, measured, discarded), results, suggested_by, measured_by.',
    },
    params: ONE,
    responses: { 200: pageOrJson('The campaign page (a form per pending point), or the campaign with its points', 'Campaign'), 404: NO_CAMPAIGN },
  }),
  suggest: route({
    method: 'POST',
    path: '/executions/campaigns/{id}/suggest',
    section: SECTION,
    summary: 'Add n suggestions of the optimizer (pending points): { n }',
    operationId: 'suggestPoints',
    client: { name: 'suggest_points', doc: "Ask the campaign's optimizer for n more points to measure; it never suggests a pending point again." },
    params: ONE,
    body: { name: 'SuggestBody', schema: z.object({ n: z.union([z.int(), z.string()]).describe('How many points (1 to 100)') }) },
    responses: { 200: json('The points added', 'CampaignPoints'), 302: redirect('A form: back to the campaign page'), 400: error('n is not a whole number from 1 to 100'), 404: NO_CAMPAIGN },
  }),
  enter: route({
    method: 'PUT',
    path: '/executions/campaigns/{id}/points/{n}',
    section: SECTION,
    summary: 'Enter a pending point: { results: {...} }, or { discarded: true, reason }',
    operationId: 'enterPoint',
    client: { name: 'enter_point', doc: 'Enter what was measured for a pending point ({ results: { yield: 0.8 } }), or discard it ({ discarded: true, reason }). Each point is entered once.' },
    params: POINT,
    body: { name: 'EnterPointBody', schema: ENTER, extra: FIELDS, extraKinds: ['form'] },
    responses: {
      200: json('The point as entered', 'CampaignPoint'),
      400: error('A result missing or not a number (details name results.<output>), or a discard without a reason'),
      404: NO_CAMPAIGN,
      409: error('The point is measured or discarded already'),
    },
  }),
  enterForm: route({
    method: 'POST',
    path: '/executions/campaigns/{id}/points/{n}',
    section: SECTION,
    summary: "The page's form for one point: results.<output> fields, or discarded and reason (302 back)",
    operationId: 'enterPointForm',
    params: POINT,
    body: { name: 'EnterPointFormBody', schema: ENTER, extra: FIELDS, extraKinds: ['form'] },
    responses: { 302: redirect('Back to the campaign page'), 200: json('The point as entered (JSON clients)', 'CampaignPoint'), 400: error('As PUT'), 404: NO_CAMPAIGN, 409: error('As PUT') },
  }),
  add: route({
    method: 'POST',
    path: '/executions/campaigns/{id}/points',
    section: SECTION,
    summary: "Add a person's own point: { parameters: {...}, results?: {...} } (pending until its results are in)",
    operationId: 'addPoint',
    client: {
      name: 'add_point',
      doc: 'Add a point of your own choosing to a campaign ({ parameters }); it is pending until its results are entered, then the optimizer learns from it like from its own. With results it is measured at once.',
    },
    params: ONE,
    body: {
      name: 'AddPointBody',
      schema: z.object({ parameters: NUMBERS.optional().describe('A value per parameter of the search space'), results: NUMBERS.optional().describe('What was measured, when it is in already') }),
      extra: FIELDS,
      extraKinds: ['form'],
    },
    responses: {
      201: json('The point added', 'CampaignPoint'),
      302: redirect('A form: back to the campaign page'),
      400: error('A parameter missing, out of its bounds or unknown (details name parameters.<name>)'),
      404: NO_CAMPAIGN,
    },
  }),
  plot: route({
    method: 'GET',
    path: '/executions/campaigns/{id}/plot',
    section: SECTION,
    summary: "A campaign's progress: its measured points (who suggested and measured each) and the best so far (JSON; ?format=svg for an image)",
    operationId: 'campaignPlot',
    params: ONE,
    query: z.object({ format: z.enum(['svg', 'json']).optional().describe('svg for an image') }),
    responses: {
      200: { description: 'The progress as data, or an SVG image', content: { 'application/json': { schema: ref('CampaignPlot') }, 'image/svg+xml': { schema: { type: 'string' } } } },
      404: NO_CAMPAIGN,
    },
  }),
  csv: route({
    method: 'GET',
    path: '/executions/campaigns/{id}/points.csv',
    section: SECTION,
    summary: 'The points as CSV: the pending ones to fill in (?state=pending, the default), or all with who suggested and measured each (?state=all)',
    operationId: 'campaignCsv',
    params: ONE,
    query: z.object({ state: z.enum(['pending', 'all']).optional() }),
    responses: { 200: csvDownload('n, the parameters, a column per measured output, …'), 404: NO_CAMPAIGN },
  }),
  upload: route({
    method: 'POST',
    path: '/executions/campaigns/{id}/results',
    section: SECTION,
    summary: 'Upload results: the pending CSV with its output columns (or discarded_reason) filled in',
    operationId: 'uploadResults',
    params: ONE,
    body: {
      name: 'ResultsUpload',
      kinds: ['multipart'],
      schema: z.object({
        file: z.custom<Express.Multer.File>((v) => typeof v === 'object' && v !== null, 'must be an uploaded file').meta({ type: 'string', contentMediaType: 'text/csv', description: 'The CSV' }),
      }),
    },
    responses: {
      200: json('What was entered', 'ResultsUploaded'),
      302: redirect('A form: back to the campaign page'),
      400: error('A line or column that does not fit (details name them); nothing is entered then'),
      404: NO_CAMPAIGN,
      413: error('Over the upload limit'),
    },
  }),
};

export function campaignPointRoutes(runtime: Runtime): Router {
  const r = Router();
  const { campaigns, files } = runtime.ops;
  const upload = multipart({ limits: { fileSize: files.limitBytes, files: 1, fields: 2, fieldSize: 1024, parts: 3 } }, 'file');
  const receive = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) =>
      upload(req, res, (e?: unknown) => {
        if (!e) {
          if (req.file) req.body = { ...req.body, file: req.file };
          return resolve();
        }
        const m = e as { code?: string; message?: string };
        if (m.code === 'LIMIT_FILE_SIZE') return reject(new LabError('payload_too_large', 'The file is over the upload limit.', [{ field: 'file', message: 'too large' }]));
        reject(new LabError('invalid_input', `Send one CSV file, in the multipart field "file" (${m.message ?? 'malformed upload'}).`, [{ field: 'file', message: 'one file, in the field "file"' }]));
      }),
    );

  /** `prefix.<name>` form fields as an object (`results.yield` → { yield }), or the JSON object as sent. */
  const fieldsOf = (body: Record<string, unknown>, prefix: 'results' | 'parameters'): Record<string, unknown> | undefined => {
    const keys = Object.keys(body).filter((k) => k.startsWith(`${prefix}.`));
    if (!keys.length) return body[prefix] as Record<string, unknown> | undefined;
    return Object.fromEntries(keys.map((k) => [k.slice(prefix.length + 1), body[k]]));
  };

  const pageOf = async (req: Request, id: number, err?: LabError) => {
    const [campaign, plot] = await Promise.all([campaigns.get(id), campaigns.plot(id)]);
    return <CampaignPointsPage ctx={await ctxOf(req)} campaign={campaign} plot={plot} error={err} />;
  };
  const page = async (req: Request, res: Response, id: number, err?: LabError) => render(res, await pageOf(req, id, err), err ? statusOf(err) : 200);
  /** A page's form that does not fit: the page again with the message. */
  const formAgain = (req: Request, res: Response, err: LabError) => {
    // a path id that is no campaign id (out of range, not a number) is the error itself, not a page to show again
    const id = ID.safeParse(req.params.id);
    if (!id.success || err.code === 'not_found') throw err;
    return page(req, res, id.data, err);
  };
  /** JSON clients get `answer`; a form goes back to the campaign page (a form that does not fit: the page with the message). */
  const answer = async (req: Request, res: Response, id: number, fn: () => Promise<unknown>, status = 200) => {
    let out: unknown;
    try {
      out = await fn();
    } catch (e) {
      if (e instanceof LabError && e.code !== 'not_found') return failed(req, res, e, (err) => page(req, res, id, err));
      throw e;
    }
    await redirectTo(req, res, url(req, `/executions/campaigns/${id}`), out, { status });
  };

  handle(r, CAMPAIGN_POINT_ROUTES.list, async (req, res) => {
    const list = await campaigns.list();
    await respond(req, res, { json: { campaigns: list }, html: async () => <CampaignsPage ctx={await ctxOf(req)} campaigns={list} /> });
  });

  handle(r, CAMPAIGN_POINT_ROUTES.one, async (req, res, { params }) => {
    await respond(req, res, { json: () => campaigns.get(params.id), html: () => pageOf(req, params.id) });
  });

  handle(
    r,
    CAMPAIGN_POINT_ROUTES.suggest,
    (req, res, { params, body }) => answer(req, res, params.id, async () => ({ points: await campaigns.suggest(callerOf(req, 'app'), params.id, body.n) })),
    formAgain,
  );

  const enter = (req: Request, res: Response, { params, body }: { params: { id: number; n: number }; body: Record<string, unknown> }) =>
    answer(req, res, params.id, () => campaigns.enter(callerOf(req, 'app'), params.id, params.n, { results: fieldsOf(body, 'results'), discarded: body.discarded, reason: body.reason }));
  handle(r, CAMPAIGN_POINT_ROUTES.enter, enter);
  handle(r, CAMPAIGN_POINT_ROUTES.enterForm, enter, formAgain);

  handle(
    r,
    CAMPAIGN_POINT_ROUTES.add,
    (req, res, { params, body }) => {
      const results = fieldsOf(body, 'results');
      const given = results && Object.values(results).some((v) => v !== '' && v !== undefined) ? results : undefined;
      return answer(req, res, params.id, () => campaigns.addPoint(callerOf(req, 'app'), params.id, { parameters: fieldsOf(body, 'parameters'), results: given }), 201);
    },
    formAgain,
  );

  handle(r, CAMPAIGN_POINT_ROUTES.plot, async (_req, res, { params, query }) => {
    const plot = await campaigns.plot(params.id);
    if (query.format === 'svg') return res.type('image/svg+xml').set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'").send(campaignPlotSvg(plot));
    res.json(plot);
  });

  handle(r, CAMPAIGN_POINT_ROUTES.csv, async (_req, res, { params, query }) => {
    const { name, text } = await campaigns.csv(params.id, query.state ?? 'pending');
    res.attachment(name);
    res.type('text/csv; charset=utf-8').send(text);
  });

  handle(r, CAMPAIGN_POINT_ROUTES.upload, (req, res, { params, body }) => answer(req, res, params.id, () => campaigns.upload(callerOf(req, 'app'), params.id, body.file.buffer)), {
    receive,
    formAgain,
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const CAMPAIGN_POINTS_GROUP = routeGroup({ name: 'campaign-points', routes: CAMPAIGN_POINT_ROUTES, mount: campaignPointRoutes });
