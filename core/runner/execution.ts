/**
 * One running task (DESIGN.md §5, §12): what the runner knows about it while it runs. Everything that was
 * the runner's "current task" state lives here, one object per task, so that with `--parallel N` several
 * tasks on disjoint instruments run side by side, each with its own pause flag, failed step, pause step,
 * abort request and waits; the runner keeps only what is the queue's (its pause flag while idle, the holds).
 *
 * Pure state and waits: the phases themselves run in the runner (core/runner/index.ts), which hands each of
 * them the TaskRun it belongs to.
 */
import type { QueueTaskRow, RunRow } from '../store/types.js';
import type { StepAt } from '../workflow/interpreter.js';
import type { Phase } from '../workflow/model.js';
import type { IterationSource, TaskPayload } from './tasks.js';
import type { InputWaiter } from './input.js';
import type { RunnerState, RunningTaskStatus } from './status-schema.js';

// the runner's state and a running task's status: declared once, as zod (status-schema.ts)
export type { RunnerState } from './status-schema.js';
/** One running task in the runner's status (`running`): the task, and where its run is. */
export type RunningTask = RunningTaskStatus;

export interface Waiter<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

export function waiter<T = void>(): Waiter<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // a wait may be cut (an abort, a shutdown) before anyone awaits it (its log line is still being written):
  // that is no unhandled rejection; whoever awaits it later still gets the error
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** Thrown into a running phase by the operator's abort; `iteration` ends the current iteration only. */
export class Abort extends Error {
  constructor(readonly kind: 'task' | 'iteration') {
    super(kind === 'task' ? 'aborted by the operator' : 'stopped by the operator');
  }
}

/** Thrown into a running phase when the runtime shuts down: the run is left `running` (→ interrupted). */
export class Shutdown extends Error {}

export class TaskRun {
  /** The lock owner on the deck: `task-<id>`. */
  readonly owner: string;
  total = 0;
  phase: Phase | null = null;
  iteration = 0;
  step = 0;
  steps = 0;
  /** Set once the run is being wound up (stopped, aborted or failed): its cleanup is running. */
  stopping = false;
  /** The iteration source's check of saved values (see IterationSource.checkSaved). */
  checkSaved?: IterationSource['checkSaved'];
  /** Failed steps the operator skipped in this run (stored in the run record as they happen). */
  skipped: number;
  /** The record of the call that failed last (null when the failure was not a call's). */
  failedStep: number | null = null;
  /** Its pause flag: no new step of it starts (a call in flight finishes). */
  paused = false;
  /** Who set the pause flag: a person's pause is undone only by a person (or an approval: core/approvals). */
  pausedBy: 'person' | 'agent' | null = null;
  /** What the operator asked: end after this iteration, or after the step in flight. */
  abortRequest: 'task' | 'iteration' | null = null;
  /** A failed step waiting for the operator's decision. */
  failed: (Waiter<'retry' | 'skip'> & { at: StepAt; error: string }) | null = null;
  /** A `pause` step waiting for the operator. */
  waitingPause: (Waiter<void> & { at: StepAt; message: string }) | null = null;
  /** An `input` step waiting for a person's value (core/runner/input.ts). */
  waitingInput: InputWaiter | null = null;
  /** Resolved when the pause flag is cleared (while a step waits for it). */
  resumeFlag: Waiter<void> | null = null;
  private readonly sleeping = new Set<{ timer: NodeJS.Timeout; done: Waiter<void> }>();

  constructor(
    public task: QueueTaskRow,
    public run: RunRow,
    readonly payload: TaskPayload,
    /** The instruments its workflow uses (leased while it runs). */
    readonly instruments: string[],
  ) {
    this.owner = `task-${task.id}`;
    this.skipped = run.skipped ?? 0;
  }

  get id(): number {
    return this.task.id;
  }

  state(): Exclude<RunnerState, 'idle'> {
    if (this.failed) return 'failed';
    if (this.abortRequest || this.stopping) return 'stopping';
    if (this.waitingInput) return 'waiting_input';
    // held by the flag (a resume that has not reached the step yet is running again)
    if (this.waitingPause || (this.resumeFlag && this.paused)) return 'paused';
    return 'running';
  }

  view(): RunningTask {
    return {
      id: this.task.id,
      name: this.task.name,
      kind: this.task.kind,
      run_id: this.run.id,
      workflow: this.payload.workflow,
      started_at: this.run.startedAt.toISOString(),
      state: this.state(),
      paused: this.paused,
      progress: { phase: this.phase, iteration: this.iteration + 1, iterations: this.total, step: this.step, steps: this.steps },
      failed_step: this.failed ? { phase: this.failed.at.phase, iteration: this.failed.at.iteration, path: this.failed.at.path, error: this.failed.error } : null,
      waiting: this.waitingPause ? { path: this.waitingPause.at.path, message: this.waitingPause.message } : null,
      input: this.waitingInput?.view ?? null,
      instruments: this.instruments,
    };
  }

  /** "task 7 ("mix × 3")", for messages. */
  label(): string {
    return `task ${this.task.id} ("${this.task.name}")`;
  }

  /**
   * The operator's decision on the failed step. The task is no longer `failed` from this moment: the answer to
   * the Retry or Skip, and every status read after it, shows it going on (the step's log line is written after).
   */
  decide(decision: 'retry' | 'skip'): void {
    const failed = this.failed;
    this.failed = null;
    failed?.resolve(decision);
  }

  /** Break every wait of the run with `e` (an abort, or a shutdown); `all`: its sleeps and pause flag too. */
  cut(e: Error, all = true): void {
    this.failed?.reject(e);
    this.waitingPause?.reject(e);
    this.waitingInput?.reject(e);
    if (!all) return;
    this.resumeFlag?.reject(e);
    for (const s of this.sleeping) {
      clearTimeout(s.timer);
      s.done.reject(e);
    }
  }

  /** Wait while the pause flag is set (before a step starts); `changed`: tell listeners it stands still. */
  async waitWhilePaused(closed: () => boolean, changed: () => void): Promise<void> {
    while (this.paused && !closed()) {
      this.resumeFlag ??= waiter();
      changed();
      await this.resumeFlag.promise.finally(() => (this.resumeFlag = null));
    }
  }

  /** A `wait` step: sleeps, cut short by an abort or a shutdown. */
  sleep(ms: number): Promise<void> {
    const done = waiter<void>();
    const entry = { timer: setTimeout(() => done.resolve(), ms), done };
    this.sleeping.add(entry);
    return done.promise.finally(() => this.sleeping.delete(entry));
  }
}
