/**
 * A person's run control through any door (/app's routes, /ivoryos): done where the task runs (this labdeck,
 * or the one on the database that runs it: Runner.control), and written to the audit log with one action
 * per control, whichever door it came through (`via` says which, when it is not /app).
 */
import type { RunControlName, RunnerStatus } from '../core/runner/index.js';
import type { Runtime } from '../core/runtime.js';

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

export async function runControl(runtime: Runtime, userId: number, name: RunControlName, taskId?: number, via?: string): Promise<RunnerStatus> {
  const status = await runtime.runner.control(name, taskId);
  await runtime.audit(userId, CONTROL_ACTIONS[name], { status: status.state, ...(taskId === undefined ? {} : { task_id: taskId }), ...(via ? { via } : {}) });
  return status;
}
