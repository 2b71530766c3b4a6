/**
 * Execution (DESIGN.md §5): the loop that starts tasks while there is a free place (`parallel`), a resumed
 * interrupted task first; each task's run from its record's creation through prep, its iterations and
 * cleanup (whatever happened) to its end, recorded with its alerts; and what befalls a task outside its
 * steps: a bug (failed) or a store that fails under it (cut, core/runner/store-fault.ts). The steps of each
 * phase run in core/runner/phase.ts.
 */
import { isStoreFault, LabError } from '../errors.js';
import { bestText, campaignBest } from '../notify/campaign.js';
import { alerting, keys as alertKeys, open as openAlert, resolveRun } from '../notify/events.js';
import type { AlertOp, PhaseRow, QueueTaskRow, RunStatus, StepRow, TaskStatus } from '../store/types.js';
import type { Phase } from '../workflow/model.js';
import type { Scope } from '../workflow/interpreter.js';
import { Abort, Shutdown, TaskRun } from './execution.js';
import { resumeLine } from './iteration.js';
import { runPhase } from './phase.js';
import { claim, getTask, hold } from './queue.js';
import { instrumentsOfTask, message, now, skippedSteps, type Replay, type Resume, type SharedState } from './state.js';
import { emitStatus } from './status.js';
import { runParameters, workflowIterations, type IterationSource, type TaskPayload, type WorkflowPayload } from './tasks.js';

/** How long the loop waits before trying the store again after it failed (unless woken sooner). */
const STORE_RETRY_MS = 2_000;

/**
 * Start tasks while there is a free place (`parallel`): a resumed interrupted task first, else the next
 * pending task whose instruments are free. Each runs beside the others; when one ends, the loop looks again.
 */
export async function loop(s: SharedState): Promise<void> {
  while (!s.closed) {
    const wake = s.wake.promise;
    // those who asked before this look are told when it starts nothing (Runner.settled); later ones, after the next
    const lookers = s.lookers.splice(0);
    const nothing = () => lookers.forEach((r) => r());
    if (!s.pendingResume && s.leases.size >= s.parallel) {
      nothing();
      await wake;
      continue;
    }
    let next: { task: QueueTaskRow; resume?: Resume } | null = null;
    try {
      next = await nextTask(s);
    } catch (e) {
      // the store failed before a task could start (a full or read-only disk): the runner stays up, says
      // why, and tries again when woken or after a while
      if (s.storeFault === null) s.reportFault(e);
      s.storeFault = message(e);
      s.faults.suspectLost(e); // a claim whose answer was lost may have marked a task running here
      emitStatus(s);
      s.lookers.unshift(...lookers); // not a look: the next one tells them
      await Promise.race([wake, new Promise((r) => setTimeout(r, STORE_RETRY_MS).unref())]);
      continue;
    }
    if (s.storeFault !== null) {
      s.storeFault = null;
      emitStatus(s);
    }
    if (!next) {
      nothing();
      await wake;
      continue;
    }
    launch(s, next.task, next.resume);
    s.lookers.unshift(...lookers); // it started one: the next look (at once) may start more
  }
  for (const r of s.lookers.splice(0)) r();
  await Promise.all(s.executing);
}

/** Run a task beside the others: its place and its instruments are leased here until it ends. */
function launch(s: SharedState, task: QueueTaskRow, resume?: Resume): void {
  if (!s.leases.has(task.id)) s.leases.set(task.id, instrumentsOfTask(task));
  const done: Promise<void> = execute(s, task, resume)
    .catch((e) => (e instanceof Shutdown ? undefined : isStoreFault(e) ? strand(s, task, e) : fault(s, task, e)))
    .catch((e) => s.reportFault(e))
    .finally(() => {
      if (!s.faults.has(task.id)) s.leases.delete(task.id);
      s.executing.delete(done);
      s.notify();
    });
  s.executing.add(done);
}

/** What the loop runs next: a resumed interrupted task, else the next pending one (unless paused or held). */
async function nextTask(s: SharedState): Promise<{ task: QueueTaskRow; resume?: Resume } | null> {
  if (s.pendingResume) {
    const { taskId, resume } = s.pendingResume;
    s.pendingResume = null;
    return { task: await getTask(s, taskId), resume };
  }
  if (s.paused || s.held) return null;
  const task = await s.serial(() => claim(s));
  return task ? { task } : null;
}

async function execute(s: SharedState, task: QueueTaskRow, resume?: Resume): Promise<void> {
  const payload = task.payload as TaskPayload;
  const wf = payload.definition;
  const run =
    resume?.run ??
    (await s.store.runs.create({
      taskId: task.id,
      name: task.name,
      workflowName: payload.workflow,
      workflowVersion: payload.version,
      workflow: wf,
      parameters: task.kind === 'workflow' ? runParameters(payload as WorkflowPayload) : (s.sources[task.kind]?.runParameters?.(payload) ?? null),
      status: 'running',
      userId: task.createdBy,
      startedAt: now(),
      hostId: s.host.id,
    }));
  const ending = resume?.ending === true;
  if (resume) await s.store.runs.update(run.id, { status: 'running', error: null, hostId: s.host.id }); // this host carries it on now
  await s.store.queue.update(task.id, { status: 'running', runId: run.id, startedAt: task.startedAt ?? now(), hostId: s.host.id });
  const phases = resume ? await s.store.phases.list(run.id) : [];
  const c = new TaskRun({ ...task, status: 'running', runId: run.id }, { ...run, status: 'running' }, payload, s.leases.get(task.id) ?? instrumentsOfTask(task));
  if (ending) c.abortRequest = 'task';
  c.paused = s.paused; // a task resumed while the queue's pause flag is set starts paused
  if (c.paused) c.pausedBy = 'person'; // the queue's flag: taken for a person's
  s.tasks.push(c);
  const log = (level: 'info' | 'warn' | 'error', msg: string) => s.log(run.id, level, msg);

  let source: IterationSource;
  try {
    source = await sourceOf(s, task, run.id, payload, phases);
    s.deck.lock(c.instruments, c.owner);
  } catch (e) {
    if (isStoreFault(e)) throw e;
    // the run cannot start (its optimizer is gone, an instrument vanished or is held): recorded as failed
    await finish(s, c, 'failed', message(e));
    return;
  }
  c.total = source.total;
  c.checkSaved = source.checkSaved?.bind(source);
  s.emitQueue();
  emitStatus(s);
  s.emit({ type: 'run', run_id: run.id, task_id: task.id, status: 'running' });
  await log(
    'info',
    resume ? (ending ? 'Ending the interrupted run: cleanup only.' : resumeLine(resume.mode, resume.remade ?? [])) : `Started ${wf.name} v${payload.version}: ${source.total} iteration(s).`,
  );

  // Replay of an interrupted run: finished phases replay from their records; the interrupted one replays
  // up to its in-doubt step (or its last recorded step) and goes on for real from there.
  const recorded = new Map<string, StepRow>();
  for (const r of resume?.steps ?? []) recorded.set(`${r.phase}|${r.iteration}|${r.stepIndex}`, r);
  const replayPlan = (phase: Phase, iteration: number | null): Replay | undefined => {
    if (!resume) return undefined;
    const row = phases.find((p) => p.phase === phase && p.iteration === iteration);
    if (!row) return undefined; // never started: runs for real
    if (row.status !== 'running') return { until: Infinity, recorded, skipAt: null };
    const mine = [...recorded.values()].filter((r) => r.phase === phase && r.iteration === iteration);
    const doubt = mine.find((r) => r.status === 'in-doubt' || r.status === 'running');
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
    await runPhase(s, c, 'prep', null, wf.prep, { params: {}, vars }, replayPlan('prep', null));
    for (let i = 0; i < source.total; i++) {
      if (stopAfterIteration(c) || (inCleanup && !phases.some((p) => p.phase === 'main' && p.iteration === i))) {
        outcome = 'stopped';
        break;
      }
      const before = phases.find((p) => p.phase === 'main' && p.iteration === i);
      const scope: Scope = { params: await source.params(i, before?.params as Record<string, unknown> | undefined), vars: { ...vars } };
      try {
        const { outputs, skipped } = await runPhase(s, c, 'main', i, wf.main, scope, replayPlan('main', i));
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
    await runPhase(s, c, 'cleanup', null, wf.cleanup, { params: {}, vars }, replayPlan('cleanup', null));
  } catch (e) {
    if (e instanceof Shutdown || isStoreFault(e)) throw e;
    if (!(e instanceof Abort)) {
      error ??= `cleanup: ${message(e)}`;
      if (outcome === 'completed') outcome = 'failed';
    }
    await log('warn', `Cleanup ended early: ${message(e)}`);
  }
  if (outcome === 'aborted') await hold(s, c.task.id);
  await finish(s, c, outcome, error);
}

/**
 * A fault outside any step (the database failed, a bug): the task is recorded failed where the store still
 * answers, its locks are freed and the loop goes on.
 */
async function fault(s: SharedState, task: QueueTaskRow, e: unknown) {
  const c = s.tasks.find((t) => t.id === task.id);
  s.tasks = s.tasks.filter((t) => t !== c);
  s.deck.unlock(`task-${task.id}`);
  try {
    if (c) await s.store.runs.update(c.run.id, { status: 'failed', error: message(e), endedAt: now() });
    await s.store.queue.update(task.id, { status: 'failed', endedAt: now() });
  } catch {
    // the store itself failed: the task keeps its status (a `running` one is interrupted at the next start)
  }
  s.reportFault(e, `task ${task.id} failed outside its steps: `);
  s.emitQueue();
  emitStatus(s);
}

/**
 * The store failed under a running task: it stops where it is (no cleanup, as a crash stops it) and keeps
 * its place, its instruments' lease and their lock until it is recorded interrupted (core/runner/store-fault.ts).
 */
function strand(s: SharedState, task: QueueTaskRow, e: unknown) {
  const c = s.tasks.find((t) => t.id === task.id);
  s.tasks = s.tasks.filter((t) => t !== c);
  s.faults.strand(task.id, c?.run.id ?? null, e);
  s.reportFault(e, `task ${task.id} stopped: the database failed under it: `);
  emitStatus(s);
}

/** The iterations of a task: its rows, or (campaigns) what the registered factory for its kind makes. */
async function sourceOf(s: SharedState, task: QueueTaskRow, runId: number, payload: TaskPayload, phases: PhaseRow[]): Promise<IterationSource> {
  if (task.kind === 'workflow') return workflowIterations(payload as WorkflowPayload);
  const factory = s.sources[task.kind];
  if (!factory) throw new LabError('invalid_input', `This labdeck cannot run tasks of kind "${task.kind}".`);
  const done = phases.filter((p) => p.phase === 'main' && p.status === 'ok');
  return factory({ task, runId, payload, done, log: (m) => s.log(runId, 'info', m) });
}

async function finish(s: SharedState, c: TaskRun, outcome: RunStatus, error: string | null) {
  const taskStatus: TaskStatus = outcome === 'completed' ? 'done' : outcome === 'interrupted' ? 'interrupted' : outcome;
  await alerting(s.store, await endAlerts(s, c, outcome, error), async (tx) => {
    await tx.runs.update(c.run.id, { status: outcome, error, endedAt: now() });
    await tx.queue.update(c.task.id, { status: taskStatus, endedAt: now() });
  });
  s.deck.unlock(c.owner); // after its end is stored: a task the store cut off keeps its instruments
  s.tellOthers();
  const skipped = c.skipped ? ` with ${skippedSteps(c.skipped)}` : '';
  await s.log(c.run.id, outcome === 'completed' && !skipped ? 'info' : 'warn', `Run ${outcome}${skipped}${error ? `: ${error}` : ''}.`);
  s.tasks = s.tasks.filter((t) => t !== c);
  // a task that ends while paused leaves the queue paused: no new task starts until the operator resumes
  if (c.paused) s.paused = true;
  s.emit({ type: 'run', run_id: c.run.id, task_id: c.task.id, status: outcome, skipped: c.skipped });
  s.emitQueue();
  emitStatus(s);
}

/** A run's end resolves what still waits of it (but a held queue) and tells `run_completed` / `campaign_finished`. */
async function endAlerts(s: SharedState, c: TaskRun, outcome: RunStatus, error: string | null): Promise<AlertOp[]> {
  const ctx = { host: s.host.name, task_id: c.task.id, run_id: c.run.id, workflow: c.run.workflowName, outcome };
  const ops: AlertOp[] = [resolveRun(c.run.id, `the run ended: ${outcome}`, ['queue_held'])];
  if (c.task.kind === 'campaign') {
    const best = await campaignBest(s.store, c.run.id, c.payload).catch(() => null);
    const message = `Campaign ${c.task.name} ${outcome === 'completed' ? 'finished' : `ended early (${outcome})`}${error ? `: ${error}` : '.'} ${bestText(best)}`;
    ops.push(openAlert('campaign_finished', alertKeys.campaignFinished(c.run.id), { ...ctx, message, best }, { userId: c.task.createdBy }));
  } else if (outcome === 'completed')
    ops.push(
      openAlert(
        'run_completed',
        alertKeys.runCompleted(c.run.id),
        { ...ctx, message: `Run ${c.task.name} completed${c.skipped ? ` with ${skippedSteps(c.skipped)}` : ''}.` },
        { userId: c.task.createdBy },
      ),
    );
  return ops;
}

/** Read through a function: the operator changes it while a phase awaits (TypeScript would narrow a field). */
const stopAfterIteration = (c: TaskRun): boolean => c.abortRequest === 'iteration';
