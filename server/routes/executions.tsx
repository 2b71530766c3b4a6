/** Workflow execution: start runs, the queue, the runner's status and controls, and the live event stream. */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { DIRECTIONS, done, type Direction, type QueuedTask, type QueueTaskJson, type RunControlName as ControlName, type RunnerEvent } from '../../core/operations/index.js';
import { MAX_REPEAT } from '../../core/workflow/config.js';
import { ctxOf } from '../context.js';
import { error, json, pageOrJson } from '../api-doc.js';
import { render, statusOf } from '../http.js';
import { failed, respond } from '../respond.js';
import { callerOf } from '../caller.js';
import { ID, handle, route, type RouteSpec } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { ExecutionPage, type LastRun, type StartedTask } from '../views/executions.js';
import { NO_FIELDS } from './auth.js';

/** A queued task as the API shows it; `payload` only when asked for (it can be large). */
export function taskJson(t: QueuedTask, withPayload = false): QueueTaskJson {
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

const SECTION = 'Workflow execution';
/** A text query parameter; anything else (a repeated key) reads as absent, as it always did. */
const text = (description: string) => z.string().optional().catch(undefined).describe(description);
/** The field names of the page's typed rows: `rows[<i>][<param>]` (passed on; `formRows` reads them). */
const ROW_FIELD = /^rows\[\d{1,5}\]\[.+\]$/;
const TASK_ID = ID.describe('The integer id of a queued task (GET /app/executions/queue)');
const STATUS_AFTER = json('The status after', 'RunnerStatus');

/**
 * A run control's one field: the running task it acts on. Needed only while several tasks run at once
 * (`lab serve --parallel N`); the generated clients take it as an optional argument.
 */
const CONTROL_BODY = {
  name: 'ControlBody',
  description: 'Optional: task_id, the running task to act on (needed while several run: `running` in GET /app/executions/status). Any other field is refused by name.',
  schema: z.object({
    task_id: ID.optional().describe('The running task to act on; needed while several tasks run at once (`running` in GET /app/executions/status), else the only one'),
  }),
};
/** What every control answers besides its own: an unknown task, several running without task_id, one not running. */
const TASK_ERRORS = {
  400: error('task_id is not a positive integer, or a field the route does not take (named)'),
  404: error('task_id names no task'),
};
const SEVERAL = 'several tasks run and no task_id says which (the message and `running` list them), or task_id names a task that is not running';

/** A runner control on a running task: task_id (optional), the status after, 409 when it does not apply. */
const control = (spec: Pick<RouteSpec, 'path' | 'operationId' | 'summary' | 'description' | 'responses' | 'client'>) =>
  route({
    method: 'POST',
    section: SECTION,
    body: CONTROL_BODY,
    ...spec,
    responses: { ...TASK_ERRORS, ...spec.responses, 409: error(`${spec.responses[409]?.description ?? 'It does nothing now'}; or ${SEVERAL}`) },
  });

export const EXECUTION_ROUTES = {
  page: route({
    method: 'GET',
    path: '/executions/config',
    section: SECTION,
    summary: 'Start a run; the live runner and the queue',
    operationId: 'executionPage',
    query: z.object({
      format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header'),
      workflow: text('The workflow to show first (default: the one you last worked with)'),
      uploaded: text('A config CSV just uploaded (POST /app/files/batch-configs): offered to queue'),
    }),
    responses: { 200: pageOrJson('The execution page: start a run, the live runner, the queue; JSON: the workflows and the status', 'RunSetup') },
  }),
  start: route({
    method: 'POST',
    path: '/executions/config',
    section: SECTION,
    summary: 'Queue a workflow over config rows or a repeat count (200 { task_id, status })',
    operationId: 'startRun',
    client: {
      name: 'queue_run',
      positional: ['config'],
      doc:
        "Queue a run of a saved workflow: `config`, one object of parameter values per iteration, or `repeat`, a number of iterations with the parameters' defaults. " +
        'Returns { task_id, status }: pass it to the wait-for-run method. A bad row or column is a 400 naming it (details), an unknown workflow a 404.',
    },
    description: 'Validates the workflow against the live deck and every row against its parameters, then queues the task.',
    body: {
      name: 'RunBody',
      description:
        "JSON: { workflow, config | repeat | config_file, name? }. The page's form sends `workflow`, `name`, and `repeat` " +
        '(which wins when given) or the typed rows, one field `rows[<i>][<param>]` per cell (empty rows are dropped), or `config_file`.',
      schema: z.object({
        workflow: z.string().min(1).describe('A saved workflow (GET /app/workflows)'),
        config: z
          .array(z.record(z.string(), z.unknown(), { error: 'must be an object of parameter values' }), { error: 'must be a list of rows (one object of parameter values per iteration)' })
          .nullish()
          .describe('One object of parameter values per iteration'),
        // a number or its text (a form): the runner checks it is a whole number in range and names the field
        repeat: z.union([z.number(), z.string()]).nullish().describe(`Or: this many iterations with the parameter defaults (a whole number from 1 to ${MAX_REPEAT})`),
        name: z.string().max(200).optional().describe('Display name of the task (default "<workflow> × n")'),
        config_file: z.string().optional().describe('Or: the filename of an uploaded config CSV (POST /app/files/batch-configs)'),
      }),
      extra: ROW_FIELD,
      extraKinds: ['form'],
    },
    responses: {
      200: pageOrJson('Queued: the task id and whether it is already running (the page follows the task)', 'RunStarted'),
      400: error('Bad workflow, rows or repeat (details name the row and column, or the step path), or a field the route does not take (named)'),
      404: error('No such workflow, or no such config file'),
    },
  }),
  status: route({
    method: 'GET',
    path: '/executions/status',
    section: SECTION,
    summary: 'Runner status: busy, state, flags, current task, progress',
    operationId: 'runnerStatus',
    client: { name: 'runner_status' },
    responses: { 200: json('Busy flag, state, flags, current task and progress', 'RunnerStatus') },
  }),
  currentTask: route({
    method: 'GET',
    path: '/executions/current_task',
    section: SECTION,
    summary: 'The running task, with its payload',
    operationId: 'currentTask',
    responses: { 200: json('The running task with its payload, or null', 'CurrentTask') },
  }),
  queue: route({
    method: 'GET',
    path: '/executions/queue',
    section: SECTION,
    summary: 'The queue and its state',
    operationId: 'queue',
    client: { name: 'queue' },
    responses: { 200: json('Unfinished tasks in order, and the runner flags', 'Queue') },
  }),
  task: route({
    method: 'GET',
    path: '/executions/queue/task/{task_id}',
    section: SECTION,
    summary: 'A queued task with its full payload',
    operationId: 'queuedTask',
    client: { name: 'queued_task', doc: 'One task, finished or not, with its payload: its status (pending, running, interrupted, done, failed, stopped or aborted) and run_id.' },
    params: z.object({ task_id: TASK_ID }),
    responses: { 200: json('The task with its full payload', 'QueueTask'), 400: error('task_id is not a positive integer'), 404: error('No such task') },
  }),
  delete: route({
    method: 'POST',
    path: '/executions/queue/delete',
    section: SECTION,
    summary: 'Remove a pending task: { id }',
    operationId: 'deleteTask',
    body: { name: 'QueueIdBody', schema: z.object({ id: TASK_ID }) },
    responses: {
      200: json('Deleted', 'Deleted'),
      400: error('id is not a positive integer, or a field the route does not take'),
      403: error('Queued by another user: only they or an admin may delete it'),
      404: error('No such task'),
      409: error('The task is running, interrupted or finished'),
    },
  }),
  reorder: route({
    method: 'POST',
    path: '/executions/queue/reorder',
    section: SECTION,
    summary: 'Move a pending task: { id, direction: up|down|top|bottom }',
    operationId: 'reorderTask',
    body: { name: 'ReorderBody', schema: z.object({ id: TASK_ID, direction: z.enum(DIRECTIONS as [Direction, ...Direction[]]).describe('One place up or down, or to the top or bottom') }) },
    responses: {
      200: json('The queue in its new order', 'QueueList'),
      400: error('Bad id or direction, or a field the route does not take'),
      404: error('No such task'),
      409: error('The task is running, interrupted or finished'),
    },
  }),
  rename: route({
    method: 'POST',
    path: '/executions/queue/task/rename',
    section: SECTION,
    summary: 'Rename a task: { id, new_name }',
    operationId: 'renameTask',
    // the runner also refuses a name of spaces only (it trims the name)
    body: { name: 'RenameBody', schema: z.object({ id: TASK_ID, new_name: z.string().min(1).max(200).describe('The new display name') }) },
    responses: {
      200: json('The renamed task', 'QueueTask'),
      400: error('Bad id, or new_name empty or over 200 characters, or a field the route does not take'),
      403: error('Queued by another user: only they or an admin may rename it'),
      404: error('No such task'),
    },
  }),
  pauseResume: control({
    path: '/executions/pause-resume',
    summary: 'Pause or resume; skip a failed step; continue a pause step; release a held queue',
    operationId: 'pauseResume',
    client: { name: 'pause_resume', doc: 'Pause or resume; with a failed step: skip it and go on. Returns the runner status.' },
    description: 'Failed step: skip it. Pause step: continue. Interrupted task: go on after its in-doubt step. Held queue: release. Otherwise toggle the pause flag.',
    responses: { 200: STATUS_AFTER },
  }),
  // the page's buttons and scripts: each does one thing, or answers 409 when it would do nothing
  pause: control({
    path: '/executions/pause',
    summary: 'Pause the running task after its step in flight (409 when nothing runs or it is paused)',
    operationId: 'pause',
    description:
      "Sets the pause flag while a task runs: no new step (and no new task) starts; a call in flight finishes. Written in the run's log. Never skips a failed step or continues a pause step (POST /executions/pause-resume does, by the state).",
    responses: {
      200: json('The status after (state running until the step in flight ends, then paused)', 'RunnerStatus'),
      409: error('Nothing runs, it is paused already, or it waits for a decision: the state is in the message'),
    },
  }),
  resume: control({
    path: '/executions/resume',
    summary: 'Resume a paused task (409 when it is not paused)',
    operationId: 'resume',
    description: "Clears the pause flag of a running task: it goes on. Written in the run's log.",
    responses: { 200: STATUS_AFTER, 409: error('No task is paused (a held queue is released with POST /executions/release)') },
  }),
  continue: control({
    path: '/executions/continue',
    summary: 'Continue after a pause step (409 when none waits)',
    operationId: 'continuePauseStep',
    description: 'A `pause` step waits for the operator: it is done, go on with the next step.',
    responses: { 200: STATUS_AFTER, 409: error('No pause step waits') },
  }),
  skip: control({
    path: '/executions/skip',
    summary: 'Skip the failed step and go on (409 when no step failed)',
    operationId: 'skip',
    description:
      "Leave the failed step out and go on: its record, its iteration and the run say it was skipped, and the iteration's outputs are not data. For a task interrupted by a stop of labdeck: go on after its in-doubt step.",
    responses: { 200: STATUS_AFTER, 409: error('No failed step (and no interrupted task)') },
  }),
  // the queue's, not a task's: no task_id
  release: route({
    method: 'POST',
    section: SECTION,
    body: NO_FIELDS,
    path: '/executions/release',
    summary: 'Release the held queue (409 when it is not held)',
    operationId: 'release',
    description:
      "The queue was held (after abort next-task, or the pause flag set while idle): let it start tasks again. The queue's, not a task's: it takes no task_id. " +
      'With several tasks at once (lab serve --parallel N) it may be released while other tasks run, not while the aborted task is still ending.',
    responses: { 200: STATUS_AFTER, 409: error('The queue is not held, a task runs, or an interrupted task waits for a decision') },
  }),
  retry: control({
    path: '/executions/retry',
    summary: 'Re-run the failed step',
    operationId: 'retry',
    client: { name: 'retry', doc: 'Re-run the failed step, then go on. Returns the runner status.' },
    description:
      "A failed step: run it again. An interrupted task: re-run its in-doubt step, except in a campaign whose iteration's instruments were made again since the iteration began (`interrupted.retry` is `iteration` in the status): then the iteration runs again from its first step (POST /executions/retry-step re-runs the step only).",
    responses: { 200: STATUS_AFTER, 409: error('No failed step (and no interrupted task): the state is in the message') },
  }),
  rerunIteration: control({
    path: '/executions/rerun-iteration',
    summary: "An interrupted task: run its in-doubt step's iteration again from its first step",
    operationId: 'rerunIteration',
    client: { name: 'rerun_iteration', doc: "An interrupted task: run the in-doubt step's iteration again from its first step, then go on. Returns the runner status." },
    description:
      "For a task interrupted by a stop of labdeck: its in-doubt step's iteration (or prep, or cleanup) runs again from its first step, on the instruments as they are now; the earlier records of that iteration stay, superseded by the new ones, and the iteration's outputs are the new run's. " +
      'Offered when the instruments of that iteration were made again since it began (the status says which, in `interrupted.remade`); in a campaign a plain Retry does this then.',
    responses: { 200: STATUS_AFTER, 409: error('No interrupted task waits with an in-doubt step') },
  }),
  retryStep: control({
    path: '/executions/retry-step',
    summary: 'An interrupted task: re-run its in-doubt step only',
    operationId: 'retryStep',
    client: { name: 'retry_step', doc: 'An interrupted task: re-run only its in-doubt step, then go on (even where Retry would re-run the iteration). Returns the runner status.' },
    description:
      "Re-runs only the in-doubt step of an interrupted task, keeping its iteration's earlier steps: what POST /executions/retry does, except in a campaign whose iteration's instruments were made again (`interrupted.retry` is `iteration`), where Retry re-runs the whole iteration.",
    responses: { 200: STATUS_AFTER, 409: error('No interrupted task waits with an in-doubt step') },
  }),
  abortNextIteration: control({
    path: '/executions/abort/next-iteration',
    summary: 'Finish this iteration, skip the rest, run cleanup',
    operationId: 'abortNextIteration',
    client: { name: 'abort_next_iteration', doc: 'Finish the current iteration, skip the rest, run cleanup: the run is "stopped".' },
    responses: { 200: json('Stopping after this iteration', 'RunnerStatus'), 409: error('Nothing is running') },
  }),
  abortNextTask: control({
    path: '/executions/abort/next-task',
    summary: 'Stop after the in-flight step, run cleanup, hold the queue',
    operationId: 'abortNextTask',
    client: { name: 'abort_next_task', doc: 'Finish the in-flight step, run cleanup: the run is "aborted", and the queue is held.' },
    responses: { 200: json('Aborting after the in-flight step; the queue is held', 'RunnerStatus'), 409: error('Nothing is running') },
  }),
  events: route({
    method: 'GET',
    path: '/executions/events',
    section: SECTION,
    summary: 'Live events (server-sent events)',
    operationId: 'events',
    description:
      'Server-sent events: hello (the status, and the current or last run so far), status, step, iteration, log, queue, run. Each `data` is JSON. ' +
      "On PostgreSQL the step, iteration, log and run events of runs other labdecks on the database run come too, with `host` (that labdeck's name; `cut: true` when a large value was cut: the run's records have it). A HEAD answers at once.",
    responses: {
      200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
      429: error(`Too many live views open: at most ${MAX_STREAMS_PER_USER} per user and ${MAX_STREAMS} in the lab`),
    },
  }),
};

export function executionRoutes(runtime: Runtime): Router {
  const r = Router();
  const { runs, workflows, records, files } = runtime.ops;
  const R = EXECUTION_ROUTES;

  /** The latest run that has ended (the page links its record), or null. */
  const lastRun = (): Promise<LastRun | null> => records.lastEnded();

  /** The watchdog's view (core/notify): each running step's expected end, each run's ETA. */
  const timingOf = (status: ReturnType<typeof runs.status>) => runtime.ops.notifications.timing(status.running.map((t) => t.run_id).filter((id): id is number => id !== null));

  type Extra = { error?: LabError; started?: StartedTask; rows?: Record<string, unknown>[] };
  const pageOf = async (req: Request, extra: Extra = {}) => {
    const [saved, queue, last] = await Promise.all([workflows.list(), runs.queue(), lastRun()]);
    const selected = typeof req.query.workflow === 'string' ? req.query.workflow : typeof req.body?.workflow === 'string' ? req.body.workflow : req.session?.workflow;
    const uploaded = typeof req.query.uploaded === 'string' ? await files.find(req.query.uploaded) : null;
    const now = runs.status();
    return (
      <ExecutionPage
        ctx={await ctxOf(req)}
        workflows={saved.map((w) => ({ name: w.name, version: w.version, definition: w.definition }))}
        selected={selected}
        status={now}
        timing={timingOf(now)}
        queue={queue.tasks.map((t) => taskJson(t))}
        error={extra.error}
        started={extra.started}
        lastRun={last}
        rows={extra.rows}
        uploaded={uploaded && uploaded.kind === 'config' ? { name: uploaded.storedName, original: uploaded.originalName, rows: uploaded.rows, workflow: uploaded.workflow } : undefined}
        uploadLimit={files.limitBytes}
        campaign={await records.campaignRan()}
      />
    );
  };
  const page = async (req: Request, res: Response, extra: Extra = {}, status = 200) => render(res, await pageOf(req, extra), status);

  handle(r, R.page, async (req, res) => {
    await respond(req, res, {
      json: async () => {
        const saved = await workflows.list();
        return { workflows: saved.map((w) => ({ name: w.name, version: w.version })), status: runs.status() };
      },
      html: () => pageOf(req),
    });
  });

  /** The page's form that does not fit comes back with the message, its typed rows kept. */
  const formAgain = (req: Request, res: Response, err: LabError) => page(req, res, { error: err, rows: formRows((req.body ?? {}) as Record<string, unknown>) }, statusOf(err));

  handle(
    r,
    R.start,
    async (req, res, { body }) => {
      let config: unknown = body.config;
      let repeat: unknown = body.repeat;
      if (!req.is('application/json')) {
        // the page: typed rows, or a repeat count (which wins when given)
        repeat = typeof body.repeat === 'string' && body.repeat.trim() ? body.repeat.trim() : undefined;
        config = repeat === undefined ? formRows(body) : undefined;
      }
      try {
        // an uploaded config CSV (POST /files/batch-configs): its rows, checked with line and column named
        const { task, status } = done(
          await runs.submit(callerOf(req, 'app'), { workflow: body.workflow, config, repeat, configFile: body.config_file || undefined, name: body.name === '' ? undefined : body.name }),
        );
        await respond(req, res, {
          json: { task_id: task.id, status },
          html: async () => {
            // as it is now (a short run may have ended already); the page follows it from here
            const now = await runs.task(task.id);
            return pageOf(req, { started: { id: now.id, name: now.name, status: now.status, run_id: now.runId } });
          },
        });
      } catch (e) {
        await failed(req, res, e, (err) => formAgain(req, res, err));
      }
    },
    formAgain,
  );

  handle(r, R.status, (_req, res) => {
    const status = runs.status();
    res.json({ ...status, timing: timingOf(status) });
  });

  handle(r, R.currentTask, async (_req, res) => {
    const { task, status } = await runs.current();
    res.json({ current_task: task ? taskJson(task, true) : null, state: status.state, progress: status.progress, failed_step: status.failed_step, waiting: status.waiting });
  });

  handle(r, R.queue, async (_req, res) => {
    const q = await runs.queue();
    res.json({ tasks: q.tasks.map((t) => taskJson(t)), paused: q.paused, queue_held: q.queue_held, current_task_id: q.current_task_id, running_task_ids: q.running_task_ids });
  });

  handle(r, R.task, async (_req, res, { params }) => {
    res.json(taskJson(await runs.task(params.task_id), true));
  });

  handle(r, R.delete, async (req, res, { body: { id } }) => {
    await runs.deleteTask(callerOf(req, 'app'), id);
    res.json({ deleted: id });
  });

  handle(r, R.reorder, async (req, res, { body }) => {
    await runs.moveTask(callerOf(req, 'app'), body.id, body.direction);
    const q = await runs.queue();
    res.json({ tasks: q.tasks.map((t) => taskJson(t)) });
  });

  handle(r, R.rename, async (req, res, { body }) => {
    res.json(taskJson(await runs.renameTask(callerOf(req, 'app'), body.id, body.new_name)));
  });

  /** Each control: the runner's action, audit-logged (`runner.pause`, `runner.abort.next-task`, …), then the status. */
  const controls: [typeof R.pause | typeof R.release, ControlName][] = [
    [R.pauseResume, 'pauseResume'],
    [R.pause, 'pause'],
    [R.resume, 'resume'],
    [R.continue, 'continuePauseStep'],
    [R.skip, 'skip'],
    [R.release, 'release'],
    [R.retry, 'retry'],
    [R.abortNextIteration, 'abortNextIteration'],
    [R.abortNextTask, 'abortNextTask'],
    [R.rerunIteration, 'rerunIteration'],
    [R.retryStep, 'retryStep'],
  ];
  for (const [route, name] of controls) {
    handle(r, route as typeof R.pause, async (req, res, { body }) => {
      // done here, or by the labdeck that runs the task (its status comes back)
      const taskId = (body as { task_id?: number }).task_id;
      res.json(done(await runs.control(callerOf(req, 'app'), name, taskId)));
    });
  }

  /** Live event streams open, per user and in all: each holds a connection and a listener. */
  const streams = new Map<number, number>();
  let total = 0;
  /** Server-sent events: status, step start/end, log lines, queue changes, iterations. */
  handle(r, R.events, async (req, res) => {
    const headers = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' };
    if (req.method === 'HEAD') return void res.writeHead(200, headers).end(); // a HEAD has no stream to wait for
    const userId = req.user!.id;
    const mine = streams.get(userId) ?? 0;
    if (mine >= MAX_STREAMS_PER_USER || total >= MAX_STREAMS) {
      throw new LabError(
        'too_many_requests',
        mine >= MAX_STREAMS_PER_USER
          ? `You have ${mine} live views open (at most ${MAX_STREAMS_PER_USER}): close some pages or tabs.`
          : `The lab has ${total} live views open (at most ${MAX_STREAMS}); try again when some close.`,
      );
    }
    const status = runs.status();
    // the current (or last) run so far, so a page opened mid-run or just after shows what it missed
    const [{ log, steps }, last_run] = await Promise.all([records.tail(status.current_task?.run_id), lastRun()]);
    streams.set(userId, (streams.get(userId) ?? 0) + 1); // counted once the stream is sure to open
    total++;
    res.writeHead(200, headers);
    const send = (e: RunnerEvent | { type: 'hello'; status: unknown; log: unknown[]; steps: unknown[]; last_run: LastRun | null }) => res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    send({ type: 'hello', status, log, steps, last_run });
    const stop = runs.subscribe(send);
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
    req.on('close', () => {
      clearInterval(ping);
      stop();
      total--;
      const n = (streams.get(userId) ?? 1) - 1;
      if (n > 0) streams.set(userId, n);
      else streams.delete(userId);
    });
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const EXECUTIONS_GROUP = routeGroup({ name: 'executions', routes: EXECUTION_ROUTES, mount: executionRoutes });
