/**
 * What the execution page shows for each runner status (core/runner/controls.ts, used by the server's render
 * and by the browser from the live stream): the state in words, which controls are enabled, the queue's
 * label for the running task, and the note about a task just queued. The runner's own agreement with
 * `availableControls` (a disabled control is a 409) is tested in runner.test.ts.
 */
import { availableControls, CONTROLS, queueStatusLabel, situationOf, SITUATION, taskNotice, type Control, type ControlStatus } from '../../core/runner/controls.js';

const IDLE: ControlStatus = { busy: false, state: 'idle', paused: false, queue_held: false, current_task: null, failed_step: null, waiting: null, interrupted: null };
const task = { id: 7 };
const RUNNING: ControlStatus = { ...IDLE, busy: true, state: 'running', current_task: task };

/** Every situation the runner can be in, as its status says it. */
const CASES: [string, ControlStatus, string, Control[]][] = [
  ['idle', IDLE, 'idle', []],
  ['idle, held after an abort', { ...IDLE, queue_held: true }, 'queue held', ['release']],
  ['idle, interrupted by a crash (held)', { ...IDLE, queue_held: true, interrupted: { task_id: 3 } }, 'interrupted, waiting for a decision', ['retry', 'skip', 'abort-task']],
  ['running', RUNNING, 'running', ['pause', 'stop-iteration', 'abort-task']],
  ['running, the flag set (a call in flight)', { ...RUNNING, paused: true }, 'pausing after this step', ['resume', 'stop-iteration', 'abort-task']],
  ['paused by the flag', { ...RUNNING, state: 'paused', paused: true }, 'paused', ['resume', 'stop-iteration', 'abort-task']],
  ['at a pause step', { ...RUNNING, state: 'paused', waiting: { path: 'main[1]', message: 'Load' } }, 'waiting at a pause step', ['continue', 'stop-iteration', 'abort-task']],
  [
    'at a pause step, the flag set too',
    { ...RUNNING, state: 'paused', paused: true, waiting: { path: 'main[1]', message: 'Load' } },
    'waiting at a pause step',
    ['resume', 'continue', 'stop-iteration', 'abort-task'],
  ],
  ['a failed step', { ...RUNNING, state: 'failed', failed_step: { path: 'main[0]' } }, 'failed step waiting for a decision', ['retry', 'skip', 'stop-iteration', 'abort-task']],
  ['stopping (cleanup)', { ...RUNNING, state: 'stopping' }, 'stopping', ['pause', 'abort-task']],
  ['stopping, paused', { ...RUNNING, state: 'stopping', paused: true }, 'stopping', ['resume', 'abort-task']],
];

describe('the runner state in words, and the controls that do something', () => {
  it.each(CASES)('%s', (_what, status, label, enabled) => {
    expect(SITUATION[situationOf(status)].label).toBe(label);
    const on = availableControls(status);
    expect(CONTROLS.filter((c) => on[c])).toEqual(enabled);
  });

  it('never says running while the runner stands still', () => {
    for (const [what, status] of CASES) {
      if (status.state !== 'running' || status.paused) expect([what, situationOf(status)]).not.toEqual([what, 'running']);
    }
  });
});

describe('the queue', () => {
  it('says where the runner is for the running task, not "running"', () => {
    const failed: ControlStatus = { ...RUNNING, state: 'failed', failed_step: {} };
    expect(queueStatusLabel({ id: 7, status: 'running' }, failed)).toBe('failed step waiting for a decision');
    expect(queueStatusLabel({ id: 7, status: 'running' }, { ...RUNNING, state: 'paused', paused: true })).toBe('paused');
    expect(queueStatusLabel({ id: 7, status: 'running' }, { ...RUNNING, state: 'paused', waiting: {} })).toBe('waiting at a pause step');
    expect(queueStatusLabel({ id: 7, status: 'running' }, { ...RUNNING, state: 'stopping' })).toBe('stopping');
    expect(queueStatusLabel({ id: 7, status: 'running' }, RUNNING)).toBe('running');
  });

  it('says when pending tasks wait for a held queue, and that an interrupted one waits for a decision', () => {
    expect(queueStatusLabel({ id: 8, status: 'pending' }, { ...IDLE, queue_held: true })).toBe('pending (queue held)');
    expect(queueStatusLabel({ id: 8, status: 'pending' }, RUNNING)).toBe('pending');
    expect(queueStatusLabel({ id: 3, status: 'interrupted' }, { ...IDLE, queue_held: true, interrupted: {} })).toBe('interrupted, waiting for a decision');
  });
});

describe('the note about a task just queued', () => {
  const t = { id: 7, name: 'ping × 2', run_id: null };

  it('follows the task: queued, where the runner is while it runs, how it ended and its record', () => {
    expect(taskNotice({ ...t, status: 'pending' }, RUNNING)).toEqual({ tone: 'info', text: 'Task 7 (ping × 2) is queued.', run_id: null });
    expect(taskNotice({ ...t, status: 'pending' }, { ...IDLE, queue_held: true })).toMatchObject({ tone: 'warning', text: 'Task 7 (ping × 2) is queued: the queue is held.' });
    expect(taskNotice({ ...t, status: 'running', run_id: 4 }, RUNNING)).toEqual({ tone: 'info', text: 'Task 7 (ping × 2): running.', run_id: 4 });
    expect(taskNotice({ ...t, status: 'running', run_id: 4 }, { ...RUNNING, state: 'failed', failed_step: {} })).toEqual({
      tone: 'danger',
      text: 'Task 7 (ping × 2): failed step waiting for a decision.',
      run_id: 4,
    });
    expect(taskNotice({ ...t, status: 'running', run_id: 4 }, { ...RUNNING, state: 'paused', waiting: {} }).text).toBe('Task 7 (ping × 2): waiting at a pause step.');
    expect(taskNotice({ ...t, status: 'done', run_id: 4 }, IDLE)).toEqual({ tone: 'success', text: 'Task 7 (ping × 2) ended: completed.', run_id: 4 });
    expect(taskNotice({ ...t, status: 'completed', run_id: 4 }, IDLE).text).toBe('Task 7 (ping × 2) ended: completed.');
    expect(taskNotice({ ...t, status: 'aborted', run_id: 4 }, { ...IDLE, queue_held: true })).toMatchObject({ tone: 'danger', text: 'Task 7 (ping × 2) ended: aborted.' });
    expect(taskNotice({ ...t, status: 'stopped', run_id: 4 }, IDLE).tone).toBe('warning');
  });

  it('never says running once the runner has moved on to another task', () => {
    const other: ControlStatus = { ...RUNNING, current_task: { id: 8 } };
    expect(taskNotice({ ...t, status: 'done', run_id: 4 }, other).text).toBe('Task 7 (ping × 2) ended: completed.');
  });
});
