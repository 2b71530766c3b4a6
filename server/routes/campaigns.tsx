/** Optimization campaigns: optimizer schemas, starting a campaign, and the latest campaign's plot. */
import { Router, type Request, type Response } from 'express';
import type { CampaignInput } from '../../core/campaign/index.js';
import { coerceFormArgs } from '../../core/deck/index.js';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { ctxOf } from '../context.js';
import { asLabError, render, statusOf, url, wantsJson } from '../http.js';
import { CampaignPage } from '../views/campaign.js';
import { plotSvg } from '../views/plot-svg.js';

type Fields = Record<string, unknown>;

/**
 * The page's structured fields → the spec's `parameters` and `objectives` lists: `param.<name>.use|type|low|
 * high|choices` and `objective.<name>` = max|min. The spec's own fields (JSON or the short text form) win.
 */
export function campaignInput(body: Fields, configSchema: (optimizer: unknown) => Record<string, unknown> | null): CampaignInput {
  const input: CampaignInput = { ...body };
  const structured = (prefix: string) => Object.keys(body).filter((k) => k.startsWith(prefix));
  if (!nonEmpty(body.parameters) && structured('param.').length) {
    const names = [...new Set(structured('param.').map((k) => k.split('.')[1]))];
    input.parameters = names
      .filter((n) => body[`param.${n}.use`] === 'on' || body[`param.${n}.use`] === 'true')
      .map((name) => {
        const type = String(body[`param.${name}.type`] ?? 'range');
        if (type === 'choice') return { name, type, choices: String(body[`param.${name}.choices`] ?? '').split('|').map((c) => c.trim()).filter(Boolean) };
        return { name, type, bounds: [Number(body[`param.${name}.low`]), Number(body[`param.${name}.high`])] };
      });
  }
  if (!nonEmpty(body.objectives) && structured('objective.').length) {
    input.objectives = structured('objective.')
      .filter((k) => body[k] === 'max' || body[k] === 'min')
      .map((k) => ({ name: k.slice('objective.'.length), minimize: body[k] === 'min' }));
  }
  if (typeof body.config === 'string' && body.config.trim()) {
    try {
      input.config = JSON.parse(body.config);
    } catch (e) {
      throw new LabError('invalid_input', `config is not valid JSON: ${(e as Error).message}`, [{ field: 'config', message: 'invalid JSON' }]);
    }
  } else if (structured('config.').length) {
    const schema = configSchema(body.optimizer_type);
    const fields = Object.fromEntries(structured('config.').map((k) => [k.slice('config.'.length), body[k] as string]).filter(([, v]) => v !== ''));
    input.config = schema ? coerceFormArgs(schema, fields) : fields;
  }
  return input;
}

const nonEmpty = (v: unknown) => (Array.isArray(v) ? true : typeof v === 'string' && v.trim() !== '');

export function campaignRoutes(runtime: Runtime): Router {
  const r = Router();
  const { campaigns, store } = runtime;
  const configSchema = (name: unknown) => campaigns.schemas().find((o) => o.name === name)?.config ?? null;

  const page = async (req: Request, res: Response, extra: { error?: LabError; values?: Fields } = {}, status = 200) => {
    const [workflows, histories] = await Promise.all([store.workflows.list(), runtime.files.list('history')]);
    const selected = (extra.values?.workflow as string | undefined) ?? (typeof req.query.workflow === 'string' ? req.query.workflow : undefined);
    render(
      res,
      <CampaignPage
        ctx={await ctxOf(req)}
        workflows={workflows.map((w) => ({ name: w.name, version: w.version, definition: w.definition }))}
        selected={selected}
        optimizers={campaigns.schemas()}
        histories={histories.map((h) => ({ name: h.storedName, original: h.originalName, rows: h.rows }))}
        methodParams={(i, m) => (runtime.deck.has(i) ? runtime.deck.schema(i).methods.find((x) => x.name === m)?.params : undefined)}
        uploaded={typeof req.query.uploaded === 'string' ? req.query.uploaded : undefined}
        uploadLimit={runtime.files.limitBytes}
        error={extra.error}
        values={extra.values}
      />,
      status,
    );
  };

  r.get('/executions/campaign', (req, res) => page(req, res));

  r.post('/executions/optimizer_schema', (req, res) => {
    res.json(campaigns.schema(req.body?.optimizer_type));
  });

  r.post('/executions/campaign', async (req, res) => {
    const body = (req.body ?? {}) as Fields;
    try {
      const task = await campaigns.submit(campaignInput(body, configSchema), req.user!.id);
      await runtime.audit(req.user!.id, 'campaign.start', { task_id: task.id, workflow: body.workflow, optimizer: body.optimizer_type });
      if (wantsJson(req)) return res.json({ task_id: task.id, status: (await runtime.runner.startsNow(task.id)) ? 'running' : 'queued' });
      res.redirect(302, url(req, `/executions/config?workflow=${encodeURIComponent(String(body.workflow))}`));
    } catch (e) {
      const err = asLabError(e);
      if (wantsJson(req)) throw err;
      await page(req, res, { error: err, values: body }, statusOf(err));
    }
  });

  r.get('/executions/latest_plot', async (req, res) => {
    const plot = await campaigns.latestPlot();
    if (req.query.format === 'svg') return res.type('image/svg+xml').set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'").send(plotSvg(plot));
    res.json(plot);
  });

  return r;
}
