/**
 * Workflow files (spec "Workflow files", DESIGN.md §6-7): the empty config CSV of a workflow, config and
 * history uploads, the preview of an upload, and CSV downloads (an upload, or the data of a run).
 *
 * Decisions:
 * - Uploads answer JSON (201 `{ filename, rows, columns, … }`) to every client that does not ask for HTML
 *   (scripts, curl), and a browser form 302 back to its page (the Referer inside the app, else the execution
 *   page) with `?uploaded=<filename>`. Errors go the same way: JSON for scripts, the error page for forms.
 * - `GET /files/execution-configs` without `?workflow=` uses the workflow last named in this session (an
 *   upload or download with a workflow sets it; so may other pages), else 400 naming `workflow`. The file is
 *   the header row of parameter names only: no defaults row, which would be read back as an iteration (a
 *   workflow without parameters gets an empty line: run it with a repeat count instead).
 * - `GET /files/execution-data/{filename}`: `run-<id>.csv` is the data of run `<id>` (parameter columns then
 *   output columns, one row per main iteration, a campaign's run then suggested_by and measured_by:
 *   core/files/rundata.ts); any other name must be an uploaded file's generated name. Every download is
 *   written out again from the parsed table, formulas neutralised (the type row of an upload is dropped).
 */
import { Router, type Request, type Response } from 'express';
import { multipart } from '../uploads.js';
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import { runDataFileName, runIdOfFileName, toCsv } from '../../core/files/index.js';
import type { Runtime } from '../../core/runtime.js';
import type { FileKind } from '../../core/operations/index.js';
import { Workflow } from '../../core/workflow/model.js';
import { ctxOf } from '../context.js';
import { csvDownload, error, HTML, LOCATION, redirect, type ResponseObject } from '../api-doc.js';
import { asLabError, url } from '../http.js';
import { failed, redirectTo, respond, type Prefer } from '../respond.js';
import { handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { callerOf } from '../caller.js';
import { FilePreviewPage, sizeText } from '../views/files.js';
import { sentence } from '../../core/text.js';

declare module '../session.js' {
  interface SessionData {
    /** The workflow the user last worked with (the default of GET /files/execution-configs). */
    workflow?: string;
  }
}

/** Rows shown by a preview. */
export const PREVIEW_ROWS = 200;

/** A script (anything that does not ask for HTML) gets JSON from an upload; a browser form gets a redirect. */
const UPLOAD: Prefer = 'unless-html';

/** Back where the form was (the Referer, when it is this app), with `uploaded=<name>` added. */
function backTo(req: Request, fallback: string, uploaded: string): string {
  let target = fallback;
  const ref = req.get('Referer');
  if (ref) {
    try {
      const u = new URL(ref);
      if (u.host === req.get('host')) target = u.pathname + u.search;
    } catch {
      /* not a URL: use the fallback */
    }
  }
  const u = new URL(target, 'http://labdeck.invalid');
  u.searchParams.set('uploaded', uploaded);
  return u.pathname + u.search;
}

const SECTION = 'Workflow files';
const FILENAME = z.object({ filename: z.string().describe('The generated name of an uploaded CSV (cfg-….csv, hist-….csv), or run-<id>.csv for the data of a run') });
/** Every route that reads a CSV file can be turned away while others are read (core/files/store.ts). */
const BUSY_READING = error('Ten CSV files are being read already: try again after Retry-After seconds');

/** An upload: the CSV file, and the workflow to check it against. */
const UPLOAD_BODY = {
  name: 'UploadBody',
  kinds: ['multipart' as const],
  schema: z.object({
    file: z
      .custom<Express.Multer.File>((v) => typeof v === 'object' && v !== null, 'is required: upload the CSV as the multipart field "file"')
      .meta({ type: 'string', contentMediaType: 'text/csv', description: 'The CSV (at most 10 MB by default): a header row, an optional row of type names, one row per line' }),
    workflow: z.string().max(200).optional().describe('A saved workflow to check the file against (and to remember as your current workflow)'),
  }),
};
const UPLOAD_QUERY = z.object({ format: z.enum(['json', 'html']).optional().describe('html: answer as a browser form does (302), whatever the Accept header') });

const UPLOAD_RESPONSES = (what: string): Record<string, ResponseObject> => ({
  201: {
    description: `Stored (clients that do not ask for HTML): use \`filename\` in later requests`,
    headers: { ...LOCATION },
    content: {
      'application/json': {
        schema: {
          type: 'object',
          properties: {
            filename: { type: 'string', description: 'The generated name the file is stored under' },
            rows: { type: 'integer' },
            columns: { type: 'array', items: { type: 'string' } },
            kind: { type: 'string', enum: ['config', 'history'] },
            original_name: { type: 'string' },
            workflow: { type: ['string', 'null'] },
            types: { type: 'array', items: { type: 'string' }, description: 'The type row, when the file had one' },
          },
          required: ['filename', 'rows', 'columns'],
        },
      },
    },
  },
  302: redirect('Stored (browser forms): back to the page of the form (Referer), or the execution page, with ?uploaded=<filename>'),
  400: error(`No file, a malformed CSV, an unknown field, or ${what} (details name the line and column)`),
  404: error('No workflow of that name'),
  413: error('The file is over the upload limit (10 MB by default; runtime option uploadLimitBytes)'),
  503: BUSY_READING,
  507: error('The file could not be written: the data folder is full or read-only (the message names the folder); nothing was stored'),
});

export const FILE_ROUTES = {
  configTemplate: route({
    method: 'GET',
    path: '/files/execution-configs',
    section: SECTION,
    summary: 'Download the empty config CSV of a workflow (?workflow=NAME)',
    operationId: 'downloadConfigTemplate',
    description: "The header row of the workflow's parameter names, nothing else. Without ?workflow=, the workflow you last named in this session.",
    query: z.object({ workflow: z.string().optional().describe('A saved workflow (default: the one you last used in this session)') }),
    responses: { 200: csvDownload('The empty config CSV'), 400: error('No workflow given, and none used in this session yet'), 404: error('No workflow of that name') },
  }),
  uploadConfig: route({
    method: 'POST',
    path: '/files/batch-configs',
    section: SECTION,
    summary: 'Upload a config CSV (multipart file; optional workflow to check it against)',
    operationId: 'uploadConfig',
    description: 'With `workflow`, every row is checked against its parameters (types, defaults for empty cells, unknown columns).',
    query: UPLOAD_QUERY,
    body: UPLOAD_BODY,
    responses: UPLOAD_RESPONSES("a value that does not fit the workflow's parameters"),
  }),
  uploadHistory: route({
    method: 'POST',
    path: '/files/execution-data',
    section: SECTION,
    summary: 'Upload a history CSV (multipart file; optional workflow to check it against)',
    operationId: 'uploadHistory',
    description: "Parameter columns then output columns. With `workflow`, every column must be one of its parameters or outputs, and parameter cells of the parameter's type.",
    query: UPLOAD_QUERY,
    body: UPLOAD_BODY,
    responses: UPLOAD_RESPONSES('a column or value that does not fit the workflow'),
  }),
  preview: route({
    method: 'GET',
    path: '/files/preview/{filename}',
    section: SECTION,
    summary: 'Preview an uploaded CSV: the first 200 rows and the row count',
    operationId: 'previewFile',
    params: FILENAME,
    query: z.object({ format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header') }),
    responses: {
      200: {
        description: 'A table of the first 200 rows with the row count, or JSON',
        content: {
          'text/html': HTML,
          'application/json': {
            schema: {
              type: 'object',
              properties: {
                filename: { type: 'string' },
                original_name: { type: 'string' },
                kind: { type: 'string', enum: ['config', 'history'] },
                workflow: { type: ['string', 'null'] },
                columns: { type: 'array', items: { type: 'string' } },
                types: { type: 'array', items: { type: 'string' } },
                rows: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } }, description: 'The first 200 rows' },
                total: { type: 'integer', description: 'Rows in the file' },
                uploaded_at: { type: 'string' },
              },
              required: ['filename', 'original_name', 'columns', 'rows', 'total'],
            },
          },
        },
      },
      404: error('No uploaded file of that name'),
      503: BUSY_READING,
    },
  }),
  download: route({
    method: 'GET',
    path: '/files/execution-data/{filename}',
    section: SECTION,
    summary: 'Download an uploaded CSV, or run-<id>.csv: the data of a run',
    operationId: 'downloadData',
    description: "Cells a spreadsheet would run as a formula (= + - @ at the start, except plain numbers) are prefixed with '.",
    params: FILENAME,
    responses: {
      200: csvDownload(
        "The uploaded file (as parsed: the type row dropped), or for run-<id>.csv the run's iteration, status, parameter and output columns, one row per main iteration (a campaign's run: then suggested_by and measured_by)",
      ),
      404: error('No uploaded file or run of that name'),
      503: BUSY_READING,
    },
  }),
};

/** A CSV download: `text/csv`, saved under `name`. */
function sendCsv(res: Response, name: string, text: string) {
  res.attachment(name.toLowerCase().endsWith('.csv') ? name : `${name}.csv`);
  res.type('text/csv; charset=utf-8').send(text);
}

export function fileRoutes(runtime: Runtime): Router {
  const r = Router();
  const { files } = runtime.ops;
  const upload = multipart({ limits: { fileSize: files.limitBytes, files: 1, fields: 5, fieldSize: 1024, parts: 6 } }, 'file');

  /** Read the multipart body (the file joins the fields as `file`); multer's errors become LabErrors naming the field. */
  const receive = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) =>
      upload(req, res, (e?: unknown) => {
        if (!e) {
          if (req.file) req.body = { ...req.body, file: req.file };
          return resolve();
        }
        const m = e as { name?: string; code?: string; message?: string };
        if (m.code === 'LIMIT_FILE_SIZE') {
          return reject(new LabError('payload_too_large', `The file is over the upload limit of ${sizeText(files.limitBytes)}.`, [{ field: 'file', message: `over ${sizeText(files.limitBytes)}` }]));
        }
        if (m.code === 'LIMIT_UNEXPECTED_FILE' || m.code === 'LIMIT_FILE_COUNT') {
          return reject(new LabError('invalid_input', 'Send one CSV file, in the multipart field "file".', [{ field: 'file', message: 'one file, in the field "file"' }]));
        }
        if (m.name === 'MulterError') return reject(asLabError(e));
        reject(new LabError('invalid_input', `The upload is malformed: ${sentence(m.message ?? 'unreadable multipart body')}`, [{ field: 'file', message: 'malformed upload' }]));
      }),
    );

  /** The latest version of a workflow, or 404 naming `workflow`. */
  const workflowNamed = (name: string): Promise<Workflow> => files.workflow(name);

  const workflowField = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

  handle(r, FILE_ROUTES.configTemplate, async (req, res, { query }) => {
    const named = workflowField(query.workflow);
    const name = named ?? req.session?.workflow;
    if (!name) {
      throw new LabError('invalid_input', 'Which workflow? Give ?workflow=NAME (no workflow was used in this session yet).', [{ field: 'workflow', message: 'required' }]);
    }
    const workflow = await workflowNamed(name);
    if (named && req.session) req.session.workflow = named;
    sendCsv(
      res,
      `${workflow.name}-config.csv`,
      toCsv(
        [],
        workflow.parameters.map((p) => p.name),
      ),
    );
  });

  /** A script (anything that does not ask for HTML) gets its error as JSON; a browser form, the error page. */
  const uploadFailed = (req: Request, res: Response, err: unknown) => failed(req, res, err, undefined, UPLOAD);

  const uploadRoute =
    (kind: FileKind) =>
    async (req: Request, res: Response, { body }: { body: { file: Express.Multer.File; workflow?: string } }) => {
      try {
        const name = workflowField(body.workflow);
        const workflow = name ? await workflowNamed(name) : null;
        const { file, table } = await files.upload(callerOf(req, 'app'), kind, body.file.buffer, body.file.originalname, workflow);
        if (name && req.session) req.session.workflow = name;
        const made = {
          filename: file.storedName,
          rows: file.rows,
          columns: file.columns,
          kind: file.kind,
          original_name: file.originalName,
          workflow: file.workflow,
          ...(table.types ? { types: table.types } : {}),
        };
        await redirectTo(req, res, backTo(req, url(req, '/executions/config'), file.storedName), made, { status: 201, location: url(req, `/files/preview/${file.storedName}`), prefer: UPLOAD });
      } catch (e) {
        await uploadFailed(req, res, e);
      }
    };
  // multer reads the multipart body once the role is known; a body or field that does not fit answers like the route's own errors
  handle(r, FILE_ROUTES.uploadConfig, uploadRoute('config'), { receive, formAgain: uploadFailed });
  handle(r, FILE_ROUTES.uploadHistory, uploadRoute('history'), { receive, formAgain: uploadFailed });

  handle(r, FILE_ROUTES.preview, async (req, res, { params }) => {
    // only the rows shown are read; the total was counted when the file was uploaded
    const { file, head, rows } = await files.preview(params.filename, PREVIEW_ROWS);
    await respond(req, res, {
      json: {
        filename: file.storedName,
        original_name: file.originalName,
        kind: file.kind,
        workflow: file.workflow,
        columns: head.columns,
        ...(head.types ? { types: head.types } : {}),
        rows,
        total: file.rows,
        uploaded_at: file.createdAt.toISOString(),
      },
      html: async () => <FilePreviewPage ctx={await ctxOf(req)} file={file} columns={head.columns} types={head.types} rows={rows} total={file.rows} />,
    });
  });

  handle(r, FILE_ROUTES.download, async (_req, res, { params: { filename: name } }) => {
    const runId = runIdOfFileName(name);
    if (runId !== null) {
      const data = await runtime.ops.records.data(runId);
      return sendCsv(res, runDataFileName(runId), toCsv(data.rows, data.columns, data.header));
    }
    const { file, text } = await files.csvText(name);
    sendCsv(res, file.originalName, text);
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const FILES_GROUP = routeGroup({ name: 'files', routes: FILE_ROUTES, mount: fileRoutes });
