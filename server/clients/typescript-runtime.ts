/**
 * The TypeScript client's runtime (server/clients/typescript.ts): the errors, the answer types, the HTTP
 * sender and waiting for a run, which every generated labdeck-client.ts carries. A real file, type-checked
 * and linted with the sources; the generator copies what lies between the two marker lines into each client.
 * Below the second marker: what the generated client declares around it (the runner's routes, and the
 * answer types it writes from the API document), stated here only so this file checks on its own.
 */
// ---- copied into every generated client from the next line ----
/**
 * An error answered by labdeck: HTTP status, error code, message and details (which field, why).
 * A status of 0 means labdeck could not be reached.
 */
export class LabError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details?: unknown;
  /**
   * The record of a failed instrument call (a 502: the instrument raised; a 503 in-doubt: its host went
   * away mid-call): look it up with `lab.callRecord(taskId)`. Undefined for other errors.
   */
  readonly taskId?: number;
  /** Every top-level field of the error answer besides `error` (task_id, instrument, method, in_doubt, retry_after, …). */
  readonly data: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details?: unknown, data: Record<string, unknown> = {}) {
    super(message);
    this.name = 'LabError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.data = data;
    if (typeof data.task_id === 'number') this.taskId = data.task_id;
  }
}

/** How a run that did not complete ended, or `step_failed`: a step failed and the run waits for an operator. */
export type RunEnd = 'failed' | 'stopped' | 'aborted' | 'interrupted' | 'step_failed';

/**
 * A run that did not complete, thrown by `lab.waitForRun`: `status` is the run record's ("failed", "stopped",
 * "aborted", "interrupted": labdeck stopped during the run and the task waits for an operator), or
 * "step_failed" while a step has failed and the run waits for an operator to retry it, skip it or abort.
 */
export class RunError extends Error {
  readonly taskId: number;
  readonly runId: number | null;
  readonly status: RunEnd;
  /** Why: the record's error, or the failed step's. */
  readonly error: string | null;
  /** The run record; null when the task never started. */
  readonly record: RunRecord | null;
  /** The step that failed, for "step_failed". */
  readonly failedStep: FailedStep | null;

  constructor(taskId: number, status: RunEnd, error: string | null, record: RunRecord | null, failedStep: FailedStep | null = null) {
    const where = record ? `run ${record.id} (task ${taskId})` : `task ${taskId}`;
    super(`${where} ${status.replace('_', ' ')}${error ? `: ${error}` : ''}`);
    this.name = 'RunError';
    this.taskId = taskId;
    this.runId = record?.id ?? null;
    this.status = status;
    this.error = error;
    this.record = record;
    this.failedStep = failedStep;
  }
}

/** `lab.waitForRun` gave up after its timeout. The run goes on; `state` is the task's last known state. */
export class WaitTimeoutError extends Error {
  readonly taskId: number;
  readonly state: string;

  constructor(taskId: number, timeoutMs: number, state: string) {
    super(`task ${taskId} did not end within ${timeoutMs} ms (it is ${state}); the run goes on`);
    this.name = 'WaitTimeoutError';
    this.taskId = taskId;
    this.state = state;
  }
}

/** Queued: POST /executions/config and POST /executions/campaign answer this. */
export type RunStatus = 'running' | 'completed' | 'failed' | 'stopped' | 'aborted' | 'interrupted';

export interface WaitOptions {
  /** Milliseconds to wait at most (default: as long as it takes); then WaitTimeoutError. The run goes on. */
  timeoutMs?: number;
  /** Milliseconds between two looks at the runner (default 500). */
  pollMs?: number;
  /**
   * When a step fails, the run waits for an operator to retry it, skip it or abort (in the web app, or
   * with retry(), pauseResume(), abortNextTask()); so does a run interrupted by a restart of labdeck.
   * false (default): reject with RunError at once ("step_failed" or "interrupted"); true: keep waiting.
   */
  waitForOperator?: boolean;
}

/** The runner's part of the lab: its routes (RunnerRoutes, generated), and waiting for a run to end. */
export interface Runner extends RunnerRoutes {
  /** Wait until a queued task's run ends: its record when it completed; rejects with RunError otherwise. */
  waitForRun(task: number | { task_id: number }, options?: WaitOptions): Promise<RunRecord>;
}

type Send = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<unknown>;

/** One request to labdeck: a JSON body when given, the JSON answer back, LabError for an error answer. */
function makeSend(baseUrl: string, token: string | undefined): Send {
  const base = baseUrl.replace(/\/+$/, '');
  return async (method, path, body) => {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (token) headers.Authorization = `Bearer ${token}`;
    const url = base + path;
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body: body === undefined ? null : JSON.stringify(body) });
    } catch (e) {
      throw new LabError(0, 'unreachable', `cannot reach ${url}: ${(e as Error).message}`);
    }
    const text = await res.text();
    let answer: unknown = null;
    try {
      answer = text ? JSON.parse(text) : null;
    } catch {
      answer = null;
    }
    if (!res.ok) {
      const { error, ...data } = (answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? answer : {}) as {
        error?: { code?: string; message?: string; details?: unknown };
      };
      throw new LabError(res.status, error?.code ?? 'http_error', error?.message ?? (text.trim() || res.statusText), error?.details, data);
    }
    return answer;
  };
}

/** `?k=v&…` of the values given (undefined and null left out), or nothing. */
function queryString(query: object | undefined): string {
  const q = Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== null);
  return q.length ? `?${new URLSearchParams(q.map(([k, v]): [string, string] => [k, String(v)]))}` : '';
}

type Call = (instrument: string, method: string, args: object | undefined) => Promise<unknown>;

function makeCall(send: Send): Call {
  return async (instrument, method, args) => {
    const answer = await send('POST', `/instruments/${encodeURIComponent(instrument)}`, { method, args: args ?? {} });
    return answer !== null && typeof answer === 'object' ? (answer as { output?: unknown }).output : answer;
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function makeRunner(send: Send): Runner {
  const runner: Runner = {
    ...runnerRoutes(send),
    async waitForRun(task, options = {}) {
      const taskId = typeof task === 'number' ? task : task.task_id;
      const { timeoutMs, pollMs = 500, waitForOperator = false } = options;
      const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
      let state = 'unknown';
      for (;;) {
        try {
          const look = await lookAt(taskId, waitForOperator);
          if (look.record) return look.record;
          state = look.state;
        } catch (e) {
          if (!(e instanceof LabError && e.status === 0)) throw e;
          state = 'unreachable'; // labdeck restarting: look again until the timeout
        }
        if (Date.now() >= deadline) throw new WaitTimeoutError(taskId, timeoutMs!, state);
        await sleep(Math.max(0, Math.min(pollMs, deadline - Date.now())));
      }
    },
  };

  /** One look at a task: its record once its run completed, else its state. */
  async function lookAt(taskId: number, waitForOperator: boolean): Promise<{ record?: RunRecord; state: string }> {
    const status = await runner.runnerStatus();
    // every task the server runs (several with lab serve --parallel N); older servers: the current one only
    const running = status.running ?? (status.current_task ? [{ ...status.current_task, state: status.state, failed_step: status.failed_step }] : []);
    const current = running.find((t) => t.id === taskId);
    if (current) {
      if (current.state === 'failed' && !waitForOperator) {
        const step = current.failed_step;
        throw new RunError(taskId, 'step_failed', step?.error ?? null, current.run_id ? await runner.record(current.run_id) : null, step);
      }
      return { state: current.state };
    }
    const queued = (await runner.queue()).tasks.find((t) => t.id === taskId);
    if (queued) {
      if (queued.status === 'interrupted' && !waitForOperator) {
        const record = queued.run_id ? await runner.record(queued.run_id) : null;
        throw new RunError(taskId, 'interrupted', record?.error ?? null, record);
      }
      return { state: queued.status };
    }
    // not running, not queued: it has ended
    const ended = await runner.queuedTask(taskId);
    const record = ended.run_id ? await runner.record(ended.run_id) : null;
    if (record?.status === 'completed') return { record, state: 'done' };
    throw new RunError(taskId, (record?.status ?? ended.status) as RunEnd, record?.error ?? null, record);
  }

  return runner;
}
// ---- end of what is copied ----

/**
 * The answer types the generated client writes from the API document the server serves (RunnerStatus,
 * RunRecord, RecordList, CallRecord, QueuedTask, Queue, RunStarted and their parts: server/clients/typescript.ts): here, the core
 * declarations that document is made from.
 */
export type RunnerStatus = import('../../core/runner/status-schema.js').RunnerStatus;
export type RunningTask = RunnerStatus['running'][number];
export type FailedStep = NonNullable<RunnerStatus['failed_step']>;
export type RunRecord = import('../../core/records/record-schema.js').RecordDetail;
export type RecordList = import('../../core/records/record-schema.js').RecordList;
export type RunSummary = RecordList['records'][number];
export type CallRecord = import('../../core/records/call-record.js').CallRecordJson;
export type QueuedTask = import('../../core/runner/queue-schema.js').QueueTaskJson;
export type Queue = import('../../core/runner/queue-schema.js').QueueJson;
export type RunStarted = import('../../core/runner/queue-schema.js').RunStartedJson;
export type TaskStatus = QueuedTask['status'];

/** The generated client's RunnerRoutes has one method per route declared with `client`; these the runtime calls. */
export interface RunnerRoutes {
  runnerStatus(): Promise<RunnerStatus>;
  queue(): Promise<Queue>;
  record(id: number): Promise<RunRecord>;
  queuedTask(id: number): Promise<QueuedTask>;
}
declare function runnerRoutes(send: Send): RunnerRoutes;
export { makeCall, makeRunner, makeSend, queryString };
