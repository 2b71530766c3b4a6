/**
 * What the operator can do in each state of the runner, and the words for it. One answer for the runner's own
 * checks (a control that does nothing now is a 409), the execution page (rendered by the server, then kept
 * current in the browser from the live stream), and `lab run`'s keys. Pure: no Node, no DOM, types only from
 * the runner, so the browser bundle carries it too.
 */
import type { RunnerStatus } from './state.js';
import { sentence } from '../text.js';

/** The operator's controls, each doing one thing. */
export type Control = 'pause' | 'resume' | 'continue' | 'retry' | 'skip' | 'release' | 'stop-iteration' | 'abort-task' | 'rerun-iteration' | 'retry-step';
export const CONTROLS: readonly Control[] = ['pause', 'resume', 'continue', 'retry', 'skip', 'release', 'stop-iteration', 'abort-task', 'rerun-iteration', 'retry-step'];

/** The words for each control: the page's buttons, the API's 409 messages and `lab run`'s key help. */
export const CONTROL_LABEL: Record<Control, string> = {
  pause: 'Pause',
  resume: 'Resume',
  continue: 'Continue',
  retry: 'Retry the failed step',
  skip: 'Skip the failed step',
  release: 'Release the held queue',
  'stop-iteration': 'Stop after this iteration',
  'abort-task': 'Abort the task',
  'rerun-iteration': 'Re-run the iteration',
  'retry-step': 'Retry the step only',
};

/** A control's words in this state: Retry says when it re-runs the whole iteration (an interrupted campaign, core/runner/iteration.ts). */
export function controlLabel(c: Control, s: Pick<ControlStatus, 'interrupted'>): string {
  if (c === 'retry' && (s.interrupted as InterruptedIteration)?.retry === 'iteration') return 'Retry: re-run the iteration';
  return CONTROL_LABEL[c];
}

/** What each control does, in a sentence (a button's title, the API document). */
export const CONTROL_HELP: Record<Control, string> = {
  pause: 'No new step starts; the call in flight finishes. The queue waits too.',
  resume: 'Go on from where the run was paused.',
  continue: 'The pause step is done: go on with the next step.',
  retry: 'Run the failed step again, then go on.',
  skip: 'Leave the failed step out and go on: its iteration is marked skipped, its outputs are not data.',
  release: 'Let the queue start its next task again.',
  'stop-iteration': 'Finish this iteration, skip the rest, run cleanup: the run is recorded stopped; the queue goes on.',
  'abort-task': 'Finish the step in flight, run no further step, run cleanup: the run is recorded aborted and the queue is held.',
  'rerun-iteration': "An interrupted task: run its in-doubt step's iteration again from its first step (its earlier steps' records stay, superseded), then go on.",
  'retry-step': 'An interrupted task: re-run only its in-doubt step, then go on, even on instruments made again since its iteration began.',
};

/** The parts of the runner's status these read (what the page gets from the live stream). */
export type ControlStatus = Pick<RunnerStatus, 'busy' | 'state' | 'paused' | 'queue_held'> & {
  current_task: { id: number } | null;
  failed_step: unknown;
  waiting: unknown;
  interrupted: unknown;
};

/** What an interrupted task's status says of its in-doubt step's iteration (core/runner/iteration.ts). */
type InterruptedIteration = { step?: unknown; remade?: string[]; retry?: 'step' | 'iteration' } | null | undefined;

/**
 * Where the runner really is, finer than `state`: `running` with the pause flag set is still finishing a step
 * (`pausing`), `paused` is either the flag or a pause step (`waiting`), and idle is `held` (no task starts) or
 * `interrupted` (a task cut off by a crash waits for a decision).
 */
export type Situation = 'idle' | 'held' | 'interrupted' | 'running' | 'pausing' | 'paused' | 'waiting' | 'waiting_input' | 'failed' | 'stopping';

export const SITUATION: Record<Situation, { label: string; tone: 'secondary' | 'primary' | 'warning' | 'danger' | 'dark' }> = {
  idle: { label: 'idle', tone: 'secondary' },
  held: { label: 'queue held', tone: 'warning' },
  interrupted: { label: 'interrupted, waiting for a decision', tone: 'danger' },
  running: { label: 'running', tone: 'primary' },
  pausing: { label: 'pausing after this step', tone: 'warning' },
  paused: { label: 'paused', tone: 'warning' },
  waiting: { label: 'waiting at a pause step', tone: 'warning' },
  waiting_input: { label: 'waiting for a person to give a value', tone: 'warning' },
  failed: { label: 'failed step waiting for a decision', tone: 'danger' },
  stopping: { label: 'stopping', tone: 'dark' },
};

export function situationOf(s: ControlStatus): Situation {
  if (!s.busy) return s.interrupted ? 'interrupted' : s.queue_held ? 'held' : 'idle';
  switch (s.state) {
    case 'failed':
      return 'failed';
    case 'stopping':
      return 'stopping';
    case 'waiting_input':
      return 'waiting_input';
    case 'paused':
      return s.waiting ? 'waiting' : 'paused';
    default:
      return s.paused ? 'pausing' : 'running';
  }
}

/** Which controls do something now; the others are disabled on the page and answer 409. */
export function availableControls(s: ControlStatus): Record<Control, boolean> {
  const failed = s.busy && s.state === 'failed';
  const interrupted = !s.busy && !!s.interrupted;
  const cut = s.interrupted as InterruptedIteration;
  return {
    pause: s.busy && !s.paused && (s.state === 'running' || s.state === 'stopping'),
    resume: s.busy && s.paused,
    continue: s.busy && !!s.waiting,
    retry: failed || interrupted,
    skip: failed || interrupted,
    release: !s.busy && s.queue_held && !s.interrupted,
    'stop-iteration': s.busy && s.state !== 'stopping',
    'abort-task': s.busy || interrupted,
    'rerun-iteration': interrupted && !!cut?.step,
    // what Retry does, unless Retry re-runs the iteration (a campaign on instruments made again): a script's sure way
    'retry-step': interrupted && !!cut?.step,
  };
}

/** A queued task's status as the queue shows it: the running task says where the runner really is. */
export function queueStatusLabel(task: { id: number; status: string }, s: ControlStatus): string {
  if (task.status === 'running' && s.current_task?.id === task.id) return SITUATION[situationOf(s)].label;
  if (task.status === 'pending' && s.queue_held) return 'pending (queue held)';
  if (task.status === 'interrupted') return SITUATION.interrupted.label;
  return task.status;
}

/** A task's end, in the run's words (`done` is a completed run). */
const ENDED: Record<string, { word: string; tone: Notice['tone'] }> = {
  done: { word: 'completed', tone: 'success' },
  completed: { word: 'completed', tone: 'success' },
  stopped: { word: 'stopped', tone: 'warning' },
  failed: { word: 'failed', tone: 'danger' },
  aborted: { word: 'aborted', tone: 'danger' },
};

export interface Notice {
  tone: 'info' | 'success' | 'warning' | 'danger' | 'secondary' | 'primary' | 'dark';
  text: string;
  /** The run to link to (its record), once there is one. */
  run_id: number | null;
}

/**
 * The page's note about a task just queued, as it is now: queued, where the runner is while it runs, and
 * how it ended with its record. `task.status` is the queue's (pending … done) or a run's outcome.
 */
export function taskNotice(task: { id: number; name: string; status: string; run_id: number | null }, s: ControlStatus): Notice {
  const who = `Task ${task.id} (${task.name})`;
  const ended = ENDED[task.status];
  if (ended) return { tone: ended.tone, text: `${who} ended: ${ended.word}.`, run_id: task.run_id };
  if (task.status === 'pending') return { tone: s.queue_held ? 'warning' : 'info', text: `${who} is queued${s.queue_held ? ': the queue is held' : ''}.`, run_id: null };
  if (task.status === 'running' && s.current_task?.id === task.id) {
    const where = SITUATION[situationOf(s)];
    return { tone: where.tone === 'primary' ? 'info' : where.tone, text: `${who}: ${where.label}.`, run_id: task.run_id };
  }
  if (task.status === 'interrupted') return { tone: 'danger', text: `${who}: ${SITUATION.interrupted.label}.`, run_id: task.run_id };
  return { tone: 'info', text: `${who}: ${task.status}.`, run_id: task.run_id };
}

/** The parts of the status the page's alerts read. */
export type AlertStatus = {
  busy: boolean;
  failed_step: { path: string; error: string } | null;
  waiting: { message: string } | null;
  /** An input step waiting for a value (absent from older status objects). */
  input?: { prompt: string; save_as: string; expects: string } | null;
  interrupted: { task_id: number; remade?: string[]; retry?: 'step' | 'iteration' } | null;
  /** Tasks other labdecks on the database run (absent from older status objects). */
  elsewhere?: { task_id: number; name: string; host: string; progress?: { iteration: number; iterations: number } }[];
};

/** What waits for the operator, in the controls' words: a failed step, a pause step, an interrupted task. */
export function statusAlerts(s: AlertStatus): { tone: 'danger' | 'warning'; text: string }[] {
  const out: { tone: 'danger' | 'warning'; text: string }[] = [];
  if (s.failed_step) out.push({ tone: 'danger', text: `Step ${s.failed_step.path} failed: ${sentence(s.failed_step.error)} Retry it, skip it, or abort the task.` });
  if (s.waiting) out.push({ tone: 'warning', text: `Waiting at a pause step: ${sentence(s.waiting.message)} Continue when it is done.` });
  if (s.input) out.push({ tone: 'warning', text: `Waiting for input: ${sentence(s.input.prompt)} Give ${s.input.save_as}, ${s.input.expects}.` });
  if (!s.busy) {
    for (const t of s.elsewhere ?? []) {
      const at = t.progress?.iterations ? `, iteration ${t.progress.iteration} of ${t.progress.iterations}` : '';
      out.push({ tone: 'warning', text: `Task ${t.task_id} (${t.name}) is running on ${t.host}${at}: its steps and log show here; its controls act on it there.` });
    }
  }
  if (s.interrupted && !s.busy) {
    const remade = s.interrupted.remade ?? [];
    if (remade.length) {
      const retry =
        s.interrupted.retry === 'iteration'
          ? 'Retry re-runs the iteration from its first step (Retry the step only re-runs the in-doubt step)'
          : 'Retry re-runs its in-doubt step, Re-run the iteration runs the iteration again from its first step';
      out.push({
        tone: 'danger',
        text: `Task ${s.interrupted.task_id} was interrupted, and the instruments of this iteration were re-created since the step ran (${remade.join(', ')}): a measurement on them now is not one with the steps before. ${retry}; Skip goes on after it, Abort the task ends it.`,
      });
    } else {
      out.push({
        tone: 'warning',
        text: `Task ${s.interrupted.task_id} was interrupted (labdeck stopped, or its database failed, during it): Retry re-runs its in-doubt step, Skip goes on after it, Abort the task ends it.`,
      });
    }
  }
  return out;
}

/** A finished run in a few words: `completed`, `completed with 1 skipped step`, `aborted`. */
export function runOutcome(status: string, skipped = 0): string {
  return `${status}${skipped ? ` with ${skipped} skipped step${skipped === 1 ? '' : 's'}` : ''}`;
}

/** What the state's words leave out: the pause flag, a held queue behind a task still running. */
export function liveFlags(s: Pick<ControlStatus, 'paused' | 'queue_held'>, where: Situation): string {
  return [s.paused && where !== 'paused' && where !== 'pausing' ? 'pause set' : '', s.queue_held && where !== 'held' ? 'queue held' : ''].filter(Boolean).join(' · ');
}
