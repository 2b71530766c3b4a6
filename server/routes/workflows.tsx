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
import { Router, type Request } from 'express';
import type { InstrumentSchema } from '../../core/contracts/index.js';
import { ownerOrAdmin } from '../../core/accounts/index.js';
import { LabError, isLabError, type ErrorDetail } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import type { WorkflowRow } from '../../core/store/types.js';
import { instrumentsOf, validateWorkflow } from '../../core/workflow/validate.js';
import type { Workflow } from '../../core/workflow/model.js';
import { ctxOf } from '../context.js';
import { intParam, render, url, wantsJson } from '../http.js';
import { BuilderPage, WorkflowPage, WorkflowsPage, type BuilderData, type WorkflowJson, type WorkflowSummary } from '../views/workflows.js';

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

export function workflowRoutes(runtime: Runtime): Router {
  const r = Router();
  const { deck, store } = runtime;

  /** Usernames by id, for "saved by" (one query per request). */
  const userNames = async () => new Map((await store.users.list()).map((u) => [u.id, u.username]));

  const asJson = (row: WorkflowRow, names: Map<number, string>): WorkflowJson => ({
    name: row.name,
    version: row.version,
    updated_at: row.createdAt.toISOString(),
    updated_by: row.createdBy === null ? null : (names.get(row.createdBy) ?? null),
    workflow: row.definition as Workflow,
  });

  const summary = (row: WorkflowRow, names: Map<number, string>): WorkflowSummary => {
    const wf = row.definition as Workflow;
    const { workflow: _doc, ...head } = asJson(row, names);
    return {
      ...head,
      description: wf.description ?? '',
      parameters: wf.parameters ?? [],
      outputs: wf.outputs ?? [],
      instruments: instrumentsOf({ prep: wf.prep ?? [], main: wf.main ?? [], cleanup: wf.cleanup ?? [] }),
      steps: { prep: wf.prep?.length ?? 0, main: wf.main?.length ?? 0, cleanup: wf.cleanup?.length ?? 0 },
    };
  };

  const find = async (name: string, version?: number) => {
    const row = await store.workflows.get(name, version);
    if (!row) {
      throw new LabError('not_found', version === undefined ? `There is no workflow "${name}".` : `Workflow "${name}" has no version ${version}.`, [
        { field: version === undefined ? 'name' : 'version', message: 'not found' },
      ]);
    }
    return row;
  };

  /** The JSON body as a document; a form or text body is refused (the builder and scripts send JSON). */
  const documentOf = (req: Request): Record<string, unknown> => {
    if (!req.is('application/json')) {
      throw new LabError('invalid_input', 'Send the workflow document as JSON (Content-Type: application/json).', [{ field: '(body)', message: 'must be a JSON workflow document' }]);
    }
    const body: unknown = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new LabError('invalid_input', 'The workflow document must be a JSON object with name, parameters and steps.', [{ field: '(workflow)', message: 'must be a JSON object' }]);
    }
    return body as Record<string, unknown>;
  };

  /** Validate against the deck, adding the route's own problems (`extra`) to the ones validation finds. */
  const validate = (doc: Record<string, unknown>, extra: ErrorDetail[]): Workflow => {
    let problems: ErrorDetail[] = [];
    let wf: Workflow | undefined;
    let message = '';
    try {
      wf = validateWorkflow(doc, deck);
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
    instruments: paletteOf(deck.list()),
    urls: { list: url(req, '/workflows'), base: url(req, '/workflows/'), run: url(req, '/executions/config?workflow=') },
  });

  r.get('/workflows', async (req, res) => {
    const [rows, names] = await Promise.all([store.workflows.list(), userNames()]);
    const workflows = rows.map((row) => summary(row, names));
    if (wantsJson(req)) return res.json({ workflows });
    render(res, <WorkflowsPage ctx={await ctxOf(req)} workflows={workflows} />);
  });

  r.post('/workflows', async (req, res) => {
    const doc = documentOf(req);
    const extra: ErrorDetail[] = doc.name === NEW_WORKFLOW ? [{ field: 'name', message: `"${NEW_WORKFLOW}" is reserved (it is the builder's address): choose another name` }] : [];
    const wf = validate(doc, extra);
    const row = await store.workflows.save(wf.name, wf, req.user!.id, { expectNew: true });
    res.status(201).location(url(req, `/workflows/${encodeURIComponent(row.name)}`)).json({ name: row.name, version: row.version, workflow: row.definition });
  });

  // Before /workflows/:name: the builder for a new workflow.
  r.get(`/workflows/${NEW_WORKFLOW}`, async (req, res) => {
    const data = builderData(req, { name: '', description: '', parameters: [], outputs: [], prep: [], main: [], cleanup: [] }, null);
    if (wantsJson(req)) return res.json(data);
    render(res, <BuilderPage ctx={await ctxOf(req)} data={data} />);
  });

  r.get('/workflows/:name', async (req, res) => {
    const version = req.query.version === undefined ? undefined : intParam(req.query.version, 'version');
    const [row, names] = await Promise.all([find(req.params.name, version), userNames()]);
    const json = asJson(row, names);
    if (wantsJson(req)) return res.json(json);
    const latest = version === undefined ? row.version : (await find(row.name)).version;
    render(res, <WorkflowPage ctx={await ctxOf(req)} wf={json} latest={latest} />);
  });

  r.put('/workflows/:name', async (req, res) => {
    const name = req.params.name;
    await find(name);
    const doc = documentOf(req);
    const extra: ErrorDetail[] = [];
    if (doc.name === undefined) doc.name = name;
    else if (doc.name !== name) {
      extra.push({ field: 'name', message: `must be "${name}", the name in the path (or left out): to rename, create the workflow under the new name and delete this one` });
    }
    const wf = validate(doc, extra);
    const row = await store.workflows.save(name, wf, req.user!.id);
    res.json({ name: row.name, version: row.version, workflow: row.definition });
  });

  r.delete('/workflows/:name', async (req, res) => {
    const name = req.params.name;
    const row = await find(name);
    const first = await store.workflows.get(name, 1);
    if (!ownerOrAdmin(first?.createdBy ?? row.createdBy, req.user!)) {
      throw new LabError('forbidden', `The workflow "${name}" was created by another user: only they or an admin may delete it.`, [{ field: 'name', message: 'not yours' }]);
    }
    if (!(await store.workflows.delete(name))) throw new LabError('not_found', `There is no workflow "${name}".`);
    await runtime.audit(req.user!.id, 'workflow.delete', { name, versions: row.version });
    res.json({ deleted: name });
  });

  r.get('/workflows/:name/builder', async (req, res) => {
    const row = await find(req.params.name);
    const data = builderData(req, row.definition, row);
    if (wantsJson(req)) return res.json(data);
    render(res, <BuilderPage ctx={await ctxOf(req)} data={data} />);
  });

  return r;
}
