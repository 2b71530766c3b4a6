/**
 * Workflow records and data (spec "Workflow records and data", DESIGN.md §6-7): the list, one record, its
 * steps CSV (streamed: flat memory whatever the run's size), its log file, its plot data, and deletion
 * (its owner or an admin; not while it runs). The logic is core/records; this adapts it to HTTP.
 */
import { Router, type Request } from 'express';
import { z } from 'zod';
import { writeCsv } from '../../core/files/csv.js';
import { LabError } from '../../core/errors.js';
import { DEFAULT_PER_PAGE, STEPS_CSV_COLUMNS, logText, mayDelete, parseListQuery, stepsCsvBatches } from '../../core/records/index.js';
import type { Runtime } from '../../core/runtime.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { csvDownload, error, HX_REQUEST, json, pageOrJson } from '../api-doc.js';
import { asLabError, render, statusOf, url } from '../http.js';
import { respond } from '../respond.js';
import { ID, handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { ErrorList } from '../views/layout.js';
import { RecordPage, RecordsPage } from '../views/records.js';

/** Step records on the page (the JSON shows up to DETAIL_STEP_LIMIT; the CSV has them all). */
const PAGE_STEP_LIMIT = 1000;
/** Rows read per database round trip while streaming the steps CSV. */
const CSV_BATCH = 1000;

const isHtmx = (req: Request) => req.get('HX-Request') === 'true';

const SECTION = 'Workflow records and data';
const FORMAT = z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header');
/** The record a route is about. */
const ONE = z.object({ workflow_id: ID.describe('The integer id of a run record (GET /app/executions/records)') });
const BAD_ID = error('workflow_id is not a positive integer');
const NO_RECORD = error('No such record');

export const RECORD_ROUTES = {
  list: route({
    method: 'GET',
    path: '/executions/records',
    section: SECTION,
    summary: 'Past runs, newest first: ?keyword= (run or workflow name), ?page=, ?per_page= (20; at most 200)',
    operationId: 'listRecords',
    client: {
      name: 'records',
      query: ['keyword', 'page', 'per_page'],
      doc: "Run records, newest first: { records, page, per_page, total, pages }; keyword matches part of the run's or the workflow's name.",
    },
    // read by parseListQuery, which names the field that does not fit
    query: z.object({
      format: FORMAT,
      keyword: z.unknown().optional().describe('Part of the run name or the workflow name (case-insensitive)'),
      page: z.unknown().optional().describe('Page number, from 1 (default 1)'),
      per_page: z.unknown().optional().describe('Records per page (default 20, at most 200)'),
      deleted: z.unknown().optional().describe('Say that this record was deleted (where a deletion leads)'),
    }),
    responses: {
      200: pageOrJson('The list page (search box, table, pager), or JSON', 'RecordList'),
      400: error('page or per_page is not a positive integer, per_page is over 200, or keyword is over 200 characters (details name the field)'),
    },
  }),
  one: route({
    method: 'GET',
    path: '/executions/records/{workflow_id}',
    section: SECTION,
    summary: 'One run: summary, parameters, phases with their steps, log; the page plots the outputs',
    operationId: 'getRecord',
    client: { name: 'record', rename: { workflow_id: 'run_id' }, doc: 'One run record: status, error, parameters, phases with their outputs and steps, and the log.' },
    description: 'The page shows up to 1,000 steps and plots each output per iteration; JSON has up to 10,000 steps (`steps_truncated` says when there are more: the steps CSV has all).',
    params: ONE,
    query: z.object({ format: FORMAT }),
    responses: { 200: pageOrJson('The record page, or the record with its phases, steps and log', 'Record'), 400: BAD_ID, 404: NO_RECORD },
  }),
  stepsCsv: route({
    method: 'GET',
    path: '/executions/records/{workflow_id}/steps_data_csv',
    section: SECTION,
    summary: 'Download the steps CSV of a run: one row per instrument call, with args, output and timing',
    operationId: 'downloadStepsCsv',
    description:
      'Columns: phase, iteration (from 1, as pages show it), step_index (from 0), instrument, method, args (JSON), output (JSON), status, error, started_at, ended_at, duration_ms. ' +
      "Streamed (any size, flat memory). Cells a spreadsheet would run as a formula (= + - @ at the start, except plain numbers) are prefixed with '.",
    params: ONE,
    responses: { 200: csvDownload('The steps of the run, one row per instrument call, in order'), 400: BAD_ID, 404: NO_RECORD },
  }),
  log: route({
    method: 'GET',
    path: '/executions/records/{workflow_id}/logs',
    section: SECTION,
    summary: 'Download the log of a run (404 when it has no log line)',
    operationId: 'downloadRunLog',
    params: ONE,
    responses: {
      200: {
        description: 'The log as text, one line per entry: ISO time, level, message (line breaks in a message written as \\n)',
        headers: { 'Content-Disposition': { description: 'attachment; filename="run-<id>.log"', schema: { type: 'string' } } },
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      400: BAD_ID,
      404: error('No such record, or the log file does not exist (the run wrote no log line)'),
    },
  }),
  plotData: route({
    method: 'GET',
    path: '/executions/data/{workflow_id}',
    section: SECTION,
    summary: 'The parameters and outputs of each iteration, normalised for plotting',
    operationId: 'recordPlotData',
    description: 'One entry per iteration of main that started, and one series per parameter and output aligned with it (an iteration with a skipped step has no output values).',
    params: ONE,
    responses: { 200: json('The plot data', 'PlotData'), 400: BAD_ID, 404: NO_RECORD },
  }),
  delete: route({
    method: 'DELETE',
    path: '/executions/records/{workflow_id}',
    section: SECTION,
    summary: "Delete a run's record, steps and log: its owner or an admin; 409 while it runs",
    operationId: 'deleteRecord',
    description: "Permanent. The record's owner (who queued the run) or an admin may delete it; audit-logged. With HX-Request (the page's form), answers with HX-Redirect to the list.",
    params: ONE,
    docParameters: [HX_REQUEST],
    responses: {
      200: json('Deleted', 'Deleted'),
      400: BAD_ID,
      403: error("The record is another user's (and you are not an admin)"),
      404: NO_RECORD,
      409: error('The run is in progress, or interrupted and waiting for the operator'),
    },
  }),
};

export function recordRoutes(runtime: Runtime): Router {
  const r = Router();
  const { records } = runtime.ops;

  handle(r, RECORD_ROUTES.list, async (req, res, { query }) => {
    const q = parseListQuery(query);
    const list = await records.list(q);
    const deleted = typeof query.deleted === 'string' && /^\d+$/.test(query.deleted) ? query.deleted : undefined;
    await respond(req, res, {
      json: list,
      html: async () => <RecordsPage ctx={await ctxOf(req)} list={list} keyword={q.keyword} defaultPerPage={DEFAULT_PER_PAGE} notice={deleted ? `Record ${deleted} was deleted.` : undefined} />,
    });
  });

  handle(r, RECORD_ROUTES.one, async (req, res, { params: { workflow_id: id } }) => {
    // JSON: the whole record; the page: its first PAGE_STEP_LIMIT steps
    await respond(req, res, {
      json: () => records.detail(id),
      html: async () => {
        const record = await records.detail(id, { stepLimit: PAGE_STEP_LIMIT });
        // each step's result unit, where the deck's schema declares one (ivoryOS's Unit marker)
        const units: Record<string, string> = {};
        for (const p of record.phases) {
          for (const s of p.steps) {
            const unit = runtime.ops.instruments.resultUnit(s.instrument, s.method);
            if (unit) units[`${s.instrument}.${s.method}`] = unit;
          }
        }
        return <RecordPage ctx={await ctxOf(req)} record={record} canDelete={mayDelete({ userId: record.user_id }, req.user!)} units={units} />;
      },
    });
  });

  handle(r, RECORD_ROUTES.stepsCsv, async (req, res, { params: { workflow_id: id } }) => {
    const batches = await records.stepBatches(id, CSV_BATCH); // 404 before anything is sent
    res.attachment(`run-${id}-steps.csv`).type('text/csv; charset=utf-8').set('Cache-Control', 'no-store');
    try {
      await writeCsv(res, STEPS_CSV_COLUMNS, stepsCsvBatches(batches));
    } catch (e) {
      // the client went away mid-download: nothing to answer, nothing to log
      if (res.destroyed || req.destroyed) return;
      throw e;
    }
  });

  handle(r, RECORD_ROUTES.log, async (_req, res, { params: { workflow_id: id } }) => {
    const logs = await records.log(id);
    if (logs.length === 0) {
      throw new LabError('not_found', `The log file of record ${id} does not exist: the run wrote no log line.`, [{ field: 'workflow_id', message: 'no log lines' }]);
    }
    res.attachment(`run-${id}.log`).type('text/plain; charset=utf-8').send(logText(logs));
  });

  handle(r, RECORD_ROUTES.plotData, async (_req, res, { params: { workflow_id: id } }) => {
    res.json(await records.plot(id));
  });

  handle(r, RECORD_ROUTES.delete, async (req, res, { params: { workflow_id: id } }) => {
    try {
      await records.remove(callerOf(req, 'app'), id);
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

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const RECORDS_GROUP = routeGroup({ name: 'records', routes: RECORD_ROUTES, mount: recordRoutes });
