/**
 * The runner's status (DESIGN.md §5): the snapshot the spec's `GET /executions/status` shows, what the
 * controls read of it, the words messages use for the running tasks, and the `status` events the browser
 * (SSE) and `lab run` get as it changes.
 */
import type { ControlStatus } from './controls.js';
import type { TaskRun } from './execution.js';
import type { SharedState, RunnerStatus } from './state.js';

/**
 * The runner as the spec's status shows it: `busy`, `state`, `current_task`, `progress`, `failed_step` and
 * `waiting` describe the first running task (the only one, by default); `running` lists them all.
 */
export function statusOf(s: SharedState): RunnerStatus {
  const running = s.tasks.map((t) => t.view());
  const first = running[0];
  return {
    busy: first !== undefined,
    state: first?.state ?? 'idle',
    paused: first ? first.paused : s.paused,
    // DESIGN §5: the pause flag holds the queue too, unless it is a running task's own
    queue_held: s.held || (s.paused && !running.some((t) => t.paused)),
    current_task: first ? { id: first.id, name: first.name, kind: first.kind, run_id: first.run_id, workflow: first.workflow, started_at: first.started_at } : null,
    progress: first?.progress ?? { phase: null, iteration: 0, iterations: 0, step: 0, steps: 0 },
    failed_step: first?.failed_step ?? null,
    waiting: first?.waiting ?? null,
    input: first?.input ?? null,
    interrupted: s.interrupted,
    store_error: s.storeFault ?? s.faults.error(),
    elsewhere: s.elsewhere.map((t) => ({ ...t, ...s.liveElsewhere.get(s.elsewhereHost.get(t.task_id)!)?.get(t.task_id) })),
    running,
    parallel: s.parallel,
  };
}

export function emitStatus(s: SharedState): void {
  s.emit({ type: 'status', status: statusOf(s) });
}

/** Progress changes with every step: tell listeners at most every 100 ms. */
export function emitStatusSoon(s: SharedState): void {
  s.statusTimer ??= setTimeout(() => {
    s.statusTimer = null;
    emitStatus(s);
  }, 100);
}

/** "; task 7 runs on lab serve on pc-2 (pid 4): control it there", when this host runs nothing and another does. */
export function elsewhereNote(s: SharedState): string {
  const t = s.tasks.length ? undefined : s.elsewhere[0];
  return t ? `; task ${t.task_id} ("${t.name}") runs on ${t.host}: control it there` : '';
}

/** `task 3 ("mix × 2"), task 4 ("wash × 1")`: the tasks running here, for messages. */
export function runningList(s: SharedState): string {
  return s.tasks.map((t) => t.label()).join(', ');
}

/** The running tasks as a 409 lists them (`running` in its JSON). */
export function runningData(s: SharedState) {
  return s.tasks.map((t) => ({ task_id: t.id, name: t.task.name, run_id: t.run.id, state: t.state() }));
}

/** Where the runner is with no task of its own running (the queue's flags, an interrupted task). */
export function idleView(s: SharedState): ControlStatus {
  return { busy: false, state: 'idle', paused: s.paused, queue_held: s.held || s.paused, current_task: null, failed_step: null, waiting: null, interrupted: s.interrupted };
}

/** Where one running task is, as the controls read it. */
export function viewOf(s: SharedState, t: TaskRun): ControlStatus {
  const v = t.view();
  return { busy: true, state: v.state, paused: v.paused, queue_held: s.held, current_task: { id: v.id }, failed_step: v.failed_step, waiting: v.waiting, interrupted: s.interrupted };
}
