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
 *   output columns, one row per main iteration: core/files/rundata.ts); any other name must be an uploaded
 *   file's generated name. Every download is written out again from the parsed table, formulas neutralised
 *   (the type row of an upload is dropped).
 */
import { Router, type Request, type Response } from 'express';
import multer from 'multer';
import { LabError } from '../../core/errors.js';
import { runData, runDataFileName, runIdOfFileName, toCsv } from '../../core/files/index.js';
import type { Runtime } from '../../core/runtime.js';
import type { FileKind } from '../../core/store/types.js';
import { Workflow } from '../../core/workflow/model.js';
import { ctxOf } from '../context.js';
import { asLabError, errorBody, render, statusOf, url, wantsJson } from '../http.js';
import { FilePreviewPage, sizeText } from '../views/files.js';

declare module 'express-session' {
  interface SessionData {
    /** The workflow the user last worked with (the default of GET /files/execution-configs). */
    workflow?: string;
  }
}

/** Rows shown by a preview. */
export const PREVIEW_ROWS = 200;

/** A script (anything that does not ask for HTML) gets JSON from an upload; a browser form gets a redirect. */
function jsonClient(req: Request): boolean {
  if (req.query.format === 'html') return false;
  return wantsJson(req) || !/text\/html/.test(req.get('accept') ?? '');
}

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

/** A CSV download: `text/csv`, saved under `name`. */
function sendCsv(res: Response, name: string, text: string) {
  res.attachment(name.toLowerCase().endsWith('.csv') ? name : `${name}.csv`);
  res.type('text/csv; charset=utf-8').send(text);
}

export function fileRoutes(runtime: Runtime): Router {
  const r = Router();
  const { files, store } = runtime;
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: files.limitBytes, files: 1, fields: 5, fieldSize: 1024, parts: 6 },
  }).single('file');

  /** Read the multipart body; multer's errors become LabErrors naming the field. */
  const receive = (req: Request, res: Response) =>
    new Promise<void>((resolve, reject) =>
      upload(req, res, (e?: unknown) => {
        if (!e) return resolve();
        const m = e as { name?: string; code?: string; message?: string };
        if (m.code === 'LIMIT_FILE_SIZE') {
          return reject(new LabError('payload_too_large', `The file is over the upload limit of ${sizeText(files.limitBytes)}.`, [{ field: 'file', message: `over ${sizeText(files.limitBytes)}` }]));
        }
        if (m.code === 'LIMIT_UNEXPECTED_FILE' || m.code === 'LIMIT_FILE_COUNT') {
          return reject(new LabError('invalid_input', 'Send one CSV file, in the multipart field "file".', [{ field: 'file', message: 'one file, in the field "file"' }]));
        }
        if (m.name === 'MulterError') return reject(asLabError(e));
        reject(new LabError('invalid_input', `The upload is malformed: ${m.message ?? 'unreadable multipart body'}.`, [{ field: 'file', message: 'malformed upload' }]));
      }),
    );

  /** The latest version of a workflow, or 404 naming `workflow`. */
  const workflowNamed = async (name: string): Promise<Workflow> => {
    const row = await store.workflows.get(name);
    if (!row) throw new LabError('not_found', `No workflow named ${JSON.stringify(name)}.`, [{ field: 'workflow', message: 'unknown workflow' }]);
    return Workflow.parse(row.definition);
  };

  const workflowField = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

  r.get('/files/execution-configs', async (req, res) => {
    const named = workflowField(req.query.workflow);
    const name = named ?? req.session?.workflow;
    if (!name) {
      throw new LabError('invalid_input', 'Which workflow? Give ?workflow=NAME (no workflow was used in this session yet).', [
        { field: 'workflow', message: 'required' },
      ]);
    }
    const workflow = await workflowNamed(name);
    if (named && req.session) req.session.workflow = named;
    sendCsv(res, `${workflow.name}-config.csv`, toCsv([], workflow.parameters.map((p) => p.name)));
  });

  const uploadRoute = (kind: FileKind) => async (req: Request, res: Response) => {
    const json = jsonClient(req);
    try {
      await receive(req, res);
      if (!req.file) {
        throw new LabError('invalid_input', 'No file was sent: upload the CSV as the multipart field "file".', [{ field: 'file', message: 'required' }]);
      }
      const name = workflowField(req.body?.workflow);
      const workflow = name ? await workflowNamed(name) : null;
      const { file, table } = await files.save(kind, req.file.buffer, req.file.originalname, { workflow, userId: req.user!.id });
      await runtime.audit(req.user!.id, `file.upload.${kind}`, { filename: file.storedName, original_name: file.originalName, workflow: file.workflow });
      if (name && req.session) req.session.workflow = name;
      if (!json) return res.redirect(302, backTo(req, url(req, '/executions/config'), file.storedName));
      res
        .status(201)
        .location(url(req, `/files/preview/${file.storedName}`))
        .json({
          filename: file.storedName,
          rows: file.rows,
          columns: file.columns,
          kind: file.kind,
          original_name: file.originalName,
          workflow: file.workflow,
          ...(table.types ? { types: table.types } : {}),
        });
    } catch (e) {
      const err = asLabError(e);
      if (!json) throw err;
      res.status(statusOf(err)).json(errorBody(err));
    }
  };
  r.post('/files/batch-configs', uploadRoute('config'));
  r.post('/files/execution-data', uploadRoute('history'));

  r.get('/files/preview/:filename', async (req, res) => {
    // only the rows shown are read; the total was counted when the file was uploaded
    const { file, head, rows } = await files.preview(req.params.filename, PREVIEW_ROWS);
    if (wantsJson(req)) {
      return res.json({
        filename: file.storedName,
        original_name: file.originalName,
        kind: file.kind,
        workflow: file.workflow,
        columns: head.columns,
        ...(head.types ? { types: head.types } : {}),
        rows,
        total: file.rows,
        uploaded_at: file.createdAt.toISOString(),
      });
    }
    render(res, <FilePreviewPage ctx={await ctxOf(req)} file={file} columns={head.columns} types={head.types} rows={rows} total={file.rows} />);
  });

  r.get('/files/execution-data/:filename', async (req, res) => {
    const name = req.params.filename;
    const runId = runIdOfFileName(name);
    if (runId !== null) {
      const data = await runData(store, runId);
      return sendCsv(res, runDataFileName(runId), toCsv(data.rows, data.columns));
    }
    const { file, text } = await files.csvText(name);
    sendCsv(res, file.originalName, text);
  });

  return r;
}
