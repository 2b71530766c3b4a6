/**
 * The events of DESIGN.md §17 as outbox writes: `open` when labdeck starts waiting for a person, `resolve`
 * when it stops. The places that change state call these inside their own transaction (`alerting`), so the
 * event is stored exactly when the state change is, never one without the other.
 */
import type { AlertOp, Store, TxStore } from '../store/types.js';
import type { EventName } from './settings.js';

/** What a message tells, besides the event: who, where, what (docs/notifications.md lists the fields). */
export interface AlertContext {
  host?: string | null;
  task_id?: number | null;
  run_id?: number | null;
  /** The step's path (`main[2]`) or `instrument.method`. */
  step?: string | null;
  /** One sentence a person acts on. */
  message: string;
  [field: string]: unknown;
}

const wakers = new Set<() => void>();
/** Wake the deliverers of this process at once (an event was written here; other hosts poll). */
export function wakeDeliverers(): void {
  for (const w of wakers) w();
}
export function onOutboxWrite(fn: () => void): () => void {
  wakers.add(fn);
  return () => wakers.delete(fn);
}

/**
 * Write `ops` in the same transaction as `change` (the state change that causes them); with no ops, just
 * the change. Afterwards the local deliverer is woken.
 */
export async function alerting<T>(store: Store, ops: AlertOp[], change: (tx: TxStore) => Promise<T>): Promise<T> {
  if (ops.length === 0) return change(store);
  const out = await store.transaction(async (tx) => {
    const r = await change(tx);
    await tx.outbox.write(ops);
    return r;
  });
  wakeDeliverers();
  return out;
}

/** As `alerting`, the change deciding what to write (nothing when it changed nothing: another host did it). */
export async function alertingWhen<T>(store: Store, change: (tx: TxStore) => Promise<{ result: T; ops: AlertOp[] }>): Promise<T> {
  const out = await store.transaction(async (tx) => {
    const r = await change(tx);
    if (r.ops.length) await tx.outbox.write(r.ops);
    return r;
  });
  if (out.ops.length) wakeDeliverers();
  return out.result;
}

/** Write events on their own: where the state change is not a database write (a pause step continued). */
export async function alertOnly(store: Store, ops: AlertOp[]): Promise<void> {
  if (ops.length === 0) return;
  await store.outbox.write(ops);
  wakeDeliverers();
}

/** Open an alert of `event` for the waiting state named by `key`. */
export function open(event: EventName, key: string, ctx: AlertContext, who: { userId?: number | null } = {}): AlertOp {
  return { op: 'open', event, key, runId: ctx.run_id ?? null, taskId: ctx.task_id ?? null, userId: who.userId ?? null, payload: ctx };
}

export function resolve(key: string, note: string): AlertOp {
  return { op: 'resolve', key, note };
}

/** Every alert still open for a run (its end resolves them), but those of the events in `except`. */
export function resolveEvent(event: EventName, note: string): AlertOp {
  return { op: 'resolve', event, note };
}

export function resolveRun(runId: number, note: string, except: EventName[] = []): AlertOp {
  return { op: 'resolve', runId, note, except };
}

/** The keys of the waiting states, so an opening and its resolution name the same one. */
export const keys = {
  stepFailed: (runId: number, path: string) => `step_failed:run:${runId}:${path}`,
  pause: (runId: number, path: string) => `pause_waiting:run:${runId}:${path}`,
  input: (runId: number, path: string) => `input_waiting:run:${runId}:${path}`,
  approval: (id: number) => `approval_pending:${id}`,
  safety: (what: string) => `safety_blocked:${what}`,
  interrupted: (runId: number) => `run_interrupted:run:${runId}`,
  /** By machine and kind: the same labdeck started again there resolves it. */
  hostLost: (machine: string, kind: string) => `host_lost:${machine}:${kind}`,
  agentLost: (agent: string) => `host_lost:agent:${agent}`,
  queueHeld: (taskId: number) => `queue_held:task:${taskId}`,
  overdue: (stepId: number) => `step_overdue:step:${stepId}`,
  campaignFinished: (runId: number) => `campaign_finished:run:${runId}`,
  runCompleted: (runId: number) => `run_completed:run:${runId}`,
};
