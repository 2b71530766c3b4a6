/**
 * What the runner's parts share (DESIGN.md §5): the runner's types, and one state object, `SharedState`,
 * that each part reads and changes: the queue (core/runner/queue.ts), the operator's controls (operator.ts),
 * execution (execute.ts, phase.ts), recovery (recovery.ts), the status (status.ts) and the peers (peers.ts).
 * The parts import this module and never each other in a circle; `Runner` (index.ts) is their facade.
 *
 * Besides the fields, the state object has the few acts every part does: tell listeners (events), wake the
 * loop, take turns, write a run's log line, let go of a task, hold the queue's flag.
 */
import type { EventEmitter } from 'node:events';
import type { Deck } from '../deck/index.js';
import type { InstrumentSchema } from '../contracts/index.js';
import { LabError } from '../errors.js';
import { alerting } from '../notify/events.js';
import type { AlertOp, QueueTaskRow, RunRow, RunStatus, StepRow, Store, TxStore } from '../store/types.js';
import type { Phase, Step } from '../workflow/model.js';
import { instrumentsOf, type DeckSchemas } from '../workflow/validate.js';
import { waiter, type TaskRun, type Waiter } from './execution.js';
import { HostLease, type HostOptions } from './hosts.js';
import type { InputEvent } from './input.js';
import type { ElsewhereTask, RunnerStatus } from './status-schema.js';
import { HostRelay, type Peer } from './relay.js';
import { StoreFaults, type StoreFaultHooks } from './store-fault.js';
import type { SourceFactory, TaskPayload, WorkflowPayload } from './tasks.js';

// the runner's status and a task another labdeck runs: declared once, as zod (status-schema.ts)
export type { ElsewhereTask, RunnerStatus } from './status-schema.js';

/** A running task's state as a labdeck relays it to the others (its `status` events carry its running tasks'). */
export type LiveTask = Required<Omit<ElsewhereTask, 'task_id' | 'name' | 'run_id' | 'host'>>;

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
export type Resume = { run: RunRow; mode: 'retry' | 'skip' | 'iteration'; steps: StepRow[]; ending?: boolean; remade?: string[] };
/** A phase replayed from its records up to `until` (a step index); `skipAt`: the in-doubt step skipped. */
export type Replay = { until: number; recorded: Map<string, StepRow>; skipAt: number | null };

/** The run controls of the web app and the API, by the Runner method that does each. */
export const RUN_CONTROLS = ['pauseResume', 'pause', 'resume', 'continuePauseStep', 'skip', 'release', 'retry', 'abortNextIteration', 'abortNextTask', 'rerunIteration', 'retryStep'] as const;
export type RunControlName = (typeof RUN_CONTROLS)[number];
/** Who asks for a control: a person (the web app, the API, the CLI, an approved request) or an AI agent (MCP). */
export type ControlBy = 'person' | 'agent';
/** What another labdeck on the database asks of this one: a run control, a direct call, an input step's value. */
export type RelayedKind = 'control' | 'call' | 'input';

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

export const now = () => new Date();
export const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The instruments a queued task's workflow uses (none when its payload cannot be read: it fails when run). */
export function instrumentsOfTask(task: QueueTaskRow): string[] {
  try {
    return instrumentsOf((task.payload as TaskPayload).definition);
  } catch {
    return [];
  }
}

/** `1 skipped step`, `3 skipped steps`. */
export const skippedSteps = (n: number) => `${n} skipped step${n === 1 ? '' : 's'}`;

/** The runner's state, one object its parts share (each field says which part keeps it). */
export class SharedState {
  readonly store: Store;
  readonly deck: Deck;
  /** Iteration sources for task kinds other than `workflow` (execution). */
  readonly sources: Partial<Record<string, SourceFactory>>;
  /** How many tasks may run at once. */
  readonly parallel: number;
  /** This process in the lab's hosts table: its lease, its instruments. */
  readonly host: HostLease;
  readonly takesOwnOnly: boolean;
  /** Runs, controls and calls between this labdeck and the others on the database (core/runner/relay.ts). */
  readonly relay: HostRelay;
  /** Who serves what other labdecks ask of this one (Runner.served). */
  readonly served: Partial<Record<RelayedKind, (body: unknown) => Promise<unknown>>> = {};
  /** Tasks a store failure cut off, until they are recorded interrupted (core/runner/store-fault.ts). */
  readonly faults: StoreFaults;

  /* the queue (queue.ts) */
  /** The queue's pause flag: no new task starts (set while idle, or left by a task that ended paused). */
  paused = false;
  held = false;
  /** Counts this host's own changes of `held`, so a read of the database that started before one is dropped. */
  heldVersion = 0;
  /** The instruments of each task the loop has started (leased from its claim until it ends). */
  readonly leases = new Map<number, string[]>();
  /** Tasks submitted through this runner (what it takes with `takes: 'own'`). */
  readonly mine = new Set<number>();
  /** The instruments each pending task needs, read once per task (a payload never changes). */
  readonly needs = new Map<number, string[] | null>();
  /** The last of the `serial` calls (claims and deletes take turns). */
  turn: Promise<unknown> = Promise.resolve();
  /** Checks a task before it is queued, throwing to refuse it (Runner.preflight). */
  preflight: ((payload: WorkflowPayload) => void) | null = null;
  /** A check every task passes before it is queued (Runner.beforeQueue). */
  beforeQueue: ((t: { name: string; kind: QueueTaskRow['kind']; payload: TaskPayload }) => Promise<void>) | null = null;

  /* execution (execute.ts) */
  closed = false;
  /** The tasks running now, in the order they started (each its own state: core/runner/execution.ts). */
  tasks: TaskRun[] = [];
  /** The executions under way (the loop waits for them when it stops). */
  readonly executing = new Set<Promise<void>>();
  wake: Waiter<void> = waiter();
  /** Those waiting for the loop's next look at the queue that starts nothing (Runner.settled). */
  lookers: (() => void)[] = [];
  loopDone: Promise<void> | null = null;
  /** The last store failure that kept the loop from starting a task, while it lasts. */
  storeFault: string | null = null;

  /* recovery (recovery.ts) */
  interrupted: RunnerStatus['interrupted'] = null;
  /** An interrupted task the operator decided to go on with: the loop starts it next. */
  pendingResume: { taskId: number; resume: Resume } | null = null;

  /* the status (status.ts) */
  statusTimer: NodeJS.Timeout | null = null;

  /* the peers (peers.ts) */
  /** Instruments of this deck that another live host drives: instrument → that host's name. */
  othersHold = new Map<string, string>();
  /** Instruments of this deck this labdeck drives, as the last sync found them (peers.ts: a direct call left in doubt). */
  drivenHere = new Set<string>();
  /** When this runner was made: no direct call of this labdeck's began before. */
  readonly since = new Date();
  /** The instruments other live hosts drive (this deck's or not): instrument → that host. */
  drivers = new Map<string, Peer>();
  /** Instruments other labdecks on the database drive that this deck does not have (their schemas, as they sent them). */
  remote = new Map<string, InstrumentSchema>();
  /** The lab's instruments: this deck's and those other labdecks on the database drive (Runner.catalogue). */
  readonly catalogue: DeckSchemas = {
    schema: (name) => (!this.deck.has(name) && this.remote.has(name) ? this.remote.get(name)! : this.deck.schema(name)),
    list: () => [...this.deck.list(), ...this.remote.values()],
  };
  /** Instrument leases run one at a time (the deck's change events ask for them too). */
  syncing: Promise<void> = Promise.resolve();
  /** Tasks other hosts are running now, read on each heartbeat and wake-up; and the host of each. */
  elsewhere: RunnerStatus['elsewhere'] = [];
  elsewhereHost = new Map<number, string>();
  /** The running tasks' state each other labdeck last relayed: host id → task id → state (its tasks only). */
  liveElsewhere = new Map<string, Map<number, LiveTask>>();

  constructor(
    opts: RunnerOptions,
    /** The runner: what its listeners hear. */
    readonly events: EventEmitter,
    /** After a pass of the store faults that changed anything (core/runner/store-fault.ts). */
    settled: StoreFaultHooks['settled'],
  ) {
    this.store = opts.store;
    this.deck = opts.deck;
    this.sources = opts.sources ?? {};
    this.host = new HostLease(opts.store, opts.host ?? { kind: 'serve' });
    this.takesOwnOnly = opts.takes === 'own';
    this.parallel = checkParallel(opts.parallel ?? 1);
    this.relay = new HostRelay({ store: opts.store, self: this.host });
    this.faults = new StoreFaults({ store: opts.store, hostId: this.host.id, active: (id) => this.leases.has(id), settled });
  }

  emit(e: RunnerEvent): void {
    this.events.emit('event', e);
  }

  emitQueue(): void {
    this.emit({ type: 'queue' });
  }

  /** Resolves when the loop, woken now, has looked at the queue and found nothing it can start. */
  settled(): Promise<void> {
    if (this.closed) return Promise.resolve();
    const p = new Promise<void>((r) => this.lookers.push(r));
    this.notify();
    return p;
  }

  /** Wake the loop. */
  notify(): void {
    const w = this.wake;
    this.wake = waiter();
    w.resolve();
  }

  /** Run `fn` after every earlier `serial` call has settled. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  setHeld(held: boolean): void {
    this.held = held;
    this.heldVersion++;
  }

  /** Tell the other hosts the queue changed (they look at once instead of at their next heartbeat). */
  tellOthers(): void {
    void this.store.signals.queueChanged().catch(() => undefined);
  }

  /** An 'error' event with no listener would throw (and end the loop), so it goes to listeners or stderr. */
  reportFault(e: unknown, context = ''): void {
    if (this.events.listenerCount('error') > 0) this.events.emit('error', e);
    else console.error(`labdeck runner: ${context}${message(e)}`);
  }

  /** A line of a run's log, with `alerts` and the state `change` that causes them in its transaction. */
  async log(runId: number, level: 'info' | 'warn' | 'error', msg: string, alerts: AlertOp[] = [], change?: (tx: TxStore) => Promise<void>): Promise<void> {
    const at = now();
    await alerting(this.store, alerts, async (tx) => {
      await change?.(tx);
      await tx.logs.add(runId, level, msg, at);
    });
    this.emit({ type: 'log', run_id: runId, level, message: msg, at: at.toISOString() });
  }

  /** A task this runner let go of without running it: its place, its instruments' lease and lock are free. */
  letGo(taskId: number): void {
    this.leases.delete(taskId);
    this.deck.unlock(`task-${taskId}`);
    this.notify();
  }
}
