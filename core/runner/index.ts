/**
 * The runner (DESIGN.md §5): one task at a time from the durable queue, with the operator in control.
 *
 * State: `paused` (no new step and no new task starts; an in-flight call finishes), `held` (the queue does
 * not start tasks: after abort next-task, or a crash), and the current task's state: running, paused (by the
 * flag or by a `pause` step), failed (a step threw: retry, skip with pause-resume, or abort), stopping.
 *
 * Every call step is written as `running` before the instrument is touched and completed after, so a crash
 * leaves it `running`; on start it becomes `in-doubt`, its run `interrupted`, its task waits, held. The
 * operator then re-runs the step (retry), goes on after it (pause-resume) or ends the run (abort next-task).
 * Resuming replays the run's recorded steps through the interpreter without touching instruments, which
 * rebuilds the variables, and goes on for real from the in-doubt step.
 *
 * Events (`on('event')`): status, step, log, queue, run. Nothing here knows about HTTP or terminals.
 *
 * `Runner` is the facade: its state is one object its parts share (state.ts), and each part is a module of
 * functions taking it: the queue (queue.ts), the operator's controls (operator.ts), execution (execute.ts, and
 * phase.ts for the steps of a phase), recovery (recovery.ts), the status (status.ts) and the other labdecks
 * on the database (peers.ts). The parts import state.ts and each other without a circle: status ← queue,
 * peers ← recovery ← operator; phase ← execute. Here: the lifecycle (start, close) and one method each.
 */
import { EventEmitter } from 'node:events';
import type { PublicUser } from '../accounts/index.js';
import type { QueueTaskRow } from '../store/types.js';
import type { RowOptions } from '../workflow/config.js';
import type { DeckSchemas } from '../workflow/validate.js';
import type { HostLease } from './hosts.js';
import { Shutdown } from './execution.js';
import type { GivenBy } from './input.js';
import type { TaskPayload, WorkflowPayload } from './tasks.js';
import { SharedState, type ControlBy, type RunControlName, type RunnerEvent, type RunnerOptions, type RunnerStatus } from './state.js';
import * as execute from './execute.js';
import * as operator from './operator.js';
import * as peers from './peers.js';
import * as queue from './queue.js';
import * as recovery from './recovery.js';
import { emitStatus, statusOf } from './status.js';

export { type RunnerState, type RunningTask } from './execution.js';
export { checkParallel, RUN_CONTROLS, type ControlBy, type ElsewhereTask, type RelayedKind, type RunControlName, type RunnerEvent, type RunnerOptions, type RunnerStatus } from './state.js';
export { repeatOfRun, runParameters, workflowIterations, type IterationSource, type SourceFactory, type TaskPayload, type WorkflowPayload } from './tasks.js';

export { DIRECTIONS, type Direction } from './queue.js';
export { OUTPUT_INLINE } from './peers.js';

export class Runner extends EventEmitter {
  /** The state the runner's parts share (core/runner/state.ts). */
  private readonly s: SharedState;
  /** How many tasks may run at once. */
  readonly parallel: number;
  /** This process in the lab's hosts table: its lease, its instruments. */
  readonly host: HostLease;
  /**
   * Who serves what other labdecks ask of this one: the operations (core/operations/relay.ts), so a relayed
   * control, call or input is the same operation as one asked here. Unset, the runner serves them itself.
   */
  readonly served: SharedState['served'];
  /**
   * The lab's instruments: this deck's and those other labdecks on the database drive (their `host` says
   * where). Workflows are checked against it, so one queued here may use instruments another host drives:
   * that host runs it.
   */
  readonly catalogue: DeckSchemas;

  constructor(opts: RunnerOptions) {
    super();
    const s: SharedState = new SharedState(opts, this, async ({ ended }) => {
      for (const id of ended) s.letGo(id);
      await queue.refreshHeld(s);
      await recovery.refreshInterrupted(s);
      s.tellOthers();
      s.emitQueue();
      emitStatus(s);
      s.notify();
    });
    this.s = s;
    this.parallel = s.parallel;
    this.host = s.host;
    this.served = s.served;
    this.catalogue = s.catalogue;
    // this labdeck's live events go to the others (its status as its own running tasks' state)
    this.on('event', (e: RunnerEvent) => peers.publishLive(s, e));
    // what an instrument logs while it works for a run goes to that run's log
    this.s.deck.on('log', (e: { instrument: string; method: string; message: string }) => {
      const holder = this.s.deck.lockedBy(e.instrument);
      const c = this.s.tasks.find((t) => t.owner === holder);
      if (c) void this.s.log(c.run.id, 'info', `${e.instrument}.${e.method}: ${e.message}`).catch(() => undefined);
    });
  }

  /** Checks a task before it is queued, throwing to refuse it (the safety guard's limits; set by the runtime). */
  get preflight(): SharedState['preflight'] {
    return this.s.preflight;
  }
  set preflight(fn: SharedState['preflight']) {
    this.s.preflight = fn;
  }

  /** A check every task passes before it is queued, throwing to refuse it (the preflight, core/resources/preflight.ts). */
  get beforeQueue(): SharedState['beforeQueue'] {
    return this.s.beforeQueue;
  }
  set beforeQueue(fn: SharedState['beforeQueue']) {
    this.s.beforeQueue = fn;
  }

  /**
   * The runner as the spec's status shows it: `busy`, `state`, `current_task`, `progress`, `failed_step` and
   * `waiting` describe the first running task (the only one, by default); `running` lists them all.
   */
  status(): RunnerStatus {
    return statusOf(this.s);
  }

  /**
   * Resolves once the loop has looked at the queue after this call and found nothing it can start (the queue
   * is paused or held, its tasks' instruments are busy, every place is taken, or there is nothing): what was
   * changed before the call has been seen. For tests and tools that must show that nothing starts.
   */
  settled(): Promise<void> {
    return this.s.settled();
  }

  /* ------------------------------------------------------------------ lifecycle */

  /**
   * Register as a host, lease the deck's instruments, recover what hosts that are gone left running, then
   * start taking tasks from the queue. Every heartbeat looks again (hosts gone since, tasks other hosts
   * queued, holds released elsewhere).
   */
  async start(): Promise<void> {
    await this.host.register();
    await this.host.sweep(); // hosts gone since (a killed server on this computer is seen at once) free their instruments
    await peers.syncInstruments(this.s); // a direct call a stopped labdeck left running on them: in-doubt
    await recovery.recover(this.s);
    this.s.deck.on('change', this.onDeckChange);
    // other labdecks' live events, and what they ask of this one: a run control, a call to one of its instruments
    // served by the operations once they are wired (core/operations/relay.ts); the runner's own when run alone
    this.s.relay.handle('control', (body) => (this.served.control ?? ((b) => operator.controlAsked(this.s, b)))(body));
    this.s.relay.handle('call', (body) => (this.served.call ?? ((b) => peers.callAsked(this.s, b)))(body));
    this.s.relay.handle('input', (body) => (this.served.input ?? ((b) => operator.inputAsked(this.s, b)))(body));
    await this.s.relay.start((e, from) => peers.heardLive(this.s, e, from));
    // another host queued, ended or released something: look at once (PostgreSQL; else at the next heartbeat)
    await this.s.store.signals.onQueueChange(() => {
      if (this.s.closed) return;
      void Promise.all([queue.refreshHeld(this.s), peers.refreshElsewhere(this.s).catch(() => undefined)]).then(() => {
        this.s.emitQueue();
        this.s.notify();
      });
    });
    this.host.start(async () => {
      if (this.s.closed) return;
      if (this.host.lost) {
        // another host took this one for gone (it stalled past its lease) and recovered its runs: going on
        // would run them twice, so this runner stops here and says why
        this.s.storeFault = `another labdeck found this one's lease expired (no heartbeat for ${this.host.leaseMs / 1000} s) and took over its runs: restart labdeck`;
        this.s.reportFault(new Error(this.s.storeFault));
        this.stopWork(this.s.storeFault);
        emitStatus(this.s);
        return;
      }
      await this.host.sweep();
      await this.s.faults.settle();
      await recovery.recover(this.s);
      await peers.syncInstruments(this.s);
      this.s.notify();
    });
    this.s.loopDone = execute.loop(this.s);
  }

  private readonly onDeckChange = () => void peers.syncInstruments(this.s).catch(() => undefined);

  /**
   * Stop taking tasks. A running phase is cut at its next step; the in-flight call gets `graceMs` to finish,
   * after which the runner lets go (a hung driver must not keep labdeck from stopping) and its run is left
   * `running`, to be recovered as interrupted at the next start.
   */
  async close(graceMs = 5000): Promise<void> {
    this.stopWork('labdeck is stopping');
    this.s.notify();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.s.loopDone, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    if (this.s.statusTimer) clearTimeout(this.s.statusTimer);
    this.s.relay.close();
    this.s.faults.close();
    this.s.deck.off('change', this.onDeckChange);
    await this.s.syncing;
    // a run cut here stays `running`: stopped, this host's runs are recovered (interrupted) by the next one
    await this.host.stop().catch((e) => this.s.reportFault(e, 'could not mark this host stopped: '));
  }

  /** Take no more tasks, and cut the running phase at its next step (its run is left for recovery). */
  private stopWork(why: string) {
    this.s.closed = true;
    const stop = new Shutdown(why);
    for (const t of this.s.tasks) t.cut(stop);
  }

  /* ------------------------------------------------------------------ the queue (queue.ts) */

  /** Queue a workflow over config rows or a repeat count, checked against the live deck and its parameters now. */
  submit(input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown; userId: number | null; rowLabel?: RowOptions['label'] }): Promise<QueueTaskRow> {
    return queue.submit(this.s, input);
  }

  /** The task a run would queue, checked and named; nothing is queued (an approval shows it to a person first). */
  prepare(
    input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown; rowLabel?: RowOptions['label'] },
    opts: { upfront?: boolean } = {},
  ): Promise<{ name: string; kind: 'workflow'; payload: WorkflowPayload }> {
    return queue.prepare(this.s, input, opts);
  }

  /** Queue a checked task (submit does the checking for workflows; core/campaign for campaigns). */
  enqueue(t: { name: string; kind: QueueTaskRow['kind']; payload: TaskPayload; createdBy: number | null }): Promise<QueueTaskRow> {
    return queue.enqueue(this.s, t);
  }

  /** Whether a queued task is running or starts at once. */
  startsNow(id: number): Promise<boolean> {
    return queue.startsNow(this.s, id);
  }

  /** Unfinished tasks in queue order, with the runner's flags; `running_task_ids`: the tasks this labdeck runs. */
  queue() {
    return queue.queueView(this.s);
  }

  task(id: number): Promise<QueueTaskRow> {
    return queue.getTask(this.s, id);
  }

  /** Delete a pending task; `by`: the user asking (its owner or an admin may), none for the lab itself. */
  deleteTask(id: number, by?: Pick<PublicUser, 'id' | 'role'>): Promise<void> {
    return queue.deleteTask(this.s, id, by);
  }

  moveTask(id: number, direction: unknown): Promise<void> {
    return queue.moveTask(this.s, id, direction);
  }

  renameTask(id: number, name: unknown, by?: Pick<PublicUser, 'id' | 'role'>): Promise<void> {
    return queue.renameTask(this.s, id, name, by);
  }

  /* ------------------------------------------------------------------ operator controls (operator.ts) */

  /**
   * The one pause button of the spec (POST /executions/pause-resume): skips a failed step, continues after a
   * `pause` step, goes on after an interrupted task's in-doubt step, releases a held queue, or pauses or
   * resumes. With several tasks running, `taskId` says which one (else 409 listing them).
   */
  pauseResume(taskId?: number): Promise<RunnerStatus> {
    return operator.pauseResume(this.s, taskId);
  }

  /** Set a running task's pause flag: no new step of it starts (a call in flight finishes). */
  pause(taskId?: number, by: ControlBy = 'person'): Promise<RunnerStatus> {
    return operator.pause(this.s, taskId, by);
  }

  /** Clear a running task's pause flag (and the queue's): it goes on. */
  resume(taskId?: number, by: ControlBy = 'person'): Promise<RunnerStatus> {
    return operator.resume(this.s, taskId, by);
  }

  /** A `pause` step is done: go on with the next step. */
  continuePauseStep(taskId?: number): Promise<RunnerStatus> {
    return operator.continuePauseStep(this.s, taskId);
  }

  /** Leave the failed step out and go on (or go on after an interrupted task's in-doubt step). */
  skip(taskId?: number): Promise<RunnerStatus> {
    return operator.skip(this.s, taskId);
  }

  /** Let a held queue (after abort next-task, or the pause flag set while idle) start tasks again. */
  release(): Promise<RunnerStatus> {
    return operator.release(this.s);
  }

  /** Re-run the failed step (or an interrupted task's in-doubt step). */
  retry(taskId?: number): Promise<RunnerStatus> {
    return operator.retry(this.s, taskId);
  }

  /** An interrupted task: run its in-doubt step's iteration again from its first step (core/runner/iteration.ts). */
  rerunIteration(taskId?: number): Promise<RunnerStatus> {
    return operator.rerunIteration(this.s, taskId);
  }

  /** An interrupted task: re-run its in-doubt step only, even where a plain Retry would re-run the iteration. */
  retryStep(taskId?: number): Promise<RunnerStatus> {
    return operator.retryStep(this.s, taskId);
  }

  /** Finish the current iteration, skip the rest, run cleanup, record `stopped`; the queue goes on. */
  abortNextIteration(taskId?: number): Promise<RunnerStatus> {
    return operator.abortNextIteration(this.s, taskId);
  }

  /** Finish the in-flight step, run no further step, run cleanup, record `aborted`; hold the queue. */
  abortNextTask(taskId?: number): Promise<RunnerStatus> {
    return operator.abortNextTask(this.s, taskId);
  }

  /**
   * A control asked through the web app or the API, on the task `taskId` (needed while several run): done here,
   * or sent to the labdeck on the database that runs the task (PostgreSQL), whose answer is returned.
   */
  control(name: RunControlName, taskId?: number, by: ControlBy = 'person'): Promise<RunnerStatus> {
    return operator.control(this.s, name, taskId, by);
  }

  /** Do control `name` on a task this labdeck runs, never sending it on (a control another labdeck relayed here). */
  controlHere(name: RunControlName, taskId: number | undefined, by: ControlBy = 'person'): Promise<RunnerStatus> {
    return operator.controlHere(this.s, name, taskId, by);
  }

  /**
   * Give the value an input step waits for (`taskId`: which task, while several wait), here or on the labdeck
   * that runs the task. A value that does not fit is a 400 naming the field; no input waiting is a 409.
   */
  input(raw: unknown, opts: { taskId?: number; by: GivenBy | null }): Promise<{ task_id: number; value: unknown; status: RunnerStatus }> {
    return operator.input(this.s, raw, opts);
  }

  /* ------------------------------------------------------------------ the peers (peers.ts) */

  /** Instruments among `names` that another labdeck drives, with the host that does. */
  heldElsewhere(names: string[]): { name: string; host: string }[] {
    return peers.heldElsewhere(this.s, names);
  }

  /**
   * A direct call to one of the lab's instruments: made here when this deck drives it, asked of the labdeck on
   * the database that drives it otherwise (PostgreSQL).
   */
  call(instrument: string, method: string, args: unknown, opts: { userId: number | null }): Promise<{ taskId: number; output: unknown; host?: string }> {
    return peers.call(this.s, instrument, method, args, opts);
  }
}
