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
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { ownerOrAdmin, type PublicUser } from '../accounts/index.js';
import type { InstrumentSchema } from '../contracts/index.js';
import type { Deck } from '../deck/index.js';
import { LabError, isLabError, type ErrorCode, type ErrorDetail } from '../errors.js';
import { availableControls, CONTROL_LABEL, SITUATION, situationOf, type Control } from './controls.js';
import type { PhaseRow, QueueTaskRow, RunRow, RunStatus, StepRow, Store, TaskStatus } from '../store/types.js';
import { checkConfigRows, repeatRow, type RowOptions } from '../workflow/config.js';
import { outputsOf, runSteps, type RunControl, type Scope, type StepAt } from '../workflow/interpreter.js';
import type { Phase, Step } from '../workflow/model.js';
import { countSteps, instrumentsOf, validateWorkflow, type DeckSchemas } from '../workflow/validate.js';
import { HostLease, type HostOptions } from './hosts.js';

export type RunnerState = 'idle' | 'running' | 'paused' | 'failed' | 'stopping';
export type Direction = 'up' | 'down' | 'top' | 'bottom';
export const DIRECTIONS: readonly Direction[] = ['up', 'down', 'top', 'bottom'];

import { runParameters, workflowIterations, type IterationSource, type SourceFactory, type TaskPayload, type WorkflowPayload } from './tasks.js';

export { repeatOfRun, runParameters, workflowIterations, type IterationSource, type SourceFactory, type TaskPayload, type WorkflowPayload } from './tasks.js';

export interface RunnerStatus {
  busy: boolean;
  state: RunnerState;
  paused: boolean;
  queue_held: boolean;
  current_task: null | { id: number; name: string; kind: string; run_id: number | null; workflow: string; started_at: string | null };
  progress: { phase: Phase | null; iteration: number; iterations: number; step: number; steps: number };
  /** The step that failed, while the runner waits for the operator. */
  failed_step: null | { phase: Phase; iteration: number | null; path: string; error: string };
  /** A `pause` step waiting for the operator. */
  waiting: null | { path: string; message: string };
  /** A task whose run was cut off by a crash, waiting (held) for the operator. */
  interrupted: null | { task_id: number; run_id: number | null; step: { id: number; phase: string | null; iteration: number | null; index: number | null; instrument: string; method: string } | null };
  /** Why no task can start now: the database cannot be written (a full or read-only disk). */
  store_error: string | null;
  /** Tasks other labdecks on this database are running (DESIGN.md §12): control them there. */
  elsewhere: { task_id: number; name: string; run_id: number | null; host: string }[];
}

export type RunnerEvent =
  | { type: 'status'; status: RunnerStatus }
  | { type: 'queue' }
  | { type: 'run'; run_id: number; task_id: number; status: RunStatus; /** failed steps skipped so far */ skipped?: number }
  | { type: 'log'; run_id: number; level: 'info' | 'warn' | 'error'; message: string; at: string }
  | {
      type: 'step';
      run_id: number;
      phase: Phase;
      iteration: number | null;
      path: string;
      index: number;
      state: 'start' | 'ok' | 'error';
      kind: Step['kind'];
      instrument?: string;
      method?: string;
      output?: unknown;
      error?: string;
      step_id?: number;
    }
  | { type: 'iteration'; run_id: number; iteration: number; params: Record<string, unknown>; outputs: Record<string, unknown>; /** a step of it was skipped: not data */ skipped?: true };

/** Thrown into a running phase by the operator's abort; `iteration` ends the current iteration only. */
class Abort extends Error {
  constructor(readonly kind: 'task' | 'iteration') {
    super(kind === 'task' ? 'aborted by the operator' : 'stopped by the operator');
  }
}
/** Thrown into a running phase when the runtime shuts down: the run is left `running` (→ interrupted). */
class Shutdown extends Error {}

interface Waiter<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}
function waiter<T = void>(): Waiter<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** How a resumed run treats the step that was in flight when the server died. */
type Resume = { run: RunRow; mode: 'retry' | 'skip'; steps: StepRow[] };
/** A phase replayed from its records up to `until` (a step index); `skipAt`: the in-doubt step skipped. */
type Replay = { until: number; recorded: Map<string, StepRow>; skipAt: number | null };

interface Current {
  task: QueueTaskRow;
  run: RunRow;
  payload: TaskPayload;
  total: number;
  owner: string;
  phase: Phase | null;
  iteration: number;
  step: number;
  steps: number;
  /** Set once the run is being wound up (stopped, aborted or failed): its cleanup is running. */
  stopping: boolean;
  /** The iteration source's check of saved values (see IterationSource.checkSaved). */
  checkSaved?: IterationSource['checkSaved'];
  /** Failed steps the operator skipped in this run (stored in the run record as they happen). */
  skipped: number;
  /** The record of the call that failed last (null when the failure was not a call's). */
  failedStep: number | null;
}

const now = () => new Date();
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
/** The run controls of the web app and the API, by the Runner method that does each. */
export const RUN_CONTROLS = ['pauseResume', 'pause', 'resume', 'continuePauseStep', 'skip', 'release', 'retry', 'abortNextIteration', 'abortNextTask'] as const;
export type RunControlName = (typeof RUN_CONTROLS)[number];
/** How long a control sent to the host that runs the task waits for its answer. */
const ASK_MS = 5_000;

/** How long the loop waits before trying the store again after it failed (unless woken sooner). */
const STORE_RETRY_MS = 2_000;

export interface RunnerOptions {
  store: Store;
  deck: Deck;
  /** This process as a host of the lab (default: a `serve` host with a 10 s lease). */
  host?: HostOptions;
  /**
   * Which tasks it takes: `queue` (default), every pending task whose instruments it drives; `own`, only the
   * ones submitted through it (`lab run` beside a server on the same database).
   */
  takes?: 'queue' | 'own';
  /** Iteration sources for task kinds other than `workflow` (e.g. `campaign`). */
  sources?: Partial<Record<string, SourceFactory>>;
}

export class Runner extends EventEmitter {
  private readonly store: Store;
  private readonly deck: Deck;
  private readonly sources: Partial<Record<string, SourceFactory>>;
  private paused = false;
  private held = false;
  private closed = false;
  private current: Current | null = null;
  private abortRequest: 'task' | 'iteration' | null = null;
  private failed: (Waiter<'retry' | 'skip'> & { at: StepAt; error: string }) | null = null;
  private waitingPause: (Waiter<void> & { at: StepAt; message: string }) | null = null;
  private resumeFlag: Waiter<void> | null = null;
  private wake: Waiter<void> = waiter();
  private loopDone: Promise<void> | null = null;
  private interrupted: RunnerStatus['interrupted'] = null;
  private sleeping = new Set<{ timer: NodeJS.Timeout; done: Waiter<void> }>();
  /** This process in the lab's hosts table: its lease, its instruments. */
  readonly host: HostLease;
  private readonly takesOwnOnly: boolean;
  /** Tasks submitted through this runner (what it takes with `takes: 'own'`). */
  private readonly mine = new Set<number>();
  /** Instruments of this deck that another live host drives: instrument → that host's name. */
  private othersHold = new Map<string, string>();

  constructor(opts: RunnerOptions) {
    super();
    this.store = opts.store;
    this.deck = opts.deck;
    this.sources = opts.sources ?? {};
    this.host = new HostLease(opts.store, opts.host ?? { kind: 'serve' });
    this.takesOwnOnly = opts.takes === 'own';
    // what an instrument logs while it works for the current run goes to that run's log
    this.deck.on('log', (e: { instrument: string; method: string; message: string }) => {
      const c = this.current;
      if (c && this.deck.lockedBy(e.instrument) === c.owner) void this.log(c.run.id, 'info', `${e.instrument}.${e.method}: ${e.message}`).catch(() => undefined);
    });
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
    await this.syncInstruments();
    await this.recover();
    this.deck.on('change', this.onDeckChange);
    await this.store.signals.onHostMessage((m) => void this.heard(m).catch((e) => this.reportFault(e, 'a message from another host: ')));
    // another host queued, ended or released something: look at once (PostgreSQL; else at the next heartbeat)
    await this.store.signals.onQueueChange(() => {
      if (this.closed) return;
      void Promise.all([this.refreshHeld(), this.refreshElsewhere().catch(() => undefined)]).then(() => {
        this.emitQueue();
        this.notify();
      });
    });
    this.host.start(async () => {
      if (this.closed) return;
      if (this.host.lost) {
        // another host took this one for gone (it stalled past its lease) and recovered its runs: going on
        // would run them twice, so this runner stops here and says why
        this.storeFault = `another labdeck found this one's lease expired (no heartbeat for ${this.host.leaseMs / 1000} s) and took over its runs: restart labdeck`;
        this.reportFault(new Error(this.storeFault));
        this.stopWork(this.storeFault);
        this.emitStatus();
        return;
      }
      await this.host.sweep();
      await this.recover();
      await this.syncInstruments();
      this.notify();
    });
    this.loopDone = this.loop();
  }

  /**
   * Runs and tasks whose host is gone: the run `interrupted` (its in-flight step in-doubt), the task
   * `interrupted`, holding the queue until an operator decides. Each is claimed by one host only.
   */
  private async recover(): Promise<void> {
    for (const run of await this.store.runs.orphaned()) {
      if (!(await this.store.runs.interrupt(run.id, 'labdeck stopped while this run was going on'))) continue;
      await this.store.runSteps.markInDoubt(run.id);
      const by = run.hostId ? await this.store.hosts.get(run.hostId) : null;
      await this.store.logs.add(run.id, 'warn', `Interrupted: labdeck stopped during this run${by ? ` (${by.name})` : ''}. Its in-flight step is marked in-doubt.`);
    }
    let changed = false;
    for (const task of await this.store.queue.orphaned()) if (await this.store.queue.interrupt(task.id)) changed = true;
    const wasHeld = this.held;
    await this.refreshHeld();
    if (changed || wasHeld !== this.held) this.emitQueue();
    await this.refreshInterrupted();
    await this.refreshElsewhere();
    if (changed) this.emitStatus();
  }

  private readonly onDeckChange = () => void this.syncInstruments().catch(() => undefined);
  private syncing: Promise<void> = Promise.resolve();

  /**
   * Lease the deck's instruments; the ones another live host drives go offline here, naming that host, and
   * come back when it lets them go. Runs one at a time (the deck's change events call it too).
   */
  private syncInstruments(): Promise<void> {
    const run = async () => {
      const mine = this.deck.list().map(({ offline: _offline, ...schema }) => ({ name: schema.name, schema: { ...schema, host: schema.host ?? this.host.name } }));
      const taken = await this.host.lease(mine);
      const holds = new Map(taken.map((t) => [t.name, t.host.name]));
      const freed = [...this.othersHold.keys()].filter((n) => !holds.has(n) && this.deck.has(n));
      this.othersHold = holds;
      for (const host of new Set(holds.values())) {
        this.deck.setOffline([...holds].filter(([, h]) => h === host).map(([n]) => n), `driven by ${host}, another labdeck on this database (not by this one, ${this.host.name})`);
      }
      if (freed.length) this.deck.setOffline(freed, null);
      this.remote = new Map(
        (await this.store.hosts.catalogue()).filter((i) => i.hostId !== this.host.id && !this.deck.has(i.name)).map((i) => [i.name, { ...(i.schema as InstrumentSchema), host: (i.schema as InstrumentSchema).host ?? i.host }]),
      );
    };
    this.syncing = this.syncing.then(run, run);
    return this.syncing;
  }

  /** Instruments other labdecks on the database drive that this deck does not have (their schemas, as they sent them). */
  private remote = new Map<string, InstrumentSchema>();

  /**
   * The lab's instruments: this deck's and those other labdecks on the database drive (their `host` says
   * where). Workflows are checked against it, so one queued here may use instruments another host drives:
   * that host runs it.
   */
  readonly catalogue: DeckSchemas = {
    schema: (name) => (!this.deck.has(name) && this.remote.has(name) ? this.remote.get(name)! : this.deck.schema(name)),
    list: () => [...this.deck.list(), ...this.remote.values()],
  };

  /** Instruments among `names` that another labdeck drives, with the host that does. */
  heldElsewhere(names: string[]): { name: string; host: string }[] {
    return names.filter((n) => this.othersHold.has(n)).map((n) => ({ name: n, host: this.othersHold.get(n)! }));
  }

  /**
   * Stop taking tasks. A running phase is cut at its next step; the in-flight call gets `graceMs` to finish,
   * after which the runner lets go (a hung driver must not keep labdeck from stopping) and its run is left
   * `running`, to be recovered as interrupted at the next start.
   */
  async close(graceMs = 5000): Promise<void> {
    this.stopWork('labdeck is stopping');
    this.notify();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.loopDone, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.deck.off('change', this.onDeckChange);
    await this.syncing;
    // a run cut here stays `running`: stopped, this host's runs are recovered (interrupted) by the next one
    await this.host.stop().catch((e) => this.reportFault(e, 'could not mark this host stopped: '));
  }

  /** Take no more tasks, and cut the running phase at its next step (its run is left for recovery). */
  private stopWork(why: string) {
    this.closed = true;
    const stop = new Shutdown(why);
    this.failed?.reject(stop);
    this.waitingPause?.reject(stop);
    this.resumeFlag?.reject(stop);
    for (const s of this.sleeping) {
      clearTimeout(s.timer);
      s.done.reject(stop);
    }
  }

  /* ------------------------------------------------------------------ status */

  status(): RunnerStatus {
    const c = this.current;
    let state: RunnerState = 'idle';
    if (c) {
      if (this.failed) state = 'failed';
      else if (this.abortRequest || c.stopping) state = 'stopping';
      // held by the flag (a resume that has not reached the loop yet is running again)
      else if (this.waitingPause || (this.resumeFlag && this.paused)) state = 'paused';
      else state = 'running';
    }
    return {
      busy: c !== null,
      state,
      paused: this.paused,
      // DESIGN §5: idle with the pause flag set holds the queue too
      queue_held: this.held || (this.paused && !c),
      current_task: c
        ? { id: c.task.id, name: c.task.name, kind: c.task.kind, run_id: c.run.id, workflow: c.payload.workflow, started_at: c.run.startedAt.toISOString() }
        : null,
      progress: {
        phase: c?.phase ?? null,
        iteration: c ? c.iteration + 1 : 0,
        iterations: c?.total ?? 0,
        step: c?.step ?? 0,
        steps: c?.steps ?? 0,
      },
      failed_step: this.failed ? { phase: this.failed.at.phase, iteration: this.failed.at.iteration, path: this.failed.at.path, error: this.failed.error } : null,
      waiting: this.waitingPause ? { path: this.waitingPause.at.path, message: this.waitingPause.message } : null,
      interrupted: this.interrupted,
      store_error: this.storeFault,
      elsewhere: this.elsewhere,
    };
  }

  /** Tasks other hosts are running now, read on each heartbeat and wake-up; and the host of each. */
  private elsewhere: RunnerStatus['elsewhere'] = [];
  private elsewhereHost = new Map<number, string>();

  private async refreshElsewhere() {
    const running = (await this.store.queue.open()).filter((t) => t.status === 'running' && t.hostId !== null && t.hostId !== this.host.id);
    const names = running.length ? new Map((await this.store.hosts.live()).map((h) => [h.id, h.name])) : new Map<string, string>();
    const elsewhere = running.map((t) => ({ task_id: t.id, name: t.name, run_id: t.runId, host: names.get(t.hostId!) ?? 'a labdeck that has stopped' }));
    this.elsewhereHost = new Map(running.map((t) => [t.id, t.hostId!]));
    if (JSON.stringify(elsewhere) === JSON.stringify(this.elsewhere)) return;
    this.elsewhere = elsewhere;
    this.emitStatus();
  }

  /** "; task 7 runs on lab serve on pc-2 (pid 4): control it there", when this host runs nothing and another does. */
  private elsewhereNote(): string {
    const t = this.current ? undefined : this.elsewhere[0];
    return t ? `; task ${t.task_id} ("${t.name}") runs on ${t.host}: control it there` : '';
  }

  private emitStatus() {
    this.emit('event', { type: 'status', status: this.status() } satisfies RunnerEvent);
  }

  private statusTimer: NodeJS.Timeout | null = null;
  /** Progress changes with every step: tell listeners at most every 100 ms. */
  private emitStatusSoon() {
    this.statusTimer ??= setTimeout(() => {
      this.statusTimer = null;
      this.emitStatus();
    }, 100);
  }

  private emitQueue() {
    this.emit('event', { type: 'queue' } satisfies RunnerEvent);
  }

  private notify() {
    const w = this.wake;
    this.wake = waiter();
    w.resolve();
  }

  /** Whether any task holds the queue (set by any host). */
  private async refreshHeld() {
    const version = this.heldVersion;
    try {
      const held = (await this.store.queue.holding()).length > 0;
      if (version === this.heldVersion) this.held = held; // else this host changed it meanwhile: that is newer
    } catch {
      // the store is failing: the loop reports it
    }
  }

  /** Counts this host's own changes of `held`, so a read of the database that started before one is dropped. */
  private heldVersion = 0;

  private setHeld(held: boolean) {
    this.held = held;
    this.heldVersion++;
  }

  /** Tell the other hosts the queue changed (they look at once instead of at their next heartbeat). */
  private tellOthers() {
    void this.store.signals.queueChanged().catch(() => undefined);
  }

  /** Hold the queue because of this task (aborted, or interrupted): a decision about it, not a lab-wide flag. */
  private async hold(taskId: number) {
    this.setHeld(true);
    await this.store.queue.update(taskId, { holdsQueue: true });
  }

  /* ------------------------------------------------------------------ the queue */

  /**
   * Queue a workflow over config rows or a repeat count. The workflow is validated against the live deck and
   * the rows against its parameters now, so a task never starts with a problem that could be seen before.
   */
  async submit(input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown; userId: number | null; rowLabel?: RowOptions['label'] }): Promise<QueueTaskRow> {
    if (typeof input.workflow !== 'string' || !input.workflow) {
      throw new LabError('invalid_input', 'Say which workflow to run: "workflow" is required.', [{ field: 'workflow', message: 'required' }]);
    }
    const saved = await this.store.workflows.get(input.workflow);
    if (!saved) throw new LabError('not_found', `There is no workflow "${input.workflow}".`, [{ field: 'workflow', message: 'unknown workflow' }]);
    const definition = validateWorkflow(saved.definition, this.catalogue);
    const hasConfig = input.config !== undefined && input.config !== null && input.config !== '';
    const hasRepeat = input.repeat !== undefined && input.repeat !== null && input.repeat !== '';
    if (hasConfig === hasRepeat) {
      throw new LabError('invalid_input', 'Give either "config" (a list of parameter rows) or "repeat" (a number of iterations).', [
        { field: hasConfig ? 'repeat' : 'config', message: hasConfig ? 'give config or repeat, not both' : 'config or repeat is required' },
      ]);
    }
    const times = hasConfig ? 0 : typeof input.repeat === 'string' ? Number(input.repeat) : (input.repeat as number);
    const iterations: Pick<WorkflowPayload, 'rows' | 'repeat'> = hasConfig
      ? { rows: checkConfigRows(definition, input.config, { label: input.rowLabel }) }
      : { repeat: { times, row: repeatRow(definition, times) } };
    if (input.name !== undefined && (typeof input.name !== 'string' || input.name.length > 200)) {
      throw new LabError('invalid_input', 'name must be text of at most 200 characters.', [{ field: 'name', message: 'invalid' }]);
    }
    const count = iterations.rows?.length ?? times;
    const name = (typeof input.name === 'string' && input.name.trim()) || `${definition.name} × ${count}`;
    const payload: WorkflowPayload = { workflow: definition.name, version: saved.version, definition, ...iterations };
    return this.enqueue({ name, kind: 'workflow', payload, createdBy: input.userId });
  }

  /** Queue a checked task (submit does the checking for workflows; core/campaign for campaigns). */
  async enqueue(t: { name: string; kind: QueueTaskRow['kind']; payload: TaskPayload; createdBy: number | null }): Promise<QueueTaskRow> {
    const task = await this.store.queue.add(t);
    if (this.takesOwnOnly) this.mine.add(task.id);
    this.tellOthers();
    this.emitQueue();
    this.notify();
    return task;
  }

  /** Whether a queued task is running or starts at once (nothing ahead of it, runner free, queue not held). */
  async startsNow(id: number): Promise<boolean> {
    if (this.current) return this.current.task.id === id;
    if (this.paused || this.held) return false;
    return (await this.store.queue.open()).find((t) => t.status === 'pending')?.id === id;
  }

  /** Unfinished tasks in queue order, with the runner's flags. */
  async queue() {
    const tasks = await this.store.queue.open();
    return { tasks, paused: this.paused, queue_held: this.held, current_task_id: this.current?.task.id ?? null };
  }

  async task(id: number): Promise<QueueTaskRow> {
    const task = await this.store.queue.get(id);
    if (!task) throw new LabError('not_found', `There is no queued task ${id}.`);
    return task;
  }

  private checkOwner(task: QueueTaskRow, by: Pick<PublicUser, 'id' | 'role'> | undefined, what: string): void {
    if (by && !ownerOrAdmin(task.createdBy, by)) {
      throw new LabError('forbidden', `Task ${task.id} was queued by another user: only they or an admin may ${what} it.`, [{ field: 'id', message: 'not yours' }]);
    }
  }

  /** A task that may still be changed: not_found, then forbidden (`by` is not its owner or an admin), then conflict. */
  private async pendingTask(id: number, what: string, by?: Pick<PublicUser, 'id' | 'role'>): Promise<QueueTaskRow> {
    const task = await this.task(id);
    this.checkOwner(task, by, what === 'deleted' ? 'delete' : 'change');
    if (task.status === 'running' || task.status === 'interrupted') {
      throw new LabError('conflict', `Task ${id} is ${task.status === 'running' ? 'running' : 'interrupted'}: it cannot be ${what}. Abort it first.`, undefined, { state: this.status().state });
    }
    if (task.status !== 'pending') throw new LabError('conflict', `Task ${id} has finished (${task.status}).`);
    return task;
  }

  /** Delete a pending task; `by`: the user asking (its owner or an admin may), none for the lab itself. */
  async deleteTask(id: number, by?: Pick<PublicUser, 'id' | 'role'>): Promise<void> {
    await this.serial(async () => {
      await this.pendingTask(id, 'deleted', by);
      await this.store.queue.delete(id);
    });
    this.emitQueue();
  }

  /**
   * The next pending task, marked running at once. Claims and deletes take turns (`serial`), so a task
   * deleted just as the runner takes it is either gone first or already running (409), never both.
   */
  private async claim(): Promise<QueueTaskRow | null> {
    if (this.host.lost) return null; // another host took this one for gone: it takes no more work
    const pending = await this.store.queue.pending();
    const candidates: number[] = [];
    for (const id of pending) if (await this.canRun(id)) candidates.push(id);
    const open = new Set(pending);
    for (const id of this.needs.keys()) if (!open.has(id)) this.needs.delete(id);
    return this.store.queue.claim(this.host.id, candidates);
  }

  /** The instruments each pending task needs, read once per task (a payload never changes). */
  private readonly needs = new Map<number, string[] | null>();

  /** The instruments of a task's workflow; null when its payload cannot be read. */
  private async needsOf(id: number): Promise<string[] | null> {
    if (!this.needs.has(id)) {
      const task = await this.store.queue.get(id);
      let needs: string[] | null = null;
      try {
        needs = instrumentsOf((task?.payload as TaskPayload).definition);
      } catch {
        // a payload that cannot be read: the host that takes it records why it failed
      }
      this.needs.set(id, needs);
    }
    return this.needs.get(id)!;
  }

  /** A task this host can run: every instrument of its workflow is in this deck and driven by no other host. */
  private async canRun(id: number): Promise<boolean> {
    if (this.takesOwnOnly && !this.mine.has(id)) return false;
    return (await this.missing(id)).length === 0;
  }

  /** The instruments a task needs that this host does not drive. */
  private async missing(id: number): Promise<string[]> {
    return ((await this.needsOf(id)) ?? []).filter((n) => !this.deck.has(n) || this.othersHold.has(n));
  }

  private turn: Promise<unknown> = Promise.resolve();
  /** Run `fn` after every earlier `serial` call has settled. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  async moveTask(id: number, direction: unknown): Promise<void> {
    if (!DIRECTIONS.includes(direction as Direction)) {
      throw new LabError('invalid_input', `direction must be one of ${DIRECTIONS.join(', ')}, got ${JSON.stringify(direction)}.`, [{ field: 'direction', message: 'up, down, top or bottom' }]);
    }
    await this.pendingTask(id, 'moved');
    await this.store.queue.move(id, direction as Direction);
    this.emitQueue();
  }

  async renameTask(id: number, name: unknown, by?: Pick<PublicUser, 'id' | 'role'>): Promise<void> {
    if (typeof name !== 'string' || !name.trim() || name.length > 200) {
      throw new LabError('invalid_input', 'new_name must be 1-200 characters of text.', [{ field: 'new_name', message: 'required, at most 200 characters' }]);
    }
    this.checkOwner(await this.task(id), by, 'rename');
    await this.store.queue.update(id, { name: name.trim() });
    if (this.current?.task.id === id) this.current.task = { ...this.current.task, name: name.trim() };
    this.emitQueue();
    this.emitStatus();
  }

  /* ------------------------------------------------------------------ operator controls */

  private notApplicable(what: string): never {
    const state = this.status().state;
    throw new LabError('conflict', `Nothing to ${what}: the runner is ${state}${this.held ? ' (queue held)' : ''}${this.elsewhereNote()}.`, undefined, { state });
  }

  /**
   * The one pause button of the spec (POST /executions/pause-resume): a failed step → skip it; a `pause` step
   * → continue; an interrupted task → go on after its in-doubt step; a held queue → release it; otherwise
   * pause or resume (idle, the flag holds the queue). The page and `lab run` use the controls below, which
   * each do one thing or refuse: a button named "Pause" never skips a step that failed a moment before.
   */
  async pauseResume(): Promise<RunnerStatus> {
    if (this.failed || (!this.current && this.interrupted)) return this.skip();
    if (this.waitingPause) return this.continuePauseStep();
    if (this.held && !this.current) return this.release();
    if (this.current) return this.paused ? this.resume() : this.pause();
    // idle: the flag alone holds the queue (DESIGN §5), and clearing it lets the queue go on
    this.paused = !this.paused;
    if (!this.paused) this.notify();
    this.emitStatus();
    return this.status();
  }

  /** A control that does nothing in the runner's state: a conflict naming the state. */
  private check(control: Control): void {
    const s = this.status();
    if (!availableControls(s)[control]) {
      throw new LabError('conflict', `${CONTROL_LABEL[control]} does nothing now: the runner is ${SITUATION[situationOf(s)].label}${this.elsewhereNote()}.`, undefined, { state: s.state });
    }
  }

  /** Set the pause flag while a task runs: no new step starts (a call in flight finishes). */
  async pause(): Promise<RunnerStatus> {
    this.check('pause');
    this.paused = true;
    // the run's log says when and why it stood still
    await this.log(this.current!.run.id, 'info', 'Paused by the operator: no new step starts (a call in flight finishes).');
    this.emitStatus();
    return this.status();
  }

  /** Clear the pause flag of a running task: it goes on. */
  async resume(): Promise<RunnerStatus> {
    this.check('resume');
    this.paused = false;
    this.resumeFlag?.resolve();
    this.notify();
    await this.log(this.current!.run.id, 'info', 'Resumed by the operator.');
    this.emitStatus();
    return this.status();
  }

  /** A `pause` step is done: go on with the next step. */
  async continuePauseStep(): Promise<RunnerStatus> {
    this.check('continue');
    this.waitingPause!.resolve();
    this.emitStatus();
    return this.status();
  }

  /** Leave the failed step out and go on (or go on after an interrupted task's in-doubt step). */
  async skip(): Promise<RunnerStatus> {
    this.check('skip');
    if (this.failed) this.failed.resolve('skip');
    else await this.resumeInterrupted('skip');
    this.emitStatus();
    return this.status();
  }

  /** Let a held queue (after abort next-task, or the pause flag set while idle) start tasks again. */
  async release(): Promise<RunnerStatus> {
    this.check('release');
    await this.store.queue.release();
    this.setHeld(false);
    this.tellOthers();
    this.paused = false;
    this.notify();
    this.emitStatus();
    return this.status();
  }

  /** Re-run the failed step (or an interrupted task's in-doubt step). */
  async retry(): Promise<RunnerStatus> {
    if (this.failed) this.failed.resolve('retry');
    else if (!this.current && this.interrupted) await this.resumeInterrupted('retry');
    else this.notApplicable('retry');
    this.emitStatus();
    return this.status();
  }

  /** Finish the current iteration, skip the rest, run cleanup, record `stopped`; the queue goes on. */
  async abortNextIteration(): Promise<RunnerStatus> {
    if (!this.current) this.notApplicable('abort');
    if (this.abortRequest !== 'task') this.abortRequest = 'iteration';
    // a failed step ends its iteration at once: there is nothing more of it to finish
    this.failed?.reject(new Abort('iteration'));
    this.waitingPause?.reject(new Abort('iteration'));
    this.emitStatus();
    return this.status();
  }

  /** Finish the in-flight step, run no further step, run cleanup, record `aborted`; hold the queue. */
  async abortNextTask(): Promise<RunnerStatus> {
    if (!this.current && this.interrupted) {
      await this.endInterrupted();
    } else {
      if (!this.current) this.notApplicable('abort');
      this.abortRequest = 'task';
      await this.hold(this.current.task.id);
      const abort = new Abort('task');
      this.failed?.reject(abort);
      this.waitingPause?.reject(abort);
      this.resumeFlag?.reject(abort);
      for (const s of this.sleeping) {
        clearTimeout(s.timer);
        s.done.reject(abort);
      }
    }
    this.emitStatus();
    return this.status();
  }

  /**
   * A control asked through the web app or the API. Done here; or, when this labdeck runs nothing and another
   * one on the database runs the lab's task, sent to that labdeck (PostgreSQL), whose answer is returned: its
   * status after the control, or its refusal. On SQLite (one PC) the refusal here names the host instead.
   */
  async control(name: RunControlName): Promise<RunnerStatus> {
    if (!this.current && !this.interrupted && name !== 'release' && this.elsewhere.length) {
      if (this.elsewhere.length > 1) {
        const list = this.elsewhere.map((t) => `task ${t.task_id} on ${t.host}`).join(', ');
        throw new LabError('conflict', `Several tasks run on other labdecks (${list}): control each on its host.`, undefined, { running: this.elsewhere });
      }
      const answer = await this.ask(this.elsewhere[0], name);
      if (answer) return answer;
    }
    return this[name]();
  }

  private readonly asked = new Map<string, { resolve(s: RunnerStatus): void; reject(e: unknown): void }>();

  /** Send a control to the host running `task`; its answer, or null when the database carries no messages. */
  private async ask(task: RunnerStatus['elsewhere'][number], control: RunControlName): Promise<RunnerStatus | null> {
    const id = randomUUID();
    const answer = new Promise<RunnerStatus>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.asked.delete(id);
        reject(new LabError('unavailable', `${task.host} runs task ${task.task_id} but did not answer within ${ASK_MS / 1000} s: control it there.`));
      }, ASK_MS);
      this.asked.set(id, {
        resolve: (s) => (clearTimeout(timer), resolve(s)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
    if (await this.store.signals.tell({ type: 'control', id, to: this.elsewhereHost.get(task.task_id), from: this.host.id, control })) return answer;
    this.asked.get(id)?.resolve(this.status()); // nothing was sent: settle the wait
    this.asked.delete(id);
    return null;
  }

  /** A message between hosts: a control another host asks of this one, or the answer to one this one asked. */
  private async heard(raw: unknown): Promise<void> {
    const m = raw as { type?: string; id?: string; to?: string; from?: string; control?: string; status?: RunnerStatus; error?: { code: ErrorCode; message: string; details?: ErrorDetail[] } } | null;
    if (!m || m.to !== this.host.id || typeof m.id !== 'string') return;
    if (m.type === 'reply') {
      const waiting = this.asked.get(m.id);
      this.asked.delete(m.id);
      if (m.error) waiting?.reject(new LabError(m.error.code, m.error.message, m.error.details));
      else if (m.status) waiting?.resolve(m.status);
      return;
    }
    if (m.type !== 'control' || !RUN_CONTROLS.includes(m.control as RunControlName)) return;
    let reply: { status: RunnerStatus } | { error: { code: ErrorCode; message: string; details?: ErrorDetail[] } };
    try {
      reply = { status: await this[m.control as RunControlName]() };
    } catch (e) {
      reply = { error: isLabError(e) ? { code: e.code, message: e.message, details: e.details } : { code: 'internal', message: message(e) } };
    }
    await this.store.signals.tell({ type: 'reply', id: m.id, to: m.from, ...reply }).catch(() => undefined);
  }

  /* ------------------------------------------------------------------ interrupted runs */

  private async refreshInterrupted() {
    const task = (await this.store.queue.open()).find((t) => t.status === 'interrupted');
    if (!task) {
      this.interrupted = null;
      return;
    }
    const steps = task.runId ? await this.store.runSteps.list(task.runId) : [];
    const doubt = latestSteps(steps).find((s) => s.status === 'in-doubt') ?? null;
    this.interrupted = {
      task_id: task.id,
      run_id: task.runId,
      step: doubt ? { id: doubt.id, phase: doubt.phase, iteration: doubt.iteration, index: doubt.stepIndex, instrument: doubt.instrument, method: doubt.method } : null,
    };
  }

  private async resumeInterrupted(mode: 'retry' | 'skip') {
    const info = this.interrupted!;
    const task = await this.task(info.task_id);
    const needs = await this.missing(task.id);
    if (needs.length) {
      throw new LabError('conflict', `Task ${task.id} needs ${needs.join(', ')}, which this labdeck does not drive: ${mode} it on the labdeck that does.`, needs.map((n) => ({ field: n, message: 'not driven here' })));
    }
    const run = task.runId ? await this.store.runs.get(task.runId) : null;
    this.interrupted = null;
    // deciding about the interrupted task lifts its hold (another task may still hold the queue)
    await this.store.queue.update(task.id, { holdsQueue: false });
    this.heldVersion++;
    await this.refreshHeld();
    if (!run) {
      // it died before its run record was written: start it afresh
      await this.store.queue.update(task.id, { status: 'pending' });
    } else {
      this.pendingResume = { taskId: task.id, resume: { run, mode, steps: await this.store.runSteps.list(run.id) } };
    }
    this.notify();
  }

  private pendingResume: { taskId: number; resume: Resume } | null = null;

  /** End an interrupted run: its cleanup runs, it is recorded `aborted`, and the queue stays held. */
  private async endInterrupted() {
    const info = this.interrupted!;
    const task = await this.task(info.task_id);
    const run = task.runId ? await this.store.runs.get(task.runId) : null;
    this.interrupted = null;
    if (!run) {
      await this.store.queue.update(task.id, { status: 'aborted', endedAt: now() });
      this.emitQueue();
      return;
    }
    this.pendingResume = { taskId: task.id, resume: { run, mode: 'skip', steps: [] } };
    this.abortRequest = 'task';
    this.endingInterrupted = true;
    this.notify();
    // the loop runs it: cleanup only, then `aborted`; the queue stays held
  }

  private endingInterrupted = false;

  /* ------------------------------------------------------------------ the loop */

  private async loop(): Promise<void> {
    while (!this.closed) {
      const wake = this.wake.promise;
      let next: { task: QueueTaskRow; resume?: Resume } | null = null;
      try {
        next = await this.nextTask();
      } catch (e) {
        // the store failed before a task could start (a full or read-only disk): the runner stays up, says
        // why, and tries again when woken or after a while
        if (this.storeFault === null) this.reportFault(e);
        this.storeFault = message(e);
        this.emitStatus();
        await Promise.race([wake, new Promise((r) => setTimeout(r, STORE_RETRY_MS).unref())]);
        continue;
      }
      if (this.storeFault !== null) {
        this.storeFault = null;
        this.emitStatus();
      }
      if (!next) {
        await wake;
        continue;
      }
      try {
        await this.execute(next.task, next.resume);
      } catch (e) {
        if (!(e instanceof Shutdown)) await this.fault(next.task, e);
      }
    }
  }

  /** What the loop runs next: a resumed interrupted task, else the next pending one (unless paused or held). */
  private async nextTask(): Promise<{ task: QueueTaskRow; resume?: Resume } | null> {
    if (this.pendingResume) {
      const { taskId, resume } = this.pendingResume;
      this.pendingResume = null;
      return { task: await this.task(taskId), resume };
    }
    if (this.paused || this.held) return null;
    const task = await this.serial(() => this.claim());
    return task ? { task } : null;
  }

  /** The last store failure that kept the loop from starting a task, while it lasts. */
  private storeFault: string | null = null;

  /** An 'error' event with no listener would throw (and end the loop), so it goes to listeners or stderr. */
  private reportFault(e: unknown, context = ''): void {
    if (this.listenerCount('error') > 0) this.emit('error', e);
    else console.error(`labdeck runner: ${context}${message(e)}`);
  }

  private async execute(task: QueueTaskRow, resume?: Resume): Promise<void> {
    const payload = task.payload as TaskPayload;
    const wf = payload.definition;
    const owner = `task-${task.id}`;
    const run =
      resume?.run ??
      (await this.store.runs.create({
        taskId: task.id,
        name: task.name,
        workflowName: payload.workflow,
        workflowVersion: payload.version,
        workflow: wf,
        parameters: task.kind === 'workflow' ? runParameters(payload as WorkflowPayload) : (this.sources[task.kind]?.runParameters?.(payload) ?? null),
        status: 'running',
        userId: task.createdBy,
        startedAt: now(),
        hostId: this.host.id,
      }));
    const ending = this.endingInterrupted;
    this.endingInterrupted = false;
    if (resume) await this.store.runs.update(run.id, { status: 'running', error: null, hostId: this.host.id }); // this host carries it on now
    await this.store.queue.update(task.id, { status: 'running', runId: run.id, startedAt: task.startedAt ?? now(), hostId: this.host.id });
    const phases = resume ? await this.store.phases.list(run.id) : [];
    const c: Current = { task: { ...task, status: 'running', runId: run.id }, run: { ...run, status: 'running' }, payload, total: 0, owner, phase: null, iteration: 0, step: 0, steps: 0, stopping: false, skipped: run.skipped ?? 0, failedStep: null };
    this.current = c;
    if (!ending) this.abortRequest = null;
    const log = (level: 'info' | 'warn' | 'error', msg: string) => this.log(run.id, level, msg);

    let source: IterationSource;
    try {
      source = await this.sourceOf(task, run.id, payload, phases);
      this.deck.lock(instrumentsOf(wf), owner);
    } catch (e) {
      // the run cannot start (its optimizer is gone, an instrument vanished or is held): recorded as failed
      await this.finish(c, 'failed', message(e));
      return;
    }
    c.total = source.total;
    c.checkSaved = source.checkSaved?.bind(source);
    this.emitQueue();
    this.emitStatus();
    this.emit('event', { type: 'run', run_id: run.id, task_id: task.id, status: 'running' } satisfies RunnerEvent);
    await log('info', resume ? (ending ? 'Ending the interrupted run: cleanup only.' : `Resuming after the interruption (${resume.mode === 'retry' ? 're-running' : 'skipping'} the in-doubt step).`) : `Started ${wf.name} v${payload.version}: ${source.total} iteration(s).`);

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
        if (this.stopAfterIteration() || (inCleanup && !phases.some((p) => p.phase === 'main' && p.iteration === i))) {
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
        if (this.stopAfterIteration()) {
          outcome = 'stopped';
          break;
        }
      }
    } catch (e) {
      if (e instanceof Shutdown) throw e;
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
      this.abortRequest = null; // cleanup itself runs; an abort asked for during cleanup ends it
      await this.phase(c, 'cleanup', null, wf.cleanup, { params: {}, vars }, replayPlan('cleanup', null));
    } catch (e) {
      if (e instanceof Shutdown) throw e;
      if (!(e instanceof Abort)) {
        error ??= `cleanup: ${message(e)}`;
        if (outcome === 'completed') outcome = 'failed';
      }
      await log('warn', `Cleanup ended early: ${message(e)}`);
    }
    if (outcome === 'aborted') await this.hold(c.task.id);
    await this.finish(c, outcome, error);
  }

  /**
   * A fault outside any step (the database failed, a bug): the task is recorded failed where the store still
   * answers, its locks are freed and the loop goes on.
   */
  private async fault(task: QueueTaskRow, e: unknown) {
    const c = this.current;
    this.current = null;
    this.abortRequest = null;
    this.deck.unlock(`task-${task.id}`);
    try {
      if (c) await this.store.runs.update(c.run.id, { status: 'failed', error: message(e), endedAt: now() });
      await this.store.queue.update(task.id, { status: 'failed', endedAt: now() });
    } catch {
      // the store itself failed: the task keeps its status (a `running` one is interrupted at the next start)
    }
    this.reportFault(e, `task ${task.id} failed outside its steps: `);
    this.emitQueue();
    this.emitStatus();
  }

  /** The iterations of a task: its rows, or (campaigns) what the registered factory for its kind makes. */
  private async sourceOf(task: QueueTaskRow, runId: number, payload: TaskPayload, phases: PhaseRow[]): Promise<IterationSource> {
    if (task.kind === 'workflow') return workflowIterations(payload as WorkflowPayload);
    const factory = this.sources[task.kind];
    if (!factory) throw new LabError('invalid_input', `This labdeck cannot run tasks of kind "${task.kind}".`);
    const done = phases.filter((p) => p.phase === 'main' && p.status === 'ok');
    return factory({ task, runId, payload, done, log: (m) => this.log(runId, 'info', m) });
  }

  /** Read through a method: the operator changes it while a phase awaits (TypeScript would narrow a field). */
  private stopAfterIteration(): boolean {
    return this.abortRequest === 'iteration';
  }

  private async finish(c: Current, outcome: RunStatus, error: string | null) {
    const taskStatus: TaskStatus = outcome === 'completed' ? 'done' : outcome === 'interrupted' ? 'interrupted' : outcome;
    this.deck.unlock(c.owner);
    await this.store.runs.update(c.run.id, { status: outcome, error, endedAt: now() });
    await this.store.queue.update(c.task.id, { status: taskStatus, endedAt: now() });
    this.tellOthers();
    const skipped = c.skipped ? ` with ${skippedSteps(c.skipped)}` : '';
    await this.log(c.run.id, outcome === 'completed' && !skipped ? 'info' : 'warn', `Run ${outcome}${skipped}${error ? `: ${error}` : ''}.`);
    this.current = null;
    this.abortRequest = null;
    this.emit('event', { type: 'run', run_id: c.run.id, task_id: c.task.id, status: outcome, skipped: c.skipped } satisfies RunnerEvent);
    this.emitQueue();
    this.emitStatus();
  }

  private async log(runId: number, level: 'info' | 'warn' | 'error', msg: string) {
    const at = now();
    await this.store.logs.add(runId, level, msg, at);
    this.emit('event', { type: 'log', run_id: runId, level, message: msg, at: at.toISOString() } satisfies RunnerEvent);
  }

  /** A failed step the operator skipped: its call's record says so, and the run counts it at once. */
  private async markSkipped(c: Current, stepId: number | null) {
    c.skipped++;
    if (stepId !== null) await this.store.steps.update(stepId, { status: 'skipped' });
    await this.store.runs.update(c.run.id, { skipped: c.skipped });
  }

  /**
   * Run one phase; with `replay`, its steps before `replay.until` come from the records (no instrument).
   * Resolves with the iteration's outputs (main; {} for prep and cleanup) and whether a step of it was
   * skipped: then the phase is recorded `skipped`, and its outputs are not data.
   */
  private async phase(c: Current, phase: Phase, iteration: number | null, steps: Step[], scope: Scope, replay: Replay | undefined): Promise<{ outputs: Record<string, unknown>; skipped: boolean }> {
    if (steps.length === 0 && phase !== 'main') return { outputs: {}, skipped: false };
    c.phase = phase;
    if (iteration !== null) c.iteration = iteration;
    c.step = 0;
    c.steps = countSteps(steps);
    const run = c.run.id;
    const existing = replay ? (await this.store.phases.list(run)).find((p) => p.phase === phase && p.iteration === iteration) : undefined;
    const phaseId = existing?.id ?? (await this.store.phases.create({ runId: run, phase, iteration, params: phase === 'main' ? scope.params : {}, startedAt: now() }));
    if (existing) await this.store.phases.update(phaseId, { status: 'running', endedAt: null });
    this.emitStatus();

    const replaying = (at: StepAt) => replay !== undefined && at.index < replay.until;
    // variables carry over from earlier iterations; an output is only what THIS phase run saved
    const saved = new Set<string>();
    let skippedHere = 0;
    const control: RunControl = {
      beforeStep: async (at) => {
        c.step = at.index;
        c.failedStep = null;
        if (replaying(at)) return;
        if (this.closed) throw new Shutdown();
        if (this.abortRequest === 'task') throw new Abort('task');
        while (this.paused && !this.closed) {
          this.resumeFlag ??= waiter();
          this.emitStatus();
          await this.resumeFlag.promise.finally(() => (this.resumeFlag = null));
        }
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
        await this.sleep(seconds * 1000);
        this.emitStep(c, at, 'ok');
      },
      pauseStep: async (at, msg) => {
        if (replaying(at)) return;
        this.waitingPause = Object.assign(waiter<void>(), { at, message: msg });
        await this.log(run, 'info', `Waiting for the operator: ${msg}`);
        this.emitStatus();
        try {
          await this.waitingPause.promise;
        } finally {
          this.waitingPause = null;
          this.emitStatus();
        }
      },
      onError: async (at, e) => {
        if (e instanceof SkipInDoubt) {
          skippedHere++;
          // replayed: counted before the crash; the in-doubt step the operator chose to skip: counted now
          if (!replaying(at)) await this.markSkipped(c, null);
          return 'skip';
        }
        const error = message(e);
        this.failed = Object.assign(waiter<'retry' | 'skip'>(), { at, error });
        await this.log(run, 'error', `Step ${at.path} failed: ${error}. Retry it, skip it, or abort the task.`);
        this.emitStatus();
        try {
          const decision = await this.failed.promise;
          await this.log(run, 'info', decision === 'retry' ? `Retrying ${at.path}.` : `Skipping ${at.path}.`);
          if (decision === 'skip') {
            skippedHere++;
            await this.markSkipped(c, c.failedStep);
          }
          return decision;
        } finally {
          this.failed = null;
          this.emitStatus();
        }
      },
      afterStep: (at) => {
        c.step = at.index + 1;
        if (at.step.kind === 'call' && at.step.save_as) saved.add(at.step.save_as);
        this.emitStatusSoon();
      },
    };

    try {
      await runSteps(steps, scope, control, { phase, iteration });
    } catch (e) {
      // a shutdown leaves the phase `running`, as a crash would: a resume replays it only up to where it stopped
      if (!(e instanceof Shutdown)) await this.store.phases.update(phaseId, { status: e instanceof Abort ? 'stopped' : 'error', endedAt: now() });
      throw e;
    }
    const outputs = phase === 'main' ? outputsOf(c.payload.definition, { params: scope.params, vars: Object.fromEntries([...saved].map((k) => [k, scope.vars[k]])) }) : {};
    await this.store.phases.update(phaseId, { status: skippedHere ? 'skipped' : 'ok', outputs, endedAt: now() });
    if (skippedHere) {
      const where = iteration === null ? phase : `Iteration ${iteration + 1}`;
      await this.log(run, 'warn', `${where} had ${skippedSteps(skippedHere)}: it is marked skipped, and its outputs are not data.`);
    }
    if (phase === 'main' && iteration !== null) {
      this.emit('event', { type: 'iteration', run_id: run, iteration, params: scope.params, outputs, ...(skippedHere ? { skipped: true } : {}) } satisfies RunnerEvent);
    }
    return { outputs, skipped: skippedHere > 0 };
  }

  private emitStep(c: Current, at: StepAt, state: 'start' | 'ok' | 'error', extra: Partial<Extract<RunnerEvent, { type: 'step' }>> = {}) {
    this.emit('event', { type: 'step', run_id: c.run.id, phase: at.phase, iteration: at.iteration, path: at.path, index: at.index, state, kind: at.step.kind, ...extra } satisfies RunnerEvent);
  }

  /** One instrument call of a run: its record is `running` before the instrument is touched. */
  private async callStep(c: Current, at: StepAt, instrument: string, method: string, args: Record<string, unknown>) {
    const base = { runId: c.run.id, phase: at.phase, iteration: at.iteration, stepIndex: at.index, instrument, method, userId: c.task.createdBy };
    const id = await this.store.steps.insert({ ...base, args, output: null, status: 'running', error: null, startedAt: now(), endedAt: null });
    this.emitStep(c, at, 'start', { instrument, method, step_id: id });
    try {
      const { output } = await this.deck.call(instrument, method, args, {
        ...base,
        owner: c.owner,
        record: async (s) => {
          await this.store.steps.update(id, { args: s.args, output: s.output, status: s.status, error: s.error, startedAt: s.startedAt, endedAt: s.endedAt, log: s.log ?? null });
          return id;
        },
      });
      const saveAs = at.phase === 'main' && at.step.kind === 'call' ? at.step.save_as : undefined;
      const problem = saveAs ? c.checkSaved?.(saveAs, output) : null;
      if (problem) throw new LabError('instrument_error', `${instrument}.${method} returned ${(JSON.stringify(output) ?? String(output)).slice(0, 200)}: ${problem}`);
      this.emitStep(c, at, 'ok', { instrument, method, output, step_id: id });
      return output;
    } catch (e) {
      c.failedStep = id;
      // the deck recorded the call itself (an instrument error, or a host lost mid-call: in-doubt)
      if (!(isLabError(e) && e.data?.task_id !== undefined)) {
        await this.store.steps.update(id, { status: 'error', error: message(e), endedAt: now() });
      }
      this.emitStep(c, at, 'error', { instrument, method, error: message(e), step_id: id });
      throw e;
    }
  }

  private sleep(ms: number): Promise<void> {
    const done = waiter<void>();
    const entry = { timer: setTimeout(() => done.resolve(), ms), done };
    this.sleeping.add(entry);
    return done.promise.finally(() => this.sleeping.delete(entry));
  }
}

/** `1 skipped step`, `3 skipped steps`. */
const skippedSteps = (n: number) => `${n} skipped step${n === 1 ? '' : 's'}`;

/** The last record of each step position (phase, iteration, index): a retried or resumed step has several. */
function latestSteps(steps: StepRow[]): StepRow[] {
  const last = new Map<string, StepRow>();
  for (const s of steps) last.set(`${s.phase}|${s.iteration}|${s.stepIndex}`, s);
  return [...last.values()];
}

/** The in-doubt step of a resumed run, skipped by the operator's choice. */
class SkipInDoubt extends Error {
  constructor() {
    super('skipped after the interruption');
  }
}
