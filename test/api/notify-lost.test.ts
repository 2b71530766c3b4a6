/**
 * "Done when" of issue 30, the two waiting states a crash or a cut leaves (docs/notifications.md): a run
 * interrupted with an in-doubt step (`run_interrupted`, and the queue it holds, `queue_held`) and a lost
 * `lab agent` with a call of a run in flight (`host_lost`) each reach a signed webhook, a Slack-compatible
 * endpoint and a real SMTP server within 5 s, with a link that opens the run's page; the operator's retry
 * resolves the interruption, the agent coming back (or, lost again, its run ended) resolves its loss, each
 * on all three.
 *
 * The crash is the runner tests' one: the first labdeck's host is stopped mid-call (it never hears again, and
 * delivers nothing more), and a second labdeck starts on the same data folder and database. One HTTP server
 * serves whichever labdeck is current, so the links (the settings' base_url) stay the same.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { startAgent, type RunningAgent } from '../../cli/agent.js';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { attachAgents } from '../../server/agents.js';
import { createApp, type App } from '../../server/app.js';
import { testDbUrl } from '../helpers/db.js';
import { startChannelSinks, type ChannelSinks } from '../helpers/notify-channels.js';
import { PASSWORD, until } from './helpers.js';

const J = 'application/json';
/** Served by the agent: `slow.work` takes as long as it is told (ended when the agent stops). */
const AGENT_DECK = fileURLToPath(new URL('../fixtures/notify/deck.ts', import.meta.url));
type Gate = (v: string) => void;
const gates = (): Gate[] => ((globalThis as { __notifyGates?: Gate[] }).__notifyGates ??= []);

let dir: string;
let deck: string;
let db: Awaited<ReturnType<typeof testDbUrl>>;
let ch: ChannelSinks;
let server: Server;
let origin: string;
let current: App | null = null;
const labdecks: { runtime: Runtime; app: App }[] = [];
const agents: RunningAgent[] = [];

async function labdeck(): Promise<{ runtime: Runtime; app: App; admin: ReturnType<typeof request.agent> }> {
  const runtime = await createRuntime({ dataDir: dir, db: db.url, deck, pluginDirs: [], watch: false });
  const app = await createApp(runtime);
  labdecks.push({ runtime, app });
  current = app;
  return { runtime, app, admin: request.agent(origin) };
}
const login = (admin: ReturnType<typeof request.agent>) => admin.post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labdeck-notify-lost-'));
  db = await testDbUrl();
  // the lab's own instrument: a gate whose calls answer when the test lets them (a list on globalThis)
  deck = join(dir, 'deck.mjs');
  await writeFile(deck, `export const gate = { pass() { return new Promise((resolve) => (globalThis.__notifyGates ??= []).push(resolve)); } };\n`);
  ch = await startChannelSinks(() => labdecks.at(-1)!.runtime.store.outbox); // (one database for both labdecks)
  server = createServer((req: IncomingMessage, res: ServerResponse) => (current ? current(req, res) : res.writeHead(503).end()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 30_000);
afterAll(async () => {
  for (const a of agents) await a.stop();
  for (const { runtime, app } of labdecks.reverse()) {
    for (const g of gates().splice(0)) g('late'); // the crashed labdeck's call, let go so it can close
    (app.locals.sessionStore as { close(): void }).close();
    await runtime.close();
  }
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await ch?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

let second: Awaited<ReturnType<typeof labdeck>>;
const opens = (admin: ReturnType<typeof request.agent>) => async (path: string) => {
  const res = await admin.get(path).expect(200);
  expect(res.type).toBe('text/html');
};

it('a run interrupted with an in-doubt step: run_interrupted and queue_held on all three, then the retry resolves both', async () => {
  const first = await labdeck();
  await request(origin).post('/app/auth/signup').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
  const admin = first.admin;
  await login(admin);
  await admin.put('/app/notifications').set('Accept', J).send(ch.settings(origin)).expect(200);
  await admin
    .post('/app/workflows')
    .set('Accept', J)
    .send({ name: 'gated', main: [{ kind: 'call', instrument: 'gate', method: 'pass' }] })
    .expect(201);
  const taskId = (await admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'gated', repeat: 1 }).expect(200)).body.task_id as number;
  await until(async () => gates().length === 1); // its call in flight
  const runId = (await first.runtime.store.queue.get(taskId))!.runId!;

  // the crash: no more heartbeats, no more deliveries; its call never answered
  const dangling = gates().splice(0);
  first.runtime.runner.host.halt();
  await first.runtime.notifications.close(0);
  await first.runtime.store.hosts.stop(first.runtime.runner.host.id);
  second = await labdeck();
  await login(second.admin);
  const get = opens(second.admin);
  const interrupted = await ch.everywhere('run_interrupted', 'A run was interrupted and waits for a decision', 1, get);
  expect(interrupted).toMatchObject({ state: 'open', run_id: runId, task_id: taskId, url: `${origin}/app/executions/records/${runId}` });
  expect(interrupted.message).toMatch(/^Interrupted: labdeck stopped during this run/);
  const held = await ch.everywhere('queue_held', 'The queue is held', 1, get);
  expect(held).toMatchObject({ state: 'open', task_id: taskId });
  // the link opens the run's record, which shows the step in doubt
  expect((await second.admin.get(new URL(interrupted.url!).pathname).expect(200)).text).toContain('in-doubt');

  // the operator re-runs the in-doubt step: both resolved, on all three
  await second.admin.post('/app/executions/retry').set('Accept', J).expect(200);
  expect((await ch.resolved(interrupted, 'A run was interrupted and waits for a decision')).resolution).toBe('the operator chose to re-run the in-doubt step');
  expect((await ch.resolved(held, 'The queue is held')).resolution).toBe('the operator chose to re-run the in-doubt step');
  await until(async () => gates().length === 1);
  gates().shift()!('again');
  await until(async () => (await second.runtime.store.queue.get(taskId))!.status === 'done');
  gates().push(...dangling);
}, 60_000);

it('a lost agent with a call of a run in flight: host_lost on all three (the run page), resolved when it is back online, or when its run is ended', async () => {
  attachAgents(server, second.runtime);
  const token = (await second.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'far-pc', scope: 'agent' }).expect(201)).body.token as string;
  const agent = async () => {
    const a = await startAgent({ deck: AGENT_DECK, server: `${origin}/app`, token, name: 'far-pc' }, () => undefined);
    agents.push(a);
    await a.welcomed;
    return a;
  };
  const a = await agent();
  await second.admin
    .post('/app/workflows')
    .set('Accept', J)
    .send({ name: 'far-slow', main: [{ kind: 'call', instrument: 'slow', method: 'work', args: { ms: { value: 600_000 } } }] })
    .expect(201);
  const taskId = (await second.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'far-slow', repeat: 1 }).expect(200)).body.task_id as number;
  await until(async () => (await second.admin.get('/app/executions/status').set('Accept', J).expect(200)).body.timing.steps.length === 1); // its call in flight on the agent
  const runId = (await second.runtime.store.queue.get(taskId))!.runId!;
  await a.stop();
  agents.splice(agents.indexOf(a), 1);
  const lost = await ch.everywhere('host_lost', 'A host or agent was lost', 1, opens(second.admin));
  expect(lost).toMatchObject({
    state: 'open',
    host: 'far-pc',
    run_id: runId,
    task_id: taskId,
    url: `${origin}/app/executions/records/${runId}`,
    instruments: expect.arrayContaining(['slow', 'flaky']),
  });
  expect(lost.message).toContain(`The agent far-pc went away with a call in flight (run ${runId})`);
  const back = await agent();
  expect((await ch.resolved(lost, 'A host or agent was lost')).resolution).toBe('the agent far-pc is connected again');

  // the call it cut is a failed step of the run: retried, in flight on the agent again, and the agent lost again
  const status = async () => (await second.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;
  await until(async () => (await status()).state === 'failed');
  await second.admin.post('/app/executions/retry').set('Accept', J).expect(200);
  await until(async () => (await status()).timing.steps.length === 1);
  await back.stop();
  agents.splice(agents.indexOf(back), 1);
  const again = await ch.everywhere('host_lost', 'A host or agent was lost', 2, opens(second.admin));
  expect(again).toMatchObject({ run_id: runId });
  expect(again.id).not.toBe(lost.id);
  // this time the work is settled without it: the run is ended, which resolves it
  await until(async () => (await status()).state === 'failed');
  await second.admin.post('/app/executions/abort/next-task').set('Accept', J).expect(200);
  expect((await ch.resolved(again, 'A host or agent was lost')).resolution).toBe('the run ended: aborted');
  await until(async () => (await second.runtime.store.queue.get(taskId))!.status === 'aborted');
}, 60_000);
