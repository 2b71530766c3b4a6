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
import { startHttpSink, startSmtpSink, type HttpSink, type SmtpSink } from '../helpers/sinks.js';

const J = 'application/json';
const DECK = fileURLToPath(new URL('../fixtures/notify/deck.ts', import.meta.url));
let lab: TestLab;
let server: Server;
let origin: string;
let sink: HttpSink;
let smtp: SmtpSink;

beforeAll(async () => {
  lab = await startLab({ deck: DECK, approvalTtlMs: 60_000 });
  sink = await startHttpSink();
  smtp = await startSmtpSink();
  server = lab.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await lab.admin
    .put('/app/notifications')
    .set('Accept', J)
    .send({
      lab: 'Lab 7',
      base_url: origin,
      channels: [
        { name: 'hook', kind: 'webhook', url: `${sink.url}/hook`, secret: 'a-long-secret', rate_per_minute: 600 },
        { name: 'chat', kind: 'slack', url: `${sink.url}/slack`, rate_per_minute: 600 },
        { name: 'mail', kind: 'email', host: '127.0.0.1', port: smtp.port, secure: false, from: 'lab@example.org', to: ['night@example.org'], rate_per_minute: 600 },
      ],
      // overdue beyond twice the median of the calls recorded, from the first one on (the overdue test)
      watchdog: { factor: 2, mad_factor: 0, floor_s: 0, min_samples: 1 },
    })
    .expect(200);
}, 30_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await sink?.close();
  await smtp?.close();
  await lab?.close();
});

type Body = { event: string; state: string; id: string; url: string | null };
const hooks = (event: string) => sink.received.filter((r) => r.path === '/hook').map((r) => r.json as Body).filter((b) => b.event === event);
const slack = (event: string) => sink.received.filter((r) => r.path === '/slack').map((r) => (r.json as { text: string }).text).filter((t) => t.includes(` ${event}`));
const mails = (title: string) => smtp.mails.filter((m) => m.subject.includes(title));
/** A mail's text with quoted-printable's soft line breaks and `=3D` undone. */
const textOf = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/gi, '=');

/** Within 5 s of `t0`: the event on the webhook, Slack and mail, `n` of each; the webhook's link answers 200. */
async function everywhere(event: string, title: string, n: number, t0: number): Promise<Body> {
  await until(async () => hooks(event).length >= n && slack(event).length >= n && mails(title).length >= n, 5000);
  expect(Date.now() - t0).toBeLessThanOrEqual(5000);
  const b = hooks(event)[n - 1]!;
  expect(b.url).toMatch(new RegExp(`^${origin}/app/`));
  await lab.admin.get(new URL(b.url!).pathname).expect(200);
  expect(slack(event)[n - 1]).toContain(b.url!);
  expect(textOf(mails(title)[n - 1]!.raw)).toContain(b.url!);
  return b;
}

it('a pause step: on all three with a working link, then its resolution on all three', async () => {
  await lab.admin.post('/app/workflows').set('Accept', J).send({ name: 'paused', main: [{ kind: 'pause', message: 'Load the sample' }] }).expect(201);
  let t0 = Date.now();
  const task = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'paused', repeat: 1 }).expect(200)).body.task_id as number;
  const open = await everywhere('pause_waiting', 'A pause step waits', 1, t0);
  expect(open.state).toBe('open');
  t0 = Date.now();
  await lab.admin.post('/app/executions/continue').set('Accept', J).expect(200);
  await until(async () => hooks('pause_waiting').length === 2 && slack('pause_waiting').length === 2 && mails('Resolved').length >= 1, 5000);
  expect(Date.now() - t0).toBeLessThanOrEqual(5000);
  expect(hooks('pause_waiting')[1]).toMatchObject({ state: 'resolved', id: open.id });
  await until(async () => (await lab.runtime.store.queue.get(task))!.status === 'done');
});

it("an agent's approval request: on all three with a working link, then the decision on all three", async () => {
  const token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'agent', scope: 'mcp' }).expect(201)).body.token as string;
  const t0 = Date.now();
  const res = await fetch(`${origin}/app/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flaky_poke', arguments: {} } }),
  });
  expect(res.status).toBe(200);
  const open = await everywhere('approval_pending', "An agent's request waits", 1, t0);
  const id = Number(/\/approvals\/(\d+)$/.exec(open.url!)![1]);
  const resolvedBefore = mails('Resolved').length;
  await lab.admin.post(`/app/approvals/${id}/reject`).set('Accept', J).send({ reason: 'not tonight' }).expect(200);
  await until(async () => hooks('approval_pending').length === 2 && slack('approval_pending').length === 2 && mails('Resolved').length > resolvedBefore, 5000);
  expect(hooks('approval_pending')[1]).toMatchObject({ state: 'resolved', id: open.id });
});

it('a failed step: on all three with a working link (the run record), then the retry on all three', async () => {
  await lab.admin.post('/app/workflows').set('Accept', J).send({ name: 'poke', main: [{ kind: 'call', instrument: 'flaky', method: 'poke', args: {} }] }).expect(201);
  await lab.admin.post('/app/instruments/flaky').set('Accept', J).send({ method: 'fail_next', args: { n: 1 } }).expect(200);
  const t0 = Date.now();
  const task = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'poke', repeat: 1 }).expect(200)).body.task_id as number;
  const open = await everywhere('step_failed', 'A step failed', 1, t0);
  expect(open.url).toMatch(/\/app\/executions\/records\/\d+$/);
  const resolvedBefore = mails('Resolved').length;
  await lab.admin.post('/app/executions/retry').set('Accept', J).expect(200);
  await until(async () => hooks('step_failed').length === 2 && slack('step_failed').length === 2 && mails('Resolved').length > resolvedBefore, 5000);
  expect(hooks('step_failed')[1]).toMatchObject({ state: 'resolved', id: open.id });
  await until(async () => (await lab.runtime.store.queue.get(task))!.status === 'done');
});

it('an overdue step: on all three with a working link, then resolved on all three when it ends', async () => {
  await lab.admin.post('/app/instruments/slow').set('Accept', J).send({ method: 'work', args: { ms: 50 } }).expect(200);
  await lab.admin.post('/app/workflows').set('Accept', J).send({ name: 'slow-one', main: [{ kind: 'call', instrument: 'slow', method: 'work', args: { ms: { value: 2500 } } }] }).expect(201);
  const t0 = Date.now();
  const task = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'slow-one', repeat: 1 }).expect(200)).body.task_id as number;
  const open = await everywhere('step_overdue', 'A step is overdue', 1, t0);
  const resolvedBefore = mails('Resolved').length;
  await until(async () => hooks('step_overdue').length === 2 && slack('step_overdue').length === 2 && mails('Resolved').length > resolvedBefore, 8000);
  expect(hooks('step_overdue')[1]).toMatchObject({ state: 'resolved', id: open.id });
  await until(async () => (await lab.runtime.store.queue.get(task))!.status === 'done');
});
