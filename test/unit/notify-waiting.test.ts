/**
 * The waiting states of input steps and the safety guard as notifications (docs/notifications.md), on a real
 * store and runner, delivered by a real deliverer to an HTTP sink on loopback: `input_waiting` written with
 * the waiting record, resolved by the value or the abort, and kept across a restart (sent once, resolved
 * once); `safety_blocked` for a blocked step (resolved by the retry or the skip) and for a blocked direct
 * call (resolved by the next call of that method the guard lets through).
 */
import { Deliverer } from '../../core/notify/deliverer.js';
import { SETTINGS_KEY } from '../../core/notify/settings.js';
import type { QueueTaskRow, Store } from '../../core/store/types.js';
import type { WorkflowInput } from '../../core/workflow/model.js';
import { Deck } from '../../core/deck/index.js';
import { Runner } from '../../core/runner/index.js';
import { newDeckState, runnerDrivers } from '../fixtures/runner/instruments.js';
import { runnerLabs, until, type RunnerLab as Lab } from '../helpers/runner-lab.js';
import { startHttpSink, type HttpSink } from '../helpers/sinks.js';

const { closers, lab } = runnerLabs();

const PH: WorkflowInput = {
  name: 'read-ph',
  main: [
    { kind: 'call', instrument: 'counter', method: 'inc', args: {} },
    { kind: 'input', prompt: 'Read the pH', save_as: 'pH', schema: { type: 'number', minimum: 0, maximum: 14 } },
  ],
};

async function submit(l: Lab, wf: WorkflowInput, repeat = 1): Promise<QueueTaskRow> {
  if (!(await l.store.workflows.get(wf.name))) await l.store.workflows.save(wf.name, wf, null);
  return l.runner.submit({ workflow: wf.name, userId: null, repeat });
}

let sink: HttpSink;
beforeEach(async () => {
  sink = await startHttpSink();
  closers.push(() => sink.close());
});

/** A deliverer on `store` sending every event to the sink's /hook (call after `lab()`: stopped before the runner). */
async function deliver(store: Store, hostId = 'test-host'): Promise<Deliverer> {
  await store.settings.set(SETTINGS_KEY, { base_url: 'http://lab.example:8000', channels: [{ name: 'hook', kind: 'webhook', url: `${sink.url}/hook`, rate_per_minute: 600 }] });
  const d = new Deliverer({ store, hostId, intervalMs: 20, backoffMs: { first: 30, max: 100 } });
  d.start();
  closers.push(() => d.stop());
  return d;
}

type Body = {
  event: string;
  state: string;
  id: string;
  run_id: number | null;
  task_id: number | null;
  step: string | null;
  url: string | null;
  message: string;
  resolution?: string;
  [k: string]: unknown;
};
const bodies = (): Body[] => sink.received.map((r) => r.json as Body);
const of = (event: string) => bodies().filter((b) => b.event === event);

describe('input_waiting', () => {
  it('is written with the waiting record and its log line, reaches the webhook, and the value resolves it (same id)', async () => {
    const l = await lab();
    await deliver(l.store);
    const task = await submit(l, PH);
    await until(() => of('input_waiting').length === 1, 'input_waiting at the webhook');
    const runId = l.runner.status().current_task!.run_id!;
    const open = of('input_waiting')[0]!;
    expect(open).toMatchObject({
      state: 'open',
      task_id: task.id,
      run_id: runId,
      step: 'main[1]',
      prompt: 'Read the pH',
      save_as: 'pH',
      expects: 'a number from 0 to 14',
      url: 'http://lab.example:8000/app/executions/config',
      message: expect.stringContaining('Read the pH'),
    });
    // what the alert was written with: the record that waits and the line that says so, both stored
    const rec = (await l.store.runSteps.list(runId)).find((s) => s.instrument === '(input)')!;
    expect(rec).toMatchObject({ method: 'pH', status: 'running' });
    expect((await l.store.logs.list(runId)).some((x) => x.message.startsWith('Waiting for input at main[1]: Read the pH'))).toBe(true);
    expect((await l.store.outbox.open()).map((r) => [r.event, r.key])).toEqual([['input_waiting', `input_waiting:run:${runId}:main[1]`]]);

    await l.runner.input(7.1, { by: { id: null, username: 'ada' } });
    await until(() => of('input_waiting').length === 2, 'the resolution at the webhook');
    expect(of('input_waiting')[1]).toMatchObject({ state: 'resolved', id: open.id, resolution: 'the value was given by ada' });
    await until(async () => (await l.store.queue.get(task.id))!.status === 'done', 'the run done');
    expect((await l.store.outbox.open()).filter((r) => r.event === 'input_waiting')).toEqual([]);
  });

  it('an abort while it waits resolves it: no value was given', async () => {
    const l = await lab();
    await deliver(l.store);
    const task = await submit(l, PH);
    await until(() => of('input_waiting').length === 1, 'input_waiting at the webhook');
    await l.runner.abortNextTask();
    await until(() => of('input_waiting').length === 2, 'the resolution at the webhook');
    expect(of('input_waiting')[1]).toMatchObject({ state: 'resolved', id: of('input_waiting')[0]!.id, resolution: expect.stringContaining('no value was given') });
    await until(async () => (await l.store.queue.get(task.id))!.status === 'aborted', 'the task aborted');
    await l.runner.release();
  });

  it('survives a restart: the alert stays open, is sent once, and the value given to the next labdeck resolves it', async () => {
    const l = await lab();
    const d1 = await deliver(l.store, 'first');
    const task = await submit(l, PH, 2);
    await until(() => l.runner.status().state === 'waiting_input', 'the first input');
    await l.runner.input(6.5, { by: { id: null, username: 'ada' } });
    await until(() => of('input_waiting').length === 3, 'the first input given, the second waiting');
    const waiting = of('input_waiting')[2]!;
    expect(waiting).toMatchObject({ state: 'open', step: 'main[1]' });
    // the labdeck dies: no heartbeat, no delivery; another starts on the same database
    l.runner.host.halt();
    await d1.stop();
    await l.store.hosts.stop(l.runner.host.id);
    const l2 = await lab(l.db);
    await deliver(l.store, 'second');
    await until(() => l2.runner.status().state === 'waiting_input', 'the input asked again');
    // one open alert for the waiting input, the same one as before the restart
    const openRows = (await l.store.outbox.open()).filter((r) => r.event === 'input_waiting');
    expect(openRows.map((r) => r.alertId)).toEqual([waiting.id]);
    await l2.runner.input(7.2, { by: { id: null, username: 'bo' } });
    await until(async () => (await l.store.queue.get(task.id))!.status === 'done', 'the run done');
    await until(() => of('input_waiting').length === 4, 'the resolution at the webhook');
    expect(of('input_waiting').map((b) => [b.id === waiting.id, b.state])).toEqual([
      [false, 'open'],
      [false, 'resolved'],
      [true, 'open'],
      [true, 'resolved'],
    ]);
    expect(of('input_waiting')[3]!.resolution).toBe('the value was given by bo');
    // an input simply asked again waits for no decision: the restart raised no run_interrupted nor queue_held
    // (before, both were opened and at once resolved, as if an operator had chosen)
    const rows = await l.store.outbox.recent(100);
    expect(rows.filter((r) => r.event === 'run_interrupted' || r.event === 'queue_held')).toEqual([]);
    expect(bodies().filter((b) => b.event === 'run_interrupted' || b.event === 'queue_held')).toEqual([]);
    // nothing arrived twice
    const ids = sink.received.map((r) => String(r.headers['x-labdeck-delivery']));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a restarted labdeck that cannot ask the input again (an instrument of the task is not here): the interruption and the held queue are told, and the operator decides', async () => {
    const l = await lab();
    const d1 = await deliver(l.store, 'first');
    const task = await submit(l, PH);
    await until(() => l.runner.status().state === 'waiting_input', 'the input');
    l.runner.host.halt();
    await d1.stop();
    await l.store.hosts.stop(l.runner.host.id);
    // the next labdeck drives everything but the counter the workflow calls
    const state = newDeckState();
    const deck = new Deck({ records: l.store.steps, busyTimeoutMs: 200 });
    const drivers = runnerDrivers(state).filter((d) => d.name !== 'counter');
    deck.setFileDrivers('/virtual/runner-deck.ts', 'imported', drivers);
    for (const d of drivers) await deck.connect(d.name, d.name, {});
    const runner = new Runner({ store: l.store, deck });
    await runner.start();
    closers.push(async () => {
      await runner.close();
      await deck.close();
    });
    await deliver(l.store, 'second');
    await until(() => of('run_interrupted').length === 1 && of('queue_held').length === 1, 'run_interrupted and queue_held at the webhook');
    expect(of('run_interrupted')[0]).toMatchObject({ state: 'open', task_id: task.id, message: expect.stringContaining('could not ask it again') });
    expect(of('run_interrupted')[0]!.message).not.toMatch(/operator/);
    expect(runner.status().interrupted).toMatchObject({ task_id: task.id });
    // the operator ends the run (which resolves its interruption), then releases the queue it holds
    await runner.abortNextTask();
    await until(() => of('run_interrupted').length === 2, 'the interruption resolved');
    expect(of('run_interrupted')[1]).toMatchObject({ state: 'resolved', resolution: expect.stringContaining('aborted') });
    await runner.release();
    await until(() => of('queue_held').length === 2, 'the held queue resolved');
  });
});
