/**
 * After a restart with an in-doubt step whose iteration's instruments were made again (issue 25): the status
 * says which, `rerun-iteration` runs the iteration again from its first step, `retry-step` the step only, and
 * in a campaign a plain Retry re-runs the iteration. A real store and the runner's test deck
 * (test/fixtures/runner); the restart is the runner tests' crash: a second runner and deck on the same store.
 */
import { Runner, type RunnerEvent } from '../../core/runner/index.js';
import { availableControls, CONTROLS, statusAlerts } from '../../core/runner/controls.js';
import { remadeSince } from '../../core/runner/iteration.js';
import type { StepRow } from '../../core/store/types.js';
import type { WorkflowInput } from '../../core/workflow/model.js';
import { runnerDeck, type DeckState } from '../fixtures/runner/instruments.js';
import { NO_RECORDS } from '../../core/deck/index.js';
import { testStore, type TestStore } from '../helpers/db.js';
import { labError } from '../helpers/errors.js';
import { waitFor } from '../helpers/wait.js';

const call = (instrument: string, method: string, args: Record<string, unknown> = {}, save_as?: string) => ({ kind: 'call' as const, instrument, method, args, ...(save_as ? { save_as } : {}) });

/** prep saves `base`; each iteration: a counter step, a gate (hangs until released), a counter step by `base`. */
const RECOVER: WorkflowInput = {
  name: 'recover',
  parameters: [{ name: 'x', type: 'number' }],
  outputs: ['a', 'g', 'b'],
  prep: [call('counter', 'inc', { by: { value: 10 } }, 'base')],
  main: [call('counter', 'inc', { by: { param: 'x' } }, 'a'), call('gate', 'pass', { tag: { value: 'g' } }, 'g'), call('counter', 'inc', { by: { var: 'base' } }, 'b')],
  cleanup: [call('counter', 'read', {}, 'end')],
};
const ROWS = [{ x: 1 }, { x: 2 }];

interface Side {
  runner: Runner;
  state: DeckState;
  events: RunnerEvent[];
  close(): Promise<void>;
}
const measured: { i: number; outputs: Record<string, unknown> }[] = [];
let db: TestStore;
const sides: Side[] = [];

/** A labdeck on the store: its deck made now, a campaign kind whose optimizer suggests ROWS in order. */
async function start(): Promise<Side> {
  const { deck, state } = await runnerDeck(db.store.steps);
  const campaign = async () => ({
    total: ROWS.length,
    params: async (i: number, before?: Record<string, unknown>) => before ?? ROWS[i]!,
    measured: async (i: number, _p: unknown, outputs: Record<string, unknown>) => void measured.push({ i, outputs }),
  });
  const runner = new Runner({ store: db.store, deck, sources: { campaign } });
  const events: RunnerEvent[] = [];
  runner.on('event', (e: RunnerEvent) => events.push(e));
  await runner.start();
  const side = {
    runner,
    state,
    events,
    async close() {
      while (state.waiting.length) state.release();
      await runner.close();
      await deck.close();
    },
  };
  sides.push(side);
  return side;
}

beforeEach(async () => {
  measured.length = 0;
  db = await testStore();
  await db.store.workflows.save('recover', RECOVER, null);
});
afterEach(async () => {
  for (const s of sides.splice(0).reverse()) await s.close().catch(() => undefined);
  await db.cleanup();
});

const until = (cond: () => boolean | Promise<boolean>, what: string, ms = 4000): Promise<void> => waitFor(cond, what, ms, 2).then(() => undefined);

/**
 * A task (workflow or campaign) cut off at iteration 1's gate by a crash, and the labdeck started again:
 * its deck (every instrument) made after the steps of iteration 1 ran.
 */
async function crashed(kind: 'workflow' | 'campaign') {
  const first = await start();
  const { name, payload } = await first.runner.prepare({ workflow: 'recover', config: ROWS });
  const task = await first.runner.enqueue({ name, kind, payload, createdBy: null });
  await first.state.gateWaiting();
  first.state.release();
  await until(async () => first.state.waiting.length === 1 && (await db.store.runSteps.list(first.runner.status().current_task!.run_id!)).length === 6, 'the gate of iteration 1');
  const runId = first.runner.status().current_task!.run_id!;
  // the crash: the first labdeck never hears of it again
  first.state.waiting.length = 0;
  sides.splice(sides.indexOf(first), 1);
  first.runner.host.halt();
  await db.store.hosts.stop(first.runner.host.id);
  const l = await start();
  return { l, task, runId };
}

const lines = async (runId: number) => (await db.store.runSteps.list(runId)).map((s) => `${s.phase}${s.iteration ?? ''}[${s.stepIndex}] ${s.instrument}.${s.method} ${s.status}`);
const ended = (l: Side, taskId: number) => until(async () => (await db.store.queue.get(taskId))?.status === 'done', `task ${taskId} done`);
const enabled = (l: Side) => {
  const on = availableControls(l.runner.status());
  return CONTROLS.filter((c) => on[c]);
};

describe('an in-doubt step whose iteration ran on instruments made again since', () => {
  it('a workflow: the status names them, Retry re-runs the step, Re-run the iteration is offered', async () => {
    const { l, task, runId } = await crashed('workflow');
    const s = l.runner.status();
    expect(s.interrupted).toMatchObject({ task_id: task.id, run_id: runId, step: { phase: 'main', iteration: 1, index: 1, instrument: 'gate' }, remade: ['counter', 'gate'], retry: 'step' });
    expect(enabled(l)).toEqual(['retry', 'skip', 'abort-task', 'rerun-iteration', 'retry-step']);
    expect(statusAlerts(s)[0]!.text).toContain('the instruments of this iteration were re-created since the step ran (counter, gate)');
    await l.runner.retry();
    await l.state.gateWaiting();
    expect(l.state.calls).toEqual({ 'gate.pass': 1 }); // the step only: iteration 1's first step replayed from its record
    l.state.release();
    await ended(l, task.id);
  });

  it('rerun-iteration runs the iteration again from its first step; its old records stay, its outputs are the new ones', async () => {
    const { l, task, runId } = await crashed('workflow');
    await l.runner.rerunIteration();
    await l.state.gateWaiting();
    expect(l.state.calls).toEqual({ 'counter.inc': 1, 'gate.pass': 1 });
    l.state.release();
    await ended(l, task.id);
    expect(await lines(runId)).toEqual([
      'prep[0] counter.inc ok',
      'main0[0] counter.inc ok',
      'main0[1] gate.pass ok',
      'main0[2] counter.inc ok',
      'main1[0] counter.inc ok',
      'main1[1] gate.pass in-doubt',
      'main1[0] counter.inc ok',
      'main1[1] gate.pass ok',
      'main1[2] counter.inc ok',
      'cleanup[0] counter.read ok',
    ]);
    const steps = await db.store.runSteps.list(runId);
    const phase = (await db.store.phases.list(runId)).find((p) => p.phase === 'main' && p.iteration === 1)!;
    // `a` is the new first step's output (the fresh counter: 0 + x), `b` uses prep's `base` (replayed)
    expect(phase).toMatchObject({ status: 'ok', outputs: { a: steps[6]!.output, g: 'g', b: steps[8]!.output } });
    expect(steps[8]!.args).toEqual({ by: 10 });
    expect((await db.store.logs.list(runId)).map((x) => x.message)).toContainEqual(
      expect.stringContaining("re-running the in-doubt step's iteration from its first step (counter, gate made again since it began)"),
    );
  });

  it('a campaign: a plain Retry re-runs the whole iteration (its point measured once, on the new instruments)', async () => {
    const { l, task, runId } = await crashed('campaign');
    expect(l.runner.status().interrupted).toMatchObject({ remade: ['counter', 'gate'], retry: 'iteration' });
    expect(enabled(l)).toEqual(['retry', 'skip', 'abort-task', 'rerun-iteration', 'retry-step']);
    expect(statusAlerts(l.runner.status())[0]!.text).toContain('Retry re-runs the iteration from its first step');
    await l.runner.retry();
    await l.state.gateWaiting();
    expect(l.state.calls).toEqual({ 'counter.inc': 1, 'gate.pass': 1 });
    l.state.release();
    await ended(l, task.id);
    // iteration 0 was told before the crash; iteration 1 once, with the new run's outputs
    const steps = await db.store.runSteps.list(runId);
    expect(measured.map((m) => m.i)).toEqual([0, 1]);
    expect(measured[1]!.outputs).toEqual({ a: steps[6]!.output, g: 'g', b: steps[8]!.output });
  });

  it('a campaign: retry-step re-runs the in-doubt step only', async () => {
    const { l, task } = await crashed('campaign');
    await l.runner.retryStep();
    await l.state.gateWaiting();
    expect(l.state.calls).toEqual({ 'gate.pass': 1 });
    l.state.release();
    await ended(l, task.id);
    expect(measured.map((m) => m.i)).toEqual([0, 1]);
  });

  it('rerun-iteration and retry-step are 409s when no interrupted task waits', async () => {
    const l = await start();
    for (const control of [() => l.runner.rerunIteration(), () => l.runner.retryStep()]) {
      const e = await labError(control());
      expect([e.code, e.data]).toEqual(['conflict', { state: 'idle' }]);
    }
  });
});

describe('remadeSince', () => {
  const step = (instrument: string, at: number, phase = 'main', iteration: number | null = 1) => ({ instrument, phase, iteration, startedAt: new Date(at) }) as StepRow;
  it("names the instruments of the in-doubt step's phase run made after that run first used them", () => {
    const steps = [step('pump', 100, 'main', 0), step('pump', 200), step('balance', 300), step('balance', 500)];
    const made = new Map([
      ['pump', new Date(150)],
      ['balance', new Date(400)],
    ]);
    // pump was made before iteration 1 used it; balance after its first use there
    expect(remadeSince(steps, { phase: 'main', iteration: 1 }, (n) => made.get(n) ?? null)).toEqual(['balance']);
    // nothing made again (the store failed under a run, the same labdeck goes on): nothing named
    expect(remadeSince(steps, { phase: 'main', iteration: 1 }, () => new Date(50))).toEqual([]);
    // an instrument this deck does not have is not judged
    expect(remadeSince(steps, { phase: 'main', iteration: 1 }, () => null)).toEqual([]);
  });
});

describe("the deck's incarnation of an instrument", () => {
  it('moves when the instrument is back online (its host made it again), not while it stays', async () => {
    const { deck } = await runnerDeck(NO_RECORDS);
    const first = deck.madeAt('gate')!;
    const counter = deck.madeAt('counter');
    while (Date.now() <= first.getTime()) await new Promise((r) => setImmediate(r));
    deck.setOffline(['gate'], 'the Python host stopped');
    expect(deck.madeAt('gate')).toEqual(first);
    deck.setOffline(['gate'], null);
    expect(deck.madeAt('gate')!.getTime()).toBeGreaterThan(first.getTime());
    expect(deck.madeAt('counter')).toBe(counter);
    expect(deck.madeAt('nope')).toBeNull();
    await deck.close();
  });
});
