/**
 * Two labdecks on one database, over HTTP (issue 13 items 3 and 4): server B drives the demo deck, server A
 * drives nothing. On A's pages and API, B's instruments are there with the PC they live on, and a direct call
 * to one goes to B, which makes and records it; B's runs show live on A's event stream, marked with B.
 * PostgreSQL carries both (NOTIFY); on SQLite (one PC, nothing relayed) a call on A answers 503 naming B.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp, type App } from '../../server/app.js';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import type { RunnerEvent } from '../../core/runner/index.js';
import { testDbUrl, usingPostgres } from '../helpers/db.js';
import { takeEvents } from '../helpers/sse.js';
import { REACTOR, signupAndLogin, until } from './helpers.js';

const J = 'application/json';
/** Iterations of the run B makes while A watches: long enough (~0.5 s) for B's progress to reach A's status, which it tells at most every 100 ms. */
const RUNS = 10;
let dataDir: string;
let db: Awaited<ReturnType<typeof testDbUrl>>;
let a: Runtime;
let b: Runtime;
let app: App;
let admin: ReturnType<typeof request.agent>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'labdeck-labs-'));
  db = await testDbUrl();
  const common = { dataDir, db: db.url, watch: false, pluginDirs: [] };
  b = await createRuntime({ ...common, labHost: { kind: 'serve', name: 'lab serve on pc-b', leaseMs: 2000 } });
  a = await createRuntime({ ...common, deck: false, labHost: { kind: 'serve', name: 'lab serve on pc-a', leaseMs: 2000 } });
  app = await createApp(a);
  admin = await signupAndLogin(app, 'ada');
  // A learns B's instruments from the database: on a loaded machine the first heartbeats take their time
  await until(async () => a.runner.catalogue.list!().some((i) => i.name === 'pump'), 50_000);
}, 60_000);
afterAll(async () => {
  (app.locals.sessionStore as { close(): void }).close();
  await a.close();
  await b.close();
  await db.drop();
  await rm(dataDir, { recursive: true, force: true });
});

it("shows B's instruments on A with the PC they live on, and their pages", async () => {
  const list = await admin.get('/app/instruments/').set('Accept', J).expect(200);
  expect(list.body.instruments.find((i: { name: string }) => i.name === 'pump')).toMatchObject({ host: 'lab serve on pc-b', methods: expect.arrayContaining(['dose']) });
  const page = await admin.get('/app/instruments/pump').expect(200);
  expect(page.text).toContain('on lab serve on pc-b');
});

it("A's home page lists every instrument its Instruments page lists, B's too", async () => {
  const list = await admin.get('/app/instruments/').set('Accept', J).expect(200);
  const names: string[] = list.body.instruments.map((i: { name: string }) => i.name);
  expect(names).toContain('pump');
  const home = await admin.get('/app/').expect(200);
  const cards = home.text.slice(home.text.indexOf('id="home-instruments"'));
  for (const n of names) expect(cards).toContain(`href="/app/instruments/${n}"`);
  expect(cards).toContain('on lab serve on pc-b');
});

it("a workflow using B's pump and an instrument only A drives is refused when queued: 409 naming each instrument and who drives it", async () => {
  await a.deck.connect('sim-noop', 'a_noop', {});
  await until(async () => (await a.store.hosts.catalogue()).some((i) => i.name === 'a_noop'));
  await a.store.workflows.save(
    'split',
    {
      name: 'split',
      main: [
        { kind: 'call', instrument: 'a_noop', method: 'ping', args: {} },
        { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: 1 } } },
      ],
    },
    null,
  );
  const before = (await a.store.queue.open()).length;
  const res = await admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'split', repeat: 1 }).expect(409);
  expect(res.body.error.message).toContain('a_noop (lab serve on pc-a), pump (lab serve on pc-b)');
  expect(res.body.error.details).toEqual([
    { field: 'a_noop', message: 'driven by lab serve on pc-a' },
    { field: 'pump', message: 'driven by lab serve on pc-b' },
  ]);
  expect((await a.store.queue.open()).length).toBe(before);
});

// each dialect runs the tests that are about it (PostgreSQL relays between labdecks; SQLite is one PC's)
if (usingPostgres())
  describe('PostgreSQL: A asks B', () => {
    it('a direct call on A is made by B, recorded once by B, and its answer comes back', async () => {
      const before = (await a.store.steps.recent('pump', 50)).length;
      const res = await admin
        .post('/app/instruments/pump')
        .set('Accept', J)
        .send({ method: 'dose', args: { volume_ml: 1.5 } })
        .expect(200);
      expect(res.body).toEqual({ task_id: expect.any(Number), output: expect.anything() });
      const record = await admin.get(`/app/instruments/task/${res.body.task_id}`).set('Accept', J).expect(200);
      expect(record.body).toMatchObject({ instrument: 'pump', method: 'dose', args: { volume_ml: 1.5 }, status: 'ok' });
      expect((await a.store.steps.recent('pump', 50)).length).toBe(before + 1);
      // the page's form too
      const form = await admin.post('/app/instruments/pump').type('form').send({ method: 'dose', volume_ml: '2' }).expect(200);
      expect(form.text).toContain('dose');
    });

    it("B's refusals come back as B gave them: 400 naming the field, 502 with the record, 409 busy; 413 for a body too large to send", async () => {
      const bad = await admin
        .post('/app/instruments/pump')
        .set('Accept', J)
        .send({ method: 'dose', args: { volume_ml: -1 } })
        .expect(400);
      expect(bad.body.error.details[0].field).toBe('volume_ml');
      await admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'jam', args: {} }).expect(200);
      const jammed = await admin
        .post('/app/instruments/pump')
        .set('Accept', J)
        .send({ method: 'dose', args: { volume_ml: 1 } })
        .expect(502);
      expect(jammed.body.error.message).toContain('pump jammed');
      expect(await a.store.steps.get(jammed.body.task_id)).toMatchObject({ status: 'error', instrument: 'pump' });
      b.deck.lock(['hotplate'], 'task-7');
      try {
        const busy = await admin.post('/app/instruments/hotplate').set('Accept', J).send({ method: 'temperature', args: {} }).expect(409);
        expect(busy.body.error.code).toBe('busy');
      } finally {
        b.deck.unlock('task-7');
      }
      const large = await admin
        .post('/app/instruments/pump')
        .set('Accept', J)
        .send({ method: 'dose', args: { volume_ml: 1, note: 'x'.repeat(9000) } })
        .expect(413);
      expect(large.body.error.message).toContain('at most 7800 bytes');
    });

    describe("B's runs on A's event stream", () => {
      let server: Server;
      let base: string;
      let token: string;
      beforeAll(async () => {
        token = (await admin.post('/app/account/tokens').set('Accept', J).send({ name: 'sse' }).expect(201)).body.token;
        server = app.listen(0);
        await new Promise((r) => server.once('listening', r));
        base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      });
      afterAll(async () => {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      });

      it('streams the steps, log lines, iterations and end of a run on B, in order, once, marked with B; status shows its progress', async () => {
        await a.store.workflows.save('react', REACTOR, null);
        const onB: RunnerEvent[] = [];
        const mark = (e: RunnerEvent) => void (['step', 'log', 'iteration', 'run'].includes(e.type) && onB.push(e));
        b.runner.on('event', mark);
        const controller = new AbortController();
        const timer = setTimeout(() => controller.abort(), 10_000);
        const events: { event: string; data: Record<string, unknown> }[] = [];
        let taskId = 0;
        try {
          const res = await fetch(`${base}/app/executions/events`, { headers: { Authorization: `Bearer ${token}` }, signal: controller.signal });
          const reader = res.body!.getReader();
          const decoder = new TextDecoder();
          let buffer = '';
          const ended = () => events.some((e) => e.event === 'run' && e.data.task_id === taskId && e.data.status === 'completed');
          while (!ended()) {
            const { value, done } = await reader.read();
            if (done) break;
            const got = takeEvents(buffer + decoder.decode(value, { stream: true }));
            buffer = got.rest;
            events.push(...got.events);
            // queued through A, which drives nothing: B runs it
            if (!taskId && events.length) taskId = (await a.runner.submit({ workflow: 'react', repeat: RUNS, userId: null })).id;
          }
        } finally {
          clearTimeout(timer);
          controller.abort();
          b.runner.off('event', mark);
        }
        const relayed = events.filter((e) => ['step', 'log', 'iteration', 'run'].includes(e.event));
        expect(relayed.every((e) => e.data.host === 'lab serve on pc-b')).toBe(true);
        // what B's runner told its own listeners of this run, in that order, each once
        const runId = relayed[0].data.run_id;
        expect(relayed.map((e) => ({ ...e.data, host: undefined }))).toEqual(
          onB.filter((e) => (e as { run_id?: unknown }).run_id === runId).map((e) => JSON.parse(JSON.stringify({ ...e, host: undefined }))),
        );
        expect(relayed.filter((e) => e.event === 'step').map((e) => `${e.data.iteration}:${e.data.state}`)).toEqual(Array.from({ length: RUNS }, (_, i) => [`${i}:start`, `${i}:ok`]).flat());
        // A's status, as its stream sent it while B ran: the task, on B, with its progress
        const progress = events.filter((e) => e.event === 'status').map((e) => (e.data.status as { elsewhere: { task_id: number; host: string; progress?: { iteration: number } }[] }).elsewhere[0]);
        expect(progress).toContainEqual(expect.objectContaining({ task_id: taskId, host: 'lab serve on pc-b', state: 'running', progress: expect.objectContaining({ iterations: RUNS }) }));
      }, 20_000);
    });

    it("an AI agent on A gets B's instruments as tools: a read-only call is made by B at once, a hazardous one after a person approves it on A", async () => {
      const token = (await admin.post('/app/account/tokens').set('Accept', J).send({ name: 'claude', scope: 'mcp' }).expect(201)).body.token as string;
      const rpc = async (id: number, method: string, params: unknown) => {
        const res = await request(app)
          .post('/app/mcp')
          .set('Authorization', `Bearer ${token}`)
          .set('Accept', 'application/json, text/event-stream')
          .send({ jsonrpc: '2.0', id, method, params })
          .expect(200);
        return res.body.result as { tools?: { name: string; description: string }[]; content?: { text: string }[]; isError?: boolean };
      };
      const tools = (await rpc(1, 'tools/list', {})).tools!;
      expect(tools.find((t) => t.name === 'pump_status')?.description).toContain('on the PC lab serve on pc-b');
      const before = (await a.store.steps.recent('pump', 100)).length;
      const status = JSON.parse((await rpc(2, 'tools/call', { name: 'pump_status', arguments: {} })).content![0].text);
      expect(await a.store.steps.get(status.task_id)).toMatchObject({ instrument: 'pump', method: 'status', status: 'ok' });
      const asked = JSON.parse((await rpc(3, 'tools/call', { name: 'pump_dose', arguments: { volume_ml: 0.5 } })).content![0].text);
      expect(asked.state).toBe('pending');
      expect((await a.store.steps.recent('pump', 100)).length).toBe(before + 1);
      const decided = await admin.post(`/app/approvals/${asked.approval_id}/approve`).set('Accept', J).send({}).expect(200);
      await until(async () => (await a.approvals.get(asked.approval_id)).outcome !== null);
      const outcome = (await a.approvals.get(asked.approval_id)).outcome as { task_id: number };
      expect(decided.body.state).toBe('approved');
      expect(await a.store.steps.get(outcome.task_id)).toMatchObject({ instrument: 'pump', method: 'dose', args: { volume_ml: 0.5 }, status: 'ok' });
      expect((await a.store.steps.recent('pump', 100)).length).toBe(before + 2);
    }, 20_000);
  });

if (!usingPostgres())
  describe('SQLite: nothing is relayed', () => {
    it("a call on A to B's instrument answers 503 naming B", async () => {
      const res = await admin
        .post('/app/instruments/pump')
        .set('Accept', J)
        .send({ method: 'dose', args: { volume_ml: 1 } })
        .expect(503);
      expect(res.body.error.message).toContain('driven by lab serve on pc-b');
    });
  });

it("an input step of a run B makes is on A's attention list, naming B; the value given on A (PostgreSQL: relayed to B) completes it", async () => {
  await a.store.workflows.save(
    'ph-on-b',
    {
      name: 'ph-on-b',
      outputs: ['pH'],
      main: [
        { kind: 'call', instrument: 'pump', method: 'status', args: {} },
        { kind: 'input', prompt: 'Read the pH', save_as: 'pH', schema: { type: 'number', minimum: 0, maximum: 14 } },
      ],
    },
    null,
  );
  const { task_id } = (await admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'ph-on-b', repeat: 1 }).expect(200)).body;
  const listed = async () =>
    ((await admin.get('/app/attention').set('Accept', J).expect(200)).body.items as { kind: string; task_id: number; host: string }[]).find((i) => i.kind === 'input' && i.task_id === task_id);
  await until(async () => (await listed()) !== undefined);
  expect(await listed()).toMatchObject({ host: 'lab serve on pc-b' });
  if (usingPostgres()) {
    // A knows B's task waits for input once B has relayed its status
    await until(async () => !!(await admin.get('/app/executions/status').set('Accept', J)).body.elsewhere.find((t: { task_id: number; input?: unknown }) => t.task_id === task_id)?.input);
    await admin.post('/app/executions/input').set('Accept', J).send({ value: 15 }).expect(400);
    const given = await admin.post('/app/executions/input').set('Accept', J).send({ value: 7.2 }).expect(200);
    expect(given.body).toMatchObject({ task_id, value: 7.2 });
  } else {
    await admin.post('/app/executions/input').set('Accept', J).send({ value: 7.2 }).expect(409); // nothing relayed: give it on B
    await b.runner.input(7.2, { by: { id: null, username: 'ada' } });
  }
  await until(async () => (await a.store.queue.get(task_id))?.status === 'done');
  expect(await listed()).toBeUndefined();
}, 20_000);
