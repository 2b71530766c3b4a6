/**
 * Several tasks at once (issue 13 item 2, DESIGN.md §5 and §12): with `parallel: N` (`lab serve --parallel N`)
 * tasks whose workflows use disjoint instruments run side by side, each leasing its instruments; tasks that
 * share one never overlap. With several running, the controls need a task_id (409 listing them) and act on
 * that task only; the status lists every running task, `current_task` the first. `parallel` 1 (the default)
 * runs one task at a time, as before. Sequenced by the runner's status and events and the gate instrument
 * (which hangs until released), never by guessed sleeps; a negative ("does not start") is given a few turns.
 */
import { Runner, type RunnerEvent } from '../../core/runner/index.js';
import type { Deck } from '../../core/deck/index.js';
import type { QueueTaskRow, RunStatus, StepRow, Store } from '../../core/store/types.js';
import type { WorkflowInput } from '../../core/workflow/model.js';
import { runnerDeck, type DeckState } from '../fixtures/runner/instruments.js';
import { testStore } from '../helpers/db.js';
import { labError } from '../helpers/errors.js';
import { waitFor } from '../helpers/wait.js';

interface Lab {
  store: Store;
  deck: Deck;
  state: DeckState;
  runner: Runner;
  events: RunnerEvent[];
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

async function lab(parallel?: number): Promise<Lab> {
  const db = await testStore();
  const { deck, state } = await runnerDeck(db.store.steps);
  const runner = new Runner({ store: db.store, deck, ...(parallel === undefined ? {} : { parallel }) });
  const events: RunnerEvent[] = [];
  runner.on('event', (e: RunnerEvent) => events.push(e));
  await runner.start();
  open.push(async () => {
    while (state.waiting.length) state.release();
    await runner.close();
    await deck.close();
    await db.cleanup();
  });
  for (const wf of Object.values(WORKFLOWS)) await db.store.workflows.save(wf.name, wf, null);
  return { store: db.store, deck, state, runner, events };
}

const call = (instrument: string, method: string, args: Record<string, unknown> = {}) => ({ kind: 'call' as const, instrument, method, args });

const WORKFLOWS: Record<string, WorkflowInput> = {
  /** a gate call: hangs until the test releases it. */
  gateOnly: { name: 'gateOnly', main: [call('gate', 'pass')] },
  /** a gate call, then a spare ping: a step after the gate (to stand still before, or abort). */
  gateThenPing: { name: 'gateThenPing', main: [call('gate', 'pass'), call('spare', 'ping')] },
  /** counter only: disjoint from gateOnly. */
  count: { name: 'count', main: [call('counter', 'inc'), call('counter', 'inc')] },
  /** a pause step, then counter: disjoint from gateOnly. */
  countPause: { name: 'countPause', main: [{ kind: 'pause', message: 'Load the sample' }, call('counter', 'inc')] },
  /** flaky, then counter: a step that fails while state.flakyFails > 0. */
  flaky: { name: 'flaky', main: [call('flaky', 'poke'), call('counter', 'inc')] },
};

const submit = (l: Lab, workflow: string): Promise<QueueTaskRow> => l.runner.submit({ workflow, userId: null, repeat: 1 });

const until = (cond: () => boolean | Promise<boolean>, what: string, ms = 4000): Promise<void> => waitFor(cond, what, ms, 2).then(() => undefined);

const running = (l: Lab) => l.runner.status().running.map((t) => t.id);

async function outcome(l: Lab, id: number): Promise<RunStatus> {
  let found: RunStatus | undefined;
  await until(() => {
    const e = l.events.find((x) => x.type === 'run' && x.task_id === id && x.status !== 'running');
    found = e?.type === 'run' ? e.status : undefined;
    return found !== undefined;
  }, `task ${id} to end`);
  await until(() => !running(l).includes(id), `task ${id} to leave the runner`);
  return found!;
}

async function steps(l: Lab, taskId: number): Promise<StepRow[]> {
  return l.store.runSteps.list((await l.store.queue.get(taskId))!.runId!);
}

/** The span of a task's steps: its first step's start to its last step's end. */
async function span(l: Lab, taskId: number): Promise<{ start: number; end: number }> {
  const s = await steps(l, taskId);
  return { start: Math.min(...s.map((x) => x.startedAt.getTime())), end: Math.max(...s.map((x) => x.endedAt!.getTime())) };
}

describe('parallel 2', () => {
  it('runs two tasks on disjoint instruments at the same time: their step times overlap', async () => {
    const l = await lab(2);
    const a = await submit(l, 'gateOnly');
    const b = await submit(l, 'count');
    await l.state.gateWaiting();
    // b runs and ends while a's gate call is still in flight
    expect(await outcome(l, b.id)).toBe('completed');
    expect(running(l)).toEqual([a.id]);
    l.state.release();
    expect(await outcome(l, a.id)).toBe('completed');
    const [sa, sb] = [await span(l, a.id), await span(l, b.id)];
    expect(sa.start).toBeLessThanOrEqual(sb.start);
    expect(sa.end).toBeGreaterThanOrEqual(sb.end);
    expect(l.state.calls['counter.inc']).toBe(2);
  });

  it('never overlaps two tasks that share an instrument; a later disjoint task goes past the waiting one', async () => {
    const l = await lab(2);
    const a = await submit(l, 'gateOnly');
    const b = await submit(l, 'gateOnly'); // gate again: waits for a
    const c = await submit(l, 'count'); // disjoint: runs beside a
    await l.state.gateWaiting();
    expect(await outcome(l, c.id)).toBe('completed');
    await l.runner.settled(); // the loop has looked at the queue since, and started nothing
    expect((await l.store.queue.get(b.id))!.status).toBe('pending');
    expect(l.state.waiting).toHaveLength(1);
    expect(await l.runner.startsNow(b.id)).toBe(false);
    l.state.release();
    expect(await outcome(l, a.id)).toBe('completed');
    await l.state.gateWaiting();
    expect(running(l)).toEqual([b.id]);
    l.state.release();
    expect(await outcome(l, b.id)).toBe('completed');
    const [sa, sb] = [await span(l, a.id), await span(l, b.id)];
    expect(sb.start).toBeGreaterThanOrEqual(sa.end);
  });

  it('status lists every running task, current_task the first; the queue names them', async () => {
    const l = await lab(2);
    const a = await submit(l, 'gateOnly');
    const b = await submit(l, 'countPause');
    await l.state.gateWaiting();
    await until(() => l.runner.status().running.some((t) => t.id === b.id && t.waiting !== null), 'b at its pause step');
    const s = l.runner.status();
    expect(s).toMatchObject({ busy: true, parallel: 2, current_task: { id: a.id }, state: 'running', waiting: null });
    expect(s.running).toMatchObject([
      { id: a.id, state: 'running', instruments: ['gate'] },
      { id: b.id, state: 'paused', waiting: { message: 'Load the sample' }, instruments: ['counter'] },
    ]);
    expect((await l.runner.queue()).running_task_ids).toEqual([a.id, b.id]);
  });

  it('controls need a task_id while several run (409 listing them) and act on the named task only', async () => {
    const l = await lab(2);
    const a = await submit(l, 'gateThenPing');
    const b = await submit(l, 'countPause');
    await l.state.gateWaiting();
    await until(() => l.runner.status().running.some((t) => t.id === b.id && t.waiting !== null), 'b at its pause step');

    for (const op of [() => l.runner.pause(), () => l.runner.pauseResume(), () => l.runner.continuePauseStep(), () => l.runner.abortNextTask(), () => l.runner.retry(), () => l.runner.skip()]) {
      const e = await labError(op());
      expect(e.code).toBe('conflict');
      expect(e.message).toContain(`task ${a.id} ("gateThenPing × 1")`);
      expect(e.message).toContain(`task ${b.id} ("countPause × 1")`);
      expect(e.message).toContain('task_id');
      expect((e.data as { running: { task_id: number }[] }).running.map((t) => t.task_id)).toEqual([a.id, b.id]);
    }
    // unknown, or not running
    expect((await labError(l.runner.pause(99_999))).code).toBe('not_found');
    // each control acts on its task: pause a, continue b; b ends while a stays paused
    expect((await l.runner.pause(a.id)).running.map((t) => [t.id, t.paused])).toEqual([
      [a.id, true],
      [b.id, false],
    ]);
    const cont = await labError(l.runner.continuePauseStep(a.id)); // a waits at no pause step
    expect(cont.code).toBe('conflict');
    expect(cont.message).toBe(`Continue does nothing now: task ${a.id} is pausing after this step.`);
    await l.runner.continuePauseStep(b.id);
    expect(await outcome(l, b.id)).toBe('completed');
    const done = await labError(l.runner.resume(b.id));
    expect(done.code).toBe('conflict');
    expect(done.message).toBe(`Task ${b.id} is not running (it is done); running here: task ${a.id} ("gateThenPing × 1").`);
    // one task left: the controls act on it without a task_id again
    l.state.release();
    await until(() => l.runner.status().state === 'paused', 'a paused after its call');
    expect((await l.runner.resume()).paused).toBe(false);
    expect(await outcome(l, a.id)).toBe('completed');
    expect(l.state.calls['spare.ping']).toBe(1);
  });

  it('abort next-task on one task holds the queue; the other goes on, and the queue can be released while it runs', async () => {
    const l = await lab(2);
    const a = await submit(l, 'gateThenPing');
    const b = await submit(l, 'countPause');
    await l.state.gateWaiting();
    await until(() => running(l).includes(b.id), 'b running');
    expect((await l.runner.abortNextTask(a.id)).queue_held).toBe(true);
    l.state.release();
    expect(await outcome(l, a.id)).toBe('aborted');
    expect(l.state.calls['spare.ping']).toBeUndefined();
    const next = await submit(l, 'gateOnly');
    await l.runner.settled(); // the loop has looked at the queue since, and started nothing
    expect((await l.store.queue.get(next.id))!.status).toBe('pending'); // held
    expect(running(l)).toEqual([b.id]);
    expect((await l.runner.release()).queue_held).toBe(false);
    await l.state.gateWaiting();
    expect(running(l)).toEqual([b.id, next.id]);
    await l.runner.continuePauseStep(b.id);
    expect(await outcome(l, b.id)).toBe('completed');
    l.state.release();
    expect(await outcome(l, next.id)).toBe('completed');
  });

  it('a failed step of one task waits for its decision while the other task runs on', async () => {
    const l = await lab(2);
    l.state.flakyFails = 1;
    const a = await submit(l, 'gateOnly');
    const b = await submit(l, 'flaky');
    await l.state.gateWaiting();
    await until(() => l.runner.status().running.some((t) => t.id === b.id && t.state === 'failed'), 'b failed');
    expect(l.runner.status()).toMatchObject({ current_task: { id: a.id }, state: 'running', failed_step: null });
    const s = await l.runner.retry(b.id);
    expect(s.running.find((t) => t.id === a.id)!.state).toBe('running');
    expect(await outcome(l, b.id)).toBe('completed');
    l.state.release();
    expect(await outcome(l, a.id)).toBe('completed');
  });
});

describe('parallel 1 (the default)', () => {
  it('runs one task at a time, even on disjoint instruments', async () => {
    const l = await lab();
    expect(l.runner.status().parallel).toBe(1);
    const a = await submit(l, 'gateOnly');
    const b = await submit(l, 'count');
    await l.state.gateWaiting();
    await l.runner.settled(); // the loop has looked at the queue since, and started nothing
    expect((await l.store.queue.get(b.id))!.status).toBe('pending');
    expect(running(l)).toEqual([a.id]);
    // one task running: the controls need no task_id
    expect((await l.runner.pause()).paused).toBe(true);
    await l.runner.resume();
    l.state.release();
    expect(await outcome(l, a.id)).toBe('completed');
    expect(await outcome(l, b.id)).toBe('completed');
    expect((await span(l, b.id)).start).toBeGreaterThanOrEqual((await span(l, a.id)).end);
  });
});

describe('a bad parallel', () => {
  it('the runner refuses one that is not a positive whole number', async () => {
    const db = await testStore();
    open.push(db.cleanup);
    const { deck } = await runnerDeck(db.store.steps);
    open.push(() => deck.close());
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      let caught: unknown;
      try {
        new Runner({ store: db.store, deck, parallel: bad });
      } catch (e) {
        caught = e;
      }
      expect(caught).toMatchObject({ code: 'invalid_input' });
    }
  });
});
