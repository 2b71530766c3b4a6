/**
 * The store failing under a running task (issue 26 #10): a full SQLite disk, a PostgreSQL outage (a relay
 * between labdeck and the database that the test cuts). The run stops where it is, keeps its instruments
 * (the next task on them does not start, no direct call reaches them), and once the store answers it is an
 * interrupted task with its in-flight step in doubt, which retry, skip and abort act on. Sequenced by the
 * runner's own status and the gate instrument (which hangs until released).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Runner, type RunnerStatus } from '../../core/runner/index.js';
import { dataSourceOf, openStore } from '../../core/store/index.js';
import type { Store } from '../../core/store/types.js';
import type { WorkflowInput } from '../../core/workflow/model.js';
import { runnerDeck, type DeckState } from '../fixtures/runner/instruments.js';
import { postgresTestDb } from '../helpers/db.js';
import { labError } from '../helpers/errors.js';
import { pgProxy, type PgProxy } from '../helpers/pg-proxy.js';
import type { Deck } from '../../core/deck/index.js';
import { waitFor } from '../helpers/wait.js';

const call = (instrument: string, method: string, args: Record<string, unknown> = {}) => ({ kind: 'call' as const, instrument, method, args });

/** A long tag: the gate's output then needs pages of its own, which a full disk does not give. */
const BIG = 'x'.repeat(20_000);
const WORKFLOWS: WorkflowInput[] = [
  { name: 'gated', main: [call('gate', 'pass', { tag: { value: BIG } }), call('counter', 'inc')], cleanup: [call('counter', 'read')] },
  { name: 'gate-again', main: [call('gate', 'pass')] },
];

/** Poll until `cond` holds (the runner works on its own loop); fails with `what` after 10 s. */
const until = (cond: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> => waitFor(cond, what, ms, 5).then(() => undefined);

interface Outage {
  store: Store;
  begin(): Promise<void>;
  end(): Promise<void>;
  close(): Promise<void>;
}

/** SQLite: the file may not grow (max_page_count) and its free room is taken, as on a full disk. */
async function sqliteFull(): Promise<Outage> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-fault-'));
  const store = await openStore({ dataDir: dir });
  type Db = { pragma(s: string, o?: object): unknown; prepare(s: string): { run(...v: unknown[]): unknown } };
  const db = (dataSourceOf(store).driver as unknown as { databaseConnection: Db }).databaseConnection;
  let pages = 0;
  return {
    store,
    async begin() {
      pages = db.pragma('page_count', { simple: true }) as number;
      db.pragma(`max_page_count = ${pages}`);
      const filler = db.prepare('INSERT INTO "settings" ("key", "value") VALUES (?, ?)');
      for (let i = 0; ; i++) {
        try {
          filler.run(`filler-${i}`, JSON.stringify('x'.repeat(i < 1000 ? 2000 : 20)));
        } catch {
          if (i >= 1000) break;
          i = 999;
        }
      }
    },
    async end() {
      db.pragma(`max_page_count = ${pages * 100}`);
      db.prepare(`DELETE FROM "settings" WHERE "key" LIKE 'filler-%'`).run();
    },
    async close() {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** PostgreSQL through a relay the test cuts: every connection dropped, new ones refused. */
async function postgresDown(): Promise<Outage> {
  const db = await postgresTestDb();
  const relay: PgProxy = await pgProxy();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-fault-'));
  const store = await openStore({ url: relay.url(db.url), dataDir: dir });
  return {
    store,
    begin: () => relay.cut(),
    end: () => relay.restore(),
    async close() {
      await store.close();
      await relay.close();
      await db.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Lab {
  outage: Outage;
  store: Store;
  deck: Deck;
  state: DeckState;
  runner: Runner;
  close(): Promise<void>;
}

async function lab(make: () => Promise<Outage>): Promise<Lab> {
  const outage = await make();
  const { deck, state } = await runnerDeck(outage.store.steps);
  const runner = new Runner({ store: outage.store, deck, host: { kind: 'serve', leaseMs: 60_000 } });
  runner.on('error', () => undefined); // reported faults: the test reads the status
  await runner.start();
  for (const w of WORKFLOWS) await outage.store.workflows.save(w.name, w, null);
  return {
    outage,
    store: outage.store,
    deck,
    state,
    runner,
    async close() {
      while (state.waiting.length) state.release();
      await runner.close();
      await deck.close();
      await outage.close();
    },
  };
}

/**
 * A `gated` task at its gate call, a second task on the same gate queued behind; the store fails, the gate
 * call ends (its record cannot be written), and the store comes back. Resolves with both tasks once the
 * first is recorded interrupted.
 */
async function cutAtGate(l: Lab) {
  const task = await l.runner.submit({ workflow: 'gated', repeat: 1, userId: null });
  const next = await l.runner.submit({ workflow: 'gate-again', repeat: 1, userId: null });
  await l.state.gateWaiting();
  await l.outage.begin();
  l.state.release();
  // the run stops where it is: not running, not recorded as anything else, its instruments still its own
  await until(() => l.runner.status().running.length === 0, 'the run to stop');
  expect(l.deck.lockedBy('gate')).toBe(`task-${task.id}`);
  expect(l.deck.lockedBy('counter')).toBe(`task-${task.id}`);
  await l.outage.end();
  await until(() => l.runner.status().interrupted?.task_id === task.id, 'the task to be recorded interrupted');
  const s = l.runner.status();
  expect(s).toMatchObject({ busy: false, state: 'idle', queue_held: true, store_error: null });
  expect(s.interrupted!.step).toMatchObject({ instrument: 'gate', method: 'pass' });
  const run = (await l.store.queue.get(task.id))!;
  expect(run.status).toBe('interrupted');
  expect((await l.store.runs.get(run.runId!))!.status).toBe('interrupted');
  const steps = await l.store.runSteps.list(run.runId!);
  expect(steps.map((x) => [x.instrument, x.status])).toEqual([['gate', 'in-doubt']]);
  // nothing else started on those instruments meanwhile, and nothing ran the gate again
  expect((await l.store.queue.get(next.id))!.status).toBe('pending');
  expect(l.state.calls['gate.pass']).toBe(1);
  expect(l.deck.lockedBy('gate')).toBe(`task-${task.id}`);
  return { task, next, runId: run.runId! };
}

const ended = async (l: Lab, id: number) => {
  await until(async () => !['running', 'pending', 'interrupted'].includes((await l.store.queue.get(id))!.status) && !l.runner.status().running.some((t) => t.id === id), `task ${id} to end`);
  return (await l.store.queue.get(id))!.status;
};

describe.each([
  ['a full SQLite disk', sqliteFull],
  ['a PostgreSQL outage (whatever LABDECK_TEST_DB says)', postgresDown],
])('%s under a running task', (_name, make) => {
  let l: Lab;
  beforeEach(async () => {
    l = await lab(make);
  });
  afterEach(() => l.close());

  it('leaves an interrupted task with its step in doubt and its instruments kept; retry re-runs the step, then the next task runs', async () => {
    const { task, next } = await cutAtGate(l);
    const after: RunnerStatus = await l.runner.control('retry');
    expect(after.interrupted).toBeNull();
    await l.state.gateWaiting();
    expect(l.state.waiting[0]!.tag).toBe(BIG); // the in-doubt step again
    l.state.release();
    expect(await ended(l, task.id)).toBe('done');
    await l.state.gateWaiting(); // the next task, on the gate, only now
    l.state.release();
    expect(await ended(l, next.id)).toBe('done');
  }, 30_000);

  it('skip goes on after the in-doubt step; abort next-task ends it (cleanup runs) and keeps the queue held', async () => {
    const { task } = await cutAtGate(l);
    await l.runner.control('skip');
    expect(await ended(l, task.id)).toBe('done');
    expect(l.state.calls['counter.inc']).toBe(1);
    // the gate call waiting now is the next task's: the in-doubt one was not made again
    await l.state.gateWaiting();
    expect([l.state.waiting[0]!.tag, l.state.calls['gate.pass']]).toEqual(['g', 2]);

    const second = await cutAtGateAgain(l);
    await l.runner.control('abortNextTask');
    expect(await ended(l, second)).toBe('aborted');
    expect(l.state.calls['counter.read']).toBe(2); // cleanup ran, once per run
    expect(l.runner.status().queue_held).toBe(true);
  }, 30_000);

  it('while the store is still down, a control says so (503) instead of 409 "not running"', async () => {
    await l.runner.submit({ workflow: 'gated', repeat: 1, userId: null });
    await l.state.gateWaiting();
    await l.outage.begin();
    l.state.release();
    await until(() => l.runner.status().running.length === 0, 'the run to stop');
    expect(l.runner.status().store_error).toMatch(/database failed during task \d+/);
    const err = await labError(l.runner.control('retry'));
    expect([err.code, err.message]).toEqual(['store_unavailable', expect.stringMatching(/still cannot be written/)]);
    await l.outage.end();
    await until(() => l.runner.status().interrupted !== null, 'the task to be recorded interrupted');
  }, 30_000);
});

/** After the first task ended: another `gated` task cut at its gate the same way; its id. */
async function cutAtGateAgain(l: Lab): Promise<number> {
  // the task queued behind (gate-again) runs first now: let it through
  await l.state.gateWaiting();
  l.state.release();
  const task = await l.runner.submit({ workflow: 'gated', repeat: 1, userId: null });
  await l.state.gateWaiting();
  await l.outage.begin();
  l.state.release();
  await until(() => l.runner.status().running.length === 0, 'the run to stop');
  await l.outage.end();
  await until(() => l.runner.status().interrupted?.task_id === task.id, 'the second task to be recorded interrupted');
  return task.id;
}
