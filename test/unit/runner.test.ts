/**
 * The runner's state machine (DESIGN.md §5) on a real store and a real deck of test instruments
 * (test/fixtures/runner): every operator control in every state, the queue operations, locks, records,
 * events, submit validation, and crash recovery. Tests are sequenced by the runner's own status and events
 * (and the gate instrument, which hangs until released), never by guessed sleeps.
 */
import { Runner, type RunnerEvent, type RunnerState } from '../../core/runner/index.js';
import { availableControls, CONTROLS, type Control } from '../../core/runner/controls.js';
import type { Deck } from '../../core/deck/index.js';
import type { QueueTaskRow, RunStatus, Store, TaskStatus } from '../../core/store/types.js';
import type { WorkflowInput } from '../../core/workflow/model.js';
import { runnerDeck, type DeckState } from '../fixtures/runner/instruments.js';
import { testStore } from '../helpers/db.js';
import { labError } from '../helpers/errors.js';
import { waitFor } from '../helpers/wait.js';

/* ------------------------------------------------------------------ harness */

interface Lab {
  store: Store;
  deck: Deck;
  state: DeckState;
  runner: Runner;
  events: RunnerEvent[];
  /**
   * Start another runner (and deck) on the same store, as a restarted server would. The current one is
   * closed first; with `crash`, it is abandoned instead, mid-call, its records as they are.
   */
  restart(opts?: { crash?: boolean }): Promise<Lab>;
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function lab(): Promise<Lab> {
  const db = await testStore();
  const live = new Set<() => Promise<void>>();
  const make = async (): Promise<Lab> => {
    const { deck, state } = await runnerDeck(db.store.steps);
    const runner = new Runner({ store: db.store, deck });
    const events: RunnerEvent[] = [];
    runner.on('event', (e: RunnerEvent) => events.push(e));
    await runner.start();
    const stop = async () => {
      live.delete(stop);
      // a gate call still hanging would keep the runner's loop (and so close) waiting: let it go first
      while (state.waiting.length) state.release();
      await runner.close();
      await deck.close();
    };
    live.add(stop);
    return {
      store: db.store,
      deck,
      state,
      runner,
      events,
      async restart(opts = {}) {
        if (opts.crash) {
          // the process "dies": no more heartbeats, and its lease has run out (as another host would find)
          live.delete(stop);
          runner.host.halt();
          await db.store.hosts.stop(runner.host.id);
        } else await stop();
        return make();
      },
    };
  };
  open.push(async () => {
    for (const stop of [...live]) await stop();
    await db.cleanup();
  });
  return make();
}

/** Poll until `cond` holds (the runner works on its own loop); fails with `what` after 4 s. */
const until = (cond: () => boolean | Promise<boolean>, what: string, ms = 4000): Promise<void> => waitFor(cond, what, ms, 2).then(() => undefined);

const isState = (l: Lab, state: RunnerState) => until(() => l.runner.status().state === state, `state ${state} (is ${l.runner.status().state})`);

/** The outcome of task `id`'s run, from the runner's `run` event. */
async function outcome(l: Lab, id: number): Promise<RunStatus> {
  let found: RunStatus | undefined;
  await until(() => {
    const e = l.events.find((x) => x.type === 'run' && x.task_id === id && x.status !== 'running');
    found = e?.type === 'run' ? e.status : undefined;
    return found !== undefined;
  }, `task ${id} to end`);
  // the run event comes before the queue and status updates of the same finish: let those land too
  await until(() => l.runner.status().current_task?.id !== id, `task ${id} to leave the runner`);
  return found!;
}

async function taskStatus(l: Lab, id: number): Promise<TaskStatus> {
  return (await l.store.queue.get(id))!.status;
}

/** A direct call, as the instrument page makes it. */
const direct = (l: Lab, instrument: string, method: string) => l.deck.call(instrument, method, {}, { userId: null });

/**
 * Nothing of `call` (`instrument.method`) started while the flag was set: in the events between `mark` and
 * `resumeAt` (taken just before the resume) it has no step start, and after it it has one (a negative shown
 * by the order of what happens, not by waiting a while).
 */
function startedAfterResume(l: Lab, mark: number, resumeAt: number, call: string): void {
  const starts = (from: number, to?: number) => l.events.slice(from, to).filter((e) => e.type === 'step' && e.state === 'start' && `${e.instrument}.${e.method}` === call);
  expect(resumeAt).toBeGreaterThanOrEqual(mark);
  expect(starts(mark, resumeAt)).toEqual([]);
  expect(starts(resumeAt).length).toBeGreaterThan(0);
}

/* ---------------------------------------------------------------- workflows */

const call = (instrument: string, method: string, args: Record<string, unknown> = {}, save_as?: string) => ({
  kind: 'call' as const,
  instrument,
  method,
  args,
  ...(save_as ? { save_as } : {}),
});

const WORKFLOWS: Record<string, WorkflowInput> = {
  /** prep adds 100, each iteration adds x, cleanup reads. */
  basic: {
    name: 'basic',
    parameters: [{ name: 'x', type: 'number', default: 1 }],
    outputs: ['total'],
    prep: [call('counter', 'inc', { by: { value: 100 } }, 'start')],
    main: [call('counter', 'inc', { by: { param: 'x' } }, 'total')],
    cleanup: [call('counter', 'read', {}, 'end')],
  },
  /** each iteration: a gate call (hangs until released), then a counter step. */
  gated: {
    name: 'gated',
    parameters: [{ name: 'tag', type: 'string', default: 'g' }],
    outputs: ['g', 'n'],
    main: [call('gate', 'pass', { tag: { param: 'tag' } }, 'g'), call('counter', 'inc', {}, 'n')],
    cleanup: [call('counter', 'read', {}, 'end')],
  },
  /** a step that throws while `state.flakyFails` > 0, then a counter step. */
  flaky: {
    name: 'flaky',
    outputs: ['p', 'n'],
    main: [call('flaky', 'poke', {}, 'p'), call('counter', 'inc', {}, 'n')],
    cleanup: [call('counter', 'read', {}, 'end')],
  },
  /** a pause step between two counter steps. */
  paused: {
    name: 'paused',
    outputs: ['n'],
    main: [call('counter', 'inc'), { kind: 'pause', message: 'Load the sample' }, call('counter', 'inc', {}, 'n')],
    cleanup: [call('counter', 'read', {}, 'end')],
  },
  /** one call to an instrument no other workflow uses: the "next task" of many tests. */
  ping: { name: 'ping', main: [call('spare', 'ping')] },
  /** one gate call and nothing else (no cleanup). */
  gateOnly: { name: 'gateOnly', main: [call('gate', 'pass')] },
  /** a gate call in cleanup, so the run can be held in `stopping`. */
  slowCleanup: {
    name: 'slowCleanup',
    main: [call('gate', 'pass', { tag: { value: 'main' } })],
    cleanup: [call('gate', 'pass', { tag: { value: 'cleanup' } }), call('counter', 'read', {}, 'end')],
  },
  /** a failing step in cleanup. */
  flakyCleanup: {
    name: 'flakyCleanup',
    main: [call('counter', 'inc')],
    cleanup: [call('flaky', 'poke'), call('counter', 'read')],
  },
  /** prep saves a variable main uses; for crash recovery. */
  recover: {
    name: 'recover',
    parameters: [{ name: 'x', type: 'number' }],
    outputs: ['a', 'g', 'b'],
    prep: [call('counter', 'inc', { by: { value: 10 } }, 'base')],
    main: [call('counter', 'inc', { by: { param: 'x' } }, 'a'), call('gate', 'pass', { tag: { value: 'g' } }, 'g'), call('counter', 'inc', { by: { var: 'base' } }, 'b')],
    cleanup: [call('counter', 'read', {}, 'end')],
  },
};

async function save(l: Lab, ...names: string[]) {
  for (const n of names) await l.store.workflows.save(n, WORKFLOWS[n], null);
}

function submit(l: Lab, workflow: string, input: { config?: unknown; repeat?: unknown; name?: unknown } = { repeat: 1 }): Promise<QueueTaskRow> {
  return l.runner.submit({ workflow, userId: null, ...input });
}

/** A lab whose runner is at the gate of a `gated` task (a call in flight), with `pending` more tasks queued. */
async function atGate(iterations = 1, pending = 0) {
  const l = await lab();
  await save(l, 'gated', 'ping');
  const task = await submit(l, 'gated', { repeat: iterations });
  const more: QueueTaskRow[] = [];
  for (let i = 0; i < pending; i++) more.push(await submit(l, 'ping'));
  await l.state.gateWaiting();
  return { l, task, more };
}

const count = (l: Lab, key: string) => l.state.calls[key] ?? 0;
/** The instrument calls made, without those of the `ping` tasks queued behind. */
const callsOf = (l: Lab) => Object.fromEntries(Object.entries(l.state.calls).filter(([k]) => k !== 'spare.ping'));

/* ------------------------------------------------------------------- submit */

describe('submit', () => {
  it('queues a validated task with its coerced rows and a default name', async () => {
    const l = await lab();
    await save(l, 'basic');
    l.runner.pauseResume(); // paused: the task stays queued while we look at it
    const task = await submit(l, 'basic', { config: [{ x: '2' }, { x: 3 }, {}] });
    expect(task).toMatchObject({ name: 'basic × 3', kind: 'workflow', status: 'pending' });
    expect(task.payload).toMatchObject({ workflow: 'basic', version: 1, rows: [{ x: 2 }, { x: 3 }, { x: 1 }] });
    const named = await submit(l, 'basic', { repeat: '2', name: '  my run ' });
    expect(named.name).toBe('my run');
    // a repeat is stored as a count, whatever its size
    expect((named.payload as { repeat: unknown }).repeat).toEqual({ times: 2, row: { x: 1 } });
    const big = await submit(l, 'basic', { repeat: 1_000_000 });
    expect(big.name).toBe('basic × 1000000');
    expect(JSON.stringify(big.payload).length).toBeLessThan(2_000);
    expect(l.events.filter((e) => e.type === 'queue')).toHaveLength(3);
  });

  it('refuses an unknown workflow (404), a missing one, config and repeat both or neither, bad rows (400 naming row and column)', async () => {
    const l = await lab();
    await save(l, 'basic');
    const unknown = await labError(submit(l, 'nope'));
    expect(unknown.code).toBe('not_found');
    expect(unknown.details).toEqual([{ field: 'workflow', message: 'unknown workflow' }]);
    expect((await labError(l.runner.submit({ workflow: undefined, repeat: 1, userId: null }))).details?.[0].field).toBe('workflow');

    const neither = await labError(submit(l, 'basic', {}));
    expect(neither.code).toBe('invalid_input');
    expect(neither.details?.[0].field).toBe('config');
    const both = await labError(submit(l, 'basic', { config: [{ x: 1 }], repeat: 2 }));
    expect(both.code).toBe('invalid_input');
    expect(both.details?.[0].field).toBe('repeat');

    const bad = await labError(submit(l, 'basic', { config: [{ x: 1 }, { x: 'lots' }, { y: 2 }] }));
    expect(bad.code).toBe('invalid_input');
    expect(bad.details).toEqual(expect.arrayContaining([{ field: 'row 2, column x', message: '"lots" is not a number' }, expect.objectContaining({ field: 'row 3, column y' })]));
    expect((await labError(submit(l, 'basic', { repeat: 0 }))).details?.[0].field).toBe('repeat');
    expect((await labError(submit(l, 'basic', { repeat: 1, name: 'x'.repeat(201) }))).details?.[0].field).toBe('name');
    expect(await l.store.queue.open()).toEqual([]);
  });

  it('checks the saved workflow against the live deck before queueing it', async () => {
    const l = await lab();
    await l.store.workflows.save('ghost', { name: 'ghost', main: [call('nowhere', 'go')] }, null);
    const e = await labError(submit(l, 'ghost'));
    expect(e.code).toBe('invalid_input');
    expect(e.details).toEqual([expect.objectContaining({ field: 'main[0].instrument' })]);
  });
});

/* ------------------------------------------------------------ runs, records */

describe('a run', () => {
  it('runs prep once, main per row, cleanup last, and records run, phases, steps and log', async () => {
    const l = await lab();
    await save(l, 'basic');
    const task = await submit(l, 'basic', { config: [{ x: 1 }, { x: 2 }] });
    expect(await outcome(l, task.id)).toBe('completed');

    const done = (await l.store.queue.get(task.id))!;
    expect(done).toMatchObject({ status: 'done' });
    expect(done.endedAt).toBeInstanceOf(Date);
    const run = (await l.store.runs.get(done.runId!))!;
    expect(run).toMatchObject({ taskId: task.id, status: 'completed', error: null, workflowName: 'basic', workflowVersion: 1, parameters: [{ x: 1 }, { x: 2 }] });
    expect(run.workflow).toMatchObject({ name: 'basic', main: WORKFLOWS.basic.main });
    expect(run.endedAt).toBeInstanceOf(Date);

    const phases = await l.store.phases.list(run.id);
    expect(phases.map((p) => [p.phase, p.iteration, p.status, p.params, p.outputs])).toEqual([
      ['prep', null, 'ok', {}, {}],
      ['main', 0, 'ok', { x: 1 }, { total: 101 }],
      ['main', 1, 'ok', { x: 2 }, { total: 103 }],
      ['cleanup', null, 'ok', {}, {}],
    ]);
    const steps = await l.store.runSteps.list(run.id);
    expect(steps.map((s) => [s.phase, s.iteration, s.stepIndex, `${s.instrument}.${s.method}`, s.args, s.output, s.status])).toEqual([
      ['prep', null, 0, 'counter.inc', { by: 100 }, 100, 'ok'],
      ['main', 0, 0, 'counter.inc', { by: 1 }, 101, 'ok'],
      ['main', 1, 0, 'counter.inc', { by: 2 }, 103, 'ok'],
      ['cleanup', null, 0, 'counter.read', {}, 103, 'ok'],
    ]);
    for (const s of steps) expect(s.endedAt!.getTime()).toBeGreaterThanOrEqual(s.startedAt.getTime());
    const log = (await l.store.logs.list(run.id)).map((x) => x.message);
    expect(log[0]).toBe('Started basic v1: 2 iteration(s).');
    expect(log.at(-1)).toBe('Run completed.');
    // what the instrument logged while working for the run (ctx.log) is in the run's log
    expect(log).toEqual(expect.arrayContaining(['counter.inc: now at 100', 'counter.inc: now at 103']));
    // and with the step's own record, as for a direct call
    expect(steps.find((s) => s.phase === 'prep')?.log).toContain('now at 100');
  });

  it('emits status, run, step, iteration, log and queue events in order', async () => {
    const l = await lab();
    await save(l, 'basic');
    const task = await submit(l, 'basic', { config: [{ x: 1 }, { x: 2 }] });
    await outcome(l, task.id);
    const ev = l.events;
    const at = (pred: (e: RunnerEvent) => boolean) => ev.findIndex(pred);
    const runStart = at((e) => e.type === 'run' && e.status === 'running');
    const runEnd = at((e) => e.type === 'run' && e.status === 'completed');
    expect(ev[0].type).toBe('queue'); // the submit
    expect(runStart).toBeGreaterThan(0);
    expect(ev.slice(0, runStart).some((e) => e.type === 'status' && e.status.busy)).toBe(true);
    // step start before step ok, for every step, all between the run's start and end
    const steps = ev.filter((e): e is Extract<RunnerEvent, { type: 'step' }> => e.type === 'step');
    expect(steps.map((s) => `${s.phase}${s.iteration ?? ''}:${s.state}`)).toEqual(['prep:start', 'prep:ok', 'main0:start', 'main0:ok', 'main1:start', 'main1:ok', 'cleanup:start', 'cleanup:ok']);
    expect(steps[1]).toMatchObject({ instrument: 'counter', method: 'inc', output: 100, path: 'prep[0]', index: 0 });
    expect(steps[0].step_id).toBe(steps[1].step_id);
    for (const s of steps) expect(ev.indexOf(s)).toBeGreaterThan(runStart);
    const iters = ev.filter((e) => e.type === 'iteration');
    expect(iters).toEqual([
      { type: 'iteration', run_id: expect.any(Number), iteration: 0, params: { x: 1 }, outputs: { total: 101 } },
      { type: 'iteration', run_id: expect.any(Number), iteration: 1, params: { x: 2 }, outputs: { total: 103 } },
    ]);
    expect(ev.indexOf(iters[0])).toBeGreaterThan(ev.indexOf(steps[3]));
    expect(ev.indexOf(iters[0])).toBeLessThan(ev.indexOf(steps[4]));
    expect(runEnd).toBeGreaterThan(ev.indexOf(steps[7]));
    expect(ev.filter((e) => e.type === 'log').map((e) => (e.type === 'log' ? e.message : ''))).toEqual([
      'Started basic v1: 2 iteration(s).',
      'counter.inc: now at 100',
      'counter.inc: now at 101',
      'counter.inc: now at 103',
      'Run completed.',
    ]);
    // the finish: queue change and an idle status come after the run's end
    const tail = ev.slice(runEnd + 1);
    expect(tail.some((e) => e.type === 'queue')).toBe(true);
    const last = tail.at(-1)!;
    expect(last.type === 'status' && last.status).toMatchObject({ busy: false, state: 'idle', current_task: null });
  });

  it('reports progress while it runs', async () => {
    const { l, task } = await atGate(3);
    const s = l.runner.status();
    expect(s).toMatchObject({ busy: true, state: 'running', paused: false, queue_held: false, failed_step: null, waiting: null, interrupted: null });
    expect(s.current_task).toMatchObject({ id: task.id, name: 'gated × 3', kind: 'workflow', workflow: 'gated' });
    expect(s.progress).toEqual({ phase: 'main', iteration: 1, iterations: 3, step: 0, steps: 2 });
    expect((await l.runner.queue()).current_task_id).toBe(task.id);
  });

  it('takes the next task when one ends, in queue order', async () => {
    const l = await lab();
    await save(l, 'basic');
    const a = await submit(l, 'basic', { config: [{ x: 1 }] });
    const b = await submit(l, 'basic', { config: [{ x: 5 }] });
    expect(await outcome(l, a.id)).toBe('completed');
    expect(await outcome(l, b.id)).toBe('completed');
    const runs = l.events.filter((e) => e.type === 'run' && e.status === 'running').map((e) => (e.type === 'run' ? e.task_id : 0));
    expect(runs).toEqual([a.id, b.id]);
    expect(await l.store.queue.open()).toEqual([]);
  });
});

describe('a fault outside any step', () => {
  it('fails that task, frees its locks, tells error listeners, and the queue goes on', async () => {
    const l = await lab();
    await save(l, 'basic', 'ping');
    const faults: unknown[] = [];
    l.runner.on('error', (e) => faults.push(e));
    const create = l.store.runs.create;
    l.store.runs.create = async () => {
      l.store.runs.create = create; // once
      throw new Error('disk full');
    };
    const a = await submit(l, 'basic');
    const b = await submit(l, 'ping');
    expect(await outcome(l, b.id)).toBe('completed');
    expect(await taskStatus(l, a.id)).toBe('failed');
    expect(faults).toEqual([new Error('disk full')]);
    expect(l.deck.lockedBy('counter')).toBeUndefined();
    expect(l.runner.status()).toMatchObject({ busy: false, state: 'idle' });
  });
});

/* -------------------------------------------------------------------- locks */

describe('instrument locks', () => {
  it('a task holds the instruments its workflow uses: direct calls to them are busy, others work, all free after', async () => {
    const { l, task } = await atGate();
    expect(l.deck.lockedBy('counter')).toBe(`task-${task.id}`);
    const busy = await labError(direct(l, 'counter', 'read'));
    expect(busy.code).toBe('busy');
    expect(busy.message).toContain(`task ${task.id}`);
    expect((await labError(direct(l, 'gate', 'pass'))).code).toBe('busy');
    expect((await direct(l, 'spare', 'ping')).output).toBe('pong');
    l.state.release();
    expect(await outcome(l, task.id)).toBe('completed');
    expect(l.deck.lockedBy('counter')).toBeUndefined();
    expect((await direct(l, 'counter', 'read')).output).toBe(1);
  });

  it('frees the locks after an abort too', async () => {
    const { l, task } = await atGate();
    await l.runner.abortNextTask();
    l.state.release();
    expect(await outcome(l, task.id)).toBe('aborted');
    expect(l.deck.lockedBy('gate')).toBeUndefined();
    expect((await direct(l, 'counter', 'read')).output).toBe(0);
  });
});

/* ------------------------------------------------------- controls: idle */

describe('idle', () => {
  it('pause-resume sets the flag: no task starts until it is cleared', async () => {
    const l = await lab();
    await save(l, 'basic');
    expect(await l.runner.pauseResume()).toMatchObject({ state: 'idle', paused: true, busy: false });
    const task = await submit(l, 'basic');
    await l.runner.settled(); // the loop has looked at the queue since, and started nothing
    expect(await taskStatus(l, task.id)).toBe('pending');
    expect(l.runner.status().busy).toBe(false);
    expect((await l.runner.pauseResume()).paused).toBe(false);
    expect(await outcome(l, task.id)).toBe('completed');
  });

  it('settled() answers once the loop has looked at the queue: what it can start has started by then', async () => {
    const l = await lab();
    await save(l, 'basic');
    const task = await submit(l, 'basic');
    await l.runner.settled();
    // claimed (running, or done already): the look that answered saw it
    expect(await taskStatus(l, task.id)).not.toBe('pending');
    expect(await outcome(l, task.id)).toBe('completed');
    await l.runner.settled(); // idle, nothing queued: answers too
  });

  it('retry and both aborts are 409 conflicts naming the state', async () => {
    const l = await lab();
    for (const op of [() => l.runner.retry(), () => l.runner.abortNextIteration(), () => l.runner.abortNextTask()]) {
      const e = await labError(op());
      expect(e.code).toBe('conflict');
      expect(e.data).toEqual({ state: 'idle' });
      expect(e.message).toContain('idle');
    }
    expect(l.runner.status().queue_held).toBe(false);
  });
});

/* ---------------------------------------------- controls: a call in flight */

describe('running, a call in flight', () => {
  it('pause-resume: the in-flight call finishes, no new step starts; pause-resume again goes on', async () => {
    const { l, task } = await atGate();
    expect((await l.runner.pauseResume()).paused).toBe(true);
    l.state.release();
    await isState(l, 'paused');
    // state paused: the task waits on its flag, no step can start until it is cleared
    const mark = l.events.length;
    expect(count(l, 'counter.inc')).toBe(0);
    const steps = await l.store.runSteps.list((await l.store.queue.get(task.id))!.runId!);
    expect(steps.map((s) => [s.method, s.status, s.output])).toEqual([['pass', 'ok', 'g']]);
    const resumeAt = l.events.length;
    expect((await l.runner.pauseResume()).paused).toBe(false);
    expect(await outcome(l, task.id)).toBe('completed');
    startedAfterResume(l, mark, resumeAt, 'counter.inc');
    expect(count(l, 'counter.inc')).toBe(1);
  });

  it("pause and resume are written in the run's log, in order with its steps", async () => {
    const { l, task } = await atGate();
    await l.runner.pauseResume();
    l.state.release();
    await isState(l, 'paused');
    await l.runner.pauseResume();
    expect(await outcome(l, task.id)).toBe('completed');
    const log = (await l.store.logs.list((await l.store.queue.get(task.id))!.runId!)).map((x) => x.message);
    const paused = log.indexOf('Paused by the operator: no new step starts (a call in flight finishes).');
    const resumed = log.indexOf('Resumed by the operator.');
    expect(paused).toBeGreaterThan(0);
    expect(resumed).toBeGreaterThan(paused);
    expect(log.findIndex((m) => m.startsWith('Run completed'))).toBeGreaterThan(resumed);
  });

  it('the pause flag also keeps the next task from starting', async () => {
    const l = await lab();
    await save(l, 'gateOnly', 'ping');
    const task = await submit(l, 'gateOnly');
    const next = await submit(l, 'ping');
    await l.state.gateWaiting();
    await l.runner.pauseResume();
    l.state.release();
    expect(await outcome(l, task.id)).toBe('completed'); // no step was left to hold back
    await l.runner.settled(); // the loop has looked at the queue since, and started nothing
    expect(await taskStatus(l, next.id)).toBe('pending');
    expect(l.runner.status()).toMatchObject({ busy: false, paused: true, state: 'idle' });
    await l.runner.pauseResume();
    expect(await outcome(l, next.id)).toBe('completed');
  });

  it('retry is a 409 conflict', async () => {
    const { l } = await atGate();
    const e = await labError(l.runner.retry());
    expect(e.code).toBe('conflict');
    expect(e.data).toEqual({ state: 'running' });
  });

  it('abort next-iteration finishes this iteration, skips the rest, runs cleanup, records stopped; the queue goes on', async () => {
    const { l, task, more } = await atGate(3, 1);
    expect((await l.runner.abortNextIteration()).state).toBe('stopping');
    l.state.release();
    expect(await outcome(l, task.id)).toBe('stopped');
    expect(count(l, 'gate.pass')).toBe(1);
    expect(count(l, 'counter.inc')).toBe(1); // the rest of iteration 0 ran
    expect(count(l, 'counter.read')).toBe(1); // cleanup
    expect(await taskStatus(l, task.id)).toBe('stopped');
    const runId = (await l.store.queue.get(task.id))!.runId!;
    expect((await l.store.runs.get(runId))!.status).toBe('stopped');
    expect((await l.store.phases.list(runId)).map((p) => `${p.phase}${p.iteration ?? ''}:${p.status}`)).toEqual(['main0:ok', 'cleanup:ok']);
    expect(await outcome(l, more[0].id)).toBe('completed');
    expect(l.runner.status().queue_held).toBe(false);
  });

  it('abort next-task finishes the in-flight step, runs no further step, runs cleanup, records aborted, holds the queue', async () => {
    const { l, task, more } = await atGate(3, 2);
    const s = await l.runner.abortNextTask();
    expect(s).toMatchObject({ state: 'stopping', queue_held: true });
    l.state.release();
    expect(await outcome(l, task.id)).toBe('aborted');
    expect(count(l, 'counter.inc')).toBe(0);
    expect(count(l, 'counter.read')).toBe(1);
    const runId = (await l.store.queue.get(task.id))!.runId!;
    const steps = await l.store.runSteps.list(runId);
    expect(steps.map((x) => [x.phase, x.method, x.status])).toEqual([
      ['main', 'pass', 'ok'],
      ['cleanup', 'read', 'ok'],
    ]);
    expect((await l.store.runs.get(runId))!.status).toBe('aborted');
    expect(l.runner.status()).toMatchObject({ state: 'idle', busy: false, queue_held: true });
    // nothing deleted, nothing started
    await l.runner.settled(); // the loop has looked at the queue since, and started nothing
    expect((await l.store.queue.open()).map((t) => [t.id, t.status])).toEqual(more.map((t) => [t.id, 'pending']));
    // pause-resume releases the hold
    expect(await l.runner.pauseResume()).toMatchObject({ queue_held: false, paused: false });
    expect(await outcome(l, more[0].id)).toBe('completed');
    expect(await outcome(l, more[1].id)).toBe('completed');
  });

  it('a second abort next-task while stopping keeps the outcome aborted', async () => {
    const { l, task } = await atGate(2);
    await l.runner.abortNextIteration();
    await l.runner.abortNextTask(); // the stronger one wins
    l.state.release();
    expect(await outcome(l, task.id)).toBe('aborted');
    expect(count(l, 'counter.inc')).toBe(0);
  });
});

/* ------------------------------------------------ controls: paused by the flag */

/** At the gate, pause, release: the runner is paused between steps. */
async function pausedBetweenSteps(iterations = 2, pending = 0) {
  const r = await atGate(iterations, pending);
  await r.l.runner.pauseResume();
  r.l.state.release();
  await isState(r.l, 'paused');
  return r;
}

describe('paused by the flag, between steps', () => {
  it('status says paused; retry is a 409 conflict', async () => {
    const { l } = await pausedBetweenSteps();
    expect(l.runner.status()).toMatchObject({ state: 'paused', paused: true, busy: true, waiting: null, failed_step: null });
    const e = await labError(l.runner.retry());
    expect(e.code).toBe('conflict');
    expect(e.data).toEqual({ state: 'paused' });
  });

  it('abort next-iteration waits for resume, then finishes the iteration and stops', async () => {
    const { l, task } = await pausedBetweenSteps(3);
    expect((await l.runner.abortNextIteration()).state).toBe('stopping');
    // still paused (state stopping): the task waits on its flag
    const mark = l.events.length;
    expect(count(l, 'counter.inc')).toBe(0);
    const resumeAt = l.events.length;
    await l.runner.pauseResume();
    expect(await outcome(l, task.id)).toBe('stopped');
    startedAfterResume(l, mark, resumeAt, 'counter.inc');
    expect(count(l, 'counter.inc')).toBe(1);
    expect(count(l, 'gate.pass')).toBe(1);
  });

  it('abort next-task runs no further step; cleanup waits for the flag to clear; aborted, held', async () => {
    const { l, task } = await pausedBetweenSteps(3, 1);
    const mark = l.events.length;
    await l.runner.abortNextTask();
    // paused: cleanup is a new step too, and waits for the operator (its start follows the resume below)
    expect(l.runner.status()).toMatchObject({ state: 'stopping', paused: true, queue_held: true });
    expect(count(l, 'counter.read')).toBe(0);
    const resumeAt = l.events.length;
    await l.runner.pauseResume();
    expect(await outcome(l, task.id)).toBe('aborted');
    startedAfterResume(l, mark, resumeAt, 'counter.read');
    expect(count(l, 'counter.inc')).toBe(0);
    expect(count(l, 'counter.read')).toBe(1);
    expect(l.runner.status()).toMatchObject({ queue_held: true, paused: false });
  });
});

/* ------------------------------------------------ controls: a pause step */

async function atPauseStep(iterations = 2, pending = 0) {
  const l = await lab();
  await save(l, 'paused', 'ping');
  const task = await submit(l, 'paused', { repeat: iterations });
  const more: QueueTaskRow[] = [];
  for (let i = 0; i < pending; i++) more.push(await submit(l, 'ping'));
  await until(() => l.runner.status().waiting !== null, 'the pause step');
  return { l, task, more };
}

describe('waiting at a pause step', () => {
  it('waits for the operator with its message; pause-resume continues', async () => {
    const { l, task } = await atPauseStep(1);
    expect(l.runner.status()).toMatchObject({ state: 'paused', paused: false, waiting: { path: 'main[1]', message: 'Load the sample' } });
    // (state paused: the pause step waits for the operator; nothing goes on without one)
    expect(count(l, 'counter.inc')).toBe(1);
    const runId = l.runner.status().current_task!.run_id!;
    // the log line is written just after the state is set
    await until(async () => (await l.store.logs.list(runId)).some((x) => x.message === 'Waiting for the operator: Load the sample'), 'the log line');
    expect(await l.runner.pauseResume()).toMatchObject({ paused: false });
    expect(await outcome(l, task.id)).toBe('completed');
    expect(count(l, 'counter.inc')).toBe(2);
  });

  it('retry is a 409 conflict', async () => {
    const { l } = await atPauseStep();
    expect((await labError(l.runner.retry())).data).toEqual({ state: 'paused' });
  });

  it('abort next-iteration ends the iteration at once, skips the rest, runs cleanup, stopped', async () => {
    const { l, task, more } = await atPauseStep(3, 1);
    await l.runner.abortNextIteration();
    expect(await outcome(l, task.id)).toBe('stopped');
    expect(count(l, 'counter.inc')).toBe(1);
    expect(count(l, 'counter.read')).toBe(1);
    expect(await outcome(l, more[0].id)).toBe('completed');
  });

  it('abort next-task ends it, runs cleanup, aborted, holds the queue', async () => {
    const { l, task, more } = await atPauseStep(3, 1);
    await l.runner.abortNextTask();
    expect(await outcome(l, task.id)).toBe('aborted');
    expect(count(l, 'counter.inc')).toBe(1);
    expect(count(l, 'counter.read')).toBe(1);
    expect(l.runner.status().queue_held).toBe(true);
    expect(await taskStatus(l, more[0].id)).toBe('pending');
  });
});

/* ----------------------------------------------------- controls: failed */

async function failing(fails = 1, iterations = 1, pending = 0) {
  const l = await lab();
  await save(l, 'flaky', 'ping');
  l.state.flakyFails = fails;
  const task = await submit(l, 'flaky', { repeat: iterations });
  const more: QueueTaskRow[] = [];
  for (let i = 0; i < pending; i++) more.push(await submit(l, 'ping'));
  await isState(l, 'failed');
  return { l, task, more, runId: l.runner.status().current_task!.run_id! };
}

describe('a step throws', () => {
  it('the runner waits in state failed; the step is recorded with its error; the log says what to do', async () => {
    const { l, runId } = await failing();
    expect(l.runner.status()).toMatchObject({ state: 'failed', busy: true, failed_step: { phase: 'main', iteration: 0, path: 'main[0]', error: 'flaky failure 1' } });
    const steps = await l.store.runSteps.list(runId);
    expect(steps).toEqual([expect.objectContaining({ phase: 'main', iteration: 0, stepIndex: 0, instrument: 'flaky', method: 'poke', status: 'error', error: 'flaky failure 1', output: null })]);
    // the line is written with its step_failed notification, in one transaction, just after the state is set
    await until(async () => (await l.store.logs.list(runId)).some((x) => x.level === 'error'), 'the log line');
    expect((await l.store.logs.list(runId)).find((x) => x.level === 'error')?.message).toBe('Step main[0] failed: flaky failure 1. Retry it, skip it, or abort the task.');
    const ev = l.events.find((e) => e.type === 'step' && e.state === 'error');
    expect(ev).toMatchObject({ instrument: 'flaky', method: 'poke', error: 'flaky failure 1', path: 'main[0]' });
    // (state failed: the step waits for the operator's decision; nothing goes on without one)
    expect(count(l, 'counter.inc')).toBe(0);
  });

  it('retry re-runs the step, then goes on', async () => {
    const { l, task, runId } = await failing();
    await l.runner.retry();
    expect(await outcome(l, task.id)).toBe('completed');
    expect(count(l, 'flaky.poke')).toBe(2);
    expect(count(l, 'counter.inc')).toBe(1);
    const steps = await l.store.runSteps.list(runId);
    expect(steps.map((s) => [s.phase, s.stepIndex, s.method, s.status])).toEqual([
      ['main', 0, 'poke', 'error'],
      ['main', 0, 'poke', 'ok'],
      ['main', 1, 'inc', 'ok'],
      ['cleanup', 0, 'read', 'ok'],
    ]);
    expect((await l.store.phases.list(runId)).find((p) => p.phase === 'main')!.outputs).toEqual({ p: 2, n: 1 });
  });

  it('a retry that fails again waits again', async () => {
    const { l, task } = await failing(2);
    await l.runner.retry();
    await until(() => l.runner.status().failed_step?.error === 'flaky failure 2', 'the second failure');
    await l.runner.retry();
    expect(await outcome(l, task.id)).toBe('completed');
    expect(count(l, 'flaky.poke')).toBe(3);
  });

  it('pause-resume skips the failed step and goes on (its variable stays unset)', async () => {
    const { l, task, runId } = await failing();
    expect((await l.runner.pauseResume()).paused).toBe(false);
    expect(await outcome(l, task.id)).toBe('completed');
    expect(count(l, 'flaky.poke')).toBe(1);
    expect(count(l, 'counter.inc')).toBe(1);
    expect((await l.store.phases.list(runId)).find((p) => p.phase === 'main')!.outputs).toEqual({ p: null, n: 1 });
  });

  it('a skipped step is marked skipped everywhere: its record, its iteration, the run (completed with 1 skipped step), the log', async () => {
    const { l, task, runId } = await failing(1, 2);
    await l.runner.pauseResume();
    expect(await outcome(l, task.id)).toBe('completed');
    const steps = await l.store.runSteps.list(runId);
    expect(steps.filter((s) => s.method === 'poke').map((s) => [s.iteration, s.status, s.error])).toEqual([
      [0, 'skipped', 'flaky failure 1'],
      [1, 'ok', null],
    ]);
    expect((await l.store.phases.list(runId)).filter((p) => p.phase === 'main').map((p) => p.status)).toEqual(['skipped', 'ok']);
    expect(await l.store.runs.get(runId)).toMatchObject({ status: 'completed', skipped: 1 });
    const logs = (await l.store.logs.list(runId)).map((x) => x.message);
    expect(logs).toContain('Iteration 1 had 1 skipped step: it is marked skipped, and its outputs are not data.');
    expect(logs.at(-1)).toBe('Run completed with 1 skipped step.');
    expect(l.events.filter((e) => e.type === 'iteration').map((e) => e.type === 'iteration' && e.skipped)).toEqual([true, undefined]);
    expect(l.events.find((e) => e.type === 'run' && e.status === 'completed')).toMatchObject({ skipped: 1 });
  });

  it("a skipped step's output is null for its iteration, not the value of an earlier one", async () => {
    const l = await lab();
    await l.store.workflows.save('gateFlaky', { name: 'gateFlaky', outputs: ['p'], main: [call('gate', 'pass'), call('flaky', 'poke', {}, 'p')] }, null);
    const task = await submit(l, 'gateFlaky', { repeat: 2 });
    await l.state.gateWaiting();
    l.state.release();
    await until(() => count(l, 'gate.pass') === 2, 'iteration 1');
    await l.state.gateWaiting();
    l.state.flakyFails = 1;
    l.state.release();
    await isState(l, 'failed');
    await l.runner.pauseResume();
    expect(await outcome(l, task.id)).toBe('completed');
    const runId = (await l.store.queue.get(task.id))!.runId!;
    expect((await l.store.phases.list(runId)).map((p) => p.outputs)).toEqual([{ p: 1 }, { p: null }]);
    expect(l.events.filter((e) => e.type === 'iteration').map((e) => (e.type === 'iteration' ? e.outputs : null))).toEqual([{ p: 1 }, { p: null }]);
  });

  it('abort next-iteration ends the iteration at once, runs cleanup, records stopped; the queue goes on', async () => {
    const { l, task, more, runId } = await failing(1, 3, 1);
    await l.runner.abortNextIteration();
    expect(await outcome(l, task.id)).toBe('stopped');
    expect(count(l, 'flaky.poke')).toBe(1);
    expect(count(l, 'counter.inc')).toBe(0);
    expect(count(l, 'counter.read')).toBe(1);
    expect((await l.store.phases.list(runId)).map((p) => `${p.phase}${p.iteration ?? ''}:${p.status}`)).toEqual(['main0:stopped', 'cleanup:ok']);
    expect(await outcome(l, more[0].id)).toBe('completed');
  });

  it('abort next-task runs cleanup, records aborted, holds the queue', async () => {
    const { l, task, more } = await failing(1, 3, 1);
    await l.runner.abortNextTask();
    expect(await outcome(l, task.id)).toBe('aborted');
    expect(count(l, 'counter.read')).toBe(1);
    expect(l.runner.status().queue_held).toBe(true);
    expect(await taskStatus(l, more[0].id)).toBe('pending');
  });

  it('a failing cleanup step waits for the operator too', async () => {
    const l = await lab();
    await save(l, 'flakyCleanup');
    l.state.flakyFails = 1;
    const task = await submit(l, 'flakyCleanup');
    await isState(l, 'failed');
    expect(l.runner.status().failed_step).toMatchObject({ phase: 'cleanup', path: 'cleanup[0]' });
    await l.runner.pauseResume();
    expect(await outcome(l, task.id)).toBe('completed');
    expect(count(l, 'counter.read')).toBe(1);
  });
});

/* ----------------------------------------------------- controls: stopping */

describe('stopping (cleanup running after an abort)', () => {
  async function inCleanup() {
    const l = await lab();
    await save(l, 'slowCleanup', 'basic');
    const task = await submit(l, 'slowCleanup');
    await l.state.gateWaiting();
    await l.runner.abortNextIteration();
    l.state.release();
    await until(() => l.state.waiting[0]?.tag === 'cleanup', 'the cleanup gate');
    return { l, task };
  }

  it('state is stopping; retry is a 409 conflict; abort next-iteration changes nothing', async () => {
    const { l, task } = await inCleanup();
    expect(l.runner.status()).toMatchObject({ state: 'stopping', busy: true });
    expect((await labError(l.runner.retry())).data).toEqual({ state: 'stopping' });
    await l.runner.abortNextIteration();
    l.state.release();
    expect(await outcome(l, task.id)).toBe('stopped');
    expect(count(l, 'counter.read')).toBe(1);
  });

  it('pause-resume pauses the cleanup after its in-flight step, and resumes it', async () => {
    const { l, task } = await inCleanup();
    await l.runner.pauseResume();
    l.state.release();
    await until(() => l.runner.status().paused && l.events.some((e) => e.type === 'step' && e.phase === 'cleanup' && e.state === 'ok'), 'cleanup paused');
    const mark = l.events.length;
    expect(count(l, 'counter.read')).toBe(0);
    const resumeAt = l.events.length;
    await l.runner.pauseResume();
    expect(await outcome(l, task.id)).toBe('stopped');
    startedAfterResume(l, mark, resumeAt, 'counter.read');
    expect(count(l, 'counter.read')).toBe(1);
  });

  it('abort next-task ends the cleanup early and holds the queue', async () => {
    const { l, task } = await inCleanup();
    await l.runner.abortNextTask();
    l.state.release();
    expect(await outcome(l, task.id)).toBe('stopped');
    expect(count(l, 'counter.read')).toBe(0);
    const runId = (await l.store.queue.get(task.id))!.runId!;
    expect((await l.store.logs.list(runId)).map((x) => x.message)).toContain('Cleanup ended early: aborted by the operator');
    expect(l.runner.status().queue_held).toBe(true);
  });
});

/* ---------------------------------------------------------- the held queue */

describe('a held queue', () => {
  async function held() {
    const { l, task, more } = await atGate(1, 2);
    await l.runner.abortNextTask();
    l.state.release();
    await outcome(l, task.id);
    return { l, more };
  }

  it('retry and aborts are 409; pending tasks can be deleted, moved, renamed; pause-resume releases it', async () => {
    const { l, more } = await held();
    expect(l.runner.status()).toMatchObject({ state: 'idle', queue_held: true, paused: false });
    for (const op of [() => l.runner.retry(), () => l.runner.abortNextIteration(), () => l.runner.abortNextTask()]) {
      const e = await labError(op());
      expect(e.code).toBe('conflict');
      expect(e.message).toContain('queue held');
    }
    await l.runner.moveTask(more[1].id, 'top');
    await l.runner.renameTask(more[1].id, 'first now');
    expect((await l.store.queue.open()).map((t) => t.name)).toEqual(['first now', more[0].name]);
    await l.runner.deleteTask(more[0].id);
    await l.runner.pauseResume();
    expect(await outcome(l, more[1].id)).toBe('completed');
    expect(await l.store.queue.get(more[0].id)).toBeNull();
  });

  it('stays held across a restart', async () => {
    const { l, more } = await held();
    const again = await l.restart();
    expect(again.runner.status().queue_held).toBe(true);
    await again.runner.settled(); // the loop has looked at the queue since, and started nothing
    expect(await taskStatus(again, more[0].id)).toBe('pending');
  });
});

/* ------------------------------------------------------- queue operations */

describe('queue operations', () => {
  async function queued(n: number) {
    const l = await lab();
    await save(l, 'basic');
    await l.runner.pauseResume(); // paused: they all stay pending
    const tasks: QueueTaskRow[] = [];
    for (let i = 0; i < n; i++) tasks.push(await submit(l, 'basic', { repeat: 1, name: `t${i}` }));
    return { l, tasks };
  }
  const names = async (l: Lab) => (await l.store.queue.open()).map((t) => t.name);

  it('delete: a pending task goes (queue event); unknown 404; finished 409', async () => {
    const { l, tasks } = await queued(2);
    const before = l.events.length;
    await l.runner.deleteTask(tasks[0].id);
    expect(await names(l)).toEqual(['t1']);
    expect(l.events.slice(before).map((e) => e.type)).toContain('queue');
    expect((await labError(l.runner.deleteTask(9999))).code).toBe('not_found');
    await l.runner.pauseResume();
    await outcome(l, tasks[1].id);
    expect((await labError(l.runner.deleteTask(tasks[1].id))).code).toBe('conflict');
  });

  it('move: up, down, top, bottom; a bad direction 400; unknown 404', async () => {
    const { l, tasks } = await queued(4);
    const [a, b, c, d] = tasks.map((t) => t.id);
    await l.runner.moveTask(c, 'up');
    expect(await names(l)).toEqual(['t0', 't2', 't1', 't3']);
    await l.runner.moveTask(a, 'down');
    expect(await names(l)).toEqual(['t2', 't0', 't1', 't3']);
    await l.runner.moveTask(d, 'top');
    expect(await names(l)).toEqual(['t3', 't2', 't0', 't1']);
    await l.runner.moveTask(d, 'bottom');
    expect(await names(l)).toEqual(['t2', 't0', 't1', 't3']);
    await l.runner.moveTask(c, 'up'); // already first: no change
    expect(await names(l)).toEqual(['t2', 't0', 't1', 't3']);
    const bad = await labError(l.runner.moveTask(b, 'sideways'));
    expect(bad.code).toBe('invalid_input');
    expect(bad.details?.[0].field).toBe('direction');
    expect((await labError(l.runner.moveTask(9999, 'up'))).code).toBe('not_found');
    // the queue runs in the new order
    await l.runner.pauseResume();
    for (const id of [c, a, b, d]) await outcome(l, id);
    const started = l.events.filter((e) => e.type === 'run' && e.status === 'running').map((e) => (e.type === 'run' ? e.task_id : 0));
    expect(started).toEqual([c, a, b, d]);
  });

  it('rename: pending and running tasks; empty name 400; unknown 404', async () => {
    const { l, task, more } = await atGate(1, 1);
    await l.runner.renameTask(more[0].id, ' later ');
    expect((await l.store.queue.get(more[0].id))!.name).toBe('later');
    await l.runner.renameTask(task.id, 'now');
    expect(l.runner.status().current_task!.name).toBe('now');
    expect((await l.store.queue.get(task.id))!.name).toBe('now');
    const empty = await labError(l.runner.renameTask(task.id, '  '));
    expect(empty.code).toBe('invalid_input');
    expect(empty.details?.[0].field).toBe('new_name');
    expect((await labError(l.runner.renameTask(9999, 'x'))).code).toBe('not_found');
  });

  it('a task deleted just as the runner takes it is either gone or running, never a fault', async () => {
    const l = await lab();
    await save(l, 'ping');
    const faults: unknown[] = [];
    l.runner.on('error', (e) => faults.push(e));
    let deleted = 0;
    for (let i = 0; i < 20; i++) {
      const t = await submit(l, 'ping');
      if (i % 2) await new Promise((r) => setImmediate(r)); // let the loop get further some of the time
      const e = await l.runner.deleteTask(t.id).then(
        () => null,
        (err: unknown) => err,
      );
      if (e === null) {
        deleted++;
        expect(await l.store.queue.get(t.id)).toBeNull();
      } else {
        expect(e).toMatchObject({ code: 'conflict' });
        expect(await outcome(l, t.id)).toBe('completed');
      }
    }
    await until(() => !l.runner.status().busy, 'idle');
    expect(faults).toEqual([]);
    expect((await l.store.runs.list({ page: 1, perPage: 100 })).total).toBe(20 - deleted);
  });

  it('the running task cannot be deleted or moved (409); inspecting it works', async () => {
    const { l, task } = await atGate(1, 1);
    for (const op of [() => l.runner.deleteTask(task.id), () => l.runner.moveTask(task.id, 'down')]) {
      const e = await labError(op());
      expect(e.code).toBe('conflict');
      expect(e.message).toContain('running');
    }
    expect(await l.runner.task(task.id)).toMatchObject({ id: task.id, status: 'running' });
    expect((await labError(l.runner.task(9999))).code).toBe('not_found');
    const q = await l.runner.queue();
    expect(q.tasks.map((t) => t.status)).toEqual(['running', 'pending']);
  });
});

/* ---------------------------------------------------------- crash recovery */

/**
 * A `recover` task over x=1, x=2 whose runner "dies" at the gate call of iteration 1: the first runner is
 * abandoned mid-call (its records say running), and a second runner starts on the same store.
 */
async function crashed(pending = 1) {
  const first = await lab();
  await save(first, 'recover', 'ping');
  const task = await submit(first, 'recover', { config: [{ x: 1 }, { x: 2 }] });
  const more: QueueTaskRow[] = [];
  for (let i = 0; i < pending; i++) more.push(await submit(first, 'ping'));
  await first.state.gateWaiting();
  first.state.release();
  await until(() => count(first, 'gate.pass') === 2 && first.state.waiting.length === 1, 'the gate of iteration 1');
  const runId = first.runner.status().current_task!.run_id!;
  // what the first runner recorded: prep, iteration 0 complete; iteration 1's first step; its gate running
  const before = await first.store.runSteps.list(runId);
  expect(before.map((s) => `${s.phase}${s.iteration ?? ''}[${s.stepIndex}] ${s.method} ${s.status}`)).toEqual([
    'prep[0] inc ok',
    'main0[0] inc ok',
    'main0[1] pass ok',
    'main0[2] inc ok',
    'main1[0] inc ok',
    'main1[1] pass running',
  ]);
  const firstOutputs = before.map((s) => s.output);
  // the "crash": the first runner never hears of it again (its gate is never released)
  first.state.waiting.length = 0;
  const l = await first.restart({ crash: true });
  return { l, task, more, runId, firstOutputs };
}

describe('after a crash', () => {
  it('on start: run interrupted, in-flight step in-doubt, task interrupted, queue held, status says so', async () => {
    const { l, task, more, runId } = await crashed();
    const run = (await l.store.runs.get(runId))!;
    expect(run.status).toBe('interrupted');
    expect(run.error).toContain('stopped');
    const steps = await l.store.runSteps.list(runId);
    expect(steps.at(-1)).toMatchObject({ phase: 'main', iteration: 1, stepIndex: 1, method: 'pass', status: 'in-doubt' });
    expect(await taskStatus(l, task.id)).toBe('interrupted');
    const s = l.runner.status();
    expect(s).toMatchObject({ busy: false, state: 'idle', queue_held: true });
    // the restarted labdeck made its instruments again: both of iteration 1's are named (a workflow's Retry is still the step)
    expect(s.interrupted).toEqual({
      task_id: task.id,
      run_id: runId,
      step: { id: steps.at(-1)!.id, phase: 'main', iteration: 1, index: 1, instrument: 'gate', method: 'pass' },
      remade: ['counter', 'gate'],
      retry: 'step',
    });
    expect((await l.store.logs.list(runId)).map((x) => x.level)).toContain('warn');
    await l.runner.settled(); // the loop has looked at the queue since, and started nothing
    expect(await taskStatus(l, more[0].id)).toBe('pending');
    expect(l.state.calls).toEqual({});
  });

  it('the interrupted task cannot be deleted or moved; abort next-iteration is a 409', async () => {
    const { l, task } = await crashed();
    expect((await labError(l.runner.deleteTask(task.id))).code).toBe('conflict');
    expect((await labError(l.runner.moveTask(task.id, 'down'))).code).toBe('conflict');
    expect((await labError(l.runner.abortNextIteration())).code).toBe('conflict');
  });

  it('retry re-runs the in-doubt step, replays the earlier ones from their records, restores variables, completes', async () => {
    const { l, task, more, runId, firstOutputs } = await crashed();
    await l.runner.retry();
    await l.state.gateWaiting();
    // nothing before the in-doubt step touched an instrument again
    expect(l.state.calls).toEqual({ 'gate.pass': 1 });
    l.state.release();
    expect(await outcome(l, task.id)).toBe('completed');
    // the rest for real: step b of iteration 1 (by the restored `base` = 10), then cleanup
    expect(callsOf(l)).toEqual({ 'gate.pass': 1, 'counter.inc': 1, 'counter.read': 1 });
    const run = (await l.store.runs.get(runId))!;
    expect(run).toMatchObject({ status: 'completed', error: null });
    const steps = await l.store.runSteps.list(runId);
    expect(steps.map((s) => `${s.phase}${s.iteration ?? ''}[${s.stepIndex}] ${s.method} ${s.status}`)).toEqual([
      'prep[0] inc ok',
      'main0[0] inc ok',
      'main0[1] pass ok',
      'main0[2] inc ok',
      'main1[0] inc ok',
      'main1[1] pass in-doubt',
      'main1[1] pass ok',
      'main1[2] inc ok',
      'cleanup[0] read ok',
    ]);
    expect(steps.at(-2)!.args).toEqual({ by: 10 });
    const phases = await l.store.phases.list(runId);
    expect(phases.map((p) => `${p.phase}${p.iteration ?? ''}:${p.status}`)).toEqual(['prep:ok', 'main0:ok', 'main1:ok', 'cleanup:ok']);
    // iteration 1's outputs: `a` from the record, `g` and `b` from the real calls
    expect(phases[2].outputs).toEqual({ a: firstOutputs[4], g: 'g', b: 10 });
    expect(l.runner.status()).toMatchObject({ queue_held: false, interrupted: null });
    expect(await outcome(l, more[0].id)).toBe('completed');
  });

  it('pause-resume goes on after the in-doubt step (it is not run again)', async () => {
    const { l, task, runId } = await crashed();
    await l.runner.pauseResume();
    expect(await outcome(l, task.id)).toBe('completed');
    expect(callsOf(l)).toEqual({ 'counter.inc': 1, 'counter.read': 1 });
    const phases = await l.store.phases.list(runId);
    expect(phases.find((p) => p.iteration === 1)!.outputs).toEqual({ a: expect.any(Number), g: null, b: 10 });
    expect((await l.store.runSteps.list(runId)).filter((s) => s.status === 'in-doubt')).toHaveLength(1);
  });

  it('abort next-task ends it: cleanup only, run aborted, the queue stays held', async () => {
    const { l, task, more, runId } = await crashed();
    await l.runner.abortNextTask();
    expect(await outcome(l, task.id)).toBe('aborted');
    expect(callsOf(l)).toEqual({ 'counter.read': 1 });
    expect((await l.store.runs.get(runId))!.status).toBe('aborted');
    expect(await taskStatus(l, task.id)).toBe('aborted');
    expect(l.runner.status()).toMatchObject({ queue_held: true, interrupted: null, busy: false });
    await l.runner.settled(); // the loop has looked at the queue since, and started nothing
    expect(await taskStatus(l, more[0].id)).toBe('pending');
    // every record is still there
    expect((await l.store.runSteps.list(runId)).length).toBe(7);
  });

  it('a graceful stop at a pause step resumes at that step', async () => {
    const { l, task } = await atPauseStep(1);
    const runId = l.runner.status().current_task!.run_id!;
    await l.runner.close();
    const again = await l.restart();
    expect((await again.store.runs.get(runId))!.status).toBe('interrupted');
    expect(again.runner.status().interrupted).toMatchObject({ task_id: task.id, run_id: runId, step: null });
    await again.runner.retry();
    // the pause step was where it stopped: it waits for the operator again, and the step after it runs
    await until(() => again.runner.status().waiting !== null, 'the pause step again');
    expect(again.state.calls).toEqual({});
    await again.runner.pauseResume();
    expect(await outcome(again, task.id)).toBe('completed');
    expect(again.state.calls).toEqual({ 'counter.inc': 1, 'counter.read': 1 });
    expect((await again.store.phases.list(runId)).find((p) => p.phase === 'main')!.outputs).toEqual({ n: 1 });
  });

  it('a second crash after a resume resumes from the latest in-doubt step', async () => {
    const { l, task, runId } = await crashed();
    await l.runner.retry();
    await l.state.gateWaiting(); // iteration 1's gate again, in flight: crash again
    l.state.waiting.length = 0;
    const third = await l.restart({ crash: true });
    expect(third.runner.status().interrupted?.step).toMatchObject({ iteration: 1, index: 1 });
    const ids = (await third.store.runSteps.list(runId)).filter((s) => s.status === 'in-doubt').map((s) => s.id);
    expect(ids).toHaveLength(2);
    expect(third.runner.status().interrupted!.step!.id).toBe(Math.max(...ids));
    await third.runner.retry();
    await third.state.gateWaiting();
    third.state.release();
    expect(await outcome(third, task.id)).toBe('completed');
    expect(callsOf(third)).toEqual({ 'gate.pass': 1, 'counter.inc': 1, 'counter.read': 1 });
  });

  it('a second crash after the in-doubt step was done replays it from its record', async () => {
    const { l, task, runId } = await crashed(0);
    await l.runner.retry();
    await l.state.gateWaiting();
    l.state.release();
    await outcome(l, task.id);
    // pretend the server died during cleanup: the run is `running` again, its cleanup step running
    const steps = await l.store.runSteps.list(runId);
    const cleanupStep = steps.at(-1)!;
    expect(cleanupStep.phase).toBe('cleanup');
    await l.store.runSteps.markInDoubt(runId); // nothing running: no change
    await l.store.runs.update(runId, { status: 'running', endedAt: null });
    await l.store.queue.update(task.id, { status: 'running', endedAt: null });
    await l.store.steps.update(cleanupStep.id, { status: 'running', output: null, endedAt: null });
    const cleanupPhase = (await l.store.phases.list(runId)).find((p) => p.phase === 'cleanup')!;
    await l.store.phases.update(cleanupPhase.id, { status: 'running', endedAt: null });
    const again = await l.restart();
    await again.runner.retry();
    expect(await outcome(again, task.id)).toBe('completed');
    // only the in-doubt cleanup step ran again: the gate (done once after the first crash) was replayed
    expect(again.state.calls).toEqual({ 'counter.read': 1 });
    expect((await again.store.phases.list(runId)).map((p) => `${p.phase}${p.iteration ?? ''}:${p.status}`)).toEqual(['prep:ok', 'main0:ok', 'main1:ok', 'cleanup:ok']);
  });
});

/* ------------------------------------------- the controls, one thing each */

/** Each control as the runner does it (the page's buttons and `lab run`'s keys call these). */
const op = (l: Lab, c: Control) =>
  ({
    pause: () => l.runner.pause(),
    resume: () => l.runner.resume(),
    continue: () => l.runner.continuePauseStep(),
    retry: () => l.runner.retry(),
    skip: () => l.runner.skip(),
    release: () => l.runner.release(),
    'stop-iteration': () => l.runner.abortNextIteration(),
    'abort-task': () => l.runner.abortNextTask(),
    'rerun-iteration': () => l.runner.rerunIteration(),
    'retry-step': () => l.runner.retryStep(),
  })[c]();

/**
 * The controls the page enables in this state are `enabled`, and every other one is refused with a 409
 * naming the state (and changes nothing): what the page disables really does nothing.
 */
async function onlyEnabled(l: Lab, enabled: Control[]) {
  const s = l.runner.status();
  const on = availableControls(s);
  expect(CONTROLS.filter((c) => on[c])).toEqual(enabled);
  for (const c of CONTROLS.filter((x) => !on[x])) {
    const e = await labError(op(l, c));
    expect([c, e.code, e.data]).toEqual([c, 'conflict', { state: s.state }]);
  }
  expect(l.runner.status()).toEqual(s);
}

describe('the controls: each does one thing, or is a 409 when it would do nothing', () => {
  it('idle: all refused, with the state in words', async () => {
    const l = await lab();
    await onlyEnabled(l, []);
    expect((await labError(l.runner.skip())).message).toBe('Skip the failed step does nothing now: the runner is idle.');
    expect(l.runner.status().paused).toBe(false);
  });

  it("a call in flight: pause, then the run waits paused until resume (both in the run's log)", async () => {
    const { l, task } = await atGate();
    await onlyEnabled(l, ['pause', 'stop-iteration', 'abort-task']);
    expect(await l.runner.pause()).toMatchObject({ paused: true, state: 'running' }); // the call in flight finishes
    await onlyEnabled(l, ['resume', 'stop-iteration', 'abort-task']);
    l.state.release();
    await isState(l, 'paused');
    // state paused: the task waits on its flag, no step can start until it is cleared
    const mark = l.events.length;
    expect(count(l, 'counter.inc')).toBe(0);
    await onlyEnabled(l, ['resume', 'stop-iteration', 'abort-task']);
    const resumeAt = l.events.length;
    expect(await l.runner.resume()).toMatchObject({ paused: false, state: 'running' });
    expect(await outcome(l, task.id)).toBe('completed');
    startedAfterResume(l, mark, resumeAt, 'counter.inc');
    const log = (await l.store.logs.list((await l.store.queue.get(task.id))!.runId!)).map((x) => x.message);
    expect(log).toEqual(expect.arrayContaining(['Paused by the operator: no new step starts (a call in flight finishes).', 'Resumed by the operator.']));
  });

  it('a pause step: continue goes on; nothing else but the aborts applies', async () => {
    const { l, task } = await atPauseStep(1);
    await onlyEnabled(l, ['continue', 'stop-iteration', 'abort-task']);
    await l.runner.continuePauseStep();
    expect(await outcome(l, task.id)).toBe('completed');
    expect(count(l, 'counter.inc')).toBe(2);
  });

  it('a failed step: skip goes on without it (never pauses); retry and the aborts apply too', async () => {
    const { l, task, runId } = await failing();
    await onlyEnabled(l, ['retry', 'skip', 'stop-iteration', 'abort-task']);
    expect((await l.runner.skip()).paused).toBe(false);
    expect(await outcome(l, task.id)).toBe('completed');
    expect(count(l, 'flaky.poke')).toBe(1);
    expect((await l.store.runs.get(runId))!.skipped).toBe(1);
    expect((await l.store.logs.list(runId)).map((x) => x.message)).toContain('Skipping main[0].');
  });

  it('stopping: pause, and abort the task (ends the cleanup); stop after this iteration is done already', async () => {
    const l = await lab();
    await save(l, 'slowCleanup');
    const task = await submit(l, 'slowCleanup');
    await l.state.gateWaiting();
    await l.runner.abortNextIteration();
    l.state.release();
    await until(() => l.state.waiting[0]?.tag === 'cleanup', 'the cleanup gate');
    const on = availableControls(l.runner.status());
    expect(CONTROLS.filter((c) => on[c])).toEqual(['pause', 'abort-task']);
    for (const c of ['resume', 'continue', 'retry', 'skip', 'release'] as const) expect((await labError(op(l, c))).data).toEqual({ state: 'stopping' });
    l.state.release();
    expect(await outcome(l, task.id)).toBe('stopped');
  });

  it('a held queue: release lets it go on; the flag set while idle holds it too', async () => {
    const { l, task, more } = await atGate(1, 1);
    await l.runner.abortNextTask();
    l.state.release();
    await outcome(l, task.id);
    await onlyEnabled(l, ['release']);
    expect(await l.runner.release()).toMatchObject({ queue_held: false, paused: false });
    expect(await outcome(l, more[0].id)).toBe('completed');
    await l.runner.pauseResume(); // idle: the spec's toggle holds the queue
    await onlyEnabled(l, ['release']);
    expect(await l.runner.release()).toMatchObject({ queue_held: false, paused: false });
  });

  it('an interrupted task: retry, skip (goes on after the in-doubt step) or abort; release waits for that decision', async () => {
    const { l, task } = await crashed();
    // the restart made its instruments again: re-running the iteration is offered too (test/unit/runner-iteration.test.ts)
    await onlyEnabled(l, ['retry', 'skip', 'abort-task', 'rerun-iteration', 'retry-step']);
    await l.runner.skip();
    expect(await outcome(l, task.id)).toBe('completed');
    expect(callsOf(l)).toEqual({ 'counter.inc': 1, 'counter.read': 1 });
  });

  it("pause-resume keeps its meaning (the spec's one button): skip, continue, release, or pause and resume", async () => {
    const failed = await failing();
    await failed.l.runner.pauseResume();
    expect(await outcome(failed.l, failed.task.id)).toBe('completed');
    expect(count(failed.l, 'flaky.poke')).toBe(1);
    const { l, task } = await atGate();
    expect((await l.runner.pauseResume()).paused).toBe(true);
    expect((await l.runner.pauseResume()).paused).toBe(false);
    l.state.release();
    expect(await outcome(l, task.id)).toBe('completed');
  });
});
