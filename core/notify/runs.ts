/** run_interrupted and queue_held for a task the database failed under (core/runner/store-fault.ts). */
import type { AlertOp, QueueTaskRow } from '../store/types.js';
import { keys, open } from './events.js';

export function storeFaultAlerts(t: QueueTaskRow, runId: number | null, reason: string): AlertOp[] {
  const ctx = { host: t.hostId, task_id: t.id, run_id: runId };
  const ops: AlertOp[] = [open('queue_held', keys.queueHeld(t.id), { ...ctx, message: `The queue is held: task ${t.id} (${t.name}) was interrupted and waits for a decision.` }, { userId: t.createdBy })];
  if (runId !== null) ops.unshift(open('run_interrupted', keys.interrupted(runId), { ...ctx, message: `Interrupted: the database failed during this run (${reason}). Retry the in-doubt step, skip it, or abort the task.` }, { userId: t.createdBy }));
  return ops;
}
