/**
 * "Done when" of issue 30 through a whole labdeck (docs/notifications.md): a pause step, an agent's approval
 * request, a failed step and an overdue step each reach a signed webhook, an SMTP inbox and a Slack-compatible endpoint (real
 * receivers on loopback) within 5 s, with a link that opens the page it names, and each one's resolution
 * follows on all three.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startLab, until, type TestLab } from './helpers.js';
import { startChannelSinks, type ChannelSinks } from '../helpers/notify-channels.js';

const J = 'application/json';
const DECK = fileURLToPath(new URL('../fixtures/notify/deck.ts', import.meta.url));
let lab: TestLab;
let server: Server;
let origin: string;
let ch: ChannelSinks;

beforeAll(async () => {
  lab = await startLab({ deck: DECK, approvalTtlMs: 60_000 });
  ch = await startChannelSinks(() => lab.runtime.store.outbox);
  server = lab.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // overdue beyond twice the median of the calls recorded, from the first one on (the overdue test)
  await lab.admin
    .put('/app/notifications')
    .set('Accept', J)
    .send(ch.settings(origin, { watchdog: { factor: 2, mad_factor: 0, floor_s: 0, min_samples: 1 } }))
    .expect(200);
}, 30_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await ch?.close();
  await lab?.close();
});

const PAUSE = 'A pause step waits for the operator';
const APPROVAL = "An agent's request waits for approval";
const FAILED = 'A step failed and waits for a decision';
const OVERDUE = 'A step is overdue';
const get = async (path: string) => lab.admin.get(path).expect(200);
/** Within 5 s of the state change: the event on the webhook, Slack and mail, `n` of each; the webhook's link answers 200. */
const everywhere = (event: string, title: string, n: number) => ch.everywhere(event, title, n, get);

it('a pause step: on all three with a working link, then its resolution on all three', async () => {
  await lab.admin
    .post('/app/workflows')
    .set('Accept', J)
    .send({ name: 'paused', main: [{ kind: 'pause', message: 'Load the sample' }] })
    .expect(201);
  const task = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'paused', repeat: 1 }).expect(200)).body.task_id as number;
  const open = await everywhere('pause_waiting', PAUSE, 1);
  expect(open.state).toBe('open');
  await lab.admin.post('/app/executions/continue').set('Accept', J).expect(200);
  expect(await ch.resolved(open, PAUSE)).toMatchObject({ state: 'resolved', id: open.id, resolution: 'the operator continued' });
  await until(async () => (await lab.runtime.store.queue.get(task))!.status === 'done');
});

it("an agent's approval request: on all three with a working link, then the decision on all three", async () => {
  const token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'agent', scope: 'mcp' }).expect(201)).body.token as string;
  const res = await fetch(`${origin}/app/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flaky_poke', arguments: {} } }),
  });
  expect(res.status).toBe(200);
  const open = await everywhere('approval_pending', APPROVAL, 1);
  const id = Number(/\/approvals\/(\d+)$/.exec(open.url!)![1]);
  await lab.admin.post(`/app/approvals/${id}/reject`).set('Accept', J).send({ reason: 'not tonight' }).expect(200);
  expect(await ch.resolved(open, APPROVAL)).toMatchObject({ state: 'resolved', id: open.id, resolution: expect.stringContaining('rejected') });
});

it('a failed step: on all three with a working link (the run record), then the retry on all three', async () => {
  await lab.admin
    .post('/app/workflows')
    .set('Accept', J)
    .send({ name: 'poke', main: [{ kind: 'call', instrument: 'flaky', method: 'poke', args: {} }] })
    .expect(201);
  await lab.admin
    .post('/app/instruments/flaky')
    .set('Accept', J)
    .send({ method: 'fail_next', args: { n: 1 } })
    .expect(200);
  const task = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'poke', repeat: 1 }).expect(200)).body.task_id as number;
  const open = await everywhere('step_failed', FAILED, 1);
  expect(open.url).toMatch(/\/app\/executions\/records\/\d+$/);
  await lab.admin.post('/app/executions/retry').set('Accept', J).expect(200);
  expect(await ch.resolved(open, FAILED)).toMatchObject({ state: 'resolved', id: open.id, resolution: 'the step was retried' });
  await until(async () => (await lab.runtime.store.queue.get(task))!.status === 'done');
});

it('an overdue step: on all three with a working link, then resolved on all three when it ends', async () => {
  await lab.admin
    .post('/app/instruments/slow')
    .set('Accept', J)
    .send({ method: 'work', args: { ms: 50 } })
    .expect(200);
  await lab.admin
    .post('/app/workflows')
    .set('Accept', J)
    .send({ name: 'slow-one', main: [{ kind: 'call', instrument: 'slow', method: 'work', args: { ms: { value: 2500 } } }] })
    .expect(201);
  const task = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'slow-one', repeat: 1 }).expect(200)).body.task_id as number;
  const open = await everywhere('step_overdue', OVERDUE, 1);
  // the step ends within its 2.5 s: the resolution follows within 5 s of that (its outbox row)
  expect(await ch.resolved(open, OVERDUE)).toMatchObject({ state: 'resolved', id: open.id, resolution: expect.stringMatching(/^the step ended after/) });
  await until(async () => (await lab.runtime.store.queue.get(task))!.status === 'done');
});
