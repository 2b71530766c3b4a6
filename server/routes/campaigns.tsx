/** Optimization campaigns: optimizer schemas, starting a campaign, and the latest campaign's plot. */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { CampaignInput } from '../../core/campaign/index.js';
import { coerceFormArgs } from '../../core/deck/form.js';
import { done } from '../../core/operations/index.js';
import { callerOf } from '../caller.js';
import { LabError } from '../../core/errors.js';
import type { Workflow } from '../../core/workflow/model.js';
import { outputKind } from '../../core/workflow/outputs.js';
import type { Runtime } from '../../core/runtime.js';
import { ctxOf } from '../context.js';
import { error, json, page as pageAnswer, redirect, ref } from '../api-doc.js';
import { render, statusOf, url } from '../http.js';
import { failed, redirectTo } from '../respond.js';
import { handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { CampaignPage } from '../views/campaign/page.js';
import { plotSvg } from '../views/plot-svg.js';

type Fields = Record<string, unknown>;

/** The fields the page may send for one parameter: `param.<name>.<key>`. */
const PARAM_FIELDS = ['use', 'type', 'low', 'high', 'choices', 'value', 'step', 'log_scale'];

/**
 * The page's structured fields → the spec's `parameters` and `objectives` lists: `param.<name>.use|type|low|
 * high|choices|value|step|log_scale`, `objective.<name>` = max|min and its `objective.<name>.weight`. The
 * spec's own fields (JSON or the short text form) win. A `param.` field of another key is refused by name.
 */
export function campaignInput(body: Fields, configSchema: (optimizer: unknown) => Record<string, unknown> | null): CampaignInput {
  const input: CampaignInput = { ...body };
  const structured = (prefix: string) => Object.keys(body).filter((k) => k.startsWith(prefix));
  const unknown = structured('param.').filter((k) => !PARAM_FIELDS.includes(k.split('.').slice(2).join('.')));
  if (unknown.length) {
    throw new LabError(
      'invalid_input',
      `${unknown.join(', ')}: not a field of a parameter (param.<name>.${PARAM_FIELDS.join('|')})`,
      unknown.map((field) => ({ field, message: `is not a field of a parameter (its fields: ${PARAM_FIELDS.join(', ')})` })),
    );
  }
  if (!nonEmpty(body.parameters) && structured('param.').length) {
    const names = [...new Set(structured('param.').map((k) => k.split('.')[1]))];
    const field = (name: string, key: string) => body[`param.${name}.${key}`];
    input.parameters = names
      .filter((n) => field(n, 'use') === 'on' || field(n, 'use') === 'true')
      .map((name) => {
        const type = String(field(name, 'type') ?? 'range');
        if (type === 'choice')
          return {
            name,
            type,
            choices: String(field(name, 'choices') ?? '')
              .split('|')
              .map((c) => c.trim())
              .filter(Boolean),
          };
        if (type === 'fixed') {
          const v = String(field(name, 'value') ?? '').trim();
          return { name, type, value: v !== '' && Number.isFinite(Number(v)) ? Number(v) : v };
        }
        const step = String(field(name, 'step') ?? '').trim();
        const log = field(name, 'log_scale') === 'on' || field(name, 'log_scale') === 'true';
        return { name, type, bounds: [Number(field(name, 'low')), Number(field(name, 'high'))], ...(step ? { step: Number(step) } : {}), ...(log ? { log_scale: true } : {}) };
      });
  }
  if (!nonEmpty(body.objectives) && structured('objective.').length) {
    input.objectives = structured('objective.')
      .filter((k) => body[k] === 'max' || body[k] === 'min')
      .map((k) => {
        const weight = String(body[`${k}.weight`] ?? '').trim();
        return { name: k.slice('objective.'.length), minimize: body[k] === 'min', ...(weight ? { weight: Number(weight) } : {}) };
      });
  }
  if (typeof body.config === 'string' && body.config.trim()) {
    try {
      input.config = JSON.parse(body.config);
    } catch (e) {
      throw new LabError('invalid_input', `config is not valid JSON: ${(e as Error).message}`, [{ field: 'config', message: 'invalid JSON' }]);
    }
  } else if (structured('config.').length) {
    const schema = configSchema(body.optimizer_type);
    const fields = Object.fromEntries(
      structured('config.')
        .map((k) => [k.slice('config.'.length), body[k] as string])
        .filter(([, v]) => v !== ''),
    );
    input.config = schema ? coerceFormArgs(schema, fields) : fields;
  }
  return input;
}

const SECTION = 'Workflow execution';

/** A count: a whole number (JSON), or its text (a form; the campaign checks it and names the field). */
const count = z.union([z.int(), z.string()]);

export const CAMPAIGN_ROUTES = {
  page: route({
    method: 'GET',
    path: '/executions/campaign',
    section: SECTION,
    summary: 'Set up an optimization campaign',
    operationId: 'campaignPage',
    query: z.object({ workflow: z.string().optional().describe('The workflow to set up'), uploaded: z.string().optional().describe('A history file just uploaded (preselected)') }),
    responses: { 200: pageAnswer('The campaign set-up page') },
  }),
  start: route({
    method: 'POST',
    path: '/executions/campaign',
    section: SECTION,
    summary: 'Start a campaign: workflow, repeat, optimizer_type, parameters, objectives, existing_data, batch_size (302 to the config page)',
    operationId: 'startCampaign',
    client: {
      name: 'start_campaign',
      positional: ['parameters', 'objectives'],
      required: ['repeat'],
      doc:
        'Queue an optimization campaign over a saved workflow. parameters: [{ name: "t", type: "range", bounds: [20, 120] }, { name: "solvent", type: "choice", choices: ["water", "ethanol"] }] ' +
        '(type "int" for integers), or the short form "t: 20..120, solvent: water|ethanol"; objectives: [{ name: "yield", minimize: false }] or "yield:max". ' +
        'Returns { task_id, status }: pass it to the wait-for-run method. A bad field is a 400 naming it (details); an unknown workflow or optimizer a 404.',
    },
    description:
      'Checked against the workflow (parameters, outputs), the optimizer (types, batch) and the warm-start file before it is queued. ' +
      'The page sends `param.<name>.use|type|low|high|step|log_scale|choices|value`, `objective.<name>` (max or min), `objective.<name>.weight` and `config.<key>` fields instead of the lists.',
    body: {
      name: 'CampaignBody',
      schema: z.object({
        workflow: z.string().min(1),
        repeat: count.optional().describe('How many experiments the campaign runs (required unless execution is manual)'),
        optimizer_type: z.string().min(1).describe('random, sobol, gp, or a plugin (POST /app/executions/optimizer_schema)'),
        parameters: z
          .union([
            z.array(
              z.looseObject({
                name: z.string(),
                type: z.enum(['range', 'int', 'choice', 'fixed']),
                bounds: z.array(z.number()).optional(),
                choices: z.array(z.string()).optional(),
                log_scale: z.boolean().optional().describe('Search on a log scale (bounds above 0)'),
                step: z.number().optional().describe('Only the values low + k·step'),
                value: z.union([z.number(), z.string()]).optional().describe('The value of a fixed parameter'),
              }),
            ),
            z.string(),
          ])
          .optional()
          .describe('The search space: a JSON list, or the short form "x: 0..1, c: log 0.01..10, v: 0..100 step 5, n: int 1..10, solvent: water|ethanol, ph: = 7"'),
        objectives: z
          .union([z.array(z.strictObject({ name: z.string(), minimize: z.boolean(), weight: z.number().optional().describe('Scalarises several objectives') })), z.string()])
          .optional()
          .describe('Workflow outputs to optimize: a JSON list, or "yield:max, cost:min" ("yield:max:2, cost:min:1" with weights)'),
        parameter_constraints: z
          .union([z.array(z.string()), z.string()])
          .optional()
          .describe('Linear constraints every suggestion satisfies: ["x1 + 2*x2 <= 10", "water + ethanol + dmso == 1"], JSON text of such a list, or one per line'),
        outcome_constraints: z
          .union([z.array(z.string()), z.string()])
          .optional()
          .describe('Limits on workflow outputs: ["purity >= 0.9"] (gp models them; every optimizer records which observations meet them)'),
        stop_when: z
          .union([z.array(z.string()), z.string()])
          .optional()
          .describe('End the campaign early when a measurement meets this: "run.yield >= 0.95"'),
        existing_data: z.string().optional().describe('An uploaded history file (POST /app/files/execution-data) to warm-start from'),
        batch_size: count.optional().describe('Experiments suggested at a time (1 by default)'),
        seed: count.optional().describe('Makes the suggestions repeatable'),
        config: z
          .union([z.record(z.string(), z.unknown()), z.string()])
          .optional()
          .describe("The optimizer's options (its schema), as an object or JSON text"),
        name: z.string().max(200).optional().describe("The queued task's name"),
        execution: z.enum(['robot', 'manual']).optional().describe('manual: people carry the points out and enter the results (GET /executions/campaigns/{id}); robot (default): the workflow runs'),
      }),
      extra: /^(param|objective|config)\./,
    },
    responses: {
      302: redirect('Queued: to the execution config page (forms)'),
      200: json('Queued (JSON clients): { task_id, status }; a manual campaign: { campaign_id }', 'CampaignStarted'),
      400: error('A bad or unknown field: details name it (parameters[0].bounds, objectives[0].name, line 3, column yield, …)'),
      404: error('No such workflow, optimizer or history file'),
      503: error('The history file is being read by too many others: try again after Retry-After seconds'),
    },
  }),
  optimizerSchema: route({
    method: 'POST',
    path: '/executions/optimizer_schema',
    section: SECTION,
    summary: 'Configuration schema and capabilities of one optimizer ({ optimizer_type }) or all',
    operationId: 'optimizerSchema',
    body: { name: 'OptimizerSchemaBody', kinds: ['json', 'form'], schema: z.object({ optimizer_type: z.string().optional().describe('Omit for every optimizer') }) },
    responses: { 200: json('The schema and capabilities', 'OptimizerSchemas'), 404: error('No such optimizer') },
  }),
  latestPlot: route({
    method: 'GET',
    path: '/executions/latest_plot',
    section: SECTION,
    summary: 'The latest campaign: points, best so far, model (JSON; ?format=svg for an image)',
    operationId: 'latestPlot',
    query: z.object({ format: z.enum(['svg', 'json']).optional().describe('svg for an image') }),
    responses: {
      200: { description: 'The latest campaign as data, or an SVG image', content: { 'application/json': { schema: ref('LatestPlot') }, 'image/svg+xml': { schema: { type: 'string' } } } },
      404: error('No campaign has run yet'),
    },
  }),
};

const nonEmpty = (v: unknown) => (Array.isArray(v) ? true : typeof v === 'string' && v.trim() !== '');

export function campaignRoutes(runtime: Runtime): Router {
  const r = Router();
  const { campaigns, workflows, files, instruments } = runtime.ops;
  const configSchema = (name: unknown) => campaigns.schemas().find((o) => o.name === name)?.config ?? null;

  const page = async (req: Request, res: Response, extra: { error?: LabError; values?: Fields } = {}, status = 200) => {
    const [saved, histories] = await Promise.all([workflows.list(), files.list('history')]);
    const selected = (extra.values?.workflow as string | undefined) ?? (typeof req.query.workflow === 'string' ? req.query.workflow : undefined);
    render(
      res,
      <CampaignPage
        ctx={await ctxOf(req)}
        workflows={saved.map((w) => ({ name: w.name, version: w.version, definition: w.definition }))}
        selected={selected}
        optimizers={campaigns.schemas()}
        histories={histories.map((h) => ({ name: h.storedName, original: h.originalName, rows: h.rows }))}
        methodParams={(i, m) => (instruments.isLocal(i) ? instruments.schema(i).methods.find((x) => x.name === m)?.params : undefined)}
        outputKind={(definition, output) => outputKind(definition as Workflow, instruments.deckSchemas, output)}
        uploaded={typeof req.query.uploaded === 'string' ? req.query.uploaded : undefined}
        uploadLimit={files.limitBytes}
        error={extra.error}
        values={extra.values}
      />,
      status,
    );
  };

  handle(r, CAMPAIGN_ROUTES.page, (req, res) => page(req, res));

  handle(r, CAMPAIGN_ROUTES.optimizerSchema, (_req, res, { body }) => {
    res.json(campaigns.schema(body.optimizer_type));
  });

  /** A form that does not fit comes back with the message, its values kept. */
  const formAgain = (req: Request, res: Response, err: LabError) => page(req, res, { error: err, values: (req.body ?? {}) as Fields }, statusOf(err));

  handle(
    r,
    CAMPAIGN_ROUTES.start,
    async (req, res, { body }) => {
      try {
        if (body.execution === 'manual') {
          const view = await campaigns.startManual(callerOf(req, 'app'), campaignInput(body, configSchema));
          return await redirectTo(req, res, url(req, `/executions/campaigns/${view.campaign_id}`), { campaign_id: view.campaign_id });
        }
        const { task, status } = done(await campaigns.start(callerOf(req, 'app'), campaignInput(body, configSchema)));
        await redirectTo(req, res, url(req, `/executions/config?workflow=${encodeURIComponent(String(body.workflow))}`), { task_id: task.id, status });
      } catch (e) {
        await failed(req, res, e, (err) => formAgain(req, res, err));
      }
    },
    formAgain,
  );

  handle(r, CAMPAIGN_ROUTES.latestPlot, async (_req, res, { query }) => {
    const plot = await campaigns.latestPlot();
    if (query.format === 'svg') return res.type('image/svg+xml').set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'").send(plotSvg(plot));
    res.json(plot);
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const CAMPAIGNS_GROUP = routeGroup({ name: 'campaigns', routes: CAMPAIGN_ROUTES, mount: campaignRoutes });
