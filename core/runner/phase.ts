/**
 * One phase of a run (DESIGN.md §5): its steps through the workflow interpreter, each call recorded `running`
 * before the instrument is touched and completed after (so a crash leaves it in-doubt), a failed step waiting
 * for the operator's retry or skip, a `pause` step for continue, an `input` step for a person's value, and the
 * steps of an interrupted run replayed from their records without touching instruments.
 */
import { isLabError, isStoreFault, LabError } from '../errors.js';
import { alertOnly, keys as alertKeys, open as openAlert, resolve as resolveAlert } from '../notify/events.js';
import type { AlertOp, TxStore } from '../store/types.js';
import { outputsOf, runSteps, type RunControl, type Scope, type StepAt } from '../workflow/interpreter.js';
import type { Phase, Step } from '../workflow/model.js';
import { countSteps } from '../workflow/validate.js';
import { sentence } from '../text.js';
import { Abort, Shutdown, waiter, type TaskRun } from './execution.js';
import { waitForInput } from './input.js';
import { savedProblem } from './saved.js';
import { message, now, skippedSteps, type Replay, type RunnerEvent, type SharedState } from './state.js';
import { emitStatus, emitStatusSoon } from './status.js';

/** A failed step the operator skipped: its call's record says so, and the run counts it at once. */
async function markSkipped(s: SharedState, c: TaskRun, stepId: number | null) {
  c.skipped++;
  if (stepId !== null) await s.deck.recorder.skipped(stepId);
  await s.store.runs.update(c.run.id, { skipped: c.skipped });
}

/**
 * Run one phase; with `replay`, its steps before `replay.until` come from the records (no instrument).
 * Resolves with the iteration's outputs (main; {} for prep and cleanup) and whether a step of it was
 * skipped: then the phase is recorded `skipped`, and its outputs are not data.
 */
export async function runPhase(
  s: SharedState,
  c: TaskRun,
  phase: Phase,
  iteration: number | null,
  steps: Step[],
  scope: Scope,
  replay: Replay | undefined,
): Promise<{ outputs: Record<string, unknown>; skipped: boolean }> {
  if (steps.length === 0 && phase !== 'main') return { outputs: {}, skipped: false };
  c.phase = phase;
  if (iteration !== null) c.iteration = iteration;
  c.step = 0;
  c.steps = countSteps(steps);
  const run = c.run.id;
  const existing = replay ? (await s.store.phases.list(run)).find((p) => p.phase === phase && p.iteration === iteration) : undefined;
  const phaseId = existing?.id ?? (await s.store.phases.create({ runId: run, phase, iteration, params: phase === 'main' ? scope.params : {}, startedAt: now() }));
  if (existing) await s.store.phases.update(phaseId, { status: 'running', endedAt: null });
  emitStatus(s);

  const replaying = (at: StepAt) => replay !== undefined && at.index < replay.until;
  // variables carry over from earlier iterations; an output is only what THIS phase run saved
  const saved = new Set<string>();
  let skippedHere = 0;
  const control: RunControl = {
    beforeStep: async (at) => {
      c.step = at.index;
      c.failedStep = null;
      if (replaying(at)) return;
      if (s.closed) throw new Shutdown();
      if (c.abortRequest === 'task') throw new Abort('task');
      await c.waitWhilePaused(
        () => s.closed,
        () => emitStatus(s),
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
      return callStep(s, c, at, instrument, method, args);
    },
    wait: async (at, seconds) => {
      if (replaying(at)) return;
      emitStep(s, c, at, 'start');
      await c.sleep(seconds * 1000);
      emitStep(s, c, at, 'ok');
    },
    pauseStep: async (at, msg) => {
      if (replaying(at)) return;
      c.waitingPause = Object.assign(waiter<void>(), { at, message: msg });
      const key = alertKeys.pause(run, at.path);
      await s.log(run, 'info', `Waiting for the operator: ${msg}`, [openAlert('pause_waiting', key, alertCtx(s, c, at, `A pause step waits for the operator: ${msg}`), { userId: c.task.createdBy })]);
      emitStatus(s);
      try {
        await c.waitingPause.promise;
        // continuing is no write of the runner's: the resolution is written on its own
        await alertOnly(s.store, [resolveAlert(key, 'the operator continued')]);
      } finally {
        c.waitingPause = null;
        emitStatus(s);
      }
    },
    inputStep: async (at, step) => {
      const rec = replay?.recorded.get(`${phase}|${iteration}|${at.index}`);
      if (replaying(at) && rec?.status === 'ok') return rec.output;
      if (replay?.skipAt === at.index) replay.skipAt = null; // an input is asked again, never skipped: nothing was done
      return waitForInput(inputContext(s), c, at, step, rec && rec.status !== 'ok' ? rec : null);
    },
    onError: async (at, e) => {
      if (e instanceof SkipInDoubt) {
        skippedHere++;
        // replayed: counted before the crash; the in-doubt step the operator chose to skip: counted now
        if (!replaying(at)) await markSkipped(s, c, null);
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
      await s.log(run, 'error', failedMsg, [openAlert(blocked ? 'safety_blocked' : 'step_failed', key, { ...alertCtx(s, c, at, failedMsg), ...extra }, { userId: c.task.createdBy })]);
      emitStatus(s);
      try {
        const decision = await failed.promise;
        await s.log(run, 'info', decision === 'retry' ? `Retrying ${at.path}.` : `Skipping ${at.path}.`, [resolveAlert(key, decision === 'retry' ? 'the step was retried' : 'the step was skipped')]);
        if (decision === 'skip') {
          skippedHere++;
          await markSkipped(s, c, c.failedStep);
        }
        return decision;
      } finally {
        c.failed = null;
        emitStatus(s);
      }
    },
    afterStep: (at) => {
      c.step = at.index + 1;
      if ((at.step.kind === 'call' || at.step.kind === 'input') && at.step.save_as) saved.add(at.step.save_as);
      emitStatusSoon(s);
    },
  };

  try {
    await runSteps(steps, scope, control, { phase, iteration });
  } catch (e) {
    // a shutdown leaves the phase `running`, as a crash would: a resume replays it only up to where it stopped
    if (!(e instanceof Shutdown) && !isStoreFault(e)) await s.store.phases.update(phaseId, { status: e instanceof Abort ? 'stopped' : 'error', endedAt: now() });
    throw e;
  }
  const outputs = phase === 'main' ? outputsOf(c.payload.definition, { params: scope.params, vars: Object.fromEntries([...saved].map((k) => [k, scope.vars[k]])) }) : {};
  await s.store.phases.update(phaseId, { status: skippedHere ? 'skipped' : 'ok', outputs, endedAt: now() });
  if (skippedHere) {
    const where = iteration === null ? phase : `Iteration ${iteration + 1}`;
    await s.log(run, 'warn', `${where} had ${skippedSteps(skippedHere)}: it is marked skipped, and its outputs are not data.`);
  }
  if (phase === 'main' && iteration !== null) {
    s.emit({ type: 'iteration', run_id: run, iteration, params: scope.params, outputs, ...(skippedHere ? { skipped: true } : {}) });
  }
  return { outputs, skipped: skippedHere > 0 };
}

/** What input steps need of the runner (core/runner/input.ts). */
function inputContext(s: SharedState) {
  return {
    store: s.store,
    emit: (e: RunnerEvent) => s.emit(e),
    log: (runId: number, level: 'info' | 'warn' | 'error', msg: string, alerts?: AlertOp[], change?: (tx: TxStore) => Promise<void>) => s.log(runId, level, msg, alerts, change),
    emitStatus: () => emitStatus(s),
    host: s.host.name,
  };
}

/** What an alert about a step of this task says besides its message. */
function alertCtx(s: SharedState, c: TaskRun, at: StepAt, message: string) {
  const call = at.step.kind === 'call' ? { instrument: at.step.instrument, method: at.step.method } : {};
  return { host: s.host.name, task_id: c.task.id, run_id: c.run.id, step: at.path, phase: at.phase, iteration: at.iteration, workflow: c.run.workflowName, ...call, message };
}

function emitStep(s: SharedState, c: TaskRun, at: StepAt, state: 'start' | 'ok' | 'error', extra: Partial<Extract<RunnerEvent, { type: 'step' }>> = {}) {
  s.emit({ type: 'step', run_id: c.run.id, phase: at.phase, iteration: at.iteration, path: at.path, index: at.index, state, kind: at.step.kind, ...extra });
}

/** One instrument call of a run: its record is `running` before the instrument is touched. */
async function callStep(s: SharedState, c: TaskRun, at: StepAt, instrument: string, method: string, args: Record<string, unknown>) {
  const base = { runId: c.run.id, phase: at.phase, iteration: at.iteration, stepIndex: at.index, instrument, method, userId: c.task.createdBy };
  const recorder = s.deck.recorder;
  const id = await recorder.begin({ ...base, args, startedAt: now() });
  emitStep(s, c, at, 'start', { instrument, method, step_id: id });
  try {
    const { output } = await s.deck.call(instrument, method, args, {
      ...base,
      owner: c.owner,
      recordId: id,
    });
    const saveAs = at.phase === 'main' && at.step.kind === 'call' ? at.step.save_as : undefined;
    const problem = saveAs ? c.checkSaved?.(saveAs, output) : null;
    if (problem) throw new LabError('instrument_error', savedProblem(instrument, method, output, problem));
    emitStep(s, c, at, 'ok', { instrument, method, output, step_id: id });
    return output;
  } catch (e) {
    c.failedStep = id;
    // the deck recorded the call itself (an instrument error, or a host lost mid-call: in-doubt); a store
    // failure leaves the record `running`, to be marked in-doubt once the store answers
    if (!(isLabError(e) && e.data?.task_id !== undefined) && !isStoreFault(e)) {
      // a call the safety guard refused reached no driver: the step is `blocked` (it waits like any failed step)
      await recorder.complete(id, { status: isLabError(e) && e.code === 'safety' ? 'blocked' : 'error', error: message(e), endedAt: now() });
    }
    emitStep(s, c, at, 'error', { instrument, method, error: message(e), step_id: id });
    throw e;
  }
}

/** The in-doubt step of a resumed run, skipped by the operator's choice. */
class SkipInDoubt extends Error {
  constructor() {
    super('skipped after the interruption');
  }
}
