/**
 * After a restart with an in-doubt step (issue 25): the restarted labdeck made the iteration's instruments
 * again, so GET /executions/status names them, the run page says so and offers Re-run the iteration, and a
 * campaign's plain Retry (POST /executions/retry) runs the whole iteration again, from its first step. The
 * restart is the runner tests' crash: the first labdeck's host is stopped mid-call (it never hears again),
 * and a second labdeck starts on the same data folder and database.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { createApp, type App } from '../../server/app.js';
import { testDbUrl } from '../helpers/db.js';
import { PASSWORD, signupAndLogin, until } from './helpers.js';

const J = 'application/json';
type Gate = (v: string) => void;
const gates = (): Gate[] => ((globalThis as { __rerunGates?: Gate[] }).__rerunGates ??= []);

let dir: string;
let db: Awaited<ReturnType<typeof testDbUrl>>;
const runtimes: { runtime: Runtime; app: App }[] = [];

async function labdeck(deck: string) {
  const runtime = await createRuntime({ dataDir: dir, db: db.url, deck, pluginDirs: [], watch: false });
  const app = await createApp(runtime);
  runtimes.push({ runtime, app });
  return { runtime, app };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labdeck-rerun-'));
  db = await testDbUrl();
});
afterAll(async () => {
  for (const { runtime, app } of runtimes.reverse()) {
    for (const g of gates().splice(0)) g('late'); // the crashed labdeck's call, let go so it can close
    (app.locals.sessionStore as { close(): void }).close();
    await runtime.close();
  }
  await db.drop();
  await rm(dir, { recursive: true, force: true });
});

it('a campaign cut off at a step, restarted: the status and page say its instruments were made again; Retry re-runs the iteration', async () => {
  const deck = join(dir, 'deck.mjs');
  // a meter, and a gate that answers when the test lets it (its calls wait in a list on globalThis)
  await writeFile(
    deck,
    `export const meter = { read(x = 0.5) { return x * 2; } };
export const gate = { pass() { return new Promise((resolve) => (globalThis.__rerunGates ??= []).push(resolve)); } };
`,
  );
  const first = await labdeck(deck);
  const admin = await signupAndLogin(first.app, 'ada');
  const wf = {
    name: 'measure',
    parameters: [{ name: 'x', type: 'number', default: 0.5 }],
    outputs: ['y'],
    main: [
      { kind: 'call', instrument: 'meter', method: 'read', args: { x: { param: 'x' } }, save_as: 'y' },
      { kind: 'call', instrument: 'gate', method: 'pass' },
    ],
  };
  await admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
  const started = await admin
    .post('/app/executions/campaign')
    .set('Accept', J)
    .send({ workflow: 'measure', repeat: 2, optimizer_type: 'random', seed: 4, parameters: 'x: 0..1', objectives: 'y:max' })
    .expect(200);
  const taskId: number = started.body.task_id;
  await until(async () => gates().length === 1);
  gates().shift()!('g0');
  await until(async () => gates().length === 1); // iteration 1's gate: in flight
  const runId = (await first.runtime.store.queue.get(taskId))!.runId!;

  // the crash: the first labdeck stops (no more heartbeats), its call in flight never answered
  const dangling = gates().splice(0);
  first.runtime.runner.host.halt();
  await first.runtime.notifications.close(); // a killed process delivers nothing either
  await first.runtime.store.hosts.stop(first.runtime.runner.host.id);
  const second = await labdeck(deck);
  const op = request.agent(second.app);
  await op.post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);

  const status = (await op.get('/app/executions/status').set('Accept', J).expect(200)).body;
  expect(status.interrupted).toMatchObject({ task_id: taskId, run_id: runId, step: { phase: 'main', iteration: 1, instrument: 'gate' }, remade: ['gate', 'meter'], retry: 'iteration' });
  const page = (await op.get('/app/executions/config').expect(200)).text;
  expect(page).toContain('the instruments of this iteration were re-created since the step ran (gate, meter)');
  const button = /<button[^>]*data-control-name="rerun-iteration"[^>]*>/.exec(page)![0];
  expect(button).not.toContain('disabled');
  expect(button).toContain('/app/executions/rerun-iteration');
  expect(page).toContain('Retry: re-run the iteration');

  // Retry: the iteration again from its first step (the meter is read again), then on
  const after = await op.post('/app/executions/retry').set('Accept', J).expect(200);
  expect(after.body.interrupted).toBeNull();
  await until(async () => gates().length === 1);
  const steps = (await second.runtime.store.runSteps.list(runId)).filter((s) => s.iteration === 1).map((s) => `${s.instrument}.${s.method} ${s.status}`);
  expect(steps).toEqual(['meter.read ok', 'gate.pass in-doubt', 'meter.read ok', 'gate.pass running']);
  gates().shift()!('g1');
  await until(async () => (await second.runtime.store.queue.get(taskId))?.status === 'done');
  const plot = (await op.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
  expect(plot.points).toHaveLength(2);
  const audit = await second.runtime.store.audit.list(20);
  expect(audit.map((a) => a.action)).toContain('runner.retry');
  gates().push(...dangling);
});

it('rerun-iteration and retry-step answer 409 when no interrupted task waits, and are in the API document', async () => {
  const { app } = runtimes.at(-1)!;
  const op = request.agent(app);
  await op.post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
  for (const path of ['/app/executions/rerun-iteration', '/app/executions/retry-step']) {
    const res = await op.post(path).set('Accept', J).expect(409);
    expect(res.body.error.message).toMatch(/no interrupted task waits with an in-doubt step/);
  }
  const doc = (await op.get('/app/openapi.json').expect(200)).body;
  expect(doc.paths['/app/executions/rerun-iteration'].post.operationId).toBe('rerunIteration');
  expect(doc.paths['/app/executions/retry-step'].post.operationId).toBe('retryStep');
});
