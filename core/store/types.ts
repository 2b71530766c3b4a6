/**
 * The store's repository interfaces: what the rest of the runtime may ask of the database. The
 * implementation (TypeORM, SQLite or PostgreSQL) lives beside this file; nothing outside core/store
 * touches TypeORM.
 */
import type { OutboxStore } from './outbox-types.js';
import type { ResourceStore } from './resource-types.js';
import type { CampaignStore } from './campaign-types.js';

export type * from './outbox-types.js';
export type * from './campaign-types.js';

export type Role = 'admin' | 'operator';

export interface UserRow {
  id: number;
  username: string;
  passwordHash: string;
  role: Role;
  createdAt: Date;
  /** When an admin disabled the account (no log-in; its sessions and tokens are refused); null: active. */
  disabledAt: Date | null;
  /**
   * When an admin deleted the account. The row stays, without a password, so what the user made keeps their
   * name and the name is not handed to someone else; it is listed nowhere and cannot log in.
   */
  deletedAt: Date | null;
}

/** What an admin may change about an account (`users.change`). */
export interface UserPatch {
  role?: Role;
  disabled?: boolean;
  deleted?: true;
}

/** `resume`: an agent's resume of a task a person paused. */
export type ApprovalKind = 'call' | 'run' | 'campaign' | 'resume';

/** A request of an agent's that waits for a person, or was decided (the approval inbox). */
export interface ApprovalRow {
  id: number;
  kind: ApprovalKind;
  /** `pending` until a person decides; an expired pending request reads as pending here (see expiresAt). */
  status: 'pending' | 'approved' | 'rejected';
  /** One line: what would happen (`hotplate.set_temperature(celsius=80)`). */
  summary: string;
  /** What the agent sent. */
  request: unknown;
  /** What runs when approved, as checked when asked (the call's arguments, the task's workflow and rows). */
  plan: unknown;
  /** The account the agent acts as. */
  userId: number | null;
  /** The token that asked (null once revoked: its name stays). */
  tokenId: number | null;
  tokenName: string;
  createdAt: Date;
  expiresAt: Date;
  decidedBy: number | null;
  decidedAt: Date | null;
  reason: string | null;
  outcome: unknown;
}

export interface TokenRow {
  id: number;
  userId: number;
  name: string;
  /** First characters of the token, for display; the token itself is never stored. */
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** When a call ran and how it ended: a step record without its args or output (`steps.timings`). */
export type CallTiming = Pick<StepRow, 'id' | 'method' | 'status' | 'startedAt' | 'endedAt'>;

/** A step record: one instrument call, direct (runId null) or inside a workflow run. */
export interface StepRow {
  id: number;
  runId: number | null;
  phase: string | null;
  iteration: number | null;
  stepIndex: number | null;
  instrument: string;
  method: string;
  args: unknown;
  output: unknown;
  /** `skipped`: the call failed and the operator skipped it (its error stays). */
  status: 'ok' | 'error' | 'running' | 'in-doubt' | 'skipped' | 'blocked';
  error: string | null;
  userId: number | null;
  startedAt: Date;
  endedAt: Date | null;
  /** What the instrument printed or logged during the call (Python drivers' print() and logging). */
  log: string | null;
}

export type NewStep = Omit<StepRow, 'id' | 'log'> & { log?: string | null };

export interface MethodPrefs {
  order: string[];
  hidden: string[];
}

export interface SafetyDocRow {
  name: string;
  body: string;
  version: number;
  updatedAt: Date;
  updatedBy: number | null;
}

export interface AuditRow {
  id: number;
  userId: number | null;
  action: string;
  detail: unknown;
  at: Date;
}

export interface Store extends RunStore {
  readonly dialect: 'sqlite' | 'postgres';
  /** The lab's stock, its ledger and the deck versions (issue 32; resource-types.ts). */
  resources: ResourceStore;
  /** Campaigns people carry out, and robot campaigns' hand-measured points (issue 31; campaign-types.ts). */
  campaigns: CampaignStore;
  users: {
    /** Every account ever made, deleted ones too (the first one is the admin). */
    count(): Promise<number>;
    /** The accounts that are not deleted, oldest first. */
    list(): Promise<UserRow[]>;
    /** A user by id or name, deleted ones too (their names stay on what they made). */
    byId(id: number): Promise<UserRow | null>;
    byName(username: string): Promise<UserRow | null>;
    create(u: { username: string; passwordHash: string; role: Role }): Promise<UserRow>;
    setPassword(id: number, passwordHash: string): Promise<void>;
    /**
     * Change a user's role, disable or enable the account, or delete it, one such change at a time across the
     * lab (every process on the database). `check` sees the user as it is and how many other admins can log
     * in (not disabled, not deleted); it throws to refuse, and then nothing changes. Deleting keeps the row
     * and drops its password, API tokens and method preferences (sessions: `sessions.destroyForUser`).
     * Returns the user as changed; null when there is no such user or it was deleted.
     */
    change(id: number, patch: UserPatch, check?: (user: UserRow, otherActiveAdmins: number) => void): Promise<UserRow | null>;
  };
  sessions: {
    get(sid: string): Promise<{ data: string; expiresAt: Date } | null>;
    /**
     * A new session (log-in, or a first field of a new visitor's): inserted, never over another. Made only under
     * an id this process just drew (server/session.ts), so an id that was ended is never made again.
     */
    create(sid: string, data: string, expiresAt: Date): Promise<void>;
    /**
     * Write a session that exists: false, and nothing written, when it is gone (logged out, or ended by a
     * password change or an admin meanwhile: a request still in flight must not bring it back).
     */
    update(sid: string, data: string, expiresAt: Date): Promise<boolean>;
    touch(sid: string, expiresAt: Date): Promise<void>;
    destroy(sid: string): Promise<void>;
    /** Delete expired sessions; returns how many. */
    prune(now?: Date): Promise<number>;
    /** End every session of a user but `exceptSid` (after a password change); returns how many. */
    destroyForUser(userId: number, exceptSid?: string): Promise<number>;
  };
  tokens: {
    create(t: { userId: number; name: string; tokenHash: string; prefix: string }): Promise<TokenRow>;
    /** The user a token hash belongs to, with the token's id and name, or null; updates last-used time. */
    userFor(tokenHash: string): Promise<(UserRow & { token: { id: number; name: string } }) | null>;
    list(userId: number): Promise<TokenRow[]>;
    revoke(userId: number, id: number): Promise<boolean>;
  };
  prefs: {
    get(userId: number, instrument: string): Promise<MethodPrefs>;
    setOrder(userId: number, instrument: string, order: string[]): Promise<void>;
    setHidden(userId: number, instrument: string, method: string, hidden: boolean): Promise<void>;
  };
  steps: {
    insert(step: NewStep): Promise<number>;
    update(id: number, patch: Partial<NewStep>): Promise<void>;
    /** Remove one call record (a call refused before anything acted on it: core/deck/recorder.ts); false when there was none. */
    delete(id: number): Promise<boolean>;
    /** Direct calls (no run) to these instruments left `running` (begun before `before`) by a labdeck that stopped during them: marked `in-doubt`. */
    markInDoubt(instruments: string[], error: string, before?: Date): Promise<number>;
    /** One call record; args and output read up to the result bound (core/result-limit.ts), cut past it. */
    get(id: number): Promise<StepRow | null>;
    /** The latest calls to one instrument, newest first; args and output read up to `chars` (default SHOWN_RESULT_CHARS). */
    recent(instrument: string, limit: number, chars?: number): Promise<StepRow[]>;
    /**
     * One instrument's calls with `fromId` ≤ id < `toId`, newest first, at most `limit`, without args or
     * output: the history the watchdog learns its bounds from, read again for a record's timing.
     */
    timings(instrument: string, q: { toId: number; fromId?: number; limit: number }): Promise<CallTiming[]>;
  };
  /** What the attention list reads (core/attention): every labdeck's open steps, from the database. */
  attention: {
    /** The last record of each step position of a running or interrupted run that is not done (running, error, in-doubt). */
    openSteps(): Promise<(StepRow & { taskId: number | null; runName: string; hostId: string | null; runStatus: string })[]>;
  };
  /** The approval inbox: what an agent asked for that waits for a person (core/approvals). */
  approvals: {
    create(a: Omit<ApprovalRow, 'id' | 'status' | 'createdAt' | 'decidedBy' | 'decidedAt' | 'reason' | 'outcome'>): Promise<ApprovalRow>;
    get(id: number): Promise<ApprovalRow | null>;
    /** Newest first: the pending ones (not yet expired at `now`), or the rest (decided or expired); `userId`: that account's only. */
    list(which: 'pending' | 'done', now: Date, limit: number, userId?: number): Promise<ApprovalRow[]>;
    /** How many wait for a decision at `now`. */
    pending(now: Date): Promise<number>;
    /**
     * Decide a request that is pending and not expired at `decidedAt`, once across the lab; false when it was
     * not (decided already, or expired): then nothing changes.
     */
    decide(id: number, d: { status: 'approved' | 'rejected'; decidedBy: number; reason: string | null; decidedAt: Date }): Promise<boolean>;
    /** What came of an approved request (the call's output or error, the task it queued). */
    setOutcome(id: number, outcome: unknown): Promise<void>;
    /** Reject every pending request a token made (it was revoked: none of them can run); how many. */
    rejectPendingOf(tokenId: number, d: { reason: string; decidedBy: number; decidedAt: Date }): Promise<number>;
  };
  audit: {
    add(a: { userId: number | null; action: string; detail: unknown }): Promise<void>;
    list(limit?: number): Promise<AuditRow[]>;
  };
  settings: {
    get<T = unknown>(key: string): Promise<T | null>;
    set(key: string, value: unknown): Promise<void>;
    /** Set `key` only if it has never been set; true for the one caller that set it. */
    claim(key: string, value: unknown): Promise<boolean>;
  };
  /** The safety guard's documents: the lab-wide file (PostgreSQL) and the tracked states (core/safety). */
  safety: {
    get(name: 'file' | 'states'): Promise<SafetyDocRow | null>;
    /** Write a document; returns its new version. */
    put(name: 'file' | 'states', body: string, userId: number | null): Promise<number>;
    /** Each document's version (a cheap look for another labdeck's edit). */
    versions(): Promise<Record<string, number>>;
  };
  /** Wake-ups between the hosts on this database (core/store/signals.ts). */
  signals: {
    /** Tell every host that the queue changed (a task queued, ended, a hold released). */
    queueChanged(): Promise<void>;
    /** Call `fn` when another host says the queue changed (PostgreSQL; SQLite: never, the heartbeats look). */
    onQueueChange(fn: () => void): Promise<void>;
    /** Send a message (JSON, under 8 kB) to every host; false when the database cannot carry one (SQLite). */
    tell(message: unknown): Promise<boolean>;
    /** Call `fn` with each message a host sends (PostgreSQL; its own too). */
    onHostMessage(fn: (message: unknown) => void): Promise<void>;
    /** Tell this process and every other that accounts, tokens or sessions changed (the store's writes do). */
    authChanged(): Promise<void>;
    /** Call `fn` whenever accounts, tokens or sessions change, here or in another process; returns the undo. */
    onAuthChange(fn: () => void): () => void;
    /**
     * Whether copies of accounts, tokens and sessions may be used now (false: read the database), once every
     * change made before this call has been seen. `since` (performance.now()): a check made after that moment
     * is good enough (one check per turn of the event loop, at its end, serves all who ask: SQLite reads
     * data_version; PostgreSQL has read the notifications that came in that turn).
     */
    authCacheable(since?: number): Promise<boolean>;
    close(): void;
  };
  /** The notification outbox (core/notify decides what goes in; core/store/outbox-repos.ts). */
  outbox: OutboxStore;
  /**
   * Run `fn`'s writes in one transaction (all or none): a state change and the outbox event it causes. `fn`
   * uses only `tx`; on SQLite every other statement waits until it ends, so keep it to a few writes.
   */
  transaction<T>(fn: (tx: TxStore) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** What a transaction may write: runs and the queue, call and input records, approvals, the outbox. */
export type TxStore = RunStore & Pick<Store, 'steps' | 'approvals' | 'outbox' | 'settings'>;

// ---- Workflows, the queue, runs and files (issue 3) ----

/** One saved version of a workflow; saving makes a new version, the latest is the current one. */
export interface WorkflowRow {
  id: number;
  name: string;
  version: number;
  /** The workflow document (validated by core/workflow before it is stored). */
  definition: unknown;
  createdBy: number | null;
  createdAt: Date;
  /** When the workflow was deleted (every version of that life of the name); null while it is live. */
  deletedAt: Date | null;
}

export type TaskKind = 'workflow' | 'campaign';
/**
 * pending: waiting in the queue; running: the runner has it (also while paused or failed);
 * interrupted: the server died while it ran (waits, held, for the operator); done/failed/stopped/aborted:
 * finished (its run record says how).
 */
export type TaskStatus = 'pending' | 'running' | 'interrupted' | 'done' | 'failed' | 'stopped' | 'aborted';

export interface QueueTaskRow {
  id: number;
  name: string;
  kind: TaskKind;
  payload: unknown;
  status: TaskStatus;
  /** Order among unfinished tasks: lower runs first. */
  position: number;
  runId: number | null;
  createdBy: number | null;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  /** The host executing it (while running, and after: the host that ran it). */
  hostId: string | null;
  /** The queue is held because of this task (it was interrupted, or aborted): released by an operator. */
  holdsQueue: boolean;
}

export type HostKind = 'serve' | 'run' | 'agent';

/** A labdeck process that touches instruments (DESIGN.md §12): alive while its heartbeat is recent. */
export interface HostRow {
  id: string;
  /** How people know it: `--name`, else `lab serve on <machine> (pid N)`. */
  name: string;
  kind: HostKind;
  /** The computer's host name. */
  machine: string;
  pid: number;
  startedAt: Date;
  heartbeatAt: Date;
  /** Set when it stopped, or when another host found its lease expired and took over its runs. */
  stoppedAt: Date | null;
}

export type RunStatus = 'running' | 'completed' | 'failed' | 'stopped' | 'aborted' | 'interrupted';

/** A run record: one execution of a queued task. */
export interface RunRow {
  id: number;
  taskId: number | null;
  name: string;
  workflowName: string;
  workflowVersion: number | null;
  /** The workflow document as it was when the run started. */
  workflow: unknown;
  /** The parameter sets of the iterations, in order. */
  parameters: unknown;
  status: RunStatus;
  error: string | null;
  userId: number | null;
  startedAt: Date;
  endedAt: Date | null;
  /** Failed steps the operator skipped: a `completed` run with skipped steps says so everywhere. */
  skipped: number;
  /** The host that executes (executed) it; null for runs from before hosts existed. */
  hostId: string | null;
}

export interface PhaseRow {
  id: number;
  runId: number;
  phase: 'prep' | 'main' | 'cleanup';
  /** 0-based iteration of main; null for prep and cleanup. */
  iteration: number | null;
  params: unknown;
  outputs: unknown;
  status: 'running' | 'ok' | 'error' | 'skipped' | 'stopped';
  startedAt: Date;
  endedAt: Date | null;
}

export interface LogRow {
  id: number;
  runId: number;
  at: Date;
  level: 'info' | 'warn' | 'error';
  message: string;
}

export type FileKind = 'config' | 'history';
export interface FileRow {
  id: number;
  kind: FileKind;
  /** The generated name the file is stored under (and named by in URLs). */
  storedName: string;
  /** The name the user's browser sent: display only. */
  originalName: string;
  workflow: string | null;
  rows: number;
  columns: string[];
  size: number;
  createdBy: number | null;
  createdAt: Date;
}

export interface Page<T> {
  rows: T[];
  total: number;
}

export interface RunStore {
  workflows: {
    /** The latest version of every live (not deleted) workflow, by name. */
    list(): Promise<WorkflowRow[]>;
    /** The latest live version; or a given version, deleted or not (a record names the version it ran). */
    get(name: string, version?: number): Promise<WorkflowRow | null>;
    /** The first live version: who made the workflow as it is now. */
    first(name: string): Promise<WorkflowRow | null>;
    /**
     * Store a new version: one after the highest the name ever had (deleted ones too: a version number is
     * never reused); `expectNew` → LabError conflict if a live workflow has the name.
     */
    save(name: string, definition: unknown, userId: number | null, opts?: { expectNew?: boolean }): Promise<WorkflowRow>;
    /** Delete every live version (they are marked, and kept for the records); false when there was none. */
    delete(name: string): Promise<boolean>;
  };
  queue: {
    add(t: { name: string; kind: TaskKind; payload: unknown; createdBy: number | null }): Promise<QueueTaskRow>;
    get(id: number): Promise<QueueTaskRow | null>;
    /** Unfinished tasks (pending, running, interrupted) in queue order. */
    open(): Promise<QueueTaskRow[]>;
    update(id: number, patch: Partial<Pick<QueueTaskRow, 'name' | 'status' | 'runId' | 'startedAt' | 'endedAt' | 'position' | 'hostId' | 'holdsQueue'>>): Promise<void>;
    /**
     * Atomically take the first pending task among `candidates` (ids, the tasks this host can run) in queue
     * order, marked running by `hostId`; null when another host took them all first.
     */
    claim(hostId: string, candidates: number[]): Promise<QueueTaskRow | null>;
    /** The ids of the pending tasks in queue order (light: no payloads). */
    pending(): Promise<number[]>;
    /** The tasks that hold the queue (interrupted, or aborted and not yet released), in id order. */
    holding(): Promise<QueueTaskRow[]>;
    /** Release the queue: no task holds it any more. */
    release(): Promise<void>;
    /** Running tasks whose host has stopped (or that no host runs), in id order. */
    orphaned(): Promise<QueueTaskRow[]>;
    /** Mark a running task interrupted, holding the queue; false when it was not running (another host did it). */
    interrupt(id: number): Promise<boolean>;
    delete(id: number): Promise<boolean>;
    /** Move an unfinished task one place up/down or to the top/bottom (swapping positions). */
    move(id: number, direction: 'up' | 'down' | 'top' | 'bottom'): Promise<void>;
  };
  runs: {
    create(r: Omit<RunRow, 'id' | 'endedAt' | 'error' | 'skipped' | 'hostId'> & { hostId?: string | null }): Promise<RunRow>;
    update(id: number, patch: Partial<Pick<RunRow, 'status' | 'error' | 'endedAt' | 'parameters' | 'skipped' | 'hostId'>>): Promise<void>;
    get(id: number): Promise<RunRow | null>;
    /** Newest first; keyword matches the run name or workflow name (case-insensitive substring). */
    list(q: { keyword?: string; page: number; perPage: number }): Promise<Page<RunRow>>;
    /** Delete the run with its phases, steps and log lines. */
    delete(id: number): Promise<boolean>;
    /** Runs left `running` by a host that has stopped (or by no host), in id order. */
    orphaned(): Promise<RunRow[]>;
    /** Mark a running run interrupted with `error`; false when it was not running (another host did it). */
    interrupt(id: number, error: string): Promise<boolean>;
  };
  phases: {
    create(p: Omit<PhaseRow, 'id' | 'endedAt' | 'outputs' | 'status'> & { status?: PhaseRow['status'] }): Promise<number>;
    update(id: number, patch: Partial<Pick<PhaseRow, 'outputs' | 'status' | 'endedAt'>>): Promise<void>;
    list(runId: number): Promise<PhaseRow[]>;
  };
  logs: {
    add(runId: number, level: LogRow['level'], message: string, at?: Date): Promise<void>;
    list(runId: number): Promise<LogRow[]>;
  };
  runSteps: {
    /** The steps of a run in order (id); with `chars`, args and output read up to that many characters (cut past it). */
    list(runId: number, chars?: number): Promise<StepRow[]>;
    /** The steps of a run in batches of `batch`, for streaming exports with flat memory; `chars` as in list. */
    iterate(runId: number, batch?: number, chars?: number): AsyncIterable<StepRow[]>;
    /** Mark a run's `running` steps as `in-doubt` (after a crash). */
    markInDoubt(runId: number): Promise<number>;
  };
  hosts: {
    /** Register a host, its lease starting now. */
    register(h: Pick<HostRow, 'id' | 'name' | 'kind' | 'machine' | 'pid'>): Promise<HostRow>;
    get(id: string): Promise<HostRow | null>;
    /** Renew a host's lease; false when it was stopped (another host found it expired and took over). */
    beat(id: string): Promise<boolean>;
    /** Hosts not stopped, oldest first. */
    live(): Promise<HostRow[]>;
    /** Mark a host stopped and free its instruments; true for the one caller that did it (it recovers the host's runs). */
    stop(id: string): Promise<boolean>;
    /**
     * Lease instruments to host `id`: each one free (never leased, or its host stopped) becomes its, with its
     * schema. Returns the names another live host holds, with that host.
     */
    lease(id: string, instruments: { name: string; schema: unknown }[]): Promise<{ name: string; host: HostRow }[]>;
    /** The instruments live hosts drive, with their schemas and hosts: the lab's instruments. */
    catalogue(): Promise<{ name: string; schema: unknown; hostId: string; host: string }[]>;
    /** Give up instruments (all of the host's without `names`). */
    release(id: string, names?: string[]): Promise<void>;
  };
  files: {
    add(f: Omit<FileRow, 'id' | 'createdAt'>): Promise<FileRow>;
    get(storedName: string): Promise<FileRow | null>;
    list(kind: FileKind, workflow?: string): Promise<FileRow[]>;
  };
}

export type * from './resource-types.js';
