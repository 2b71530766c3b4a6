/**
 * Several hosts on one database (DESIGN.md §12, issue 13): each runner is a host with a lease; recovery,
 * holds, claims and instruments are decided by rows, not by any one process's memory. Two runners with their
 * own decks share one store here (SQLite, or PostgreSQL with LABDECK_TEST_DB=postgres); the tests with real
 * processes are in test/api/hosts.test.ts.
 */
import { Deck } from '../../core/deck/index.js';
import { HostLease } from '../../core/runner/hosts.js';
import { MESSAGE_LIMIT, fitEvent } from '../../core/runner/relay.js';
import { Runner, type RunnerEvent, type RunnerStatus, type TaskPayload } from '../../core/runner/index.js';
import type { QueueTaskRow, Store } from '../../core/store/types.js';
import { Workflow, type WorkflowInput } from '../../core/workflow/model.js';
import { newDeckState, runnerDrivers, type DeckState } from '../fixtures/runner/instruments.js';
import { testStore, type TestStore } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const call = (instrument: string, method: string, args: Record<string, unknown> = {}) => ({ kind: 'call' as const, instrument, method, args });
const WORKFLOWS: Record<string, WorkflowInput> = {
  gated: { name: 'gated', main: [call('gate', 'pass'), call('counter', 'inc')] },
  count: { name: 'count', main: [call('counter', 'inc')] },
  ping: { name: 'ping', main: [call('spare', 'ping')] },
};

interface Host {
  runner: Runner;
  deck: Deck;
  state: DeckState;
  stop(): Promise<void>;
}

let db: TestStore;
let store: Store;
const hosts: Host[] = [];

beforeEach(async () => {
  db = await testStore();
  store = db.store;
  for (const [name, wf] of Object.entries(WORKFLOWS)) await store.workflows.save(name, wf, null);
});
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.stop();
  await db.cleanup();
});

/** A runner on the shared store whose deck has the instruments `names` (a short lease, so tests are quick). */
async function host(names: string[], leaseMs = 2000): Promise<Host> {
  const state = newDeckState();
  const deck = new Deck({ records: store.steps, busyTimeoutMs: 200 });
  const drivers = runnerDrivers(state);
  deck.setFileDrivers('/virtual/runner-deck.ts', 'imported', drivers);
  for (const n of names) await deck.connect(n, n, {});
  const runner = new Runner({ store, deck, host: { kind: 'serve', leaseMs } });
  await runner.start();
  let stopped = false;
  const h: Host = {
    runner,
    deck,
    state,
    async stop() {
      if (stopped) return;
      stopped = true;
      while (state.waiting.length) state.release();
      await runner.close(500);
      await deck.close();
    },
  };
  hosts.push(h);
  return h;
}

/** The process dies: its heartbeat stops, its gate calls hang forever, nothing is cleaned up. */
function kill(h: Host) {
  h.runner.host.halt();
  hosts.splice(hosts.indexOf(h), 1);
}

const until = (cond: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> => waitFor(cond, what, ms, 10).then(() => undefined);

const queued = (task: QueueTaskRow) => store.queue.get(task.id);
const running =
  (h: Host) =>
  (s: RunnerStatus = h.runner.status()) =>
    s.current_task?.id ?? null;

it("restarting one host never touches another host's live run, and sets no hold", async () => {
  const a = await host(['gate', 'counter']);
  const task = await a.runner.submit({ workflow: 'gated', repeat: 1, userId: null });
  await a.state.gateWaiting();
  const b = await host(['spare']);
  await b.stop(); // host B restarts
  await host(['spare']);
  const t = await queued(task);
  expect(t).toMatchObject({ status: 'running', hostId: a.runner.host.id, holdsQueue: false });
  const run = await store.runs.get(t!.runId!);
  expect(run).toMatchObject({ status: 'running', hostId: a.runner.host.id });
  expect((await store.logs.list(run!.id)).map((l) => l.message).join('\n')).not.toMatch(/Interrupted/);
  expect(await store.queue.holding()).toEqual([]);
  a.state.release();
  await until(async () => (await queued(task))?.status === 'done', 'the run ends on A');
});

it('an idle host takes a task queued on another, and only tasks whose instruments it has', async () => {
  const a = await host(['spare']);
  const b = await host(['gate', 'counter']);
  // queued through A (which cannot run it: no gate, no counter here), taken by B on its next look
  const definition = Workflow.parse(WORKFLOWS.gated);
  const task = await a.runner.enqueue({ name: 'gated on B', kind: 'workflow', payload: { workflow: 'gated', version: 1, definition, rows: [{}] } as TaskPayload, createdBy: null });
  await b.state.gateWaiting();
  expect(await queued(task)).toMatchObject({ status: 'running', hostId: b.runner.host.id });
  expect(running(a)()).toBeNull();
  b.state.release();
  await until(async () => (await queued(task))?.status === 'done', 'B finishes it');
  expect(b.state.calls['counter.inc']).toBe(1);
});

it('two hosts never claim one task', async () => {
  const a = await host(['counter']);
  const b = await host(['counter']); // the same name: only one of them may drive it
  expect(b.runner.heldElsewhere(['counter'])).toEqual([{ name: 'counter', host: a.runner.host.name }]);
  expect(b.deck.schema('counter').offline).toMatch(/driven by lab serve on .* \(pid \d+\), another labdeck on this database/);
  const tasks = [];
  for (let i = 0; i < 20; i++) tasks.push(await a.runner.submit({ workflow: 'count', repeat: 1, userId: null }));
  await until(async () => (await store.queue.open()).length === 0, 'all 20 done', 10_000);
  expect(a.state.calls['counter.inc']).toBe(20);
  expect(b.state.calls['counter.inc'] ?? 0).toBe(0);
  for (const t of tasks) expect(await queued(t)).toMatchObject({ status: 'done', hostId: a.runner.host.id });
});

it('claims are atomic: of two hosts claiming the same tasks at once, each task goes to one', async () => {
  const a = new HostLease(store, { kind: 'serve' });
  const b = new HostLease(store, { kind: 'serve' });
  await a.register();
  await b.register();
  const tasks: QueueTaskRow[] = [];
  for (let i = 0; i < 30; i++) tasks.push(await store.queue.add({ name: `t${i}`, kind: 'workflow', payload: null, createdBy: null }));
  const ids = tasks.map((t) => t.id);
  const got = await Promise.all(Array.from({ length: 40 }, (_, i) => store.queue.claim((i % 2 ? a : b).id, ids)));
  const claimed = got.filter((t): t is QueueTaskRow => t !== null);
  expect(claimed.length).toBe(30);
  expect(new Set(claimed.map((t) => t.id)).size).toBe(30);
  for (const t of claimed) expect(await queued(t)).toMatchObject({ status: 'running', hostId: t.hostId });
  expect(await store.queue.claim(a.id, ids)).toBeNull();
});

it('a host that dies: another one finds its lease expired, interrupts its run, and that task holds the queue', async () => {
  const a = await host(['gate', 'counter'], 1000);
  const b = await host(['spare'], 1000);
  const task = await a.runner.submit({ workflow: 'gated', repeat: 1, userId: null });
  await a.state.gateWaiting();
  const next = await b.runner.submit({ workflow: 'ping', repeat: 1, userId: null });
  await until(async () => (await queued(next))?.status === 'done', 'B runs its own task meanwhile');
  kill(a);
  await until(async () => (await queued(task))?.status === 'interrupted', "B recovers A's run", 8000);
  const t = await queued(task);
  expect(t!.holdsQueue).toBe(true);
  expect(await store.runs.get(t!.runId!)).toMatchObject({ status: 'interrupted' });
  const log = (await store.logs.list(t!.runId!)).map((l) => l.message);
  expect(log.filter((m) => m.startsWith('Interrupted')).length).toBe(1); // one host recovered it, once
  expect(log.join('\n')).toContain(`(${a.runner.host.name})`);
  await until(() => b.runner.status().queue_held, 'B sees the hold');
  // the hold is that task's: nothing else starts until an operator decides
  const after = await b.runner.submit({ workflow: 'ping', repeat: 1, userId: null });
  await b.runner.settled(); // B has looked at the queue since, and started nothing
  expect((await queued(after))!.status).toBe('pending');
  // A's instruments are free again: a new host takes them
  const c = await host(['gate', 'counter']);
  expect(c.runner.heldElsewhere(['gate', 'counter'])).toEqual([]);
  // an operator decides on C (it has the instruments): abort ends it, release lets the queue go on
  await until(() => c.runner.status().interrupted?.task_id === task.id, 'C sees the interrupted task');
  await c.runner.abortNextTask();
  await until(async () => (await queued(task))?.status === 'aborted' && !c.runner.status().busy, 'aborted');
  await c.runner.release();
  await until(async () => (await queued(after))?.status === 'done', 'the queue goes on');
});

it('a host hears at once that another queued a task (PostgreSQL: NOTIFY; SQLite: its next heartbeat)', async () => {
  // on PostgreSQL the lease is long, so only the wake-up can start the task within the wait below
  const leaseMs = store.dialect === 'postgres' ? 60_000 : 400;
  const a = await host(['spare'], leaseMs);
  const b = await host(['gate', 'counter'], leaseMs);
  const definition = Workflow.parse(WORKFLOWS.count);
  const task = await a.runner.enqueue({ name: 'count on B', kind: 'workflow', payload: { workflow: 'count', version: 1, definition, rows: [{}] } as TaskPayload, createdBy: null });
  await until(async () => (await queued(task))?.status === 'done', 'B runs it', 4000);
  expect(await queued(task)).toMatchObject({ hostId: b.runner.host.id });
});

it('a host says which task another host runs, and a control here names that host (control it there)', async () => {
  const a = await host(['gate', 'counter']);
  const b = await host(['spare']);
  const task = await a.runner.submit({ workflow: 'gated', repeat: 1, userId: null });
  await a.state.gateWaiting();
  // (a task is running a moment before its run record exists)
  await until(() => b.runner.status().elsewhere[0]?.run_id != null, "B sees A's task and its run", 5000);
  expect(b.runner.status().elsewhere).toEqual([expect.objectContaining({ task_id: task.id, name: task.name, run_id: expect.any(Number), host: a.runner.host.name })]);
  expect(a.runner.status().elsewhere).toEqual([]);
  const refused = await b.runner.pause().then(
    () => null,
    (e: Error) => e.message,
  );
  expect(refused).toContain(`task ${task.id} ("${task.name}") runs on ${a.runner.host.name}: control it there`);
  a.state.release();
  await until(() => b.runner.status().elsewhere.length === 0, 'B sees it end', 5000);
});

it("a workflow may use another host's instruments: checked against the lab's, queued here, run there", async () => {
  const a = await host(['spare']);
  const b = await host(['gate', 'counter']);
  await until(() => a.runner.catalogue.list!().some((i) => i.name === 'counter'), "A knows B's instruments");
  expect(a.runner.catalogue.schema('counter')).toMatchObject({ name: 'counter', host: b.runner.host.name });
  const task = await a.runner.submit({ workflow: 'count', repeat: 2, userId: null });
  await until(async () => (await queued(task))?.status === 'done', 'B runs it');
  expect(await queued(task)).toMatchObject({ hostId: b.runner.host.id });
  expect(b.state.calls['counter.inc']).toBe(2);
  // an instrument no host drives is still refused, naming the step
  await store.workflows.save('nowhere', { name: 'nowhere', main: [call('thermocycler', 'run')] }, null);
  await expect(a.runner.submit({ workflow: 'nowhere', repeat: 1, userId: null })).rejects.toMatchObject({ code: 'invalid_input' });
  // when B stops, A no longer offers its instruments
  await b.stop();
  await until(() => !a.runner.catalogue.list!().some((i) => i.name === 'counter'), 'A forgets them', 5000);
});

it('a task no one host can start (its instruments split between two) is refused when queued, naming each instrument and its host', async () => {
  const a = await host(['gate']);
  const b = await host(['counter']);
  await until(() => a.runner.catalogue.list!().some((i) => i.name === 'counter'), "A knows B's instruments");
  const before = (await store.queue.open()).length;
  for (const r of [a, b]) {
    const refused = await r.runner.submit({ workflow: 'gated', repeat: 1, userId: null }).then(
      () => null,
      (e: { code: string; message: string; details: unknown; data: unknown }) => e,
    );
    expect(refused).toMatchObject({
      code: 'conflict',
      details: [
        { field: 'counter', message: `driven by ${b.runner.host.name}` },
        { field: 'gate', message: `driven by ${a.runner.host.name}` },
      ],
    });
    expect(refused!.message).toContain(`counter (${b.runner.host.name}), gate (${a.runner.host.name})`);
    expect(refused!.data).toEqual({ instruments: { counter: b.runner.host.name, gate: a.runner.host.name } });
  }
  expect((await store.queue.open()).length).toBe(before); // nothing was queued to wait for ever
  // a task one host can start is still queued on the other (and run there)
  const task = await a.runner.submit({ workflow: 'count', repeat: 1, userId: null });
  await until(async () => (await queued(task))?.status === 'done', 'B runs it');
});

it('a control asked on a host that runs nothing goes to the host running the task (PostgreSQL), whose status comes back', async () => {
  const a = await host(['gate', 'counter']);
  const b = await host(['spare']);
  const task = await a.runner.submit({ workflow: 'gated', repeat: 2, userId: null });
  await a.state.gateWaiting();
  await until(() => b.runner.status().elsewhere.length === 1, "B sees A's task", 5000);
  if (store.dialect !== 'postgres') {
    // SQLite carries no messages between processes: the refusal names the host to control it on
    await expect(b.runner.control('pause')).rejects.toThrow(`runs on ${a.runner.host.name}: control it there`);
    return;
  }
  const paused = await b.runner.control('pause');
  expect(paused).toMatchObject({ paused: true, current_task: { id: task.id } }); // A's status
  expect(a.runner.status().paused).toBe(true);
  a.state.release(); // the call in flight finishes; no new step starts
  await until(() => a.runner.status().state === 'paused', 'A paused between steps');
  expect((await b.runner.control('resume')).paused).toBe(false);
  await a.state.gateWaiting();
  // a control that does not apply there comes back as that host's refusal
  await expect(b.runner.control('continuePauseStep')).rejects.toMatchObject({ code: 'conflict' });
  await b.runner.control('abortNextTask');
  a.state.release();
  await until(async () => (await queued(task))?.status === 'aborted', 'aborted from B');
});

it('a run on another host shows live here (PostgreSQL): its events within a second, in order, once, marked with that host', async () => {
  const a = await host(['spare']);
  const b = await host(['gate', 'counter']);
  const heard: { e: RunnerEvent; at: number }[] = [];
  const sent: { e: RunnerEvent; at: number }[] = [];
  a.runner.on('event', (e: RunnerEvent) => void (e.host !== undefined && heard.push({ e, at: Date.now() })));
  b.runner.on('event', (e: RunnerEvent) => void (e.type !== 'status' && e.type !== 'queue' && sent.push({ e, at: Date.now() })));
  await until(() => a.runner.catalogue.list!().some((i) => i.name === 'gate'), "A knows B's instruments");
  const task = await a.runner.submit({ workflow: 'gated', repeat: 3, userId: null }); // B drives gate and counter
  await b.state.gateWaiting();
  if (store.dialect !== 'postgres') {
    // one process per SQLite file runs tasks: nothing is relayed
    for (let i = 0; i < 3; i++) {
      await b.state.gateWaiting();
      b.state.release();
    }
    await until(async () => (await queued(task))?.status === 'done', 'B finishes it');
    expect(heard).toEqual([]);
    return;
  }
  await until(() => heard.some(({ e }) => e.type === 'step' && e.state === 'start'), "A hears B's step start", 2000);
  // A's status shows B's task with its state and progress, as B relayed them
  await until(() => a.runner.status().elsewhere[0]?.progress?.iteration === 1, "A's status has B's progress", 2000);
  expect(a.runner.status().elsewhere[0]).toMatchObject({ task_id: task.id, host: b.runner.host.name, state: 'running', paused: false, progress: { iteration: 1, iterations: 3 } });
  expect(a.runner.status().busy).toBe(false);
  for (let i = 0; i < 3; i++) {
    await b.state.gateWaiting();
    b.state.release();
  }
  await until(async () => (await queued(task))?.status === 'done', 'B finishes it');
  await until(() => heard.some(({ e }) => e.type === 'run' && e.status === 'completed'), "A hears B's run end", 2000);
  // anything of that run relayed late or twice comes before the next run's first event (one channel, in order)
  const runId = (await queued(task))!.runId!;
  const marker = await a.runner.submit({ workflow: 'gated', repeat: 1, userId: null });
  await b.state.gateWaiting();
  await until(() => heard.some(({ e }) => e.type === 'run' && e.run_id !== runId), "A hears B's next run", 2000);
  expect(heard.every(({ e }) => e.host === b.runner.host.name)).toBe(true);
  const ofRun = (l: { e: RunnerEvent; at: number }[]) => l.filter(({ e }) => 'run_id' in e && e.run_id === runId);
  const [heardRun, sentRun] = [ofRun(heard), ofRun(sent)];
  b.state.release();
  await until(async () => (await queued(marker))?.status === 'done', 'B finishes the next one');
  // the same events, in the same order, each once
  expect(heardRun.map(({ e }) => ({ ...e, host: undefined }))).toEqual(sentRun.map(({ e }) => ({ ...e, host: undefined })));
  expect(sentRun.map(({ e }) => e.type)).toEqual(expect.arrayContaining(['run', 'step', 'log', 'iteration']));
  for (let i = 0; i < sentRun.length; i++) expect(heardRun[i].at - sentRun[i].at).toBeLessThan(1000);
  // B no longer runs anything: its state is let go
  await until(() => a.runner.status().elsewhere.length === 0, 'A sees it end', 5000);
});

it('a direct call to an instrument another host drives goes to it (PostgreSQL): its answer comes back, recorded once, by it', async () => {
  const b = await host(['counter', 'flaky', 'gate']);
  const a = await host(['counter', 'spare']); // its counter is offline: B drives it
  await until(() => a.runner.catalogue.list!().some((i) => i.name === 'flaky'), "A knows B's instruments");
  const here = { userId: null };
  if (store.dialect !== 'postgres') {
    // SQLite carries no messages: offline here, naming the host to call it on
    await expect(a.runner.call('counter', 'inc', {}, here)).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining(b.runner.host.name) });
    await expect(a.runner.call('flaky', 'poke', {}, here)).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining(`driven by ${b.runner.host.name}`) });
    return;
  }
  const done = await a.runner.call('counter', 'inc', { by: 2 }, here);
  expect(done).toEqual({ taskId: expect.any(Number), output: 2, host: b.runner.host.name });
  expect(b.state.calls['counter.inc']).toBe(1);
  expect(a.state.calls['counter.inc']).toBeUndefined();
  expect(await store.steps.recent('counter', 10)).toEqual([expect.objectContaining({ id: done.taskId, status: 'ok', output: 2 })]);
  // B's refusals, as B gave them: bad arguments naming the field, an instrument error with its record
  await expect(a.runner.call('counter', 'inc', { by: 'two' }, here)).rejects.toMatchObject({ code: 'invalid_input', details: [expect.objectContaining({ field: expect.stringContaining('by') })] });
  b.state.flakyFails = 1;
  const failed = await a.runner.call('flaky', 'poke', {}, here).catch((e) => e);
  expect(failed).toMatchObject({ code: 'instrument_error', message: 'flaky failure 1', data: { task_id: expect.any(Number) } });
  expect(await store.steps.get(failed.data.task_id)).toMatchObject({ status: 'error', instrument: 'flaky' });
  // a large output comes back through its record; arguments too large for a message are refused, not sent
  const big = 'x'.repeat(5000);
  const passing = a.runner.call('gate', 'pass', { tag: big }, here);
  await b.state.gateWaiting();
  b.state.release();
  expect((await passing).output).toBe(big);
  await expect(a.runner.call('gate', 'pass', { tag: 'x'.repeat(9000) }, here)).rejects.toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('7800 bytes') });
  expect(b.state.calls['gate.pass']).toBe(1);
  // an instrument B's running task holds: busy (409), from B
  const task = await a.runner.submit({ workflow: 'gated', repeat: 1, userId: null });
  await b.state.gateWaiting();
  await expect(a.runner.call('counter', 'inc', {}, here)).rejects.toMatchObject({ code: 'busy', message: expect.stringContaining(`task ${task.id}`) });
  b.state.release();
  await until(async () => (await queued(task))?.status === 'done', 'B finishes the task');
  expect(b.state.calls['counter.inc']).toBe(2); // the direct call, the task's step: the refused call never ran
});

it('a call whose host goes away mid-call, or never answers, ends with a 503 and is not sent again (PostgreSQL)', async () => {
  if (store.dialect !== 'postgres') return;
  const b = await host(['gate'], 1000);
  const a = await host(['spare'], 1000);
  await until(() => a.runner.catalogue.list!().some((i) => i.name === 'gate'), "A knows B's gate");
  const calling = a.runner.call('gate', 'pass', {}, { userId: null }).catch((e) => e);
  await b.state.gateWaiting();
  b.runner.host.halt(); // B stops heartbeating mid-call, as a killed process
  const gone = await calling;
  // told by B's lease running out (not by the 5 s a call waits for an answer: that message is below)
  expect(gone).toMatchObject({ code: 'unavailable', data: { in_doubt: true }, message: expect.stringContaining(`${b.runner.host.name} went away during gate.pass`) });
  expect(gone.message).not.toMatch(/did not answer within/);
  expect(b.state.calls['gate.pass']).toBe(1);
  // a host with a lease on an instrument but nobody listening: no answer within 5 s → 503, not sent again
  const ghost = new HostLease(store, { kind: 'serve', name: 'ghost pc', leaseMs: 60_000 });
  await ghost.register();
  await ghost.lease([{ name: 'thermo', schema: { name: 'thermo', driver: 'thermo', description: '', source: 'deck', methods: [] } }]);
  await until(() => a.runner.catalogue.list!().some((i) => i.name === 'thermo'), 'A knows the ghost');
  await expect(a.runner.call('thermo', 'run', {}, { userId: null })).rejects.toMatchObject({ code: 'unavailable', message: expect.stringContaining('ghost pc did not answer within 5 s') });
  await ghost.stop();
}, 20_000);

it('a relayed event fits in one NOTIFY: a long log line or a large output is cut and marked (the records keep it whole)', () => {
  const small = { type: 'step', run_id: 1, output: 5 };
  expect(fitEvent(small)).toBe(small);
  const log = fitEvent({ type: 'log', run_id: 1, level: 'info', message: 'y'.repeat(20_000), at: 'now' });
  expect(log).toMatchObject({ type: 'log', run_id: 1, cut: true, message: expect.stringMatching(/^y{1000}… \(cut here/) });
  const step = fitEvent({ type: 'step', run_id: 1, state: 'ok', output: { rows: Array.from({ length: 2000 }, (_, i) => i) } });
  expect(step).toMatchObject({ state: 'ok', cut: true, output: expect.stringMatching(/^\(\d+ bytes: in the run's records\)$/) });
  for (const e of [log, step]) expect(Buffer.byteLength(JSON.stringify(e))).toBeLessThan(MESSAGE_LIMIT);
});
