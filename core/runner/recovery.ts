/**
 * Recovery (DESIGN.md §5): after a crash or kill, a run left `running` becomes `interrupted`, its in-flight
 * step in-doubt, and its task waits in the queue, held, for the operator: re-run the step (retry), re-run its
 * iteration, go on after it (skip), or end the run (abort next-task). Done on start and on every heartbeat,
 * for the runs of hosts that are gone; a run that only waited for a person's input is resumed at once.
 * The loop (core/runner/execute.ts) then runs the resumed task: its steps replayed from their records.
 */
import { LabError } from '../errors.js';
import { alerting, alertingWhen, keys as alertKeys, open as openAlert, resolve as resolveAlert } from '../notify/events.js';
import type { AlertOp, StepRow } from '../store/types.js';
import { inputNotAskedAgain } from '../notify/runs.js';
import { isInputRecord, onlyInputInDoubt } from './input.js';
import { iterationDoubt, remadeSince } from './iteration.js';
import { refreshElsewhere } from './peers.js';
import { checkPlaceFor, getTask, missing, refreshHeld } from './queue.js';
import { instrumentsOfTask, message, now, type SharedState } from './state.js';
import { emitStatus } from './status.js';

/**
 * Runs and tasks whose host is gone: the run `interrupted` (its in-flight step in-doubt), the task
 * `interrupted`, holding the queue until an operator decides. Each is claimed by one host only.
 */
export async function recover(s: SharedState): Promise<void> {
  for (const run of await s.store.runs.orphaned()) {
    const by = run.hostId ? await s.store.hosts.get(run.hostId) : null;
    const message = `Interrupted: labdeck stopped during this run${by ? ` (${by.name})` : ''}. Its in-flight step is marked in-doubt.`;
    // the run's interruption and its alert: one transaction (core/notify)
    const interrupted = await alertingWhen(s.store, async (tx) => {
      if (!(await tx.runs.interrupt(run.id, 'labdeck stopped while this run was going on'))) return { result: false, ops: [] };
      await tx.runSteps.markInDoubt(run.id);
      await tx.logs.add(run.id, 'warn', message);
      const ctx = { host: by?.name ?? null, task_id: run.taskId, run_id: run.id, message: `${message} Re-run the step, go on after it, or end the run.` };
      // an input asked again by itself waits for no decision: no alert (resumeWaitingInput)
      const quiet = !s.takesOwnOnly && (await onlyInputInDoubt(tx, run.id));
      return { result: true, ops: quiet ? [] : [openAlert('run_interrupted', alertKeys.interrupted(run.id), ctx, { userId: run.userId })] };
    });
    if (!interrupted) continue;
  }
  let changed = false;
  for (const task of await s.store.queue.orphaned()) {
    const ctx = { host: s.host.name, task_id: task.id, run_id: task.runId, message: `The queue is held: task ${task.id} (${task.name}) was interrupted and waits for a decision.` };
    const quiet = !s.takesOwnOnly && (await onlyInputInDoubt(s.store, task.runId));
    if (await alerting(s.store, quiet ? [] : [openAlert('queue_held', alertKeys.queueHeld(task.id), ctx, { userId: task.createdBy })], (tx) => tx.queue.interrupt(task.id))) changed = true;
  }
  const wasHeld = s.held;
  await refreshHeld(s);
  if (changed || wasHeld !== s.held) s.emitQueue();
  await refreshInterrupted(s);
  await resumeWaitingInput(s);
  await refreshElsewhere(s);
  if (changed) emitStatus(s);
}

/**
 * A run interrupted while it waited for a person's input touched nothing in flight: it is resumed at once
 * (its steps replayed from the records), and waits for the same input again (core/runner/input.ts).
 */
async function resumeWaitingInput(s: SharedState): Promise<void> {
  const info = s.interrupted;
  if (!info?.step || !isInputRecord(info.step) || s.closed || s.takesOwnOnly) return;
  try {
    // one labdeck resumes it: the first to claim this interruption (its step, and the host that was cut off)
    const run = info.run_id ? await s.store.runs.get(info.run_id) : null;
    if (!(await s.store.settings.claim(`input.resume.${info.step.id}.${run?.hostId ?? 'none'}`, s.host.id))) return;
    await resumeInterrupted(s, 'retry', 'labdeck asked the waiting input again (nothing was in doubt)');
    s.emitQueue();
  } catch (e) {
    // no free place or instrument here: it stays interrupted, and waits for a person after all
    await inputNotAskedAgain(s.store, info.task_id, s.host.name, message(e)).catch(() => undefined);
  }
}

export async function refreshInterrupted(s: SharedState) {
  const task = (await s.store.queue.open()).find((t) => t.status === 'interrupted');
  if (!task) {
    s.interrupted = null;
    return;
  }
  const steps = task.runId ? await s.store.runSteps.list(task.runId) : [];
  const doubt = latestSteps(steps).find((r) => r.status === 'in-doubt') ?? null;
  s.interrupted = {
    task_id: task.id,
    run_id: task.runId,
    step: doubt ? { id: doubt.id, phase: doubt.phase, iteration: doubt.iteration, index: doubt.stepIndex, instrument: doubt.instrument, method: doubt.method } : null,
    ...iterationDoubt(task.kind, doubt ? remadeSince(steps, doubt, (n) => s.deck.madeAt(n)) : []),
  };
}

/** `why`: the resolution's words (default: the operator's choice of `mode`). */
export async function resumeInterrupted(s: SharedState, mode: 'retry' | 'skip' | 'iteration', why?: string) {
  const info = s.interrupted!;
  const task = await getTask(s, info.task_id);
  const needs = await missing(s, task.id);
  if (needs.length) {
    throw new LabError(
      'conflict',
      `Task ${task.id} needs ${needs.join(', ')}, which this labdeck does not drive: ${mode} it on the labdeck that does.`,
      needs.map((n) => ({ field: n, message: 'not driven here' })),
    );
  }
  await checkPlaceFor(s, task.id);
  const run = task.runId ? await s.store.runs.get(task.runId) : null;
  s.interrupted = null;
  // deciding about the interrupted task lifts its hold (another task may still hold the queue)
  const decided = why ?? `the operator chose to ${mode === 'retry' ? 're-run the in-doubt step' : mode === 'iteration' ? 're-run the iteration' : 'go on after the in-doubt step'}`;
  const ops: AlertOp[] = [resolveAlert(alertKeys.queueHeld(task.id), decided), ...(task.runId ? [resolveAlert(alertKeys.interrupted(task.runId), decided)] : [])];
  await alerting(s.store, ops, (tx) => tx.queue.update(task.id, { holdsQueue: false }));
  s.heldVersion++;
  await refreshHeld(s);
  if (!run) {
    // it died before its run record was written: start it afresh
    await s.store.queue.update(task.id, { status: 'pending' });
    s.letGo(task.id);
  } else {
    s.leases.set(task.id, instrumentsOfTask(task)); // its place and instruments, from now on
    s.pendingResume = { taskId: task.id, resume: { run, mode, steps: await s.store.runSteps.list(run.id), remade: info.remade } };
  }
  s.notify();
}

/** End an interrupted run: its cleanup runs, it is recorded `aborted`, and the queue stays held. */
export async function endInterrupted(s: SharedState) {
  const info = s.interrupted!;
  const task = await getTask(s, info.task_id);
  const run = task.runId ? await s.store.runs.get(task.runId) : null;
  s.interrupted = null;
  if (!run) {
    await s.store.queue.update(task.id, { status: 'aborted', endedAt: now() });
    s.letGo(task.id);
    s.emitQueue();
    return;
  }
  s.leases.set(task.id, instrumentsOfTask(task));
  s.pendingResume = { taskId: task.id, resume: { run, mode: 'skip', steps: [], ending: true } };
  s.notify();
  // the loop runs it: cleanup only, then `aborted`; the queue stays held
}

/** The last record of each step position (phase, iteration, index): a retried or resumed step has several. */
function latestSteps(steps: StepRow[]): StepRow[] {
  const last = new Map<string, StepRow>();
  for (const s of steps) last.set(`${s.phase}|${s.iteration}|${s.stepIndex}`, s);
  return [...last.values()];
}
