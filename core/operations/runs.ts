/**
 * Operations on runs and the queue (DESIGN.md §5, §15), bluesky-queueserver's table of named operations: queue
 * a run, the runner's status, the queue and its tasks, delete, move and rename a task, and every run control
 * (pause, resume, continue a pause step, skip, retry, release, the two aborts). Each control is done where the
 * task runs (here, or on the labdeck on the database that runs it: Runner.control) and written to the audit
 * log with one action per control, whichever door it came through. An agent's run, and an agent's resume of a
 * task a person paused, wait for a person (core/approvals).
 */
import { LabError } from '../errors.js';
import { keepInputFile } from '../runner/input-files.js';
import type { RunControlName, RunnerEvent, RunnerStatus, WorkflowPayload } from '../runner/index.js';
import type { QueueTaskRow } from '../store/types.js';
import type { Workflow } from '../workflow/model.js';
import { RELAYED, controlBy, isAgent, isRelayed, type Caller } from './caller.js';
import { agentOf, audit, userOf, type Lab, type MaybeRequest } from './lab.js';

/** The audit action of each control: `runner.` and its /app path after `/executions` (`runner.abort.next-task`). */
export const CONTROL_ACTIONS: Record<RunControlName, string> = {
  pauseResume: 'runner.pause-resume',
  pause: 'runner.pause',
  resume: 'runner.resume',
  continuePauseStep: 'runner.continue',
  skip: 'runner.skip',
  release: 'runner.release',
  retry: 'runner.retry',
  abortNextIteration: 'runner.abort.next-iteration',
  abortNextTask: 'runner.abort.next-task',
  rerunIteration: 'runner.rerun-iteration',
  retryStep: 'runner.retry-step',
};

export interface RunInput {
  workflow: unknown;
  /** One object of parameter values per iteration. */
  config?: unknown;
  /** Or this many iterations with the parameters' defaults. */
  repeat?: unknown;
  /** Or an uploaded config CSV's stored name: its rows, checked with line and column named (repeat is then ignored). */
  configFile?: string;
  name?: unknown;
  /** How a bad row is named in messages (`kwargs row 2`); default `row N`. */
  rowLabel?: (index: number) => string;
}

/** A run queued: the task, and whether it is already running or waits its turn. */
export interface Queued {
  task: QueueTaskRow;
  status: 'running' | 'queued';
}

export function runOperations(lab: Lab) {
  const { runner, store } = lab;

  const ops = {
    /**
     * Queue a run of a saved workflow: validated against the lab's instruments and every row against its
     * parameters before anything is queued. An agent's run becomes a request a person approves.
     */
    async submit(caller: Caller, input: RunInput): Promise<MaybeRequest<Queued>> {
      let { config, repeat } = input;
      if (input.configFile) {
        const saved = await store.workflows.get(String(input.workflow));
        if (saved) config = await lab.files.configRows(input.configFile, saved.definition as Workflow);
        repeat = undefined;
      }
      if (isAgent(caller)) return { request: await lab.approvals.run(agentOf(caller), { workflow: input.workflow, config, repeat, name: input.name }) };
      const task = await runner.submit({ workflow: input.workflow, config, repeat, name: input.name, userId: caller.userId, ...(input.rowLabel ? { rowLabel: input.rowLabel } : {}) });
      return { done: { task, status: (await runner.startsNow(task.id)) ? 'running' : 'queued' } };
    },

    /** Queue a run already checked (an approved request's plan) on behalf of `caller`'s account. */
    enqueue(caller: Caller, plan: { name: string; payload: WorkflowPayload }): Promise<QueueTaskRow> {
      return runner.enqueue({ name: plan.name, kind: 'workflow', payload: plan.payload, createdBy: caller.userId });
    },

    /**
     * A run control, on the running task `taskId` (needed while several run): done here or by the labdeck
     * that runs the task, then audited (`runner.pause`, `runner.abort.next-task`, …) with the status after.
     * An agent's resume of a task a person paused waits for a person instead.
     */
    async control(caller: Caller, name: RunControlName, taskId?: number): Promise<MaybeRequest<RunnerStatus>> {
      // relayed here by the labdeck it was asked of, which made the agent's check and writes the audit line
      if (isRelayed(caller)) return { done: await runner.controlHere(name, taskId, controlBy(caller)) };
      let status: RunnerStatus;
      if (isAgent(caller) && name === 'resume') {
        const r = await lab.approvals.resume(agentOf(caller), taskId);
        if ('request' in r) return { request: r.request };
        status = r.status;
      } else status = await runner.control(name, taskId, controlBy(caller));
      await audit(lab, caller, CONTROL_ACTIONS[name], { status: status.state, ...(taskId === undefined ? {} : { task_id: taskId }) });
      return { done: status };
    },

    /**
     * The value a person gives a waiting `input` step (routed to the labdeck whose task waits), audited.
     * An agent cannot answer an input: a person does (DESIGN.md §17).
     */
    async input(caller: Caller, value: unknown, taskId?: number): Promise<{ task_id: number; value: unknown; status: RunnerStatus }> {
      if (isAgent(caller)) throw new LabError('forbidden', 'An input step is answered by a person, not by an agent.');
      const by = isRelayed(caller) && caller.userId === null && caller.name === RELAYED ? null : { id: caller.userId, username: caller.name };
      const given = await runner.input(value, { taskId, by });
      if (isRelayed(caller)) return given; // the labdeck it was given through wrote the audit line
      await audit(lab, caller, 'runner.input', { task_id: given.task_id, value: given.value });
      return given;
    },

    /**
     * A file a person gives a waiting `file` input step: kept in the data folder, then given as the step's
     * value (ops.input); a file the step refuses is deleted again.
     */
    async inputFile(caller: Caller, file: { data: Buffer; name: string; type: string }, taskId?: number) {
      const kept = await keepInputFile(lab.dataDir, file.data, file.name, file.type);
      try {
        return await ops.input(caller, kept.file, taskId);
      } catch (e) {
        await kept.discard();
        throw e;
      }
    },

    /** The runner's status: busy, state, flags, current task, progress, and the tasks other labdecks run. */
    status(): RunnerStatus {
      return runner.status();
    },

    /** Unfinished tasks in queue order, with the runner's flags. */
    queue() {
      return runner.queue();
    },

    /** One task, finished or not (404 when there is none). */
    task(id: number): Promise<QueueTaskRow> {
      return runner.task(id);
    },

    /** The task with id `id`, or null (no 404: a door that polls for a run's start). */
    async find(id: number): Promise<QueueTaskRow | null> {
      return store.queue.get(id);
    },

    /** The running task with its payload (null when none), and the runner's status. */
    async current(): Promise<{ task: QueueTaskRow | null; status: RunnerStatus }> {
      const status = runner.status();
      const task = status.current_task ? await store.queue.get(status.current_task.id) : null;
      return { task, status };
    },

    /** Whether a queued task is running or starts at once. */
    startsNow(id: number): Promise<boolean> {
      return runner.startsNow(id);
    },

    /** Remove a pending task: its owner or an admin (403 for anyone else), never a running one (409). */
    deleteTask(caller: Caller, id: number): Promise<void> {
      return runner.deleteTask(id, userOf(caller));
    },

    /** Move a pending task up, down, to the top or the bottom. */
    moveTask(_caller: Caller, id: number, direction: unknown): Promise<void> {
      return runner.moveTask(id, direction);
    },

    /** Rename a task: its owner or an admin. */
    async renameTask(caller: Caller, id: number, name: unknown): Promise<QueueTaskRow> {
      await runner.renameTask(id, name, userOf(caller));
      return runner.task(id);
    },

    /** Listen to what the runner could not do on its own loop (a database gone); returns the way to stop. */
    onError(listener: (e: unknown) => void): () => void {
      runner.on('error', listener);
      return () => void runner.off('error', listener);
    },

    /** Listen to the runner's live events (this labdeck's, and other labdecks' runs marked with their host); returns the way to stop. */
    subscribe(listener: (e: RunnerEvent) => void): () => void {
      runner.on('event', listener);
      return () => void runner.off('event', listener);
    },
  };
  return ops;
}

export type RunOperations = ReturnType<typeof runOperations>;
