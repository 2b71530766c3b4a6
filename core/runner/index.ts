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
import { ownerOrAdmin, type PublicUser } from '../accounts/index.js';
import type { InstrumentSchema } from '../contracts/index.js';
import type { Deck } from '../deck/index.js';
import { LabError, isLabError, isStoreFault } from '../errors.js';
import { availableControls, CONTROL_LABEL, SITUATION, situationOf, type Control, type ControlStatus } from './controls.js';
import type { PhaseRow, QueueTaskRow, RunRow, RunStatus, StepRow, Store, TaskStatus } from '../store/types.js';
import { checkConfigRows, repeatRow, type RowOptions } from '../workflow/config.js';
import { outputsOf, runSteps, type RunControl, type Scope, type StepAt } from '../workflow/interpreter.js';
import type { Phase, Step } from '../workflow/model.js';
import { countSteps, instrumentsOf, validateWorkflow, type DeckSchemas } from '../workflow/validate.js';
import { HostLease, type HostOptions } from './hosts.js';
import { placementProblem, type Drivers } from './placement.js';
import { HostRelay, MESSAGE_LIMIT, type Peer } from './relay.js';
import { Abort, Shutdown, TaskRun, waiter, type RunnerState, type RunningTask, type Waiter } from './execution.js';
import { StoreFaults } from './store-fault.js';
import { giveInput, isInputRecord, onlyInputInDoubt, waitForInput, type GivenBy, type InputEvent, type WaitingInput } from './input.js';

export { type RunnerState, type RunningTask } from './execution.js';

export type Direction = 'up' | 'down' | 'top' | 'bottom';
export const DIRECTIONS: readonly Direction[] = ['up', 'down', 'top', 'bottom'];

import { runParameters, workflowIterations, type IterationSource, type SourceFactory, type TaskPayload, type WorkflowPayload } from './tasks.js';
import { sentence } from '../text.js';
import { bestText, campaignBest } from '../notify/campaign.js';
import { alerting, alertingWhen, alertOnly, keys as alertKeys, open as openAlert, resolve as resolveAlert, resolveEvent, resolveRun } from '../notify/events.js';
import { inputNotAskedAgain } from '../notify/runs.js';
import type { AlertOp, TxStore } from '../store/types.js';
import { savedProblem } from './saved.js';
import { iterationDoubt, remadeSince, resumeLine, type IterationDoubt } from './iteration.js';

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
  /** An `input` step waiting for a person's value (POST /executions/input; core/runner/input.ts). */
  input: null | WaitingInput;
  /** A task whose run was cut off by a crash, waiting (held) for the operator. */
  interrupted: null | ({ task_id: number; run_id: number | null; step: { id: number; phase: string | null; iteration: number | null; index: number | null; instrument: string; method: string } | null } & IterationDoubt);
  /** Why no task can start now: the database cannot be written (a full or read-only disk). */
  store_error: string | null;
  /**
   * Tasks other labdecks on this database are running (DESIGN.md §12), with their state and progress as
   * those labdecks last relayed them (PostgreSQL); the controls here act on them there.
   */
  elsewhere: ElsewhereTask[];
  /**
   * Every task this labdeck runs now, in the order they started (`current_task` and the fields above describe
   * the first). With several, the controls need a `task_id`.
   */
  running: RunningTask[];
  /** How many tasks on disjoint instruments this labdeck runs at once (`lab serve --parallel N`). */
  parallel: number;
}

/** A task another labdeck runs: which, where, and (PostgreSQL) its state and progress as that labdeck relayed them. */
export interface ElsewhereTask {
  task_id: number;
  name: string;
  run_id: number | null;
  host: string;
  state?: RunningTask['state'];
  paused?: boolean;
  progress?: RunningTask['progress'];
  failed_step?: RunningTask['failed_step'];
  waiting?: RunningTask['waiting'];
  input?: RunningTask['input'];
}

/** A running task's state as a labdeck relays it to the others (its `status` events carry its running tasks'). */
type LiveTask = Required<Omit<ElsewhereTask, 'task_id' | 'name' | 'run_id' | 'host'>>;

/**
 * What the runner tells its listeners. `host` is set on the events of another labdeck's run, relayed from it
 * (PostgreSQL): that labdeck's name.
 */
export type RunnerEvent = (
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
  | { type: 'iteration'; run_id: number; iteration: number; params: Record<string, unknown>; outputs: Record<string, unknown>; /** a step of it was skipped: not data */ skipped?: true }
  | InputEvent
) & { host?: string; /** relayed with a large value cut (the run's records have it) */ cut?: true };

/** How a resumed run treats the step that was in flight when the server died; `ending`: cleanup only (aborted). */
type Resume = { run: RunRow; mode: 'retry' | 'skip' | 'iteration'; steps: StepRow[]; ending?: boolean; remade?: string[] };
/** A phase replayed from its records up to `until` (a step index); `skipAt`: the in-doubt step skipped. */
type Replay = { until: number; recorded: Map<string, StepRow>; skipAt: number | null };

const now = () => new Date();
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
/** The run controls of the web app and the API, by the Runner method that does each. */
export const RUN_CONTROLS = ['pauseResume', 'pause', 'resume', 'continuePauseStep', 'skip', 'release', 'retry', 'abortNextIteration', 'abortNextTask', 'rerunIteration', 'retryStep'] as const;
export type RunControlName = (typeof RUN_CONTROLS)[number];
/** Who asks for a control: a person (the web app, the API, the CLI, an approved request) or an AI agent (MCP). */
export type ControlBy = 'person' | 'agent';
/** How long a control sent to the host that runs the task waits for its answer once that host has it. */
const CONTROL_MS = 30_000;
/** A direct call's output larger than this comes back from the host that made it through its record. */
export const OUTPUT_INLINE = 4_000;
/** What another labdeck on the database asks of this one: a run control, a direct call, an input step's value. */
export type RelayedKind = 'control' | 'call' | 'input';

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
  /** How many tasks on disjoint instruments may run at once (default 1: one task at a time). */
  parallel?: number;
}

/** A `parallel` that is a whole number of at least 1, or a LabError('invalid_input') saying so. */
export function checkParallel(n: unknown): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
    throw new LabError('invalid_input', `--parallel must be a whole number of tasks, 1 or more (got ${JSON.stringify(n)}).`, [{ field: 'parallel', message: 'a positive whole number' }]);
  }
  return n;
}

export class Runner extends EventEmitter {
  private readonly store: Store;
  private readonly deck: Deck;
  private readonly sources: Partial<Record<string, SourceFactory>>;
  /** The queue's pause flag: no new task starts (set while idle, or left by a task that ended paused). */
  private paused = false;
  private held = false;
  private closed = false;
  /** The tasks running now, in the order they started (each its own state: core/runner/execution.ts). */
  private tasks: TaskRun[] = [];
  /** How many tasks may run at once. */
  readonly parallel: number;
  /** The instruments of each task the loop has started (leased from its claim until it ends). */
  private readonly leases = new Map<number, string[]>();
  /** The executions under way (the loop waits for them when it stops). */
  private readonly executing = new Set<Promise<void>>();
  private wake: Waiter<void> = waiter();
  private loopDone: Promise<void> | null = null;
  private interrupted: RunnerStatus['interrupted'] = null;
  /** This process in the lab's hosts table: its lease, its instruments. */
  readonly host: HostLease;
  private readonly takesOwnOnly: boolean;
  /** Tasks submitted through this runner (what it takes with `takes: 'own'`). */
  private readonly mine = new Set<number>();
  /** Instruments of this deck that another live host drives: instrument → that host's name. */
  private othersHold = new Map<string, string>();
  /** The instruments other live hosts drive (this deck's or not): instrument → that host. */
  private drivers = new Map<string, Peer>();
  /** Checks a task before it is queued, throwing to refuse it (the safety guard's limits; set by the runtime). */
  preflight: ((payload: WorkflowPayload) => void) | null = null;
  /** Runs, controls and calls between this labdeck and the others on the database (core/runner/relay.ts). */
  private readonly relay: HostRelay;
  /**
   * Who serves what other labdecks ask of this one: the operations (core/operations/relay.ts), so a relayed
   * control, call or input is the same operation as one asked here. Unset, the runner serves them itself.
   */
  readonly served: Partial<Record<RelayedKind, (body: unknown) => Promise<unknown>>> = {};
  /** Tasks a store failure cut off, until they are recorded interrupted (core/runner/store-fault.ts). */
  private readonly faults: StoreFaults;

  constructor(opts: RunnerOptions) {
    super();
    this.store = opts.store;
    this.deck = opts.deck;
    this.sources = opts.sources ?? {};
    this.host = new HostLease(opts.store, opts.host ?? { kind: 'serve' });
    this.takesOwnOnly = opts.takes === 'own';
    this.parallel = checkParallel(opts.parallel ?? 1);
    this.relay = new HostRelay({ store: opts.store, self: this.host });
    this.faults = new StoreFaults({
      store: opts.store,
      hostId: this.host.id,
      active: (id) => this.leases.has(id),
      settled: async ({ ended }) => {
        for (const id of ended) this.letGo(id);
        await this.refreshHeld();
        await this.refreshInterrupted();
        this.tellOthers();
        this.emitQueue();
        this.emitStatus();
        this.notify();
      },
    });
    // this labdeck's live events go to the others (its status as its own running tasks' state)
    this.on('event', (e: RunnerEvent) => {
      if (e.host !== undefined || e.type === 'queue') return;
      if (e.type !== 'status') return this.relay.publish(e);
      const running: (LiveTask & { task_id: number })[] = e.status.running.map((t) => ({ task_id: t.id, state: t.state, paused: t.paused, progress: t.progress, failed_step: t.failed_step, waiting: t.waiting, input: t.input }));
      this.relay.publish({ type: 'status', running });
    });
    // what an instrument logs while it works for a run goes to that run's log
    this.deck.on('log', (e: { instrument: string; method: string; message: string }) => {
      const holder = this.deck.lockedBy(e.instrument);
      const c = this.tasks.find((t) => t.owner === holder);
      if (c) void this.log(c.run.id, 'info', `${e.instrument}.${e.method}: ${e.message}`).catch(() => undefined);
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
    // other labdecks' live events, and what they ask of this one: a run control, a call to one of its instruments
    // served by the operations once they are wired (core/operations/relay.ts); the runner's own when run alone
    this.relay.handle('control', (body) => (this.served.control ?? ((b) => this.controlAsked(b)))(body));
    this.relay.handle('call', (body) => (this.served.call ?? ((b) => this.callAsked(b)))(body));
    this.relay.handle('input', (body) => (this.served.input ?? ((b) => this.inputAsked(b)))(body));
    await this.relay.start((e, from) => this.heardLive(e, from));
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
      await this.faults.settle();
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
      const by = run.hostId ? await this.store.hosts.get(run.hostId) : null;
      const message = `Interrupted: labdeck stopped during this run${by ? ` (${by.name})` : ''}. Its in-flight step is marked in-doubt.`;
      // the run's interruption and its alert: one transaction (core/notify)
      const interrupted = await alertingWhen(this.store, async (tx) => {
        if (!(await tx.runs.interrupt(run.id, 'labdeck stopped while this run was going on'))) return { result: false, ops: [] };
        await tx.runSteps.markInDoubt(run.id);
        await tx.logs.add(run.id, 'warn', message);
        const ctx = { host: by?.name ?? null, task_id: run.taskId, run_id: run.id, message: `${message} Re-run the step, go on after it, or end the run.` };
        // an input asked again by itself waits for no decision: no alert (resumeWaitingInput)
        const quiet = !this.takesOwnOnly && (await onlyInputInDoubt(tx, run.id));
        return { result: true, ops: quiet ? [] : [openAlert('run_interrupted', alertKeys.interrupted(run.id), ctx, { userId: run.userId })] };
      });
      if (!interrupted) continue;
    }
    let changed = false;
    for (const task of await this.store.queue.orphaned()) {
      const ctx = { host: this.host.name, task_id: task.id, run_id: task.runId, message: `The queue is held: task ${task.id} (${task.name}) was interrupted and waits for a decision.` };
      const quiet = !this.takesOwnOnly && (await onlyInputInDoubt(this.store, task.runId));
      if (await alerting(this.store, quiet ? [] : [openAlert('queue_held', alertKeys.queueHeld(task.id), ctx, { userId: task.createdBy })], (tx) => tx.queue.interrupt(task.id))) changed = true;
    }
    const wasHeld = this.held;
    await this.refreshHeld();
    if (changed || wasHeld !== this.held) this.emitQueue();
    await this.refreshInterrupted();
    await this.resumeWaitingInput();
    await this.refreshElsewhere();
    if (changed) this.emitStatus();
  }

  /**
   * A run interrupted while it waited for a person's input touched nothing in flight: it is resumed at once
   * (its steps replayed from the records), and waits for the same input again (core/runner/input.ts).
   */
  private async resumeWaitingInput(): Promise<void> {
    const info = this.interrupted;
    if (!info?.step || !isInputRecord(info.step) || this.closed || this.takesOwnOnly) return;
    try {
      // one labdeck resumes it: the first to claim this interruption (its step, and the host that was cut off)
      const run = info.run_id ? await this.store.runs.get(info.run_id) : null;
      if (!(await this.store.settings.claim(`input.resume.${info.step.id}.${run?.hostId ?? 'none'}`, this.host.id))) return;
      await this.resumeInterrupted('retry', 'labdeck asked the waiting input again (nothing was in doubt)');
      this.emitQueue();
    } catch (e) {
      // no free place or instrument here: it stays interrupted, and waits for a person after all
      await inputNotAskedAgain(this.store, info.task_id, this.host.name, message(e)).catch(() => undefined);
    }
  }

  /**
   * Give the value an input step waits for (`taskId`: which task, while several wait). Done here, or by the
   * labdeck on the database that runs the task. A value that does not fit is a 400 naming the field (the run
   * keeps waiting); no input waiting is a 409. Resolves with the checked value and the status after.
   */
  async input(raw: unknown, opts: { taskId?: number; by: GivenBy | null }): Promise<{ task_id: number; value: unknown; status: RunnerStatus }> {
    const here = opts.taskId === undefined ? this.tasks.some((t) => t.waitingInput) : this.tasks.some((t) => t.id === opts.taskId);
    if (!here) {
      const there = this.elsewhere.filter((t) => (opts.taskId === undefined || t.task_id === opts.taskId) && this.liveElsewhere.get(this.elsewhereHost.get(t.task_id)!)?.get(t.task_id)?.input);
      if (there.length === 1 || (opts.taskId !== undefined && this.elsewhere.some((t) => t.task_id === opts.taskId))) {
        const t = there[0] ?? this.elsewhere.find((x) => x.task_id === opts.taskId)!;
        const to = { id: this.elsewhereHost.get(t.task_id)!, name: t.host };
        const answer = await this.relay.request<{ task_id: number; value: unknown; status: RunnerStatus }>(to, 'input', { task_id: t.task_id, value: raw, by: opts.by }, `input of task ${t.task_id}`, CONTROL_MS);
        if (answer) return answer;
      }
      if (opts.taskId !== undefined) await this.named(opts.taskId); // 404 or 409 naming where it is
      throw new LabError('conflict', `No input is waiting${this.elsewhereNote()}.`, undefined, { state: this.status().state });
    }
    const { task, value } = giveInput(this.tasks, raw, opts);
    this.emitStatus();
    return { task_id: task.id, value, status: this.status() };
  }

  /** An input another labdeck passes on for a task this one runs. */
  private inputAsked(body: unknown) {
    const m = (body ?? {}) as { task_id?: unknown; value?: unknown; by?: GivenBy | null };
    return this.input(m.value, { taskId: typeof m.task_id === 'number' ? m.task_id : undefined, by: m.by && typeof m.by.username === 'string' ? { id: typeof m.by.id === 'number' ? m.by.id : null, username: m.by.username } : null });
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
      const others = (await this.store.hosts.catalogue()).filter((i) => i.hostId !== this.host.id);
      this.drivers = new Map(others.map((i) => [i.name, { id: i.hostId, name: i.host }]));
      this.remote = new Map(others.filter((i) => !this.deck.has(i.name)).map((i) => [i.name, { ...(i.schema as InstrumentSchema), host: (i.schema as InstrumentSchema).host ?? i.host }]));
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
    this.relay.close();
    this.faults.close();
    this.deck.off('change', this.onDeckChange);
    await this.syncing;
    // a run cut here stays `running`: stopped, this host's runs are recovered (interrupted) by the next one
    await this.host.stop().catch((e) => this.reportFault(e, 'could not mark this host stopped: '));
  }

  /** Take no more tasks, and cut the running phase at its next step (its run is left for recovery). */
  private stopWork(why: string) {
    this.closed = true;
    const stop = new Shutdown(why);
    for (const t of this.tasks) t.cut(stop);
  }

  /* ------------------------------------------------------------------ status */

  /**
   * The runner as the spec's status shows it: `busy`, `state`, `current_task`, `progress`, `failed_step` and
   * `waiting` describe the first running task (the only one, by default); `running` lists them all.
   */
  status(): RunnerStatus {
    const running = this.tasks.map((t) => t.view());
    const first = running[0];
    return {
      busy: first !== undefined,
      state: first?.state ?? 'idle',
      paused: first ? first.paused : this.paused,
      // DESIGN §5: the pause flag holds the queue too, unless it is a running task's own
      queue_held: this.held || (this.paused && !running.some((t) => t.paused)),
      current_task: first ? { id: first.id, name: first.name, kind: first.kind, run_id: first.run_id, workflow: first.workflow, started_at: first.started_at } : null,
      progress: first?.progress ?? { phase: null, iteration: 0, iterations: 0, step: 0, steps: 0 },
      failed_step: first?.failed_step ?? null,
      waiting: first?.waiting ?? null,
      input: first?.input ?? null,
      interrupted: this.interrupted,
      store_error: this.storeFault ?? this.faults.error(),
      elsewhere: this.elsewhere.map((t) => ({ ...t, ...this.liveElsewhere.get(this.elsewhereHost.get(t.task_id)!)?.get(t.task_id) })),
      running,
      parallel: this.parallel,
    };
  }

  /** Tasks other hosts are running now, read on each heartbeat and wake-up; and the host of each. */
  private elsewhere: RunnerStatus['elsewhere'] = [];
  private elsewhereHost = new Map<number, string>();
  /** The running tasks' state each other labdeck last relayed: host id → task id → state (its tasks only). */
  private liveElsewhere = new Map<string, Map<number, LiveTask>>();

  private async refreshElsewhere() {
    const running = (await this.store.queue.open()).filter((t) => t.status === 'running' && t.hostId !== null && t.hostId !== this.host.id);
    const names = running.length ? new Map((await this.store.hosts.live()).map((h) => [h.id, h.name])) : new Map<string, string>();
    const elsewhere = running.map((t) => ({ task_id: t.id, name: t.name, run_id: t.runId, host: names.get(t.hostId!) ?? 'a labdeck that has stopped' }));
    this.elsewhereHost = new Map(running.map((t) => [t.id, t.hostId!]));
    // what stopped hosts relayed is let go (the others replace theirs with each status they send)
    for (const id of this.liveElsewhere.keys()) if (names.size && !names.has(id)) this.liveElsewhere.delete(id);
    if (JSON.stringify(elsewhere) === JSON.stringify(this.elsewhere)) return;
    this.elsewhere = elsewhere;
    this.emitStatus();
  }

  /** "; task 7 runs on lab serve on pc-2 (pid 4): control it there", when this host runs nothing and another does. */
  private elsewhereNote(): string {
    const t = this.tasks.length ? undefined : this.elsewhere[0];
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
    const ctx = { host: this.host.name, task_id: taskId, run_id: this.tasks.find((t) => t.id === taskId)?.run.id ?? null, message: `The queue is held after task ${taskId} was aborted: release it to let the next task start.` };
    await alerting(this.store, [openAlert('queue_held', alertKeys.queueHeld(taskId), ctx)], (tx) => tx.queue.update(taskId, { holdsQueue: true }));
    // a read of the database that began while this was being written may have found no hold: it is older
    this.setHeld(true);
  }

  /* ------------------------------------------------------------------ the queue */

  /**
   * Queue a workflow over config rows or a repeat count. The workflow is validated against the live deck and
   * the rows against its parameters now, so a task never starts with a problem that could be seen before.
   */
  async submit(input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown; userId: number | null; rowLabel?: RowOptions['label'] }): Promise<QueueTaskRow> {
    return this.enqueue({ ...(await this.prepare(input)), createdBy: input.userId });
  }

  /**
   * The task a run would queue: the saved workflow checked against the lab's instruments, its rows (or repeat)
   * checked against its parameters, and named; nothing is queued (an approval shows it to a person first).
   */
  async prepare(
    input: { workflow: unknown; config?: unknown; repeat?: unknown; name?: unknown; rowLabel?: RowOptions['label'] },
    opts: { upfront?: boolean } = {},
  ): Promise<{ name: string; kind: 'workflow'; payload: WorkflowPayload }> {
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
    // the safety guard's up-front check (core/safety/upfront.ts); the preflight asks for its verdict instead
    if (opts.upfront !== false) this.preflight?.(payload);
    return { name, kind: 'workflow', payload };
  }

  /** Queue a checked task (submit does the checking for workflows; core/campaign for campaigns). */
  async enqueue(t: { name: string; kind: QueueTaskRow['kind']; payload: TaskPayload; createdBy: number | null }): Promise<QueueTaskRow> {
    await this.checkPlacement(t.name, t.payload);
    if (this.beforeQueue) await this.beforeQueue(t);
    const task = await this.store.queue.add(t);
    if (this.takesOwnOnly) this.mine.add(task.id);
    this.tellOthers();
    this.emitQueue();
    this.notify();
    return task;
  }

  /** A check every task passes before it is queued, throwing to refuse it (the preflight, core/resources/preflight.ts). */
  beforeQueue: ((t: { name: string; kind: QueueTaskRow['kind']; payload: TaskPayload }) => Promise<void>) | null = null;

  /** Refuse (409) a task no one labdeck on the database could start: core/runner/placement.ts. */
  private async checkPlacement(name: string, payload: TaskPayload): Promise<void> {
    let needs: string[];
    try {
      needs = instrumentsOf(payload.definition);
    } catch {
      return; // a payload that cannot be read: the host that takes it records why it failed
    }
    // who drives what, read now (a host that just started or stopped counts); this deck's unleased instruments are its own
    const self = { id: this.host.id, name: this.host.name };
    const drivers: Drivers = new Map((await this.store.hosts.catalogue()).map((i) => [i.name, { id: i.hostId, name: i.host }]));
    for (const n of needs) if (!drivers.has(n) && this.deck.has(n)) drivers.set(n, self);
    const problem = placementProblem(needs, drivers, { self, ownOnly: this.takesOwnOnly, task: `"${name}"` });
    if (problem) throw problem;
  }

  /**
   * Whether a queued task is running or starts at once: a free place (`parallel`), the queue not paused or
   * held, and no pending task ahead of it that could start instead (one whose instruments are free).
   */
  async startsNow(id: number): Promise<boolean> {
    if (this.tasks.some((t) => t.id === id)) return true;
    if (this.paused || this.held || this.leases.size >= this.parallel) return false;
    for (const t of (await this.store.queue.open()).filter((t) => t.status === 'pending')) {
      // free here: this labdeck drives its instruments and none is in use (a task another labdeck runs is "queued" here)
      const free = (await this.missing(t.id)).length === 0 && !this.clashes(await this.needsOf(t.id));
      if (t.id === id) return free;
      if (free) return false; // it would start first
    }
    return false;
  }

  /** Unfinished tasks in queue order, with the runner's flags; `running_task_ids`: the tasks this labdeck runs. */
  async queue() {
    const tasks = await this.store.queue.open();
    return { tasks, paused: this.paused, queue_held: this.held, current_task_id: this.tasks[0]?.id ?? null, running_task_ids: this.tasks.map((t) => t.id) };
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
    const pending = (await this.store.queue.pending()).filter((id) => !this.leases.has(id));
    const candidates: number[] = [];
    for (const id of pending) if (await this.canRun(id)) candidates.push(id);
    const open = new Set(pending);
    for (const id of this.needs.keys()) if (!open.has(id)) this.needs.delete(id);
    const task = await this.store.queue.claim(this.host.id, candidates);
    // leased at once: a task the database says runs here is this runner's from its claim (store-fault.ts)
    if (task) this.leases.set(task.id, instrumentsOfTask(task));
    return task;
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

  /**
   * A task this host can run now: every instrument of its workflow is in this deck, driven by no other host,
   * and leased by none of the tasks running here.
   */
  private async canRun(id: number): Promise<boolean> {
    if (this.takesOwnOnly && !this.mine.has(id)) return false;
    return (await this.missing(id)).length === 0 && !this.clashes(await this.needsOf(id));
  }

  /** The first running (or starting) task here that leases one of `instruments`, or null. */
  private clashes(instruments: string[] | null, except?: number): { task: number; instrument: string } | null {
    for (const [task, leased] of this.leases) {
      if (task === except) continue;
      const shared = (instruments ?? []).find((n) => leased.includes(n));
      if (shared) return { task, instrument: shared };
    }
    return null;
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
    const running = this.tasks.find((t) => t.id === id);
    if (running) running.task = { ...running.task, name: name.trim() };
    this.emitQueue();
    this.emitStatus();
  }

  /* ------------------------------------------------------------------ operator controls */

  /** `task 3 ("mix × 2"), task 4 ("wash × 1")`: the tasks running here, for messages. */
  private runningList(): string {
    return this.tasks.map((t) => t.label()).join(', ');
  }

  /** The running tasks as a 409 lists them (`running` in its JSON). */
  private runningData() {
    return this.tasks.map((t) => ({ task_id: t.id, name: t.task.name, run_id: t.run.id, state: t.state() }));
  }

  /**
   * What a control without a task_id acts on: the only running task; several → 409 listing them; none →
   * null (the queue's flag, or the interrupted task waiting for a decision). Synchronous, so a control takes
   * effect before anything else the caller does next (as it always did).
   */
  private only(what: string): TaskRun | null {
    if (this.tasks.length > 1) {
      throw new LabError('conflict', `${this.tasks.length} tasks are running (${this.runningList()}): say which one to ${what} with task_id.`, [{ field: 'task_id', message: 'required while several tasks run' }], {
        running: this.runningData(),
      });
    }
    return this.tasks[0] ?? null;
  }

  /**
   * What a control with `taskId` acts on: that running task, or the interrupted task it names. An unknown
   * task is a 404; one that is not running here a 409 (naming the host that runs it, if another does).
   */
  private async named(taskId: number): Promise<TaskRun | 'interrupted'> {
    const run = this.tasks.find((t) => t.id === taskId);
    if (run) return run;
    if (this.interrupted?.task_id === taskId) return 'interrupted';
    const task = await this.store.queue.get(taskId);
    if (!task) throw new LabError('not_found', `There is no task ${taskId}.`, [{ field: 'task_id', message: 'no such task' }]);
    const there = this.elsewhere.find((t) => t.task_id === taskId);
    const here = this.tasks.length ? `; running here: ${this.runningList()}` : '';
    throw new LabError('conflict', there ? `Task ${taskId} runs on ${there.host}: control it there.` : `Task ${taskId} is not running (it is ${task.status})${here}.`, [{ field: 'task_id', message: 'not running here' }], {
      state: this.status().state,
      running: this.runningData(),
    });
  }

  /** Where the runner is with no task of its own running (the queue's flags, an interrupted task). */
  private idleView(): ControlStatus {
    return { busy: false, state: 'idle', paused: this.paused, queue_held: this.held || this.paused, current_task: null, failed_step: null, waiting: null, interrupted: this.interrupted };
  }

  /** Where one running task is, as the controls read it. */
  private viewOf(t: TaskRun): ControlStatus {
    const v = t.view();
    return { busy: true, state: v.state, paused: v.paused, queue_held: this.held, current_task: { id: v.id }, failed_step: v.failed_step, waiting: v.waiting, interrupted: this.interrupted };
  }

  /** A control that does nothing to its target (a running task, else the queue) now: a conflict naming where it is. */
  private check(control: Control, t: TaskRun | 'interrupted' | null): void {
    const s = t instanceof TaskRun ? this.viewOf(t) : this.idleView();
    if (availableControls(s)[control]) return;
    const who = t instanceof TaskRun && this.tasks.length > 1 ? `task ${t.id} is` : 'the runner is';
    throw new LabError('conflict', `${CONTROL_LABEL[control]} does nothing now: ${who} ${SITUATION[situationOf(s)].label}${t instanceof TaskRun ? '' : this.elsewhereNote()}.`, undefined, { state: s.state });
  }

  /** `check` for the controls of a running task only (pause, resume, continue). */
  private checkTask(control: Control, t: TaskRun | 'interrupted' | null): asserts t is TaskRun {
    this.check(control, t);
    if (!(t instanceof TaskRun)) throw new LabError('conflict', `${CONTROL_LABEL[control]} does nothing now: no task runs here.`, undefined, { state: 'idle' });
  }

  /**
   * An interrupted task can go on (retry, skip) or end (abort) here: a free place among the `parallel`
   * tasks, and none of its instruments leased by a running task.
   */
  private async checkPlaceFor(taskId: number): Promise<void> {
    // a task the store cut off keeps its own place and instruments: they count for it, not against it
    if ([...this.leases.keys()].filter((id) => id !== taskId).length >= this.parallel) {
      throw new LabError('conflict', `This labdeck runs ${this.parallel === 1 ? 'one task at a time' : `${this.parallel} tasks at once`} and is running ${this.runningList()}: decide about task ${taskId} when one has ended.`, undefined, { state: this.status().state, running: this.runningData() });
    }
    const clash = this.clashes(await this.needsOf(taskId), taskId);
    if (clash) throw new LabError('conflict', `Task ${taskId} needs ${clash.instrument}, which task ${clash.task} is using: decide about it when that task has ended.`, [{ field: clash.instrument, message: `in use by task ${clash.task}` }], { state: this.status().state });
  }

  /**
   * The one pause button of the spec (POST /executions/pause-resume): a failed step → skip it; a `pause` step
   * → continue; an interrupted task → go on after its in-doubt step; a held queue → release it; otherwise
   * pause or resume (idle, the flag holds the queue). The page and `lab run` use the controls below, which
   * each do one thing or refuse: a button named "Pause" never skips a step that failed a moment before.
   * With several tasks running, `taskId` says which one (else 409 listing them).
   */
  async pauseResume(taskId?: number): Promise<RunnerStatus> {
    const t = taskId === undefined ? this.only('pause or resume') : await this.named(taskId);
    if (t === 'interrupted' || (t === null && this.interrupted)) return this.skip(taskId);
    if (t) {
      if (t.failed) return this.skip(t.id);
      if (t.waitingPause) return this.continuePauseStep(t.id);
      return t.paused ? this.resume(t.id) : this.pause(t.id);
    }
    if (this.held) return this.release();
    // idle: the flag alone holds the queue (DESIGN §5), and clearing it lets the queue go on
    this.paused = !this.paused;
    if (!this.paused) this.notify();
    this.emitStatus();
    return this.status();
  }

  /** Set a running task's pause flag: no new step of it starts (a call in flight finishes). */
  async pause(taskId?: number, by: ControlBy = 'person'): Promise<RunnerStatus> {
    const t = taskId === undefined ? this.only('pause') : await this.named(taskId);
    this.checkTask('pause', t);
    t.paused = true;
    if (t.pausedBy !== 'person') t.pausedBy = by;
    // the run's log says when and why it stood still
    await this.log(t.run.id, 'info', 'Paused by the operator: no new step starts (a call in flight finishes).');
    this.emitStatus();
    return this.status();
  }

  /** Clear a running task's pause flag (and the queue's): it goes on. */
  async resume(taskId?: number, by: ControlBy = 'person'): Promise<RunnerStatus> {
    const t = taskId === undefined ? this.only('resume') : await this.named(taskId);
    this.checkTask('resume', t);
    if (by === 'agent' && t.paused && t.pausedBy === 'person') {
      throw new LabError('forbidden', `Task ${t.id} was paused by a person: only a person resumes it (an agent asks for it in the approval inbox).`, undefined, { task_id: t.id, paused_by: 'person' });
    }
    t.paused = false;
    t.pausedBy = null;
    this.paused = false;
    t.resumeFlag?.resolve();
    this.notify();
    await this.log(t.run.id, 'info', 'Resumed by the operator.');
    this.emitStatus();
    return this.status();
  }

  /** A `pause` step is done: go on with the next step. */
  async continuePauseStep(taskId?: number): Promise<RunnerStatus> {
    const t = taskId === undefined ? this.only('continue') : await this.named(taskId);
    this.checkTask('continue', t);
    t.waitingPause!.resolve();
    this.emitStatus();
    return this.status();
  }

  /** Leave the failed step out and go on (or go on after an interrupted task's in-doubt step). */
  async skip(taskId?: number): Promise<RunnerStatus> {
    const t = taskId === undefined ? this.only('skip') : await this.named(taskId);
    if (t instanceof TaskRun) {
      this.check('skip', t);
      t.decide('skip');
    } else {
      if (!this.interrupted) this.check('skip', t);
      await this.resumeInterrupted('skip');
    }
    this.emitStatus();
    return this.status();
  }

  /**
   * Let a held queue (after abort next-task, or the pause flag set while idle) start tasks again. It is the
   * queue's, not a task's: it takes no task_id. With several tasks at once it may be released while others
   * run, though not while the task that holds it is still ending.
   */
  async release(): Promise<RunnerStatus> {
    const stillEnding = this.tasks.some((t) => t.abortRequest === 'task');
    const free = this.parallel > 1 && (this.held || this.paused) && !this.interrupted && !stillEnding;
    if (!free) this.check('release', this.tasks.length ? this.tasks[0] : null);
    await alerting(this.store, [resolveEvent('queue_held', 'the queue was released')], (tx) => tx.queue.release());
    this.setHeld(false);
    this.tellOthers();
    this.paused = false;
    this.notify();
    this.emitStatus();
    return this.status();
  }

  /** Re-run the failed step (or an interrupted task's in-doubt step). */
  async retry(taskId?: number): Promise<RunnerStatus> {
    const t = taskId === undefined ? this.only('retry') : await this.named(taskId);
    if (t instanceof TaskRun && t.failed) t.decide('retry');
    else if (t !== null && !(t instanceof TaskRun)) await this.resumeInterrupted(this.interrupted!.retry === 'iteration' ? 'iteration' : 'retry');
    else if (t === null && this.interrupted) await this.resumeInterrupted(this.interrupted.retry === 'iteration' ? 'iteration' : 'retry');
    else this.notApplicable('retry', t);
    this.emitStatus();
    return this.status();
  }

  /** An interrupted task: run its in-doubt step's iteration again from its first step (core/runner/iteration.ts). */
  rerunIteration(taskId?: number): Promise<RunnerStatus> {
    return this.decideInterrupted('iteration', 're-run the iteration of', taskId);
  }

  /** An interrupted task: re-run its in-doubt step only, even where a plain Retry would re-run the iteration. */
  retryStep(taskId?: number): Promise<RunnerStatus> {
    return this.decideInterrupted('retry', 'retry the in-doubt step of', taskId);
  }

  private async decideInterrupted(mode: 'retry' | 'iteration', what: string, taskId?: number): Promise<RunnerStatus> {
    const t = taskId === undefined ? (this.interrupted ? 'interrupted' : this.only(what)) : await this.named(taskId);
    if (t !== 'interrupted' || !this.interrupted?.step) {
      const detail = this.interrupted ? ' (no step of it was in doubt: Retry starts it again)' : '';
      throw new LabError('conflict', `Nothing to ${what}: no interrupted task waits with an in-doubt step${detail}.`, undefined, { state: t instanceof TaskRun ? t.state() : 'idle' });
    }
    await this.resumeInterrupted(mode);
    this.emitStatus();
    return this.status();
  }

  private notApplicable(what: string, t: TaskRun | null): never {
    const state = t ? t.state() : 'idle';
    const who = t && this.tasks.length > 1 ? `task ${t.id} is` : 'the runner is';
    throw new LabError('conflict', `Nothing to ${what}: ${who} ${state}${this.held ? ' (queue held)' : ''}${t ? '' : this.elsewhereNote()}.`, undefined, { state });
  }

  /** Finish the current iteration, skip the rest, run cleanup, record `stopped`; the queue goes on. */
  async abortNextIteration(taskId?: number): Promise<RunnerStatus> {
    const t = taskId === undefined ? this.only('abort') : await this.named(taskId);
    if (!(t instanceof TaskRun)) this.notApplicable('abort', null);
    if (t.abortRequest !== 'task') t.abortRequest = 'iteration';
    // a failed step ends its iteration at once: there is nothing more of it to finish
    t.cut(new Abort('iteration'), false);
    this.emitStatus();
    return this.status();
  }

  /** Finish the in-flight step, run no further step, run cleanup, record `aborted`; hold the queue. */
  async abortNextTask(taskId?: number): Promise<RunnerStatus> {
    const t = taskId === undefined ? this.only('abort') : await this.named(taskId);
    if (t instanceof TaskRun) {
      t.abortRequest = 'task';
      await this.hold(t.id);
      t.cut(new Abort('task'));
    } else if (this.interrupted) {
      await this.checkPlaceFor(this.interrupted.task_id);
      await this.endInterrupted();
    } else this.notApplicable('abort', null);
    this.emitStatus();
    return this.status();
  }

  /**
   * A control asked through the web app or the API, on the task `taskId` (needed while several run). Done
   * here; or, when the task runs on another labdeck on the database (named, or the lab's only task while
   * this labdeck runs nothing), sent to that labdeck (PostgreSQL), whose answer is returned: its status after
   * the control, or its refusal. On SQLite (one PC) the refusal here names the host instead.
   */
  async control(name: RunControlName, taskId?: number, by: ControlBy = 'person'): Promise<RunnerStatus> {
    if (this.faults.waiting.length) await this.faults.beforeControl(taskId, this.tasks.length);
    if (name === 'release') return this.release();
    const here = taskId === undefined ? this.tasks.length > 0 || this.interrupted !== null : this.tasks.some((t) => t.id === taskId) || this.interrupted?.task_id === taskId;
    if (!here) {
      const there = taskId === undefined ? this.elsewhere : this.elsewhere.filter((t) => t.task_id === taskId);
      if (there.length > 1) {
        const list = there.map((t) => `task ${t.task_id} on ${t.host}`).join(', ');
        throw new LabError('conflict', `Several tasks run on other labdecks (${list}): say which one with task_id.`, [{ field: 'task_id', message: 'required while several tasks run' }], { running: there });
      }
      if (there.length === 1) {
        const answer = await this.ask(there[0], name, by);
        if (answer) return answer;
      }
    }
    return this.act(name, taskId, by);
  }

  /** A task this runner let go of without running it: its place, its instruments' lease and lock are free. */
  private letGo(taskId: number): void {
    this.leases.delete(taskId);
    this.deck.unlock(`task-${taskId}`);
    this.notify();
  }

  /** Do control `name` here (release is the queue's: it takes no task). */
  private act(name: RunControlName, taskId: number | undefined, by: ControlBy = 'person'): Promise<RunnerStatus> {
    if (name === 'pause' || name === 'resume') return this[name](taskId, by);
    return name === 'release' ? this.release() : this[name](taskId);
  }

  /** Do control `name` on a task this labdeck runs, never sending it on (a control another labdeck relayed here). */
  controlHere(name: RunControlName, taskId: number | undefined, by: ControlBy = 'person'): Promise<RunnerStatus> {
    return this.act(name, taskId, by);
  }

  /** Send a control to the host running `task`; its answer, or undefined when the database carries no messages. */
  private ask(task: RunnerStatus['elsewhere'][number], control: RunControlName, by: ControlBy): Promise<RunnerStatus | undefined> {
    const to = { id: this.elsewhereHost.get(task.task_id)!, name: task.host };
    // the task is named, so a labdeck running several acts on that one
    return this.relay.request<RunnerStatus>(to, 'control', { control, task_id: task.task_id, by }, `${control} of task ${task.task_id}`, CONTROL_MS);
  }

  /** A control another labdeck asks of this one (for a task this one runs): this one's status after it. */
  private controlAsked(body: unknown): Promise<RunnerStatus> {
    const m = body as { control?: unknown; task_id?: unknown; by?: unknown } | null;
    if (!RUN_CONTROLS.includes(m?.control as RunControlName)) throw new LabError('invalid_input', `No run control "${String(m?.control)}".`);
    // an older labdeck sends no `by`: taken for an agent's only when it says so
    return this.act(m!.control as RunControlName, typeof m!.task_id === 'number' ? m!.task_id : undefined, m!.by === 'agent' ? 'agent' : 'person');
  }

  /** Another labdeck's live event: its run's events go to this one's listeners marked with that host; its status updates `elsewhere`. */
  private heardLive(e: Record<string, unknown>, from: Peer) {
    if (this.closed) return;
    if (e.type === 'status') {
      const running = Array.isArray(e.running) ? (e.running as (LiveTask & { task_id: number })[]) : [];
      if (running.length) this.liveElsewhere.set(from.id, new Map(running.map(({ task_id, ...t }) => [task_id, t])));
      else this.liveElsewhere.delete(from.id);
      if (this.elsewhere.length) this.emitStatusSoon();
      return;
    }
    this.emit('event', { ...e, host: from.name } as RunnerEvent);
  }

  /* ------------------------------------------------------------------ direct calls */

  /**
   * A direct call to one of the lab's instruments (the web app's and the API's): made here when this deck drives
   * it; when another labdeck on the database drives it (PostgreSQL), asked of that labdeck, which makes and
   * records it and whose answer comes back (the output and task_id, or its refusal as it gave it). On SQLite,
   * or when nobody drives it, as a call to this deck (an instrument another labdeck drives is offline here).
   */
  async call(instrument: string, method: string, args: unknown, opts: { userId: number | null }): Promise<{ taskId: number; output: unknown; host?: string }> {
    const there = this.drivers.get(instrument);
    if (there) {
      const answer = await this.relay.request<{ task_id: number; output?: unknown; in_record?: true }>(there, 'call', { instrument, method, args, user_id: opts.userId }, `${instrument}.${method}`);
      if (answer) {
        const output = answer.in_record ? ((await this.store.steps.get(answer.task_id))?.output ?? null) : answer.output;
        return { taskId: answer.task_id, output, host: there.name };
      }
      if (!this.deck.has(instrument)) {
        throw new LabError('unavailable', `${instrument} is driven by ${there.name}, another labdeck on this database: call it there.`, undefined, { instrument, host: there.name });
      }
    }
    return this.deck.call(instrument, method, args, opts);
  }

  /** A call another labdeck asks this one to make on its deck: made and recorded here; a large output stays in its record. */
  private async callAsked(body: unknown): Promise<{ task_id: number; output?: unknown; in_record?: true }> {
    const m = (body ?? {}) as { instrument?: unknown; method?: unknown; args?: unknown; user_id?: unknown };
    if (typeof m.instrument !== 'string' || typeof m.method !== 'string') throw new LabError('invalid_input', 'A call names its instrument and method.');
    const { taskId, output } = await this.deck.call(m.instrument, m.method, m.args, { userId: typeof m.user_id === 'number' ? m.user_id : null });
    return Buffer.byteLength(JSON.stringify(output) ?? '') > Math.min(OUTPUT_INLINE, MESSAGE_LIMIT) ? { task_id: taskId, in_record: true } : { task_id: taskId, output };
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
      ...iterationDoubt(task.kind, doubt ? remadeSince(steps, doubt, (n) => this.deck.madeAt(n)) : []),
    };
  }

  /** `why`: the resolution's words (default: the operator's choice of `mode`). */
  private async resumeInterrupted(mode: 'retry' | 'skip' | 'iteration', why?: string) {
    const info = this.interrupted!;
    const task = await this.task(info.task_id);
    const needs = await this.missing(task.id);
    if (needs.length) {
      throw new LabError('conflict', `Task ${task.id} needs ${needs.join(', ')}, which this labdeck does not drive: ${mode} it on the labdeck that does.`, needs.map((n) => ({ field: n, message: 'not driven here' })));
    }
    await this.checkPlaceFor(task.id);
    const run = task.runId ? await this.store.runs.get(task.runId) : null;
    this.interrupted = null;
    // deciding about the interrupted task lifts its hold (another task may still hold the queue)
    const decided = why ?? `the operator chose to ${mode === 'retry' ? 're-run the in-doubt step' : mode === 'iteration' ? 're-run the iteration' : 'go on after the in-doubt step'}`;
    const ops: AlertOp[] = [resolveAlert(alertKeys.queueHeld(task.id), decided), ...(task.runId ? [resolveAlert(alertKeys.interrupted(task.runId), decided)] : [])];
    await alerting(this.store, ops, (tx) => tx.queue.update(task.id, { holdsQueue: false }));
    this.heldVersion++;
    await this.refreshHeld();
    if (!run) {
      // it died before its run record was written: start it afresh
      await this.store.queue.update(task.id, { status: 'pending' });
      this.letGo(task.id);
    } else {
      this.leases.set(task.id, instrumentsOfTask(task)); // its place and instruments, from now on
      this.pendingResume = { taskId: task.id, resume: { run, mode, steps: await this.store.runSteps.list(run.id), remade: info.remade } };
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
      this.letGo(task.id);
      this.emitQueue();
      return;
    }
    this.leases.set(task.id, instrumentsOfTask(task));
    this.pendingResume = { taskId: task.id, resume: { run, mode: 'skip', steps: [], ending: true } };
    this.notify();
    // the loop runs it: cleanup only, then `aborted`; the queue stays held
  }

  /* ------------------------------------------------------------------ the loop */

  /**
   * Start tasks while there is a free place (`parallel`): a resumed interrupted task first, else the next
   * pending task whose instruments are free. Each runs beside the others; when one ends, the loop looks again.
   */
  private async loop(): Promise<void> {
    while (!this.closed) {
      const wake = this.wake.promise;
      if (!this.pendingResume && this.leases.size >= this.parallel) {
        await wake;
        continue;
      }
      let next: { task: QueueTaskRow; resume?: Resume } | null = null;
      try {
        next = await this.nextTask();
      } catch (e) {
        // the store failed before a task could start (a full or read-only disk): the runner stays up, says
        // why, and tries again when woken or after a while
        if (this.storeFault === null) this.reportFault(e);
        this.storeFault = message(e);
        this.faults.suspectLost(e); // a claim whose answer was lost may have marked a task running here
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
      this.launch(next.task, next.resume);
    }
    await Promise.all(this.executing);
  }

  /** Run a task beside the others: its place and its instruments are leased here until it ends. */
  private launch(task: QueueTaskRow, resume?: Resume): void {
    if (!this.leases.has(task.id)) this.leases.set(task.id, instrumentsOfTask(task));
    const done: Promise<void> = this.execute(task, resume)
      .catch((e) => (e instanceof Shutdown ? undefined : isStoreFault(e) ? this.strand(task, e) : this.fault(task, e)))
      .catch((e) => this.reportFault(e))
      .finally(() => {
        if (!this.faults.has(task.id)) this.leases.delete(task.id);
        this.executing.delete(done);
        this.notify();
      });
    this.executing.add(done);
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
    const ending = resume?.ending === true;
    if (resume) await this.store.runs.update(run.id, { status: 'running', error: null, hostId: this.host.id }); // this host carries it on now
    await this.store.queue.update(task.id, { status: 'running', runId: run.id, startedAt: task.startedAt ?? now(), hostId: this.host.id });
    const phases = resume ? await this.store.phases.list(run.id) : [];
    const c = new TaskRun({ ...task, status: 'running', runId: run.id }, { ...run, status: 'running' }, payload, this.leases.get(task.id) ?? instrumentsOfTask(task));
    if (ending) c.abortRequest = 'task';
    c.paused = this.paused; // a task resumed while the queue's pause flag is set starts paused
    if (c.paused) c.pausedBy = 'person'; // the queue's flag: taken for a person's
    this.tasks.push(c);
    const log = (level: 'info' | 'warn' | 'error', msg: string) => this.log(run.id, level, msg);

    let source: IterationSource;
    try {
      source = await this.sourceOf(task, run.id, payload, phases);
      this.deck.lock(c.instruments, c.owner);
    } catch (e) {
      if (isStoreFault(e)) throw e;
      // the run cannot start (its optimizer is gone, an instrument vanished or is held): recorded as failed
      await this.finish(c, 'failed', message(e));
      return;
    }
    c.total = source.total;
    c.checkSaved = source.checkSaved?.bind(source);
    this.emitQueue();
    this.emitStatus();
    this.emit('event', { type: 'run', run_id: run.id, task_id: task.id, status: 'running' } satisfies RunnerEvent);
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
    if (outcome === 'aborted') await this.hold(c.task.id);
    await this.finish(c, outcome, error);
  }

  /**
   * A fault outside any step (the database failed, a bug): the task is recorded failed where the store still
   * answers, its locks are freed and the loop goes on.
   */
  private async fault(task: QueueTaskRow, e: unknown) {
    const c = this.tasks.find((t) => t.id === task.id);
    this.tasks = this.tasks.filter((t) => t !== c);
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

  /**
   * The store failed under a running task: it stops where it is (no cleanup, as a crash stops it) and keeps
   * its place, its instruments' lease and their lock until it is recorded interrupted (core/runner/store-fault.ts).
   */
  private strand(task: QueueTaskRow, e: unknown) {
    const c = this.tasks.find((t) => t.id === task.id);
    this.tasks = this.tasks.filter((t) => t !== c);
    this.faults.strand(task.id, c?.run.id ?? null, e);
    this.reportFault(e, `task ${task.id} stopped: the database failed under it: `);
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

  private async finish(c: TaskRun, outcome: RunStatus, error: string | null) {
    const taskStatus: TaskStatus = outcome === 'completed' ? 'done' : outcome === 'interrupted' ? 'interrupted' : outcome;
    await alerting(this.store, await this.endAlerts(c, outcome, error), async (tx) => {
      await tx.runs.update(c.run.id, { status: outcome, error, endedAt: now() });
      await tx.queue.update(c.task.id, { status: taskStatus, endedAt: now() });
    });
    this.deck.unlock(c.owner); // after its end is stored: a task the store cut off keeps its instruments
    this.tellOthers();
    const skipped = c.skipped ? ` with ${skippedSteps(c.skipped)}` : '';
    await this.log(c.run.id, outcome === 'completed' && !skipped ? 'info' : 'warn', `Run ${outcome}${skipped}${error ? `: ${error}` : ''}.`);
    this.tasks = this.tasks.filter((t) => t !== c);
    // a task that ends while paused leaves the queue paused: no new task starts until the operator resumes
    if (c.paused) this.paused = true;
    this.emit('event', { type: 'run', run_id: c.run.id, task_id: c.task.id, status: outcome, skipped: c.skipped } satisfies RunnerEvent);
    this.emitQueue();
    this.emitStatus();
  }

  /** A run's end resolves what still waits of it (but a held queue) and tells `run_completed` / `campaign_finished`. */
  private async endAlerts(c: TaskRun, outcome: RunStatus, error: string | null): Promise<AlertOp[]> {
    const ctx = { host: this.host.name, task_id: c.task.id, run_id: c.run.id, workflow: c.run.workflowName, outcome };
    const ops: AlertOp[] = [resolveRun(c.run.id, `the run ended: ${outcome}`, ['queue_held'])];
    if (c.task.kind === 'campaign') {
      const best = await campaignBest(this.store, c.run.id, c.payload).catch(() => null);
      const message = `Campaign ${c.task.name} ${outcome === 'completed' ? 'finished' : `ended early (${outcome})`}${error ? `: ${error}` : '.'} ${bestText(best)}`;
      ops.push(openAlert('campaign_finished', alertKeys.campaignFinished(c.run.id), { ...ctx, message, best }, { userId: c.task.createdBy }));
    }
    else if (outcome === 'completed') ops.push(openAlert('run_completed', alertKeys.runCompleted(c.run.id), { ...ctx, message: `Run ${c.task.name} completed${c.skipped ? ` with ${skippedSteps(c.skipped)}` : ''}.` }, { userId: c.task.createdBy }));
    return ops;
  }

  /** A line of a run's log, with `alerts` and the state `change` that causes them in its transaction. */
  private async log(runId: number, level: 'info' | 'warn' | 'error', msg: string, alerts: AlertOp[] = [], change?: (tx: TxStore) => Promise<void>) {
    const at = now();
    await alerting(this.store, alerts, async (tx) => {
      await change?.(tx);
      await tx.logs.add(runId, level, msg, at);
    });
    this.emit('event', { type: 'log', run_id: runId, level, message: msg, at: at.toISOString() } satisfies RunnerEvent);
  }

  /** A failed step the operator skipped: its call's record says so, and the run counts it at once. */
  private async markSkipped(c: TaskRun, stepId: number | null) {
    c.skipped++;
    if (stepId !== null) await this.store.steps.update(stepId, { status: 'skipped' });
    await this.store.runs.update(c.run.id, { skipped: c.skipped });
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
        if (c.abortRequest === 'task') throw new Abort('task');
        await c.waitWhilePaused(
          () => this.closed,
          () => this.emitStatus(),
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
        await this.log(run, 'info', `Waiting for the operator: ${msg}`, [openAlert('pause_waiting', key, this.alertCtx(c, at, `A pause step waits for the operator: ${msg}`), { userId: c.task.createdBy })]);
        this.emitStatus();
        try {
          await c.waitingPause.promise;
          // continuing is no write of the runner's: the resolution is written on its own
          await alertOnly(this.store, [resolveAlert(key, 'the operator continued')]);
        } finally {
          c.waitingPause = null;
          this.emitStatus();
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
        await this.log(run, 'error', failedMsg, [openAlert(blocked ? 'safety_blocked' : 'step_failed', key, { ...this.alertCtx(c, at, failedMsg), ...extra }, { userId: c.task.createdBy })]);
        this.emitStatus();
        try {
          const decision = await failed.promise;
          await this.log(run, 'info', decision === 'retry' ? `Retrying ${at.path}.` : `Skipping ${at.path}.`, [resolveAlert(key, decision === 'retry' ? 'the step was retried' : 'the step was skipped')]);
          if (decision === 'skip') {
            skippedHere++;
            await this.markSkipped(c, c.failedStep);
          }
          return decision;
        } finally {
          c.failed = null;
          this.emitStatus();
        }
      },
      afterStep: (at) => {
        c.step = at.index + 1;
        if ((at.step.kind === 'call' || at.step.kind === 'input') && at.step.save_as) saved.add(at.step.save_as);
        this.emitStatusSoon();
      },
    };

    try {
      await runSteps(steps, scope, control, { phase, iteration });
    } catch (e) {
      // a shutdown leaves the phase `running`, as a crash would: a resume replays it only up to where it stopped
      if (!(e instanceof Shutdown) && !isStoreFault(e)) await this.store.phases.update(phaseId, { status: e instanceof Abort ? 'stopped' : 'error', endedAt: now() });
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

  /** What input steps need of the runner (core/runner/input.ts). */
  private get inputContext() {
    return {
      store: this.store,
      emit: (e: RunnerEvent) => void this.emit('event', e),
      log: (runId: number, level: 'info' | 'warn' | 'error', msg: string, alerts?: AlertOp[], change?: (tx: TxStore) => Promise<void>) => this.log(runId, level, msg, alerts, change),
      emitStatus: () => this.emitStatus(),
      host: this.host.name,
    };
  }

  /** What an alert about a step of this task says besides its message. */
  private alertCtx(c: TaskRun, at: StepAt, message: string) {
    const call = at.step.kind === 'call' ? { instrument: at.step.instrument, method: at.step.method } : {};
    return { host: this.host.name, task_id: c.task.id, run_id: c.run.id, step: at.path, phase: at.phase, iteration: at.iteration, workflow: c.run.workflowName, ...call, message };
  }

  private emitStep(c: TaskRun, at: StepAt, state: 'start' | 'ok' | 'error', extra: Partial<Extract<RunnerEvent, { type: 'step' }>> = {}) {
    this.emit('event', { type: 'step', run_id: c.run.id, phase: at.phase, iteration: at.iteration, path: at.path, index: at.index, state, kind: at.step.kind, ...extra } satisfies RunnerEvent);
  }

  /** One instrument call of a run: its record is `running` before the instrument is touched. */
  private async callStep(c: TaskRun, at: StepAt, instrument: string, method: string, args: Record<string, unknown>) {
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
      if (problem) throw new LabError('instrument_error', savedProblem(instrument, method, output, problem));
      this.emitStep(c, at, 'ok', { instrument, method, output, step_id: id });
      return output;
    } catch (e) {
      c.failedStep = id;
      // the deck recorded the call itself (an instrument error, or a host lost mid-call: in-doubt); a store
      // failure leaves the record `running`, to be marked in-doubt once the store answers
      if (!(isLabError(e) && e.data?.task_id !== undefined) && !isStoreFault(e)) {
        // a call the safety guard refused reached no driver: the step is `blocked` (it waits like any failed step)
        await this.store.steps.update(id, { status: isLabError(e) && e.code === 'safety' ? 'blocked' : 'error', error: message(e), endedAt: now() });
      }
      this.emitStep(c, at, 'error', { instrument, method, error: message(e), step_id: id });
      throw e;
    }
  }

}

/** Read through a function: the operator changes it while a phase awaits (TypeScript would narrow a field). */
const stopAfterIteration = (c: TaskRun): boolean => c.abortRequest === 'iteration';

/** The instruments a queued task's workflow uses (none when its payload cannot be read: it fails when run). */
function instrumentsOfTask(task: QueueTaskRow): string[] {
  try {
    return instrumentsOf((task.payload as TaskPayload).definition);
  } catch {
    return [];
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
