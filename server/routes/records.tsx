/**
 * Workflow records and data (spec "Workflow records and data", DESIGN.md §6-7): the list, one record, its
 * steps CSV (streamed: flat memory whatever the run's size), its log file, its plot data, and deletion
 * (its owner or an admin; not while it runs). The logic is core/records; this adapts it to HTTP.
 */
import { Router, type Request } from 'express';
import { writeCsv } from '../../core/files/csv.js';
import { LabError } from '../../core/errors.js';
import {
  DEFAULT_PER_PAGE,
  STEPS_CSV_COLUMNS,
  deleteRecord,
  getRun,
  listRecords,
  logText,
  mayDelete,
  parseListQuery,
  plotData,
  recordDetail,
  stepsCsvBatches,
} from '../../core/records/index.js';
import type { Runtime } from '../../core/runtime.js';
import { ctxOf } from '../context.js';
import { asLabError, intParam, render, statusOf, url, wantsJson } from '../http.js';
import { ErrorList } from '../views/layout.js';
import { RecordPage, RecordsPage } from '../views/records.js';

/** Step records on the page (the JSON shows up to DETAIL_STEP_LIMIT; the CSV has them all). */
const PAGE_STEP_LIMIT = 1000;
/** Rows read per database round trip while streaming the steps CSV. */
const CSV_BATCH = 1000;

const isHtmx = (req: Request) => req.get('HX-Request') === 'true';
const recordId = (req: Request) => intParam(req.params.workflow_id, 'workflow_id');

export function recordRoutes(runtime: Runtime): Router {
  const r = Router();
  const { store, runner } = runtime;

  r.get('/executions/records', async (req, res) => {
    const q = parseListQuery(req.query);
    const list = await listRecords(store, q);
    if (wantsJson(req)) return res.json(list);
    const deleted = typeof req.query.deleted === 'string' && /^\d+$/.test(req.query.deleted) ? req.query.deleted : undefined;
    render(res, <RecordsPage ctx={await ctxOf(req)} list={list} keyword={q.keyword} defaultPerPage={DEFAULT_PER_PAGE} notice={deleted ? `Record ${deleted} was deleted.` : undefined} />);
  });

  r.get('/executions/records/:workflow_id', async (req, res) => {
    const id = recordId(req);
    if (wantsJson(req)) return res.json(await recordDetail(store, id));
    const record = await recordDetail(store, id, { stepLimit: PAGE_STEP_LIMIT });
    render(res, <RecordPage ctx={await ctxOf(req)} record={record} canDelete={mayDelete({ userId: record.user_id }, req.user!)} />);
  });

  r.get('/executions/records/:workflow_id/steps_data_csv', async (req, res) => {
    const id = recordId(req);
    await getRun(store, id); // 404 before anything is sent
    res.attachment(`run-${id}-steps.csv`).type('text/csv; charset=utf-8').set('Cache-Control', 'no-store');
    try {
      await writeCsv(res, STEPS_CSV_COLUMNS, stepsCsvBatches(store.runSteps.iterate(id, CSV_BATCH)));
    } catch (e) {
      // the client went away mid-download: nothing to answer, nothing to log
      if (res.destroyed || req.destroyed) return;
      throw e;
    }
  });

  r.get('/executions/records/:workflow_id/logs', async (req, res) => {
    const id = recordId(req);
    await getRun(store, id);
    const logs = await store.logs.list(id);
    if (logs.length === 0) {
      throw new LabError('not_found', `The log file of record ${id} does not exist: the run wrote no log line.`, [{ field: 'workflow_id', message: 'no log lines' }]);
    }
    res.attachment(`run-${id}.log`).type('text/plain; charset=utf-8').send(logText(logs));
  });

  r.get('/executions/data/:workflow_id', async (req, res) => {
    const id = recordId(req);
    const run = await getRun(store, id);
    res.json(plotData(run, await store.phases.list(id)));
  });

  r.delete('/executions/records/:workflow_id', async (req, res) => {
    try {
      const id = recordId(req);
      const run = await deleteRecord(store, runner, id, req.user!);
      await runtime.audit(req.user!.id, 'record.delete', { run_id: id, name: run.name, workflow: run.workflowName, status: run.status });
      // the page's Delete form (htmx): go to the list
      if (isHtmx(req)) res.set('HX-Redirect', url(req, `/executions/records?deleted=${id}`));
      res.json({ deleted: id });
    } catch (e) {
      if (!isHtmx(req)) throw e;
      // an htmx form swaps the answer into the page: a message, not a whole error page
      const err = asLabError(e);
      render(res, <ErrorList error={err} />, statusOf(err));
    }
  });

  return r;
}
