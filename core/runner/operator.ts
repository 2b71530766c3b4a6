/**
 * The operator's controls of the runner (DESIGN.md §5): pause, resume, continue after a `pause` step, retry or
 * skip a failed step, release the held queue, abort after the iteration or the task, decide about an
 * interrupted task, and give the value an input step waits for. Each acts on the running task it names (or the
 * only one), or refuses with a 409 saying where the runner is (core/runner/controls.ts says what is possible in
 * each state); a task another labdeck runs gets the control there (core/runner/peers.ts).
 */
import { LabError } from '../errors.js';
import { alerting, resolveEvent } from '../notify/events.js';
import { availableControls, CONTROL_LABEL, SITUATION, situationOf, type Control } from './controls.js';
import { Abort, TaskRun } from './execution.js';
import { giveInput, type GivenBy } from './input.js';
import { askControl, askInput } from './peers.js';
import { checkPlaceFor, hold } from './queue.js';
import { endInterrupted, resumeInterrupted } from './recovery.js';
import { RUN_CONTROLS, type ControlBy, type RunControlName, type RunnerStatus, type SharedState } from './state.js';
import { elsewhereNote, emitStatus, idleView, runningData, runningList, statusOf, viewOf } from './status.js';

/**
 * Give the value an input step waits for (`taskId`: which task, while several wait). Done here, or by the
 * labdeck on the database that runs the task. A value that does not fit is a 400 naming the field (the run
 * keeps waiting); no input waiting is a 409. Resolves with the checked value and the status after.
 */
export async function input(s: SharedState, raw: unknown, opts: { taskId?: number; by: GivenBy | null }): Promise<{ task_id: number; value: unknown; status: RunnerStatus }> {
  const here = opts.taskId === undefined ? s.tasks.some((t) => t.waitingInput) : s.tasks.some((t) => t.id === opts.taskId);
  if (!here) {
    const there = s.elsewhere.filter((t) => (opts.taskId === undefined || t.task_id === opts.taskId) && s.liveElsewhere.get(s.elsewhereHost.get(t.task_id)!)?.get(t.task_id)?.input);
    if (there.length === 1 || (opts.taskId !== undefined && s.elsewhere.some((t) => t.task_id === opts.taskId))) {
      const t = there[0] ?? s.elsewhere.find((x) => x.task_id === opts.taskId)!;
      const answer = await askInput(s, t, raw, opts.by);
      if (answer) return answer;
    }
    if (opts.taskId !== undefined) await named(s, opts.taskId); // 404 or 409 naming where it is
    throw new LabError('conflict', `No input is waiting${elsewhereNote(s)}.`, undefined, { state: statusOf(s).state });
  }
  const { task, value } = giveInput(s.tasks, raw, opts);
  emitStatus(s);
  return { task_id: task.id, value, status: statusOf(s) };
}

/** An input another labdeck passes on for a task this one runs. */
export function inputAsked(s: SharedState, body: unknown) {
  const m = (body ?? {}) as { task_id?: unknown; value?: unknown; by?: GivenBy | null };
  return input(s, m.value, {
    taskId: typeof m.task_id === 'number' ? m.task_id : undefined,
    by: m.by && typeof m.by.username === 'string' ? { id: typeof m.by.id === 'number' ? m.by.id : null, username: m.by.username } : null,
  });
}

/**
 * What a control without a task_id acts on: the only running task; several → 409 listing them; none →
 * null (the queue's flag, or the interrupted task waiting for a decision). Synchronous, so a control takes
 * effect before anything else the caller does next (as it always did).
 */
function only(s: SharedState, what: string): TaskRun | null {
  if (s.tasks.length > 1) {
    throw new LabError(
      'conflict',
      `${s.tasks.length} tasks are running (${runningList(s)}): say which one to ${what} with task_id.`,
      [{ field: 'task_id', message: 'required while several tasks run' }],
      {
        running: runningData(s),
      },
    );
  }
  return s.tasks[0] ?? null;
}

/**
 * What a control with `taskId` acts on: that running task, or the interrupted task it names. An unknown
 * task is a 404; one that is not running here a 409 (naming the host that runs it, if another does).
 */
async function named(s: SharedState, taskId: number): Promise<TaskRun | 'interrupted'> {
  const run = s.tasks.find((t) => t.id === taskId);
  if (run) return run;
  if (s.interrupted?.task_id === taskId) return 'interrupted';
  const task = await s.store.queue.get(taskId);
  if (!task) throw new LabError('not_found', `There is no task ${taskId}.`, [{ field: 'task_id', message: 'no such task' }]);
  const there = s.elsewhere.find((t) => t.task_id === taskId);
  const here = s.tasks.length ? `; running here: ${runningList(s)}` : '';
  throw new LabError(
    'conflict',
    there ? `Task ${taskId} runs on ${there.host}: control it there.` : `Task ${taskId} is not running (it is ${task.status})${here}.`,
    [{ field: 'task_id', message: 'not running here' }],
    {
      state: statusOf(s).state,
      running: runningData(s),
    },
  );
}

/** A control that does nothing to its target (a running task, else the queue) now: a conflict naming where it is. */
function check(s: SharedState, control: Control, t: TaskRun | 'interrupted' | null): void {
  const v = t instanceof TaskRun ? viewOf(s, t) : idleView(s);
  if (availableControls(v)[control]) return;
  const who = t instanceof TaskRun && s.tasks.length > 1 ? `task ${t.id} is` : 'the runner is';
  throw new LabError('conflict', `${CONTROL_LABEL[control]} does nothing now: ${who} ${SITUATION[situationOf(v)].label}${t instanceof TaskRun ? '' : elsewhereNote(s)}.`, undefined, {
    state: v.state,
  });
}

/** `check` for the controls of a running task only (pause, resume, continue). */
function checkTask(s: SharedState, control: Control, t: TaskRun | 'interrupted' | null): asserts t is TaskRun {
  check(s, control, t);
  if (!(t instanceof TaskRun)) throw new LabError('conflict', `${CONTROL_LABEL[control]} does nothing now: no task runs here.`, undefined, { state: 'idle' });
}

/**
 * The one pause button of the spec (POST /executions/pause-resume): a failed step → skip it; a `pause` step
 * → continue; an interrupted task → go on after its in-doubt step; a held queue → release it; otherwise
 * pause or resume (idle, the flag holds the queue). The page and `lab run` use the controls below, which
 * each do one thing or refuse: a button named "Pause" never skips a step that failed a moment before.
 * With several tasks running, `taskId` says which one (else 409 listing them).
 */
export async function pauseResume(s: SharedState, taskId?: number): Promise<RunnerStatus> {
  const t = taskId === undefined ? only(s, 'pause or resume') : await named(s, taskId);
  if (t === 'interrupted' || (t === null && s.interrupted)) return skip(s, taskId);
  if (t) {
    if (t.failed) return skip(s, t.id);
    if (t.waitingPause) return continuePauseStep(s, t.id);
    return t.paused ? resume(s, t.id) : pause(s, t.id);
  }
  if (s.held) return release(s);
  // idle: the flag alone holds the queue (DESIGN §5), and clearing it lets the queue go on
  s.paused = !s.paused;
  if (!s.paused) s.notify();
  emitStatus(s);
  return statusOf(s);
}

/** Set a running task's pause flag: no new step of it starts (a call in flight finishes). */
export async function pause(s: SharedState, taskId?: number, by: ControlBy = 'person'): Promise<RunnerStatus> {
  const t = taskId === undefined ? only(s, 'pause') : await named(s, taskId);
  checkTask(s, 'pause', t);
  t.paused = true;
  if (t.pausedBy !== 'person') t.pausedBy = by;
  // the run's log says when and why it stood still
  await s.log(t.run.id, 'info', 'Paused by the operator: no new step starts (a call in flight finishes).');
  emitStatus(s);
  return statusOf(s);
}

/** Clear a running task's pause flag (and the queue's): it goes on. */
export async function resume(s: SharedState, taskId?: number, by: ControlBy = 'person'): Promise<RunnerStatus> {
  const t = taskId === undefined ? only(s, 'resume') : await named(s, taskId);
  checkTask(s, 'resume', t);
  if (by === 'agent' && t.paused && t.pausedBy === 'person') {
    throw new LabError('forbidden', `Task ${t.id} was paused by a person: only a person resumes it (an agent asks for it in the approval inbox).`, undefined, { task_id: t.id, paused_by: 'person' });
  }
  t.paused = false;
  t.pausedBy = null;
  s.paused = false;
  t.resumeFlag?.resolve();
  s.notify();
  await s.log(t.run.id, 'info', 'Resumed by the operator.');
  emitStatus(s);
  return statusOf(s);
}

/** A `pause` step is done: go on with the next step. */
export async function continuePauseStep(s: SharedState, taskId?: number): Promise<RunnerStatus> {
  const t = taskId === undefined ? only(s, 'continue') : await named(s, taskId);
  checkTask(s, 'continue', t);
  t.waitingPause!.resolve();
  emitStatus(s);
  return statusOf(s);
}

/** Leave the failed step out and go on (or go on after an interrupted task's in-doubt step). */
export async function skip(s: SharedState, taskId?: number): Promise<RunnerStatus> {
  const t = taskId === undefined ? only(s, 'skip') : await named(s, taskId);
  if (t instanceof TaskRun) {
    check(s, 'skip', t);
    t.decide('skip');
  } else {
    if (!s.interrupted) check(s, 'skip', t);
    await resumeInterrupted(s, 'skip');
  }
  emitStatus(s);
  return statusOf(s);
}

/**
 * Let a held queue (after abort next-task, or the pause flag set while idle) start tasks again. It is the
 * queue's, not a task's: it takes no task_id. With several tasks at once it may be released while others
 * run, though not while the task that holds it is still ending.
 */
export async function release(s: SharedState): Promise<RunnerStatus> {
  const stillEnding = s.tasks.some((t) => t.abortRequest === 'task');
  const free = s.parallel > 1 && (s.held || s.paused) && !s.interrupted && !stillEnding;
  if (!free) check(s, 'release', s.tasks.length ? s.tasks[0] : null);
  await alerting(s.store, [resolveEvent('queue_held', 'the queue was released')], (tx) => tx.queue.release());
  s.setHeld(false);
  s.tellOthers();
  s.paused = false;
  s.notify();
  emitStatus(s);
  return statusOf(s);
}

/** Re-run the failed step (or an interrupted task's in-doubt step). */
export async function retry(s: SharedState, taskId?: number): Promise<RunnerStatus> {
  const t = taskId === undefined ? only(s, 'retry') : await named(s, taskId);
  if (t instanceof TaskRun && t.failed) t.decide('retry');
  else if (t !== null && !(t instanceof TaskRun)) await resumeInterrupted(s, s.interrupted!.retry === 'iteration' ? 'iteration' : 'retry');
  else if (t === null && s.interrupted) await resumeInterrupted(s, s.interrupted.retry === 'iteration' ? 'iteration' : 'retry');
  else notApplicable(s, 'retry', t);
  emitStatus(s);
  return statusOf(s);
}

/** An interrupted task: run its in-doubt step's iteration again from its first step (core/runner/iteration.ts). */
export function rerunIteration(s: SharedState, taskId?: number): Promise<RunnerStatus> {
  return decideInterrupted(s, 'iteration', 're-run the iteration of', taskId);
}

/** An interrupted task: re-run its in-doubt step only, even where a plain Retry would re-run the iteration. */
export function retryStep(s: SharedState, taskId?: number): Promise<RunnerStatus> {
  return decideInterrupted(s, 'retry', 'retry the in-doubt step of', taskId);
}

async function decideInterrupted(s: SharedState, mode: 'retry' | 'iteration', what: string, taskId?: number): Promise<RunnerStatus> {
  const t = taskId === undefined ? (s.interrupted ? 'interrupted' : only(s, what)) : await named(s, taskId);
  if (t !== 'interrupted' || !s.interrupted?.step) {
    const detail = s.interrupted ? ' (no step of it was in doubt: Retry starts it again)' : '';
    throw new LabError('conflict', `Nothing to ${what}: no interrupted task waits with an in-doubt step${detail}.`, undefined, { state: t instanceof TaskRun ? t.state() : 'idle' });
  }
  await resumeInterrupted(s, mode);
  emitStatus(s);
  return statusOf(s);
}

function notApplicable(s: SharedState, what: string, t: TaskRun | null): never {
  const state = t ? t.state() : 'idle';
  const who = t && s.tasks.length > 1 ? `task ${t.id} is` : 'the runner is';
  throw new LabError('conflict', `Nothing to ${what}: ${who} ${state}${s.held ? ' (queue held)' : ''}${t ? '' : elsewhereNote(s)}.`, undefined, { state });
}

/** Finish the current iteration, skip the rest, run cleanup, record `stopped`; the queue goes on. */
export async function abortNextIteration(s: SharedState, taskId?: number): Promise<RunnerStatus> {
  const t = taskId === undefined ? only(s, 'abort') : await named(s, taskId);
  if (!(t instanceof TaskRun)) notApplicable(s, 'abort', null);
  if (t.abortRequest !== 'task') t.abortRequest = 'iteration';
  // a failed step ends its iteration at once: there is nothing more of it to finish
  t.cut(new Abort('iteration'), false);
  emitStatus(s);
  return statusOf(s);
}

/** Finish the in-flight step, run no further step, run cleanup, record `aborted`; hold the queue. */
export async function abortNextTask(s: SharedState, taskId?: number): Promise<RunnerStatus> {
  const t = taskId === undefined ? only(s, 'abort') : await named(s, taskId);
  if (t instanceof TaskRun) {
    t.abortRequest = 'task';
    await hold(s, t.id);
    t.cut(new Abort('task'));
  } else if (s.interrupted) {
    await checkPlaceFor(s, s.interrupted.task_id);
    await endInterrupted(s);
  } else notApplicable(s, 'abort', null);
  emitStatus(s);
  return statusOf(s);
}

/**
 * A control asked through the web app or the API, on the task `taskId` (needed while several run). Done
 * here; or, when the task runs on another labdeck on the database (named, or the lab's only task while
 * this labdeck runs nothing), sent to that labdeck (PostgreSQL), whose answer is returned: its status after
 * the control, or its refusal. On SQLite (one PC) the refusal here names the host instead.
 */
export async function control(s: SharedState, name: RunControlName, taskId?: number, by: ControlBy = 'person'): Promise<RunnerStatus> {
  if (s.faults.waiting.length) await s.faults.beforeControl(taskId, s.tasks.length);
  if (name === 'release') return release(s);
  const here = taskId === undefined ? s.tasks.length > 0 || s.interrupted !== null : s.tasks.some((t) => t.id === taskId) || s.interrupted?.task_id === taskId;
  if (!here) {
    const there = taskId === undefined ? s.elsewhere : s.elsewhere.filter((t) => t.task_id === taskId);
    if (there.length > 1) {
      const list = there.map((t) => `task ${t.task_id} on ${t.host}`).join(', ');
      throw new LabError('conflict', `Several tasks run on other labdecks (${list}): say which one with task_id.`, [{ field: 'task_id', message: 'required while several tasks run' }], {
        running: there,
      });
    }
    if (there.length === 1) {
      const answer = await askControl(s, there[0], name, by);
      if (answer) return answer;
    }
  }
  return act(s, name, taskId, by);
}

/** Do control `name` here (release is the queue's: it takes no task). */
function act(s: SharedState, name: RunControlName, taskId: number | undefined, by: ControlBy = 'person'): Promise<RunnerStatus> {
  if (name === 'pause' || name === 'resume') return CONTROL_OF[name](s, taskId, by);
  return name === 'release' ? release(s) : CONTROL_OF[name](s, taskId);
}

/** Do control `name` on a task this labdeck runs, never sending it on (a control another labdeck relayed here). */
export function controlHere(s: SharedState, name: RunControlName, taskId: number | undefined, by: ControlBy = 'person'): Promise<RunnerStatus> {
  return act(s, name, taskId, by);
}

/** A control another labdeck asks of this one (for a task this one runs): this one's status after it. */
export function controlAsked(s: SharedState, body: unknown): Promise<RunnerStatus> {
  const m = body as { control?: unknown; task_id?: unknown; by?: unknown } | null;
  if (!RUN_CONTROLS.includes(m?.control as RunControlName)) throw new LabError('invalid_input', `No run control "${String(m?.control)}".`);
  // an older labdeck sends no `by`: taken for an agent's only when it says so
  return act(s, m!.control as RunControlName, typeof m!.task_id === 'number' ? m!.task_id : undefined, m!.by === 'agent' ? 'agent' : 'person');
}

/** Each control by the Runner method that does it (`act`). */
const CONTROL_OF: Record<Exclude<RunControlName, 'release'>, (s: SharedState, taskId?: number, by?: ControlBy) => Promise<RunnerStatus>> = {
  pauseResume,
  pause,
  resume,
  continuePauseStep,
  skip,
  retry,
  rerunIteration,
  retryStep,
  abortNextIteration,
  abortNextTask,
};
