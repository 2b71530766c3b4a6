/**
 * Workflows (DESIGN.md §4, §7): list, create, read, new version, delete, and the builder page.
 *
 * - `GET /workflows/new` is the builder for a new workflow; `new` is therefore not a workflow name (POST
 *   refuses it with 400). `GET /workflows/{name}/builder` opens a saved one.
 * - Any logged-in user may create, change and delete workflows (a lab's workflows are shared); saving makes a
 *   new version, the latest is the current one; deletion removes every version and is audit-logged.
 * - The body of POST and PUT is the workflow document itself (JSON). It is validated against the live deck
 *   (`validateWorkflow`), and stored with its defaults filled in. On PUT, `name` may be left out; when given,
 *   it must be the name in the path (a workflow is renamed by saving it under the new name and deleting it).
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { InstrumentSchema } from '../../core/contracts/index.js';
import { LabError, isLabError, type ErrorDetail } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import type { BrokenStep, WorkflowRow } from '../../core/operations/index.js';
import { instrumentsOf } from '../../core/workflow/validate.js';
import { outputName, type Workflow } from '../../core/workflow/model.js';
import { workflowToPython } from '../../core/workflow/python.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { error, json, LOCATION, pageOrJson } from '../api-doc.js';
import { render, statusOf, url } from '../http.js';
import { failed, redirectTo, respond } from '../respond.js';
import { ID, handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { BuilderPage, WorkflowPage, WorkflowsPage, type BuilderData, type PythonImportForm, type WorkflowJson, type WorkflowSummary } from '../views/workflows.js';

/** The builder's URL for a new workflow: this word cannot name a workflow. */
export const NEW_WORKFLOW = 'new';

/** The deck as the builder's palette needs it: every instrument and its methods' schemas. */
export function paletteOf(instruments: InstrumentSchema[]): BuilderData['instruments'] {
  return instruments.map((i) => ({
    name: i.name,
    driver: i.driver,
    description: i.description,
    methods: i.methods.map((m) => ({ name: m.name, description: m.description, safety: m.safety, params: m.params, ...(m.returns ? { returns: m.returns } : {}) })),
  }));
}

const SECTION = 'Workflows';
const FORMAT = z.object({ format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header') });
// the pattern is documented, not checked here: a name that is not one is no saved workflow (404)
const NAMED = z.object({ name: z.string().meta({ pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' }).describe('A workflow name') });
/** A workflow document (JSON); validateWorkflow checks it whole against the live deck, naming each step path. */
const DOCUMENT = { schema: z.looseObject({}), kinds: ['json' as const], document: 'Workflow' };

export const WORKFLOW_ROUTES = {
  list: route({
    method: 'GET',
    path: '/workflows',
    section: SECTION,
    summary: 'All workflows (latest versions)',
    operationId: 'listWorkflows',
    query: FORMAT,
    responses: { 200: pageOrJson('The latest version of every workflow (the page links to each, and to the builder)', 'WorkflowList') },
  }),
  create: route({
    method: 'POST',
    path: '/workflows',
    section: SECTION,
    summary: 'Create a workflow: the JSON document (201; 400 names the step path; 409 name taken)',
    operationId: 'createWorkflow',
    description:
      'The body is the workflow document. It is validated against the live deck first; every problem is reported at once, ' +
      'each detail naming its path (`main[1].args.volume_ml`). Any logged-in user may create workflows. `new` is not a workflow name.',
    body: DOCUMENT,
    responses: {
      201: { ...json('Created: the stored document, defaults filled in (a name used before and deleted continues its version numbers)', 'WorkflowSaved'), headers: { ...LOCATION } },
      400: error('Not JSON, or an invalid workflow: details name each step path and problem'),
      409: error('A workflow of that name exists (PUT makes a new version of it)'),
    },
  }),
  builderNew: route({
    method: 'GET',
    path: '/workflows/new',
    section: SECTION,
    summary: 'The builder, for a new workflow',
    operationId: 'newWorkflowBuilder',
    query: FORMAT,
    responses: { 200: pageOrJson('The builder with an empty workflow (JSON: the data the page embeds)', 'WorkflowBuilder') },
  }),
  one: route({
    method: 'GET',
    path: '/workflows/{name}',
    section: SECTION,
    summary: 'A workflow: its document and version (?version=N for an older one)',
    operationId: 'getWorkflow',
    params: NAMED,
    query: FORMAT.extend({ version: ID.optional().describe('An older version (default: the latest)') }),
    responses: {
      200: pageOrJson('The document and its version (the page: a readable view, with links to the builder and to run it)', 'WorkflowVersion'),
      400: error('version is not a positive integer'),
      404: error('No such workflow, or no such version'),
    },
  }),
  update: route({
    method: 'PUT',
    path: '/workflows/{name}',
    section: SECTION,
    summary: 'Save a new version of a workflow (400 names the step path)',
    operationId: 'updateWorkflow',
    description: 'Saves the body as a new version. `name` may be left out; when given it must be the name in the path.',
    params: NAMED,
    body: DOCUMENT,
    responses: {
      200: json('Saved as a new version', 'WorkflowSaved'),
      400: error("Not JSON, a name other than the path's, or an invalid workflow: details name each step path"),
      404: error('No such workflow (create it with POST /app/workflows)'),
    },
  }),
  delete: route({
    method: 'DELETE',
    path: '/workflows/{name}',
    section: SECTION,
    summary: 'Delete a workflow and all its versions',
    operationId: 'deleteWorkflow',
    description: 'Deletes every version. Runs keep their own copy of the workflow. Audit-logged.',
    params: NAMED,
    responses: { 200: json('Deleted: { "deleted": name }', 'Deleted'), 403: error('Created by another user: only they or an admin may delete it'), 404: error('No such workflow') },
  }),
  importPython: route({
    method: 'POST',
    path: '/workflows/import/python',
    section: SECTION,
    summary: 'Import a workflow written in Python (ivoryOS-style; read, never run): 201 saved, 400 names the line',
    operationId: 'importPythonWorkflow',
    description:
      "The body is the script (text/plain; `?name=` names the workflow) or `{ source, name }` (JSON or a form). The script is read with Python's " +
      '`ast`, never run: a main function (its arguments are the parameters, its returned dict the outputs), optional `prep` / `<name>_prep` and ' +
      '`cleanup` / `<name>_cleanup` functions, and in them calls on instruments (`deck.pump.dose(volume_ml=1.5)`, `lab.pump.dose(…)`), ' +
      'assignments of their results, `time.sleep`, `input` (a pause), `if`/`else` and `for _ in range(n)`. Anything else is refused naming its line; ' +
      'the workflow is then validated against the deck like any other. `?save=false` answers the workflow without saving it.',
    body: {
      name: 'PythonImportBody',
      kinds: ['json', 'form', 'text'],
      text: 'source',
      schema: z.object({
        source: z
          .string()
          .refine((s) => s.trim() !== '', 'must not be empty')
          .meta({ minLength: 1 })
          .describe('The Python script'),
        name: z.string().optional().describe("The workflow's name (default: the main function's)"),
      }),
    },
    query: z.object({
      name: z.string().optional().describe('The workflow name, for a text/plain body'),
      save: z.enum(['true', 'false']).optional().describe('false: answer the workflow without saving it'),
    }),
    responses: {
      201: { ...json('Saved: the stored document (the form: 303 to its page)', 'WorkflowSaved'), headers: { ...LOCATION } },
      200: json('save=false: the workflow document, validated', 'Workflow'),
      400: error('Python outside the subset (the message names the line; data.line), or a workflow that does not fit the deck (details name each step path)'),
      409: error('A workflow of that name exists'),
    },
  }),
  importIvoryos: route({
    method: 'POST',
    path: '/workflows/import/ivoryos',
    section: SECTION,
    summary: "Import an ivoryOS workflow JSON (the next generation's, or Classic's script_dict): 201 saved, 400 names the step",
    operationId: 'importIvoryosWorkflow',
    description:
      "`workflow` is the workflow file of ivoryOS's next generation (`{ name, prep, script, cleanup }`, steps with `return` and `return_bindings`, " +
      "`#name` arguments, `Flow_Control` steps), or Classic's `script_dict` (or its library row `{ name, script_dict }`). Read, never run; " +
      '`pro_code`, `for`/`endfor`, `while`, variables and batch steps are refused naming the step (`script[3]`). `?save=false` answers the workflow without saving it.',
    body: {
      name: 'IvoryosImportBody',
      kinds: ['json'],
      schema: z.object({
        workflow: z.record(z.string(), z.unknown()).describe('The ivoryOS workflow JSON'),
        name: z.string().optional().describe("The workflow's name (default: the file's, letters, digits, _ and - kept)"),
      }),
    },
    query: z.object({ save: z.enum(['true', 'false']).optional().describe('false: answer the workflow without saving it') }),
    responses: {
      201: { ...json('Saved: the stored document', 'WorkflowSaved'), headers: { ...LOCATION } },
      200: json('save=false: the workflow document, validated', 'Workflow'),
      400: error('A step labdeck has no step for (named: script[3]), or a workflow that does not fit the deck (details name each step path)'),
      409: error('A workflow of that name exists'),
    },
  }),
  ivoryos: route({
    method: 'GET',
    path: '/workflows/{name}/ivoryos',
    section: SECTION,
    summary: "The workflow as ivoryOS's next-generation workflow JSON",
    operationId: 'exportIvoryosWorkflow',
    description: 'prep/script/cleanup with Flow_Control steps, `#name` arguments and return bindings; importing it back (POST /workflows/import/ivoryos) gives the same workflow.',
    params: NAMED,
    query: z.object({ version: ID.optional().describe('An older version (default: the latest)') }),
    responses: { 200: { description: 'The workflow JSON', content: { 'application/json': { schema: { type: 'object' } } } }, 404: error('No such workflow, or no such version') },
  }),
  python: route({
    method: 'GET',
    path: '/workflows/{name}/python',
    section: SECTION,
    summary: "The workflow as a runnable Python script over labdeck's generated client (an attachment)",
    operationId: 'exportPythonWorkflow',
    description: 'Imports `labdeck_client` (GET /app/instruments/proxy) and makes the same calls as `lab.<instrument>.<method>(…)`; importing it back gives the same workflow.',
    params: NAMED,
    query: z.object({ version: ID.optional().describe('An older version (default: the latest)') }),
    responses: {
      200: {
        description: 'The script, as an attachment',
        headers: { 'Content-Disposition': { description: 'attachment; filename=<name>.py', schema: { type: 'string' } } },
        content: { 'text/x-python': { schema: { type: 'string' } } },
      },
      404: error('No such workflow, or no such version'),
    },
  }),
  builder: route({
    method: 'GET',
    path: '/workflows/{name}/builder',
    section: SECTION,
    summary: 'The builder, with a workflow loaded',
    operationId: 'workflowBuilder',
    params: NAMED,
    query: FORMAT,
    responses: { 200: pageOrJson('The builder with the workflow loaded (JSON: the data the page embeds)', 'WorkflowBuilder'), 404: error('No such workflow') },
  }),
};

export function workflowRoutes(runtime: Runtime): Router {
  const r = Router();
  const { workflows, instruments } = runtime.ops;

  /** Usernames by id, for "saved by" (one query per request). */
  const userNames = () => workflows.authors();

  const asJson = (row: WorkflowRow, names: Map<number, string>): WorkflowJson => ({
    name: row.name,
    version: row.version,
    updated_at: row.createdAt.toISOString(),
    updated_by: row.createdBy === null ? null : (names.get(row.createdBy) ?? null),
    workflow: row.definition as Workflow,
  });

  const summary = (row: WorkflowRow, names: Map<number, string>, broken: Map<string, BrokenStep[]>): WorkflowSummary => {
    const wf = row.definition as Workflow;
    const { workflow: _doc, ...head } = asJson(row, names);
    return {
      ...head,
      description: wf.description ?? '',
      parameters: wf.parameters ?? [],
      outputs: (wf.outputs ?? []).map(outputName),
      instruments: instrumentsOf({ prep: wf.prep ?? [], main: wf.main ?? [], cleanup: wf.cleanup ?? [] }),
      steps: { prep: wf.prep?.length ?? 0, main: wf.main?.length ?? 0, cleanup: wf.cleanup?.length ?? 0 },
      broken: broken.get(row.name) ?? [],
    };
  };

  const find = async (name: string, version?: number) => {
    const row = await workflows.get(name, version);
    if (!row) {
      throw new LabError('not_found', version === undefined ? `There is no workflow "${name}".` : `Workflow "${name}" has no version ${version}.`, [
        { field: version === undefined ? 'name' : 'version', message: 'not found' },
      ]);
    }
    return row;
  };

  /** Validate against the deck, adding the route's own problems (`extra`) to the ones validation finds. */
  const validate = (doc: Record<string, unknown>, extra: ErrorDetail[]): Workflow => {
    let problems: ErrorDetail[] = [];
    let wf: Workflow | undefined;
    let message = '';
    try {
      wf = workflows.validate(doc); // the lab's instruments, other labdecks' too
    } catch (e) {
      if (!isLabError(e) || e.code !== 'invalid_input') throw e;
      problems = e.details ?? [];
      message = e.message;
    }
    if (!extra.length && wf) return wf;
    const details = [...extra, ...problems.filter((p) => !extra.some((x) => x.field === p.field))];
    const first = extra.map((d) => `${d.field} ${d.message}`).join('; ');
    const text = !message ? `The workflow has a problem: ${first}` : first ? `${first}; ${message}` : message;
    throw new LabError('invalid_input', text, details);
  };

  const builderData = (req: Request, doc: unknown, row: WorkflowRow | null): BuilderData => ({
    name: row?.name ?? null,
    version: row?.version ?? null,
    workflow: doc,
    instruments: paletteOf(instruments.local()),
    urls: { list: url(req, '/workflows'), base: url(req, '/workflows/'), run: url(req, '/executions/config?workflow='), campaign: url(req, '/executions/campaign?workflow=') },
  });

  handle(r, WORKFLOW_ROUTES.list, async (req, res) => {
    const [rows, names, broken] = await Promise.all([workflows.list(), userNames(), workflows.broken()]);
    const list = rows.map((row) => summary(row, names, broken));
    await respond(req, res, { json: { workflows: list }, html: async () => <WorkflowsPage ctx={await ctxOf(req)} workflows={list} /> });
  });

  handle(r, WORKFLOW_ROUTES.create, async (req, res, { body: doc }) => {
    const extra: ErrorDetail[] = doc.name === NEW_WORKFLOW ? [{ field: 'name', message: `"${NEW_WORKFLOW}" is reserved (it is the builder's address): choose another name` }] : [];
    const wf = validate(doc, extra);
    const row = await workflows.save(callerOf(req, 'app'), wf, { expectNew: true });
    res
      .status(201)
      .location(url(req, `/workflows/${encodeURIComponent(row.name)}`))
      .json({ name: row.name, version: row.version, workflow: row.definition });
  });

  // Before /workflows/:name: the builder for a new workflow.
  handle(r, WORKFLOW_ROUTES.builderNew, async (req, res) => {
    const data = builderData(req, { name: '', description: '', parameters: [], outputs: [], prep: [], main: [], cleanup: [] }, null);
    await respond(req, res, { json: data, html: async () => <BuilderPage ctx={await ctxOf(req)} data={data} /> });
  });

  handle(r, WORKFLOW_ROUTES.one, async (req, res, { params, query: { version } }) => {
    const [row, names] = await Promise.all([find(params.name, version), userNames()]);
    const json = asJson(row, names);
    await respond(req, res, {
      json,
      html: async () => {
        const latest = version === undefined ? row.version : ((await workflows.get(row.name))?.version ?? null);
        return <WorkflowPage ctx={await ctxOf(req)} wf={json} latest={latest} />;
      },
    });
  });

  handle(r, WORKFLOW_ROUTES.update, async (req, res, { params: { name }, body: doc }) => {
    await find(name);
    const extra: ErrorDetail[] = [];
    if (doc.name === undefined) doc.name = name;
    else if (doc.name !== name) {
      extra.push({ field: 'name', message: `must be "${name}", the name in the path (or left out): to rename, create the workflow under the new name and delete this one` });
    }
    const wf = validate(doc, extra);
    const row = await workflows.save(callerOf(req, 'app'), { ...wf, name });
    res.json({ name: row.name, version: row.version, workflow: row.definition });
  });

  handle(r, WORKFLOW_ROUTES.delete, async (req, res, { params: { name } }) => {
    await workflows.remove(callerOf(req, 'app'), name);
    res.json({ deleted: name });
  });

  const importForm = async (req: Request, res: Response, err: LabError) => {
    const { source, name } = (req.body ?? {}) as PythonImportForm;
    const [rows, names, broken] = await Promise.all([workflows.list(), userNames(), workflows.broken()]);
    render(res, <WorkflowsPage ctx={await ctxOf(req)} workflows={rows.map((row) => summary(row, names, broken))} importForm={{ source, name, error: err.message }} />, statusOf(err));
  };

  const importPython = async (source: string, name: string | undefined) => {
    const wf = await workflows.fromPython({ source, ...(name ? { name } : {}) });
    if (wf.name === NEW_WORKFLOW) validate(wf, [{ field: 'name', message: `"${NEW_WORKFLOW}" is reserved (it is the builder's address): choose another name` }]);
    return wf;
  };

  handle(
    r,
    WORKFLOW_ROUTES.importPython,
    async (req, res, { body, query }) => {
      const name = body.name?.trim() || query.name || undefined;
      // the workflows page's form is sent on to the new workflow (or shown again with the message); a JSON body gets JSON
      const form = !!req.is('application/x-www-form-urlencoded');
      try {
        const wf = await importPython(body.source, name);
        if (query.save === 'false') return res.json(wf);
        const row = await workflows.save(callerOf(req, 'app'), wf, { expectNew: true });
        const location = url(req, `/workflows/${encodeURIComponent(row.name)}`);
        const made = { name: row.name, version: row.version, workflow: row.definition };
        if (!form) return res.status(201).location(location).json(made);
        await redirectTo(req, res, location, made, { redirect: 303, status: 201, location });
      } catch (e) {
        if (!form || !isLabError(e)) throw e;
        await failed(req, res, e, (err) => importForm(req, res, err));
      }
    },
    importForm,
  );

  handle(r, WORKFLOW_ROUTES.importIvoryos, async (req, res, { body, query }) => {
    const wf = workflows.fromIvoryos(body.workflow, body.name?.trim() || undefined);
    if (wf.name === NEW_WORKFLOW) validate(wf, [{ field: 'name', message: `"${NEW_WORKFLOW}" is reserved (it is the builder's address): choose another name` }]);
    if (query.save === 'false') return res.json(wf);
    const row = await workflows.save(callerOf(req, 'app'), wf, { expectNew: true });
    res
      .status(201)
      .location(url(req, `/workflows/${encodeURIComponent(row.name)}`))
      .json({ name: row.name, version: row.version, workflow: row.definition });
  });

  handle(r, WORKFLOW_ROUTES.ivoryos, async (_req, res, { params, query: { version } }) => {
    const row = await find(params.name, version);
    res.json(workflows.toIvoryos(row.definition as Workflow));
  });

  handle(r, WORKFLOW_ROUTES.python, async (req, res, { params, query: { version } }) => {
    const row = await find(params.name, version);
    const client = `${req.protocol}://${req.get('host')}${url(req, '/instruments/proxy?lang=python')}`;
    const script = workflowToPython(row.definition as Workflow, client); // a 400 before any header of the file is set
    res.attachment(`${row.name}.py`).type('text/x-python').send(script);
  });

  handle(r, WORKFLOW_ROUTES.builder, async (req, res, { params }) => {
    const row = await find(params.name);
    const data = builderData(req, row.definition, row);
    await respond(req, res, { json: data, html: async () => <BuilderPage ctx={await ctxOf(req)} data={data} /> });
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const WORKFLOWS_GROUP = routeGroup({ name: 'workflows', routes: WORKFLOW_ROUTES, mount: workflowRoutes });
