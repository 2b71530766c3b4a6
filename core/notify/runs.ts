/**
 * run_interrupted and queue_held for a task the database failed under (core/runner/store-fault.ts), and for
 * one a restart cut off while it waited for input, which labdeck could not ask again by itself.
 */
import type { AlertOp, QueueTaskRow, Store } from '../store/types.js';
import { alertingWhen, keys, open } from './events.js';

export function storeFaultAlerts(t: QueueTaskRow, runId: number | null, reason: string): AlertOp[] {
  const ctx = { host: t.hostId, task_id: t.id, run_id: runId };
  const ops: AlertOp[] = [
    open('queue_held', keys.queueHeld(t.id), { ...ctx, message: `The queue is held: task ${t.id} (${t.name}) was interrupted and waits for a decision.` }, { userId: t.createdBy }),
  ];
  if (runId !== null)
    ops.unshift(
      open(
        'run_interrupted',
        keys.interrupted(runId),
        { ...ctx, message: `Interrupted: the database failed during this run (${reason}). Retry the in-doubt step, skip it, or abort the task.` },
        { userId: t.createdBy },
      ),
    );
  return ops;
}

/**
 * A run cut off by a restart while it only waited for input raises no alert when it is interrupted: the next
 * labdeck asks the input again by itself (its `input_waiting` stays open). When the labdeck that took that on
 * cannot (an instrument of the task is not here, no place), the task waits for a person after all: both
 * alerts, written with a look that it still does (a decision made meanwhile writes none).
 */
export function inputNotAskedAgain(store: Store, taskId: number, host: string, why: string): Promise<void> {
  return alertingWhen(store, async (tx) => {
    const t = await tx.queue.get(taskId);
    if (!t || t.status !== 'interrupted' || !t.holdsQueue) return { result: undefined, ops: [] };
    const ctx = { host, task_id: t.id, run_id: t.runId };
    const ops: AlertOp[] = [
      open('queue_held', keys.queueHeld(t.id), { ...ctx, message: `The queue is held: task ${t.id} (${t.name}) was interrupted and waits for a decision.` }, { userId: t.createdBy }),
    ];
    if (t.runId !== null) {
      const message = `Interrupted: labdeck stopped while this run waited for input, and could not ask it again by itself (${why}). Ask it again (retry), go on after it, or end the run.`;
      ops.unshift(open('run_interrupted', keys.interrupted(t.runId), { ...ctx, message }, { userId: t.createdBy }));
    }
    return { result: undefined, ops };
  });
}
