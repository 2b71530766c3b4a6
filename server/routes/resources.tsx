/**
 * The lab's resources (core/resources): the stock page and its routes, the consumption rules document, CSV
 * in and out, settling in-doubt calls; the preflight of a run (POST /executions/preflight) and the deck
 * versions (GET /deck/versions). Thin: parse, call core/resources, answer.
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import type { MoveRow, ResourceRow } from '../../core/operations/index.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { csvDownload, error, json, pageOrJson, redirect } from '../api-doc.js';
import { render, statusOf, url } from '../http.js';
import { failed, respond } from '../respond.js';
import { ID, handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { ResourcesPage, DeckVersionsPage, PreflightPage } from '../views/resources.js';
import { formRows } from './executions.js';
import { campaignInput } from './campaigns.js';

const SECTION = 'Resources';
const FORMAT = z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header');
const NAME = z.object({ name: z.string().min(1).describe('A resource name (GET /app/resources)') });
const NO_RESOURCE = error('No such resource');
const NUMBER = z.union([z.number(), z.string()]);

const RuleShape = z.looseObject({}).describe('{ target, method, resource, amount?, to? } (docs/resources.md)');

export const RESOURCE_ROUTES = {
  list: route({
    method: 'GET',
    path: '/resources',
    section: SECTION,
    summary: "The lab's resources (containers, consumables, liquids, samples) with their stock, and the calls in doubt to settle",
    operationId: 'listResources',
    client: { name: 'resources' },
    query: z.object({ format: FORMAT, saved: z.string().optional().describe('Say what was just saved (where a form leads)') }),
    responses: { 200: pageOrJson('The resources page, or { resources, in_doubt }', 'ResourceList') },
  }),
  create: route({
    method: 'POST',
    path: '/resources',
    section: SECTION,
    summary: 'Add a resource: a consumable with a count, a liquid with a volume, a container with positions, a sample',
    operationId: 'createResource',
    client: { name: 'add_resource' },
    body: {
      name: 'NewResource',
      schema: z.object({
        name: z.string().describe('Its name, unique in the lab'),
        kind: z.string().describe('consumable, liquid, container or sample'),
        quantity: NUMBER.optional().describe('The stock: a count, a volume (a sample: 1)'),
        unit: z.string().optional().describe('each (default), ml, µl, …'),
        rows: NUMBER.optional().describe('A container: rows of positions (A, B, …)'),
        columns: NUMBER.optional().describe('A container: columns of positions (1, 2, …)'),
        location: z.string().optional().describe('Where it is: "plate1:A1", a shelf'),
        identity: z.string().optional().describe('A sample: its barcode or name'),
      }),
    },
    responses: { 201: json('The resource', 'Resource'), 302: redirect('Back to the page (forms)'), 400: error('A field that does not fit (named)'), 409: error('The name is taken') },
  }),
  consumption: route({
    method: 'GET',
    path: '/resources/consumption',
    section: SECTION,
    summary: 'The consumption rules: which calls use, make or move which resources',
    operationId: 'getConsumption',
    responses: { 200: json('The rules, a list', 'ConsumptionRules') },
  }),
  setConsumption: route({
    method: 'PUT',
    path: '/resources/consumption',
    section: SECTION,
    summary: 'Replace the consumption rules (the JSON list, or { rules })',
    operationId: 'setConsumption',
    body: { name: 'ConsumptionRulesBody', kinds: ['json'], list: 'rules', schema: z.object({ rules: z.array(RuleShape).describe('[{ target, method, resource, amount?, to? }]') }) },
    responses: { 200: json('The rules as stored', 'ConsumptionRules'), 400: error('A rule that does not fit (rule index and field named)') },
  }),
  exportCsv: route({
    method: 'GET',
    path: '/resources/export',
    section: SECTION,
    summary: 'Every resource as CSV (name, kind, quantity, unit, rows, columns, location, identity, in_doubt)',
    operationId: 'exportResources',
    responses: { 200: csvDownload('resources.csv') },
  }),
  importCsv: route({
    method: 'POST',
    path: '/resources/import',
    section: SECTION,
    summary: "Import resources from CSV (the export's columns): new names are added, known ones get the file's quantity",
    operationId: 'importResources',
    body: { name: 'ResourceImport', kinds: ['json', 'form', 'text'], text: 'csv', schema: z.object({ csv: z.string().describe('The CSV text') }) },
    responses: { 200: json('{ created, updated }', 'ResourceImported'), 302: redirect('Back to the page (forms)'), 400: error('A bad line (line and column named); nothing is changed') },
  }),
  settle: route({
    method: 'POST',
    path: '/resources/moves/{id}/settle',
    section: SECTION,
    summary: 'Settle what an in-doubt call may have used: used (count it now) or not',
    operationId: 'settleResource',
    params: z.object({ id: ID.describe('The ledger line (in_doubt of GET /app/resources)') }),
    body: { name: 'SettleBody', schema: z.object({ used: z.union([z.boolean(), z.string()]).describe('true: the call used it; false: it did not') }) },
    responses: { 200: json('The ledger line as settled', 'ResourceMove'), 302: redirect('Back to the page (forms)'), 409: error('The line is not in doubt') },
  }),
  one: route({
    method: 'GET',
    path: '/resources/{name}',
    section: SECTION,
    summary: 'One resource with its ledger (every top-up, call, move) and, for a container, its positions',
    operationId: 'getResource',
    params: NAME,
    responses: { 200: json('{ resource, moves, positions? }', 'ResourceDetail'), 404: NO_RESOURCE },
  }),
  change: route({
    method: 'PATCH',
    path: '/resources/{name}',
    section: SECTION,
    summary: 'Set the stock ({ quantity }) or top it up ({ add }): written to the ledger with who did it',
    operationId: 'changeResource',
    client: { name: 'top_up' },
    params: NAME,
    body: { name: 'ResourceChange', schema: z.object({ quantity: NUMBER.optional().describe('The new stock'), add: NUMBER.optional().describe('Or: add this much'), note: z.string().optional() }) },
    responses: { 200: json('The resource', 'Resource'), 400: error('Neither or both of quantity and add, or not a number'), 404: NO_RESOURCE },
  }),
  topUpForm: route({
    method: 'POST',
    path: '/resources/{name}/quantity',
    section: SECTION,
    summary: "The page's top-up form: PATCH /resources/{name} for a form",
    operationId: 'changeResourceForm',
    params: NAME,
    body: { name: 'ResourceChangeForm', schema: z.object({ quantity: NUMBER.optional(), add: NUMBER.optional(), note: z.string().optional() }) },
    responses: { 200: json('The resource', 'Resource'), 302: redirect('Back to the page'), 400: error('Not a number'), 404: NO_RESOURCE },
  }),
  move: route({
    method: 'POST',
    path: '/resources/{name}/move',
    section: SECTION,
    summary: 'Move a resource (a sample) to a place: "plate1:A1" names a container position',
    operationId: 'moveResource',
    params: NAME,
    body: { name: 'ResourceMoveBody', schema: z.object({ to: z.string().nullable().describe('The place, or null') }) },
    responses: { 200: json('The resource', 'Resource'), 302: redirect('Back to the page (forms)'), 400: error('A position the container does not have'), 404: NO_RESOURCE },
  }),
  remove: route({
    method: 'DELETE',
    path: '/resources/{name}',
    section: SECTION,
    summary: 'Delete a resource (its ledger stays)',
    operationId: 'deleteResource',
    params: NAME,
    responses: { 204: { description: 'Deleted' }, 404: NO_RESOURCE },
  }),
  preflight: route({
    method: 'POST',
    path: '/executions/preflight',
    section: SECTION,
    summary: 'Check a run (or a campaign) before it moves: steps against the live deck, stock, expected duration',
    operationId: 'preflight',
    client: { name: 'preflight' },
    description:
      'Takes the fields of POST /executions/config (workflow, config | repeat | config_file) or of a campaign (workflow, repeat, optimizer_type, parameters, objectives, …). ' +
      'Answers { ok, problems: [{ field, message }], resources: [{ name, needed, available }], duration_s: { p10, p50, p90 } | null, duration_reason?, steps, iterations, deck_version, safety }. Nothing is queued.',
    body: {
      name: 'PreflightBody',
      description: "JSON, or the run page's form (its `Check first` button: `workflow`, `repeat` or `rows[<i>][<param>]`), answered with the preflight page and a Start button.",
      extra: /^rows\[\d{1,5}\]\[.+\]$/,
      extraKinds: ['form'],
      schema: z.object({
        workflow: z.string().min(1).describe('A saved workflow'),
        ...Object.fromEntries(
          [
            'config',
            'repeat',
            'name',
            'config_file',
            'optimizer_type',
            'parameters',
            'objectives',
            'parameter_constraints',
            'outcome_constraints',
            'stop_when',
            'existing_data',
            'batch_size',
            'seed',
          ].map((k) => [k, z.unknown().optional().describe(`As in POST /executions/config or /executions/campaign`)]),
        ),
      }),
    },
    responses: { 200: pageOrJson('The preflight (a form: the page, with Start)', 'Preflight') },
  }),
  deckVersions: route({
    method: 'GET',
    path: '/deck/versions',
    section: SECTION,
    summary: "The deck's numbered versions, what changed in each, and the saved workflows the current deck breaks",
    operationId: 'deckVersions',
    query: z.object({ format: FORMAT }),
    responses: { 200: pageOrJson('The versions page, or { current, versions, broken }', 'DeckVersions') },
  }),
  deckVersion: route({
    method: 'GET',
    path: '/deck/versions/{id}',
    section: SECTION,
    summary: 'What changed in one deck version (?against=N: from version N to this one)',
    operationId: 'deckVersionDiff',
    params: z.object({ id: ID.describe('A deck version') }),
    query: z.object({ format: FORMAT, against: ID.optional().describe('Compare with this version instead of the one before') }),
    responses: { 200: pageOrJson('The diff page, or { from, to, changes, lines }', 'DeckDiff'), 404: error('No such version') },
  }),
};

export function resourceJson(r: ResourceRow) {
  return {
    name: r.name,
    kind: r.kind,
    quantity: r.quantity,
    unit: r.unit,
    rows: r.rows,
    columns: r.columns,
    location: r.location,
    identity: r.identity,
    in_doubt: r.inDoubt,
    updated_at: r.updatedAt.toISOString(),
  };
}

export function moveJson(m: MoveRow) {
  return {
    id: m.id,
    resource: m.resource,
    kind: m.kind,
    status: m.status,
    delta: m.delta,
    from: m.fromLocation,
    to: m.toLocation,
    step_id: m.stepId,
    run_id: m.runId,
    user_id: m.userId,
    note: m.note,
    at: m.at.toISOString(),
  };
}

export function resourceRoutes(runtime: Runtime): Router {
  const r = Router();
  const resources = runtime.ops.resources;
  const R = RESOURCE_ROUTES;

  const pageOf = async (req: Request, extra: { error?: LabError; notice?: string } = {}) => {
    const [list, doubt, rules] = await Promise.all([resources.list(), resources.inDoubt(), resources.rules()]);
    return <ResourcesPage ctx={await ctxOf(req)} resources={list.map(resourceJson)} inDoubt={doubt.map(moveJson)} rules={rules} error={extra.error} notice={extra.notice} />;
  };
  const page = async (req: Request, res: Response, extra: { error?: LabError; notice?: string } = {}, status = 200) => render(res, await pageOf(req, extra), status);
  /** A form that does not fit comes back to the page with the message; JSON gets the error. */
  const formOr =
    <I,>(fn: (req: Request, res: Response, input: I) => Promise<unknown>) =>
    async (req: Request, res: Response, input: I) => {
      try {
        await fn(req, res, input);
      } catch (e) {
        // only the page's own forms are shown again; any other body gets the error (JSON, or the error page)
        await failed(req, res, e, req.is('application/x-www-form-urlencoded') ? (err) => page(req, res, { error: err }, statusOf(err)) : undefined);
      }
    };
  const back = (req: Request, res: Response, what: string) => res.redirect(302, url(req, `/resources?saved=${encodeURIComponent(what)}`));
  const who = (req: Request) => callerOf(req, 'app');

  handle(r, R.list, async (req, res, { query }) => {
    await respond(req, res, {
      json: async () => {
        const [list, doubt] = await Promise.all([resources.list(), resources.inDoubt()]);
        return { resources: list.map(resourceJson), in_doubt: doubt.map(moveJson) };
      },
      html: () => pageOf(req, { notice: query.saved ? `Saved: ${query.saved}.` : undefined }),
    });
  });

  handle(
    r,
    R.create,
    formOr(async (req, res, { body }: { body: Record<string, unknown> }) => {
      const row = await resources.create(who(req), body);
      if (req.is('application/json')) return res.status(201).json(resourceJson(row));
      back(req, res, row.name);
    }),
  );

  handle(r, R.consumption, async (_req, res) => {
    res.json(await resources.rules());
  });
  handle(r, R.setConsumption, async (req, res, { body }) => {
    res.json(await resources.setRules(who(req), body.rules));
  });

  handle(r, R.exportCsv, async (_req, res) => {
    res
      .attachment('resources.csv')
      .type('text/csv; charset=utf-8')
      .set('Cache-Control', 'no-store')
      .send(await resources.exportCsv());
  });
  handle(
    r,
    R.importCsv,
    formOr(async (req, res, { body }: { body: { csv: string } }) => {
      const out = await resources.importCsv(who(req), body.csv);
      if (req.is('application/x-www-form-urlencoded')) return back(req, res, `${out.created} added, ${out.updated} updated from CSV`);
      res.json(out);
    }),
  );

  handle(
    r,
    R.settle,
    formOr(async (req, res, { params, body }: { params: { id: number }; body: { used: boolean | string } }) => {
      const used = body.used === true || body.used === 'true' ? true : body.used === false || body.used === 'false' ? false : body.used;
      const m = await resources.settle(who(req), params.id, used);
      if (req.is('application/json')) return res.json(moveJson(m));
      back(req, res, `line ${m.id} settled`);
    }),
  );

  handle(r, R.one, async (_req, res, { params }) => {
    const d = await resources.detail(params.name);
    res.json({ resource: resourceJson(d.resource), moves: d.moves.map(moveJson), ...(d.positions ? { positions: d.positions } : {}) });
  });

  handle(r, R.change, async (req, res, { params, body }) => {
    const row = await resources.change(who(req), params.name, body);
    res.json(resourceJson(row));
  });
  handle(
    r,
    R.topUpForm,
    formOr(async (req, res, { params, body }: { params: { name: string }; body: Record<string, unknown> }) => {
      const given = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== ''));
      const row = await resources.change(who(req), params.name, given);
      if (req.is('application/json')) return res.json(resourceJson(row));
      back(req, res, `${row.name}: ${row.quantity} ${row.unit}`);
    }),
  );

  handle(
    r,
    R.move,
    formOr(async (req, res, { params, body }: { params: { name: string }; body: { to: string | null } }) => {
      const row = await resources.move(who(req), params.name, body.to === '' ? null : body.to);
      if (req.is('application/json')) return res.json(resourceJson(row));
      back(req, res, `${row.name} moved to ${row.location ?? 'nowhere'}`);
    }),
  );

  handle(r, R.remove, async (req, res, { params }) => {
    await resources.remove(who(req), params.name);
    res.status(204).end();
  });

  const configSchema = (name: unknown) => runtime.ops.campaigns.schemas().find((o) => o.name === name)?.config ?? null;
  handle(r, R.preflight, async (req, res, { body }) => {
    const input: Record<string, unknown> = { ...body };
    const form = !req.is('application/json');
    if (form) {
      // the run page's form, read as POST /executions/config reads it: a repeat count wins, else the typed rows
      for (const k of Object.keys(input)) if (k.startsWith('rows[') || input[k] === '') delete input[k];
      const repeat = typeof body.repeat === 'string' && body.repeat.trim() ? body.repeat.trim() : undefined;
      if (repeat) input.repeat = repeat;
      else input.config = formRows(body);
    }
    const campaign = body.optimizer_type !== undefined || body.parameters !== undefined || body.objectives !== undefined;
    let configFile: string | undefined;
    if (!campaign && typeof body.config_file === 'string' && body.config_file) {
      // an uploaded config CSV, read as POST /executions/config reads it
      configFile = body.config_file;
      delete input.config_file;
      delete input.repeat;
    }
    const result = await resources.preflight(who(req), campaign ? (campaignInput(input, configSchema) as Record<string, unknown>) : input, { configFile });
    if (!form) return res.json(result); // a JSON body is a script's: JSON whatever it accepts
    await respond(req, res, {
      json: result,
      html: async () => {
        const fields = Object.entries(body).filter(([, v]) => typeof v === 'string' && v !== '') as [string, string][];
        return <PreflightPage ctx={await ctxOf(req)} workflow={body.workflow} result={result} fields={fields} />;
      },
    });
  });

  handle(r, R.deckVersions, async (req, res) => {
    const out = await resources.deckVersions();
    await respond(req, res, { json: out, html: async () => <DeckVersionsPage ctx={await ctxOf(req)} {...out} /> });
  });

  handle(r, R.deckVersion, async (req, res, { params, query }) => {
    const d = await resources.deckDiff(params.id, query.against);
    await respond(req, res, { json: d, html: async () => <DeckVersionsPage ctx={await ctxOf(req)} current={resources.deckVersion()} versions={[]} broken={[]} diff={d} /> });
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const RESOURCES_GROUP = routeGroup({ name: 'resources', routes: RESOURCE_ROUTES, mount: resourceRoutes });
