/**
 * A store that fails under a running task (a PostgreSQL outage, a full SQLite disk): DESIGN.md §5's crash
 * recovery, done by the runner that is still alive once the database answers again.
 *
 * A run whose step, phase, log or end cannot be recorded stops where it is (no further step, no cleanup: as a
 * crash stops it), and its task is *cut*: it keeps its place among the `parallel` tasks, its instruments'
 * lease and their lock on the deck, so nothing else starts on them and no direct call touches them. Its rows
 * still say `running` (the store could not be told otherwise). Every second, and before any run control,
 * `settle` tries to write what the store could not: the run `interrupted`, its in-flight step `in-doubt`,
 * its task `interrupted` holding the queue, and a log line; the operator then decides as after a crash
 * (retry re-runs the in-doubt step, skip goes on after it, abort next-task ends it).
 *
 * The same pass finds tasks the database says this labdeck runs that it does not (a claim whose answer was
 * lost when the connection dropped) and interrupts them too, so no task stays `running` with nobody on it.
 */
import { alerting } from '../notify/events.js';
import { storeFaultAlerts } from '../notify/runs.js';
import { isStoreFault, LabError } from '../errors.js';
import type { Store } from '../store/types.js';

export { isStoreFault };

/** How long after a failed attempt the store is tried again. */
const RETRY_MS = 1_000;

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

interface Cut {
  runId: number | null;
  reason: string;
}

export interface StoreFaultHooks {
  store: Store;
  /** This labdeck's host id (the rows of the tasks it runs name it). */
  hostId: string;
  /** Whether this runner has the task in hand (running it, starting it, or holding it cut). */
  active(taskId: number): boolean;
  /**
   * After a pass that changed anything: `interrupted`, the tasks now interrupted (the cut ones keep their
   * lease until the operator decides); `ended`, cut tasks whose end had been stored after all (let them go).
   */
  settled(change: { interrupted: number[]; ended: number[] }): Promise<void>;
}

export class StoreFaults {
  private readonly cut = new Map<number, Cut>();
  /** The store failed where a task may have been marked running here without the runner knowing (a claim). */
  private suspect = false;
  private lastError: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private settling: Promise<boolean> | null = null;
  private closed = false;

  constructor(private readonly h: StoreFaultHooks) {}

  /** Whether task `id` was cut off by the store and waits for it. */
  has(id: number): boolean {
    return this.cut.has(id);
  }

  /** The tasks that wait for the store, in the order they were cut. */
  get waiting(): number[] {
    return [...this.cut.keys()];
  }

  /** Task `taskId` (run `runId`, when it was created) stopped because the store failed with `e`. */
  strand(taskId: number, runId: number | null, e: unknown): void {
    this.cut.set(taskId, { runId, reason: message(e) });
    this.lastError = message(e);
    this.later();
  }

  /** A store failure outside a run (a claim, say): look, once it answers, for a task left running here. */
  suspectLost(e: unknown): void {
    if (!isStoreFault(e)) return;
    this.suspect = true;
    this.later();
  }

  /** What the status says while a task waits for the store; null when none does. */
  error(): string | null {
    if (!this.cut.size) return null;
    const ids = this.waiting.map((id) => `task ${id}`).join(', ');
    return `The database failed during ${ids}: it stopped where it was and keeps its instruments; once the database answers it is recorded interrupted (its in-flight step in doubt) for you to retry, skip or abort. ${this.lastError ?? ''}`.trim();
  }

  /**
   * Write what the store could not; true when nothing waits for it any more. One pass at a time (callers
   * during one share it).
   */
  settle(): Promise<boolean> {
    if (this.closed || (!this.cut.size && !this.suspect)) return Promise.resolve(this.cut.size === 0);
    this.settling ??= this.pass().finally(() => (this.settling = null));
    return this.settling;
  }

  /**
   * Before a run control while tasks wait for the store: they are recorded interrupted if it answers now; if
   * it still does not, a control on one of them (or on no task named, with `runningHere` 0) is a 503 saying
   * why, instead of a 409 about a task whose rows still say running.
   */
  async beforeControl(taskId: number | undefined, runningHere: number): Promise<void> {
    if (await this.settle()) return;
    const waiting = this.waiting;
    if (taskId === undefined ? runningHere > 0 : !waiting.includes(taskId)) return;
    const which = taskId ?? waiting[0]!;
    throw new LabError('store_unavailable', `Task ${which} stopped when the database failed, and the database still cannot be written: ${this.error()}`, undefined, { state: 'idle', task_id: which });
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private later(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.settle();
    }, RETRY_MS);
    this.timer.unref();
  }

  private async pass(): Promise<boolean> {
    const s = this.h.store;
    const interrupted: number[] = [];
    const ended: number[] = [];
    try {
      const rows = new Map((await s.queue.open()).map((t) => [t.id, t]));
      for (const t of rows.values()) {
        if (t.status !== 'running' || t.hostId !== this.h.hostId) continue;
        const cut = this.cut.get(t.id);
        if (!cut && this.h.active(t.id)) continue; // running here, rightly
        const runId = t.runId ?? cut?.runId ?? null;
        const reason = cut?.reason ?? 'the database failed as this labdeck took the task';
        if (runId !== null && t.runId === null) await s.queue.update(t.id, { runId });
        if (runId !== null) {
          await s.runs.interrupt(runId, `The database failed during this run: ${reason}`);
          await s.runSteps.markInDoubt(runId);
        }
        // the task's interruption and its alerts: one transaction (core/notify)
        await alerting(s, storeFaultAlerts(t, runId, reason), (tx) => tx.queue.interrupt(t.id));
        this.cut.delete(t.id);
        interrupted.push(t.id);
        if (runId !== null) {
          const line = `Interrupted: the database failed during this run (${reason}). Its in-flight step is marked in-doubt: retry it, skip it, or abort the task.`;
          await s.logs.add(runId, 'warn', line).catch(() => undefined); // the state is what matters; the line is a courtesy
        }
      }
      // cut tasks the store already shows ended (their end was written before it failed), or interrupted
      for (const id of this.waiting) {
        this.cut.delete(id);
        (rows.get(id)?.status === 'interrupted' ? interrupted : ended).push(id);
      }
      this.suspect = false;
      this.lastError = null;
    } catch (e) {
      this.lastError = message(e);
      this.later();
    }
    if (interrupted.length || ended.length) await this.h.settled({ interrupted, ended }).catch(() => undefined);
    return this.cut.size === 0;
  }
}
