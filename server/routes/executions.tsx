/** Workflow execution: start runs, the queue, the runner's status and controls, and the live event stream. */
import { Router, type Request, type Response } from 'express';
import { LabError } from '../../core/errors.js';
import type { RunnerEvent } from '../../core/runner/index.js';
import type { Runtime } from '../../core/runtime.js';
import type { QueueTaskRow } from '../../core/store/types.js';
import type { Workflow } from '../../core/workflow/model.js';
import { runTail } from '../../core/records/tail.js';
import { ctxOf } from '../context.js';
import { asLabError, intParam, render, statusOf, wantsJson } from '../http.js';
import { ExecutionPage, type LastRun, type StartedTask } from '../views/executions.js';

/** A queued task as the API shows it; `payload` only when asked for (it can be large). */
export function taskJson(t: QueueTaskRow, withPayload = false) {
  const p = t.payload as { workflow?: string; rows?: unknown[]; repeat?: { times: number } } | null;
  return {
    id: t.id,
    name: t.name,
    kind: t.kind,
    status: t.status,
    position: t.position,
    workflow: p?.workflow ?? null,
    iterations: p?.rows?.length ?? p?.repeat?.times ?? null,
    run_id: t.runId,
    created_by: t.createdBy,
    created_at: t.createdAt.toISOString(),
    started_at: t.startedAt?.toISOString() ?? null,
    ended_at: t.endedAt?.toISOString() ?? null,
    ...(withPayload ? { payload: t.payload } : {}),
  };
}

/** Parameter rows typed in the page's table: fields named `rows[<i>][<param>]`; empty rows dropped. */
export function formRows(body: Record<string, unknown>): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const [key, value] of Object.entries(body)) {
    const m = /^rows\[(\d{1,5})\]\[(.+)\]$/.exec(key);
    if (m && typeof value === 'string' && value.trim() !== '') (rows[Number(m[1])] ??= {})[m[2]] = value.trim();
  }
  return rows.filter(Boolean);
}

/** Live event streams one user may hold open, and the whole lab. */
export const MAX_STREAMS_PER_USER = 16;
export const MAX_STREAMS = 128;

export function executionRoutes(runtime: Runtime): Router {
  const r = Router();
  const { runner, store } = runtime;

  /** The latest run that has ended (the page links its record), or null. */
  const lastRun = async (): Promise<LastRun | null> => {
    const run = (await store.runs.list({ page: 1, perPage: 3 })).rows.find((r) => r.status !== 'running');
    return run ? { run_id: run.id, name: run.name, status: run.status, skipped: run.skipped ?? 0 } : null;
  };

  const page = async (req: Request, res: Response, extra: { error?: LabError; started?: StartedTask; rows?: Record<string, unknown>[] } = {}, status = 200) => {
    const [workflows, queue, last] = await Promise.all([store.workflows.list(), runner.queue(), lastRun()]);
    const selected = typeof req.query.workflow === 'string' ? req.query.workflow : typeof req.body?.workflow === 'string' ? req.body.workflow : req.session?.workflow;
    const uploaded = typeof req.query.uploaded === 'string' ? await store.files.get(req.query.uploaded) : null;
    render(
      res,
      <ExecutionPage
        ctx={await ctxOf(req)}
        workflows={workflows.map((w) => ({ name: w.name, version: w.version, definition: w.definition }))}
        selected={selected}
        status={runner.status()}
        queue={queue.tasks.map((t) => taskJson(t))}
        error={extra.error}
        started={extra.started}
        lastRun={last}
        rows={extra.rows}
        uploaded={uploaded && uploaded.kind === 'config' ? { name: uploaded.storedName, original: uploaded.originalName, rows: uploaded.rows, workflow: uploaded.workflow } : undefined}
        uploadLimit={runtime.files.limitBytes}
        campaign={(await store.settings.get<number>('campaign.latest')) != null}
      />,
      status,
    );
  };

  r.get('/executions/config', async (req, res) => {
    if (wantsJson(req)) {
      const workflows = await store.workflows.list();
      return res.json({ workflows: workflows.map((w) => ({ name: w.name, version: w.version })), status: runner.status() });
    }
    await page(req, res);
  });

  r.post('/executions/config', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    let config: unknown = body.config;
    let repeat: unknown = body.repeat;
    if (!req.is('application/json')) {
      // the page: typed rows, or a repeat count (which wins when given)
      repeat = typeof body.repeat === 'string' && body.repeat.trim() ? body.repeat.trim() : undefined;
      config = repeat === undefined ? formRows(body) : undefined;
    }
    try {
      if (typeof body.config_file === 'string' && body.config_file) {
        // an uploaded config CSV (POST /files/batch-configs): its rows, checked with line and column named
        const saved = typeof body.workflow === 'string' ? await store.workflows.get(body.workflow) : null;
        if (saved) config = await runtime.files.configRows(body.config_file, saved.definition as Workflow);
        repeat = undefined;
      }
      const task = await runner.submit({ workflow: body.workflow, config, repeat, name: body.name === '' ? undefined : body.name, userId: req.user!.id });
      const status = (await runner.startsNow(task.id)) ? 'running' : 'queued';
      if (wantsJson(req)) return res.json({ task_id: task.id, status });
      // as it is now (a short run may have ended already); the page follows it from here
      const now = await runner.task(task.id);
      await page(req, res, { started: { id: now.id, name: now.name, status: now.status, run_id: now.runId } });
    } catch (e) {
      const err = asLabError(e);
      if (wantsJson(req)) throw err;
      await page(req, res, { error: err, rows: Array.isArray(config) ? (config as Record<string, unknown>[]) : undefined }, statusOf(err));
    }
  });

  r.get('/executions/status', (_req, res) => {
    res.json(runner.status());
  });

  r.get('/executions/current_task', async (_req, res) => {
    const status = runner.status();
    const task = status.current_task ? await store.queue.get(status.current_task.id) : null;
    res.json({ current_task: task ? taskJson(task, true) : null, state: status.state, progress: status.progress, failed_step: status.failed_step, waiting: status.waiting });
  });

  r.get('/executions/queue', async (_req, res) => {
    const q = await runner.queue();
    res.json({ tasks: q.tasks.map((t) => taskJson(t)), paused: q.paused, queue_held: q.queue_held, current_task_id: q.current_task_id });
  });

  r.get('/executions/queue/task/:task_id', async (req, res) => {
    const task = await runner.task(intParam(req.params.task_id, 'task_id'));
    res.json(taskJson(task, true));
  });

  r.post('/executions/queue/delete', async (req, res) => {
    const id = intParam(req.body?.id, 'id');
    await runner.deleteTask(id, req.user!);
    res.json({ deleted: id });
  });

  r.post('/executions/queue/reorder', async (req, res) => {
    const id = intParam(req.body?.id, 'id');
    await runner.moveTask(id, req.body?.direction);
    const q = await runner.queue();
    res.json({ tasks: q.tasks.map((t) => taskJson(t)) });
  });

  r.post('/executions/queue/task/rename', async (req, res) => {
    const id = intParam(req.body?.id, 'id');
    await runner.renameTask(id, req.body?.new_name, req.user!);
    res.json(taskJson(await runner.task(id)));
  });

  const control = (action: () => Promise<unknown>) => async (req: Request, res: Response) => {
    await action();
    await runtime.audit(req.user!.id, `runner${req.path.replace(/^\/executions/, '').replace(/\//g, '.')}`, { status: runner.status().state });
    res.json(runner.status());
  };
  r.post('/executions/pause-resume', control(() => runner.pauseResume()));
  // the page's buttons and scripts: each does one thing, or answers 409 when it would do nothing
  r.post('/executions/pause', control(() => runner.pause()));
  r.post('/executions/resume', control(() => runner.resume()));
  r.post('/executions/continue', control(() => runner.continuePauseStep()));
  r.post('/executions/skip', control(() => runner.skip()));
  r.post('/executions/release', control(() => runner.release()));
  r.post('/executions/retry', control(() => runner.retry()));
  r.post('/executions/abort/next-iteration', control(() => runner.abortNextIteration()));
  r.post('/executions/abort/next-task', control(() => runner.abortNextTask()));

  /** Live event streams open, per user and in all: each holds a connection and a listener. */
  const streams = new Map<number, number>();
  let total = 0;
  /** Server-sent events: status, step start/end, log lines, queue changes, iterations. */
  r.get('/executions/events', async (req, res) => {
    const headers = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' };
    if (req.method === 'HEAD') return void res.writeHead(200, headers).end(); // a HEAD has no stream to wait for
    const userId = req.user!.id;
    const mine = streams.get(userId) ?? 0;
    if (mine >= MAX_STREAMS_PER_USER || total >= MAX_STREAMS) {
      throw new LabError('too_many_requests', mine >= MAX_STREAMS_PER_USER
        ? `You have ${mine} live views open (at most ${MAX_STREAMS_PER_USER}): close some pages or tabs.`
        : `The lab has ${total} live views open (at most ${MAX_STREAMS}); try again when some close.`);
    }
    const status = runner.status();
    // the current (or last) run so far, so a page opened mid-run or just after shows what it missed
    const [{ log, steps }, last_run] = await Promise.all([runTail(store, status.current_task?.run_id), lastRun()]);
    streams.set(userId, (streams.get(userId) ?? 0) + 1); // counted once the stream is sure to open
    total++;
    res.writeHead(200, headers);
    const send = (e: RunnerEvent | { type: 'hello'; status: unknown; log: unknown[]; steps: unknown[]; last_run: LastRun | null }) => res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    send({ type: 'hello', status, log, steps, last_run });
    runner.on('event', send);
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
    req.on('close', () => {
      clearInterval(ping);
      runner.off('event', send);
      total--;
      const n = (streams.get(userId) ?? 1) - 1;
      if (n > 0) streams.set(userId, n);
      else streams.delete(userId);
    });
  });

  return r;
}
