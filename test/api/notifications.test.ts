/**
 * The notification routes (docs/notifications.md): GET/PUT /app/notifications for admins (secrets never
 * returned, unknown fields refused by name), the page with its dead channels and "Send a test", a test message
 * that really arrives (an HTTP sink on loopback), each user's own subscription, and an agent's approval
 * request raising approval_pending, resolved by the decision.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { REACTOR, signupAndLogin, startLab, until, type TestLab } from './helpers.js';
import { startHttpSink, type HttpSink } from '../helpers/sinks.js';

let lab: TestLab;
let sink: HttpSink;
let server: Server;
let base: string;
const J = 'application/json';

beforeAll(async () => {
  lab = await startLab({ approvalTtlMs: 60_000 });
  sink = await startHttpSink();
  server = lab.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await sink?.close();
  await lab?.close();
});

const doc = () => ({
  channels: [
    { name: 'hook', kind: 'webhook', url: `${sink.url}/hook`, secret: 'a-long-secret' },
    { name: 'mail', kind: 'email', host: '127.0.0.1', port: 2525, from: 'lab@example.org', to: ['night@example.org'], user: 'lab', password: 'smtp-pass' },
    { name: 'chat', kind: 'slack', url: `${sink.url}/slack`, events: ['step_failed'] },
  ],
  watchdog: { factor: 4, mad_factor: 5, floor_s: 30, min_samples: 5 },
});

describe('GET/PUT /app/notifications', () => {
  it('stores the document; GET never returns a secret, and a PUT without one keeps it', async () => {
    const put = await lab.admin.put('/app/notifications').set('Accept', J).send(doc()).expect(200);
    expect(JSON.stringify(put.body)).not.toContain('a-long-secret');
    expect(JSON.stringify(put.body)).not.toContain('smtp-pass');
    const got = (await lab.admin.get('/app/notifications').set('Accept', J).expect(200)).body;
    expect(JSON.stringify(got)).not.toMatch(/a-long-secret|smtp-pass/);
    expect(got.settings.channels[0]).toMatchObject({ name: 'hook', kind: 'webhook', secret_set: true, events: expect.arrayContaining(['step_failed', 'pause_waiting']) });
    expect(got.settings.channels[0].events).not.toContain('run_completed'); // off by default
    expect(got.settings.channels[1]).toMatchObject({ name: 'mail', password_set: true, port: 2525, secure: false });
    expect(got.settings.watchdog).toEqual({ factor: 4, mad_factor: 5, floor_s: 30, min_samples: 5 });
    // the document as GET shows it, sent back: the secrets stay
    await lab.admin.put('/app/notifications').set('Accept', J).send(got.settings).expect(200);
    const stored = await lab.runtime.notifications.settings();
    expect(stored.channels[0]).toMatchObject({ secret: 'a-long-secret' });
    expect(stored.channels[1]).toMatchObject({ password: 'smtp-pass' });
  });

  it('refuses a bad document naming the field, and unknown fields by name', async () => {
    const bad = doc();
    (bad.channels[0] as Record<string, unknown>).url = 'ftp://nope';
    (bad.channels[2] as Record<string, unknown>).events = ['step_failed', 'coffee_ready'];
    const res = await lab.admin.put('/app/notifications').set('Accept', J).send(bad).expect(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['channels.0.url', 'channels.2.events.1']));
    const unknown = await lab.admin
      .put('/app/notifications')
      .set('Accept', J)
      .send({ ...doc(), colour: 'red' })
      .expect(400);
    expect(unknown.body.error.message).toContain('colour');
    const twice = await lab.admin
      .put('/app/notifications')
      .set('Accept', J)
      .send({ channels: [doc().channels[0], doc().channels[0]] })
      .expect(400);
    expect(twice.body.error.message).toContain('two channels are named "hook"');
    // the page's form, answered to a script: the error as JSON with its status (the page for a browser)
    expect((await lab.admin.post('/app/notifications').type('form').set('Accept', J).send({ document: 'not json' }).expect(400)).body.error.code).toBe('invalid_input');
    expect((await lab.admin.post('/app/notifications').type('form').send({ document: 'not json' }).expect(400)).text).toContain('<form');
  });

  it('is for admins only', async () => {
    const bea = await signupAndLogin(lab.app, 'bea');
    await bea.get('/app/notifications').set('Accept', J).expect(403);
    await bea.put('/app/notifications').set('Accept', J).send(doc()).expect(403);
    await request(lab.app).get('/app/notifications').set('Accept', J).expect(401);
  });

  it('"Send a test" reaches the channel, signed; a channel that refuses it says why (502)', async () => {
    await lab.admin.put('/app/notifications').set('Accept', J).send(doc()).expect(200);
    const ok = await lab.admin.post('/app/notifications/test').set('Accept', J).send({ channel: 'hook' }).expect(200);
    expect(ok.body).toEqual({ channel: 'hook', sent: true });
    const got = sink.received.at(-1)!;
    expect(got.json).toMatchObject({ event: 'test', state: 'open', message: expect.stringContaining('sent by ada') });
    expect(got.headers['x-labdeck-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    sink.status = 500;
    const failed = await lab.admin.post('/app/notifications/test').set('Accept', J).send({ channel: 'chat' }).expect(502);
    sink.status = 200;
    expect(failed.body.error.message).toContain('answered 500');
    await lab.admin.post('/app/notifications/test').set('Accept', J).send({ channel: 'nope' }).expect(404);
    // the page's button: a form, back to the page saying so
    const form = await lab.admin.post('/app/notifications/test').type('form').send({ channel: 'hook' }).expect(302);
    expect(form.headers.location).toContain('/notifications?tested=hook');
  });

  it('the page shows each channel with "Send a test" and a dead channel as dead', async () => {
    await lab.admin
      .put('/app/notifications')
      .set('Accept', J)
      .send({ channels: [{ name: 'gone', kind: 'webhook', url: 'http://127.0.0.1:9/none' }] })
      .expect(200);
    await lab.runtime.store.outbox.write([{ op: 'open', event: 'queue_held', key: 'page-test', payload: { message: 'The queue is held.' } }]);
    lab.runtime.notifications.deliverer.wake();
    await until(async () => ((await lab.admin.get('/app/notifications').set('Accept', J)).body.health as { dead: boolean }[]).some((h) => h.dead));
    const page = await lab.admin.get('/app/notifications').expect(200);
    expect(page.text).toContain('Send a test');
    expect(page.text).toContain('data-dead="true"');
    expect(page.text).toContain('fetch failed: bad port'); // why, with its cause (port 9 is one fetch refuses)
    expect(page.text).toContain('The queue is held.');
    // saving the page's own form as it stands keeps the settings
    const saved = await lab.admin
      .post('/app/notifications')
      .type('form')
      .send({ document: JSON.stringify({ channels: [] }) })
      .expect(302);
    expect(saved.headers.location).toContain('/notifications?saved');
    await lab.admin.post('/app/notifications').type('form').send({ document: '{nope' }).expect(400);
  });
});

describe('a user subscribes to events of their own runs', () => {
  it('sets, reads and ends a subscription; a bad address is refused by name', async () => {
    const cy = await signupAndLogin(lab.app, 'cy');
    const set = await cy
      .put('/app/notifications/me')
      .set('Accept', J)
      .send({ email: 'cy@example.org', events: ['step_failed', 'run_completed'] })
      .expect(200);
    expect(set.body.subscription).toEqual({ email: 'cy@example.org', events: ['step_failed', 'run_completed'] });
    expect((await cy.get('/app/notifications/me').set('Accept', J).expect(200)).body.subscription.email).toBe('cy@example.org');
    const bad = await cy.put('/app/notifications/me').set('Accept', J).send({ email: 'not an address' }).expect(400);
    expect(bad.body.error.details[0].field).toBe('email');
    expect((await cy.post('/app/notifications/me').type('form').set('Accept', J).send({ email: 'not an address' }).expect(400)).body.error.details[0].field).toBe('email');
    await cy.post('/app/notifications/me').type('form').send({ email: '', events: 'step_failed' }).expect(302);
    expect((await cy.get('/app/notifications/me').set('Accept', J).expect(200)).body.subscription).toBeNull();
    expect((await cy.get('/app/notifications/me').expect(200)).text).toContain('My notifications');
  });
});

describe('approval_pending', () => {
  it("an agent's request opens it in the same write; the decision resolves it", async () => {
    const token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'agent', scope: 'mcp' }).expect(201)).body.token as string;
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'pump_dose', arguments: { volume_ml: 1 } } }),
    });
    expect(res.status).toBe(200);
    const pending = (await lab.admin.get('/app/approvals').set('Accept', J).expect(200)).body.pending as { id: number }[];
    const open = (await lab.runtime.store.outbox.open()).filter((r) => r.event === 'approval_pending');
    expect(open).toEqual([expect.objectContaining({ key: `approval_pending:${pending[0]!.id}`, payload: expect.objectContaining({ link: `/app/approvals/${pending[0]!.id}` }) })]);
    await lab.admin.post(`/app/approvals/${pending[0]!.id}/reject`).set('Accept', J).send({ reason: 'not tonight' }).expect(200);
    const rows = (await lab.runtime.store.outbox.recent(20)).filter((r) => r.alertId === open[0]!.alertId);
    expect(rows.map((r) => r.state).sort()).toEqual(['open', 'resolved']);
    expect(rows.find((r) => r.state === 'resolved')!.payload.resolution).toBe('rejected by ada');
  });
});

describe('GET /executions/status', () => {
  it("carries the watchdog's timing: running steps with their expected end, runs with their ETA", async () => {
    const s = (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;
    expect(s.timing).toEqual({ steps: [], runs: [] });
  });
});

describe('campaign_finished', () => {
  it('a campaign that ends tells its best', async () => {
    await lab.runtime.store.workflows.save(REACTOR.name, REACTOR, null);
    await lab.admin
      .post('/app/executions/campaign')
      .type('form')
      .send({ workflow: 'react', repeat: '3', optimizer_type: 'sobol', seed: '3', parameters: 'temperature: 20..120', objectives: 'run.yield:max' })
      .expect(302);
    const finished = async () => (await lab.runtime.store.outbox.recent(50)).find((r) => r.event === 'campaign_finished');
    await until(async () => (await finished()) !== undefined);
    const row = (await finished())!;
    const best = row.payload.best as { objective: string; value: number; iteration: number };
    expect(best).toMatchObject({ objective: 'run.yield', minimize: false });
    const plot = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    expect(best.value).toBe(plot.best_so_far.at(-1).value);
    expect(row.payload.message).toMatch(/^Campaign .* finished\. Best run\.yield \(max\): /);
  });
});
