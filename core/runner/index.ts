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
 */
import { EventEmitter } from 'node:events';
import type { PublicUser } from '../accounts/index.js';
import { LabError, isLabError, isStoreFault } from '../errors.js';
import type { PhaseRow, QueueTaskRow, RunStatus, StepRow, TaskStatus } from '../store/types.js';
import type { RowOptions } from '../workflow/config.js';
import { outputsOf, runSteps, type RunControl, type Scope, type StepAt } from '../workflow/interpreter.js';
import type { Phase, Step } from '../workflow/model.js';
import { countSteps, type DeckSchemas } from '../workflow/validate.js';
import type { HostLease } from './hosts.js';
import { Abort, Shutdown, TaskRun, waiter } from './execution.js';
import { waitForInput, type GivenBy } from './input.js';
import { runParameters, workflowIterations, type IterationSource, type TaskPayload, type WorkflowPayload } from './tasks.js';
import { sentence } from '../text.js';
import { bestText, campaignBest } from '../notify/campaign.js';
import { alerting, alertOnly, keys as alertKeys, open as openAlert, resolve as resolveAlert, resolveRun } from '../notify/events.js';
import type { AlertOp, TxStore } from '../store/types.js';
import { savedProblem } from './saved.js';
import { resumeLine } from './iteration.js';
import {
  instrumentsOfTask,
  message,
  now,
  SharedState,
  skippedSteps,
  type ControlBy,
  type Replay,
  type Resume,
  type RunControlName,
  type RunnerEvent,
  type RunnerOptions,
  type RunnerStatus,
} from './state.js';
import * as operator from './operator.js';
import * as peers from './peers.js';
import * as queue from './queue.js';
import * as recovery from './recovery.js';
import { emitStatus, emitStatusSoon, statusOf } from './status.js';

export { type RunnerState, type RunningTask } from './execution.js';
export { checkParallel, RUN_CONTROLS, type ControlBy, type ElsewhereTask, type RelayedKind, type RunControlName, type RunnerEvent, type RunnerOptions, type RunnerStatus } from './state.js';
export { repeatOfRun, runParameters, workflowIterations, type IterationSource, type SourceFactory, type TaskPayload, type WorkflowPayload } from './tasks.js';

export { DIRECTIONS, type Direction } from './queue.js';

export { OUTPUT_INLINE } from './peers.js';

/** How long the loop waits before trying the store again after it failed (unless woken sooner). */
const STORE_RETRY_MS = 2_000;

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
      await queue.refreshHeld(this.s);
      await recovery.refreshInterrupted(this.s);
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

  /* ------------------------------------------------------------------ lifecycle */

  /**
   * Register as a host, lease the deck's instruments, recover what hosts that are gone left running, then
   * start taking tasks from the queue. Every heartbeat looks again (hosts gone since, tasks other hosts
   * queued, holds released elsewhere).
   */
  async start(): Promise<void> {
    await this.host.register();
    await this.host.sweep(); // hosts gone since (a killed server on this computer is seen at once) free their instruments
    await peers.syncInstruments(this.s);
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
    this.s.loopDone = this.loop();
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

  /* ------------------------------------------------------------------ status */

  /* ------------------------------------------------------------------ the queue (queue.ts) */

  /** Queue a workflow over config rows or a repeat count, checked against the live deck and its parameters now. */
  submit(input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown; userId: number | null; rowLabel?: RowOptions['label'] }): Promise<QueueTaskRow> {
    return queue.submit(this.s, input);
  }

  /** The task a run would queue, checked and named; nothing is queued (an approval shows it to a person first). */
  prepare(input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown; rowLabel?: RowOptions['label'] }, opts: { upfront?: boolean } = {}): Promise<{ name: string; kind: 'workflow'; payload: WorkflowPayload }> {
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

  /* ------------------------------------------------------------------ interrupted runs */

  /* ------------------------------------------------------------------ the loop */

  /**
   * Start tasks while there is a free place (`parallel`): a resumed interrupted task first, else the next
   * pending task whose instruments are free. Each runs beside the others; when one ends, the loop looks again.
   */
  private async loop(): Promise<void> {
    while (!this.s.closed) {
      const wake = this.s.wake.promise;
      if (!this.s.pendingResume && this.s.leases.size >= this.parallel) {
        await wake;
        continue;
      }
      let next: { task: QueueTaskRow; resume?: Resume } | null = null;
      try {
        next = await this.nextTask();
      } catch (e) {
        // the store failed before a task could start (a full or read-only disk): the runner stays up, says
        // why, and tries again when woken or after a while
        if (this.s.storeFault === null) this.s.reportFault(e);
        this.s.storeFault = message(e);
        this.s.faults.suspectLost(e); // a claim whose answer was lost may have marked a task running here
        emitStatus(this.s);
        await Promise.race([wake, new Promise((r) => setTimeout(r, STORE_RETRY_MS).unref())]);
        continue;
      }
      if (this.s.storeFault !== null) {
        this.s.storeFault = null;
        emitStatus(this.s);
      }
      if (!next) {
        await wake;
        continue;
      }
      this.launch(next.task, next.resume);
    }
    await Promise.all(this.s.executing);
  }

  /** Run a task beside the others: its place and its instruments are leased here until it ends. */
  private launch(task: QueueTaskRow, resume?: Resume): void {
    if (!this.s.leases.has(task.id)) this.s.leases.set(task.id, instrumentsOfTask(task));
    const done: Promise<void> = this.execute(task, resume)
      .catch((e) => (e instanceof Shutdown ? undefined : isStoreFault(e) ? this.strand(task, e) : this.fault(task, e)))
      .catch((e) => this.s.reportFault(e))
      .finally(() => {
        if (!this.s.faults.has(task.id)) this.s.leases.delete(task.id);
        this.s.executing.delete(done);
        this.s.notify();
      });
    this.s.executing.add(done);
  }

  /** What the loop runs next: a resumed interrupted task, else the next pending one (unless paused or held). */
  private async nextTask(): Promise<{ task: QueueTaskRow; resume?: Resume } | null> {
    if (this.s.pendingResume) {
      const { taskId, resume } = this.s.pendingResume;
      this.s.pendingResume = null;
      return { task: await queue.getTask(this.s, taskId), resume };
    }
    if (this.s.paused || this.s.held) return null;
    const task = await this.s.serial(() => queue.claim(this.s));
    return task ? { task } : null;
  }

  private async execute(task: QueueTaskRow, resume?: Resume): Promise<void> {
    const payload = task.payload as TaskPayload;
    const wf = payload.definition;
    const run =
      resume?.run ??
      (await this.s.store.runs.create({
        taskId: task.id,
        name: task.name,
        workflowName: payload.workflow,
        workflowVersion: payload.version,
        workflow: wf,
        parameters: task.kind === 'workflow' ? runParameters(payload as WorkflowPayload) : (this.s.sources[task.kind]?.runParameters?.(payload) ?? null),
        status: 'running',
        userId: task.createdBy,
        startedAt: now(),
        hostId: this.host.id,
      }));
    const ending = resume?.ending === true;
    if (resume) await this.s.store.runs.update(run.id, { status: 'running', error: null, hostId: this.host.id }); // this host carries it on now
    await this.s.store.queue.update(task.id, { status: 'running', runId: run.id, startedAt: task.startedAt ?? now(), hostId: this.host.id });
    const phases = resume ? await this.s.store.phases.list(run.id) : [];
    const c = new TaskRun({ ...task, status: 'running', runId: run.id }, { ...run, status: 'running' }, payload, this.s.leases.get(task.id) ?? instrumentsOfTask(task));
    if (ending) c.abortRequest = 'task';
    c.paused = this.s.paused; // a task resumed while the queue's pause flag is set starts paused
    if (c.paused) c.pausedBy = 'person'; // the queue's flag: taken for a person's
    this.s.tasks.push(c);
    const log = (level: 'info' | 'warn' | 'error', msg: string) => this.s.log(run.id, level, msg);

    let source: IterationSource;
    try {
      source = await this.sourceOf(task, run.id, payload, phases);
      this.s.deck.lock(c.instruments, c.owner);
    } catch (e) {
      if (isStoreFault(e)) throw e;
      // the run cannot start (its optimizer is gone, an instrument vanished or is held): recorded as failed
      await this.finish(c, 'failed', message(e));
      return;
    }
    c.total = source.total;
    c.checkSaved = source.checkSaved?.bind(source);
    this.s.emitQueue();
    emitStatus(this.s);
    this.s.emit({ type: 'run', run_id: run.id, task_id: task.id, status: 'running' });
    await log('info', resume ? (ending ? 'Ending the interrupted run: cleanup only.' : resumeLine(resume.mode, resume.remade ?? [])) : `Started ${wf.name} v${payload.version}: ${source.total} iteration(s).`);

    // Replay of an interrupted run: finished phases replay from their records; the interrupted one replays
    // up to its in-doubt step (or its last recorded step) and goes on for real from there.
    const recorded = new Map<string, StepRow>();
    for (const s of resume?.steps ?? []) recorded.set(`${s.phase}|${s.iteration}|${s.stepIndex}`, s);
    const replayPlan = (phase: Phase, iteration: number | null): Replay | undefined => {
      if (!resume) return undefined;
      const row = phases.find((p) => p.phase === phase && p.iteration === iteration);
      if (!row) return undefined; // never started: runs for real
      if (row.status !== 'running') return { until: Infinity, recorded, skipAt: null };
      const mine = [...recorded.values()].filter((s) => s.phase === phase && s.iteration === iteration);
      const doubt = mine.find((s) => s.status === 'in-doubt' || s.status === 'running');
      // re-run the iteration: the phase cut off runs again from its first step, nothing of it replayed
      if (resume.mode === 'iteration') return { until: 0, recorded, skipAt: null };
      const until = doubt ? (doubt.stepIndex ?? 0) : mine.reduce((m, s) => Math.max(m, (s.stepIndex ?? -1) + 1), 0);
      return { until, recorded, skipAt: doubt && resume.mode === 'skip' ? until : null };
    };

    let outcome: RunStatus = 'completed';
    let error: string | null = null;
    // cut off during its cleanup (after a stop, say): its main part was over, so no iteration starts anew
    const inCleanup = phases.some((p) => p.phase === 'cleanup');
    const vars: Record<string, unknown> = {};
    try {
      if (ending) throw new Abort('task');
      await this.phase(c, 'prep', null, wf.prep, { params: {}, vars }, replayPlan('prep', null));
      for (let i = 0; i < source.total; i++) {
        if (stopAfterIteration(c) || (inCleanup && !phases.some((p) => p.phase === 'main' && p.iteration === i))) {
          outcome = 'stopped';
          break;
        }
        const before = phases.find((p) => p.phase === 'main' && p.iteration === i);
        const scope: Scope = { params: await source.params(i, before?.params as Record<string, unknown> | undefined), vars: { ...vars } };
        try {
          const { outputs, skipped } = await this.phase(c, 'main', i, wf.main, scope, replayPlan('main', i));
          // an iteration with a skipped step is no measurement; one finished before a crash was told already
          if (!skipped && before?.status !== 'ok' && before?.status !== 'skipped') await source.measured?.(i, scope.params, outputs);
        } catch (e) {
          if (e instanceof Abort && e.kind === 'iteration') {
            outcome = 'stopped';
            break;
          }
          throw e;
        }
        Object.assign(vars, scope.vars);
        if (stopAfterIteration(c)) {
          outcome = 'stopped';
          break;
        }
      }
    } catch (e) {
      if (e instanceof Shutdown || isStoreFault(e)) throw e; // left as a crash leaves it: no cleanup runs
      if (e instanceof Abort) outcome = e.kind === 'task' ? 'aborted' : 'stopped';
      else {
        outcome = 'failed';
        error = message(e);
        await log('error', `Failed: ${error}`);
      }
    }

    // cleanup runs after everything: success, stop, abort or failure
    try {
      c.stopping = outcome !== 'completed';
      c.abortRequest = null; // cleanup itself runs; an abort asked for during cleanup ends it
      await this.phase(c, 'cleanup', null, wf.cleanup, { params: {}, vars }, replayPlan('cleanup', null));
    } catch (e) {
      if (e instanceof Shutdown || isStoreFault(e)) throw e;
      if (!(e instanceof Abort)) {
        error ??= `cleanup: ${message(e)}`;
        if (outcome === 'completed') outcome = 'failed';
      }
      await log('warn', `Cleanup ended early: ${message(e)}`);
    }
    if (outcome === 'aborted') await queue.hold(this.s, c.task.id);
    await this.finish(c, outcome, error);
  }

  /**
   * A fault outside any step (the database failed, a bug): the task is recorded failed where the store still
   * answers, its locks are freed and the loop goes on.
   */
  private async fault(task: QueueTaskRow, e: unknown) {
    const c = this.s.tasks.find((t) => t.id === task.id);
    this.s.tasks = this.s.tasks.filter((t) => t !== c);
    this.s.deck.unlock(`task-${task.id}`);
    try {
      if (c) await this.s.store.runs.update(c.run.id, { status: 'failed', error: message(e), endedAt: now() });
      await this.s.store.queue.update(task.id, { status: 'failed', endedAt: now() });
    } catch {
      // the store itself failed: the task keeps its status (a `running` one is interrupted at the next start)
    }
    this.s.reportFault(e, `task ${task.id} failed outside its steps: `);
    this.s.emitQueue();
    emitStatus(this.s);
  }

  /**
   * The store failed under a running task: it stops where it is (no cleanup, as a crash stops it) and keeps
   * its place, its instruments' lease and their lock until it is recorded interrupted (core/runner/store-fault.ts).
   */
  private strand(task: QueueTaskRow, e: unknown) {
    const c = this.s.tasks.find((t) => t.id === task.id);
    this.s.tasks = this.s.tasks.filter((t) => t !== c);
    this.s.faults.strand(task.id, c?.run.id ?? null, e);
    this.s.reportFault(e, `task ${task.id} stopped: the database failed under it: `);
    emitStatus(this.s);
  }

  /** The iterations of a task: its rows, or (campaigns) what the registered factory for its kind makes. */
  private async sourceOf(task: QueueTaskRow, runId: number, payload: TaskPayload, phases: PhaseRow[]): Promise<IterationSource> {
    if (task.kind === 'workflow') return workflowIterations(payload as WorkflowPayload);
    const factory = this.s.sources[task.kind];
    if (!factory) throw new LabError('invalid_input', `This labdeck cannot run tasks of kind "${task.kind}".`);
    const done = phases.filter((p) => p.phase === 'main' && p.status === 'ok');
    return factory({ task, runId, payload, done, log: (m) => this.s.log(runId, 'info', m) });
  }

  private async finish(c: TaskRun, outcome: RunStatus, error: string | null) {
    const taskStatus: TaskStatus = outcome === 'completed' ? 'done' : outcome === 'interrupted' ? 'interrupted' : outcome;
    await alerting(this.s.store, await this.endAlerts(c, outcome, error), async (tx) => {
      await tx.runs.update(c.run.id, { status: outcome, error, endedAt: now() });
      await tx.queue.update(c.task.id, { status: taskStatus, endedAt: now() });
    });
    this.s.deck.unlock(c.owner); // after its end is stored: a task the store cut off keeps its instruments
    this.s.tellOthers();
    const skipped = c.skipped ? ` with ${skippedSteps(c.skipped)}` : '';
    await this.s.log(c.run.id, outcome === 'completed' && !skipped ? 'info' : 'warn', `Run ${outcome}${skipped}${error ? `: ${error}` : ''}.`);
    this.s.tasks = this.s.tasks.filter((t) => t !== c);
    // a task that ends while paused leaves the queue paused: no new task starts until the operator resumes
    if (c.paused) this.s.paused = true;
    this.s.emit({ type: 'run', run_id: c.run.id, task_id: c.task.id, status: outcome, skipped: c.skipped });
    this.s.emitQueue();
    emitStatus(this.s);
  }

  /** A run's end resolves what still waits of it (but a held queue) and tells `run_completed` / `campaign_finished`. */
  private async endAlerts(c: TaskRun, outcome: RunStatus, error: string | null): Promise<AlertOp[]> {
    const ctx = { host: this.host.name, task_id: c.task.id, run_id: c.run.id, workflow: c.run.workflowName, outcome };
    const ops: AlertOp[] = [resolveRun(c.run.id, `the run ended: ${outcome}`, ['queue_held'])];
    if (c.task.kind === 'campaign') {
      const best = await campaignBest(this.s.store, c.run.id, c.payload).catch(() => null);
      const message = `Campaign ${c.task.name} ${outcome === 'completed' ? 'finished' : `ended early (${outcome})`}${error ? `: ${error}` : '.'} ${bestText(best)}`;
      ops.push(openAlert('campaign_finished', alertKeys.campaignFinished(c.run.id), { ...ctx, message, best }, { userId: c.task.createdBy }));
    }
    else if (outcome === 'completed') ops.push(openAlert('run_completed', alertKeys.runCompleted(c.run.id), { ...ctx, message: `Run ${c.task.name} completed${c.skipped ? ` with ${skippedSteps(c.skipped)}` : ''}.` }, { userId: c.task.createdBy }));
    return ops;
  }

  /** A failed step the operator skipped: its call's record says so, and the run counts it at once. */
  private async markSkipped(c: TaskRun, stepId: number | null) {
    c.skipped++;
    if (stepId !== null) await this.s.store.steps.update(stepId, { status: 'skipped' });
    await this.s.store.runs.update(c.run.id, { skipped: c.skipped });
  }

  /**
   * Run one phase; with `replay`, its steps before `replay.until` come from the records (no instrument).
   * Resolves with the iteration's outputs (main; {} for prep and cleanup) and whether a step of it was
   * skipped: then the phase is recorded `skipped`, and its outputs are not data.
   */
  private async phase(c: TaskRun, phase: Phase, iteration: number | null, steps: Step[], scope: Scope, replay: Replay | undefined): Promise<{ outputs: Record<string, unknown>; skipped: boolean }> {
    if (steps.length === 0 && phase !== 'main') return { outputs: {}, skipped: false };
    c.phase = phase;
    if (iteration !== null) c.iteration = iteration;
    c.step = 0;
    c.steps = countSteps(steps);
    const run = c.run.id;
    const existing = replay ? (await this.s.store.phases.list(run)).find((p) => p.phase === phase && p.iteration === iteration) : undefined;
    const phaseId = existing?.id ?? (await this.s.store.phases.create({ runId: run, phase, iteration, params: phase === 'main' ? scope.params : {}, startedAt: now() }));
    if (existing) await this.s.store.phases.update(phaseId, { status: 'running', endedAt: null });
    emitStatus(this.s);

    const replaying = (at: StepAt) => replay !== undefined && at.index < replay.until;
    // variables carry over from earlier iterations; an output is only what THIS phase run saved
    const saved = new Set<string>();
    let skippedHere = 0;
    const control: RunControl = {
      beforeStep: async (at) => {
        c.step = at.index;
        c.failedStep = null;
        if (replaying(at)) return;
        if (this.s.closed) throw new Shutdown();
        if (c.abortRequest === 'task') throw new Abort('task');
        await c.waitWhilePaused(
          () => this.s.closed,
          () => emitStatus(this.s),
        );
      },
      call: async (at, instrument, method, args) => {
        if (replaying(at)) {
          const rec = replay!.recorded.get(`${phase}|${iteration}|${at.index}`);
          if (rec?.status === 'ok') return rec.output;
          throw new SkipInDoubt(); // failed (and skipped) before the crash: skipped again
        }
        if (replay?.skipAt === at.index) {
          replay.skipAt = null;
          throw new SkipInDoubt();
        }
        return this.callStep(c, at, instrument, method, args);
      },
      wait: async (at, seconds) => {
        if (replaying(at)) return;
        this.emitStep(c, at, 'start');
        await c.sleep(seconds * 1000);
        this.emitStep(c, at, 'ok');
      },
      pauseStep: async (at, msg) => {
        if (replaying(at)) return;
        c.waitingPause = Object.assign(waiter<void>(), { at, message: msg });
        const key = alertKeys.pause(run, at.path);
        await this.s.log(run, 'info', `Waiting for the operator: ${msg}`, [openAlert('pause_waiting', key, this.alertCtx(c, at, `A pause step waits for the operator: ${msg}`), { userId: c.task.createdBy })]);
        emitStatus(this.s);
        try {
          await c.waitingPause.promise;
          // continuing is no write of the runner's: the resolution is written on its own
          await alertOnly(this.s.store, [resolveAlert(key, 'the operator continued')]);
        } finally {
          c.waitingPause = null;
          emitStatus(this.s);
        }
      },
      inputStep: async (at, step) => {
        const rec = replay?.recorded.get(`${phase}|${iteration}|${at.index}`);
        if (replaying(at) && rec?.status === 'ok') return rec.output;
        if (replay?.skipAt === at.index) replay.skipAt = null; // an input is asked again, never skipped: nothing was done
        return waitForInput(this.inputContext, c, at, step, rec && rec.status !== 'ok' ? rec : null);
      },
      onError: async (at, e) => {
        if (e instanceof SkipInDoubt) {
          skippedHere++;
          // replayed: counted before the crash; the in-doubt step the operator chose to skip: counted now
          if (!replaying(at)) await this.markSkipped(c, null);
          return 'skip';
        }
        if (isStoreFault(e)) throw e; // not the step's failure: the run stops here (core/runner/store-fault.ts)
        const error = message(e);
        // kept here: the operator's decision (c.decide) clears c.failed, maybe while the log below is written
        const failed = (c.failed = Object.assign(waiter<'retry' | 'skip'>(), { at, error }));
        const failedMsg = `Step ${at.path} failed: ${sentence(error)} Retry it, skip it, or abort the task.`;
        // a call the safety guard refused waits like a failed step; its alert says it was blocked (core/notify)
        const blocked = isLabError(e) && (e.code === 'safety' || e.code === 'safety_file');
        const key = blocked ? alertKeys.safety(`run:${run}:${at.path}`) : alertKeys.stepFailed(run, at.path);
        const extra = blocked ? { error, problems: (e as LabError).details ?? [] } : { error };
        await this.s.log(run, 'error', failedMsg, [openAlert(blocked ? 'safety_blocked' : 'step_failed', key, { ...this.alertCtx(c, at, failedMsg), ...extra }, { userId: c.task.createdBy })]);
        emitStatus(this.s);
        try {
          const decision = await failed.promise;
          await this.s.log(run, 'info', decision === 'retry' ? `Retrying ${at.path}.` : `Skipping ${at.path}.`, [resolveAlert(key, decision === 'retry' ? 'the step was retried' : 'the step was skipped')]);
          if (decision === 'skip') {
            skippedHere++;
            await this.markSkipped(c, c.failedStep);
          }
          return decision;
        } finally {
          c.failed = null;
          emitStatus(this.s);
        }
      },
      afterStep: (at) => {
        c.step = at.index + 1;
        if ((at.step.kind === 'call' || at.step.kind === 'input') && at.step.save_as) saved.add(at.step.save_as);
        emitStatusSoon(this.s);
      },
    };

    try {
      await runSteps(steps, scope, control, { phase, iteration });
    } catch (e) {
      // a shutdown leaves the phase `running`, as a crash would: a resume replays it only up to where it stopped
      if (!(e instanceof Shutdown) && !isStoreFault(e)) await this.s.store.phases.update(phaseId, { status: e instanceof Abort ? 'stopped' : 'error', endedAt: now() });
      throw e;
    }
    const outputs = phase === 'main' ? outputsOf(c.payload.definition, { params: scope.params, vars: Object.fromEntries([...saved].map((k) => [k, scope.vars[k]])) }) : {};
    await this.s.store.phases.update(phaseId, { status: skippedHere ? 'skipped' : 'ok', outputs, endedAt: now() });
    if (skippedHere) {
      const where = iteration === null ? phase : `Iteration ${iteration + 1}`;
      await this.s.log(run, 'warn', `${where} had ${skippedSteps(skippedHere)}: it is marked skipped, and its outputs are not data.`);
    }
    if (phase === 'main' && iteration !== null) {
      this.s.emit({ type: 'iteration', run_id: run, iteration, params: scope.params, outputs, ...(skippedHere ? { skipped: true } : {}) });
    }
    return { outputs, skipped: skippedHere > 0 };
  }

  /** What input steps need of the runner (core/runner/input.ts). */
  private get inputContext() {
    return {
      store: this.s.store,
      emit: (e: RunnerEvent) => this.s.emit(e),
      log: (runId: number, level: 'info' | 'warn' | 'error', msg: string, alerts?: AlertOp[], change?: (tx: TxStore) => Promise<void>) => this.s.log(runId, level, msg, alerts, change),
      emitStatus: () => emitStatus(this.s),
      host: this.host.name,
    };
  }

  /** What an alert about a step of this task says besides its message. */
  private alertCtx(c: TaskRun, at: StepAt, message: string) {
    const call = at.step.kind === 'call' ? { instrument: at.step.instrument, method: at.step.method } : {};
    return { host: this.host.name, task_id: c.task.id, run_id: c.run.id, step: at.path, phase: at.phase, iteration: at.iteration, workflow: c.run.workflowName, ...call, message };
  }

  private emitStep(c: TaskRun, at: StepAt, state: 'start' | 'ok' | 'error', extra: Partial<Extract<RunnerEvent, { type: 'step' }>> = {}) {
    this.s.emit({ type: 'step', run_id: c.run.id, phase: at.phase, iteration: at.iteration, path: at.path, index: at.index, state, kind: at.step.kind, ...extra });
  }

  /** One instrument call of a run: its record is `running` before the instrument is touched. */
  private async callStep(c: TaskRun, at: StepAt, instrument: string, method: string, args: Record<string, unknown>) {
    const base = { runId: c.run.id, phase: at.phase, iteration: at.iteration, stepIndex: at.index, instrument, method, userId: c.task.createdBy };
    const id = await this.s.store.steps.insert({ ...base, args, output: null, status: 'running', error: null, startedAt: now(), endedAt: null });
    this.emitStep(c, at, 'start', { instrument, method, step_id: id });
    try {
      const { output } = await this.s.deck.call(instrument, method, args, {
        ...base,
        owner: c.owner,
        record: async (s) => {
          await this.s.store.steps.update(id, { args: s.args, output: s.output, status: s.status, error: s.error, startedAt: s.startedAt, endedAt: s.endedAt, log: s.log ?? null });
          return id;
        },
      });
      const saveAs = at.phase === 'main' && at.step.kind === 'call' ? at.step.save_as : undefined;
      const problem = saveAs ? c.checkSaved?.(saveAs, output) : null;
      if (problem) throw new LabError('instrument_error', savedProblem(instrument, method, output, problem));
      this.emitStep(c, at, 'ok', { instrument, method, output, step_id: id });
      return output;
    } catch (e) {
      c.failedStep = id;
      // the deck recorded the call itself (an instrument error, or a host lost mid-call: in-doubt); a store
      // failure leaves the record `running`, to be marked in-doubt once the store answers
      if (!(isLabError(e) && e.data?.task_id !== undefined) && !isStoreFault(e)) {
        // a call the safety guard refused reached no driver: the step is `blocked` (it waits like any failed step)
        await this.s.store.steps.update(id, { status: isLabError(e) && e.code === 'safety' ? 'blocked' : 'error', error: message(e), endedAt: now() });
      }
      this.emitStep(c, at, 'error', { instrument, method, error: message(e), step_id: id });
      throw e;
    }
  }

}

/** Read through a function: the operator changes it while a phase awaits (TypeScript would narrow a field). */
const stopAfterIteration = (c: TaskRun): boolean => c.abortRequest === 'iteration';

/** The in-doubt step of a resumed run, skipped by the operator's choice. */
class SkipInDoubt extends Error {
  constructor() {
    super('skipped after the interruption');
  }
}
