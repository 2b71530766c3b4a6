/**
 * Instruments on other PCs (issue 13 item 3): `lab agent` connects out to a real labdeck HTTP server over a
 * WebSocket with an agent token and serves its deck (TypeScript and Python); the server relays calls and
 * records them. An agent that drops takes its instruments offline (a call in flight: 503, in-doubt), and all
 * comes back when it connects again. Tokens: only an admin makes agent tokens; an agent token opens nothing
 * else; a user's token, a revoked one or none → 401 before the upgrade.
 */
import type { Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { startAgent, type RunningAgent } from '../../cli/agent.js';
import { attachAgents } from '../../server/agents.js';
import { signupAndLogin, startLab, type TestLab } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

const tsDeck = fileURLToPath(new URL('../fixtures/runner/deck.ts', import.meta.url));
const pyDeck = fileURLToPath(new URL('../fixtures/python/deck.py', import.meta.url));

let lab: TestLab;
let server: Server;
let base: string;
let userToken: string;
let agentToken: string;
const agents: RunningAgent[] = [];
const lines: string[] = [];

beforeAll(async () => {
  lab = await startLab({ deck: false });
  server = lab.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  attachAgents(server, lab.runtime, { pingMs: 500 }); // a cut or a revocation is found within a ping
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
  userToken = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'me' }).expect(201)).body.token;
  const made = await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'pc-2', scope: 'agent' }).expect(201);
  expect(made.body).toMatchObject({ scope: 'agent' });
  agentToken = made.body.token;
}, 30_000);
afterAll(async () => {
  for (const a of agents) await a.stop();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await lab?.close();
});

const api = async (method: string, path: string, body?: unknown, token = userToken) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};
const agent = async (deck: string, name: string) => {
  const a = await startAgent({ deck, server: base, token: agentToken, name }, (l) => lines.push(l));
  agents.push(a);
  await a.welcomed;
  return a;
};
const until = (cond: () => Promise<boolean>, what: string, ms = 10_000) => waitFor(cond, what, ms, 20);

describe('agent tokens', () => {
  it('only an admin makes one, and it opens nothing but the agent endpoint', async () => {
    const ben = await signupAndLogin(lab.app, 'ben');
    const refused = await ben.post('/app/account/tokens').set('Accept', 'application/json').send({ scope: 'agent' }).expect(403);
    expect(refused.body.error.details).toEqual([{ field: 'scope', message: 'admins only' }]);
    const r = await api('GET', '/executions/status', undefined, agentToken);
    expect(r.status).toBe(401);
    expect(r.body.error.message).toMatch(/agent token/);
    const list = await lab.admin.get('/app/account').set('Accept', 'application/json').expect(200);
    expect(list.body.tokens.map((t: { scope: string }) => t.scope).sort()).toEqual(['agent', 'user']);
  });

  it.each([
    ['no token', {}],
    ["a user's token", { Authorization: `Bearer USER` }],
    ['an unknown agent token', { Authorization: 'Bearer labagent_nope' }],
  ])('refuses %s with 401 before the upgrade', async (_what, headers: Record<string, string>) => {
    const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace('USER', userToken)]));
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/agent`, { headers: h });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => reject(new Error('connected')));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(401);
  });
});

describe('an agent serving a TypeScript deck', () => {
  let a: RunningAgent;
  beforeAll(async () => {
    a = await agent(tsDeck, 'pc-2');
  }, 30_000);

  it('puts its instruments on the lab with the PC they live on; calls are relayed and recorded', async () => {
    const list = (await api('GET', '/instruments')).body.instruments as { name: string; host?: string }[];
    expect(list.find((i) => i.name === 'counter')).toMatchObject({ host: 'pc-2' });
    for (const page of ['/app/instruments/', '/app/instruments/counter', '/app/']) {
      const html = (await lab.admin.get(page).expect(200)).text;
      expect(html).toMatch(/class="badge[^"]*instrument-host"[^>]*>on pc-2</);
    }
    const r = await api('POST', '/instruments/counter', { method: 'inc', args: { by: 2 } });
    expect(r.status).toBe(200);
    expect(r.body.output).toBe(2);
    const rec = await api('GET', `/instruments/task/${r.body.task_id}`);
    expect(rec.body).toMatchObject({ instrument: 'counter', method: 'inc', args: { by: 2 }, output: 2, status: 'ok' });
    // bad arguments are refused here, before the agent is asked
    const bad = await api('POST', '/instruments/counter', { method: 'inc', args: { by: 'two' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('by');
  });

  it('a second agent with the same name is refused; one that drops: offline, its call in flight in-doubt; back when it returns', async () => {
    const twin = await startAgent({ deck: tsDeck, server: base, token: agentToken, name: 'pc-2' }, (l) => lines.push(l));
    await until(async () => lines.some((l) => /agent pc-2: the server refused this agent: An agent named pc-2 is connected already/.test(l)), 'the twin refused');
    await twin.stop();

    const slow = api('POST', '/instruments/slow', { method: 'work', args: { ms: 3000 } });
    await until(async () => lab.runtime.agents.inFlight('pc-2') === 1, 'the call to be sent to the agent');
    await a.stop();
    const cut = await slow;
    expect(cut.status).toBe(503);
    expect(cut.body).toMatchObject({ in_doubt: true, instrument: 'slow' });
    expect((await api('GET', `/instruments/task/${cut.body.task_id}`)).body.status).toBe('in-doubt');
    const off = await api('POST', '/instruments/counter', { method: 'read', args: {} });
    expect(off.status).toBe(503);
    expect(off.body.error.message).toMatch(/the agent pc-2 is not connected/);
    // lost with a call in flight: a person is told (docs/notifications.md), and told again when it is back
    const lost = async () => (await lab.runtime.store.outbox.recent(50)).filter((r) => r.key === 'host_lost:agent:pc-2').map((r) => r.state);
    await until(async () => (await lost()).includes('open'), 'host_lost opened');

    a = await agent(tsDeck, 'pc-2');
    await until(async () => (await lost()).includes('resolved'), 'host_lost resolved');
    const back = await api('POST', '/instruments/counter', { method: 'inc', args: {} });
    expect(back.status).toBe(200);
    expect(back.body.output).toBe(1); // a new process: its own counter
  });
});

describe('an agent serving a Python deck', () => {
  it('serves the deck unchanged (an ivoryOS script), with the schemas read from Python', async () => {
    await agent(pyDeck, 'hplc-pc');
    const pump = (await api('GET', '/instruments')).body.instruments.find((i: { name: string }) => i.name === 'pump');
    expect(pump).toMatchObject({ host: 'hplc-pc' });
    const r = await api('POST', '/instruments/pump', { method: 'dose', args: { volume_ml: 1.5 } });
    expect(r.status).toBe(200);
    expect(typeof r.body.output).toBe('number');
  }, 30_000);
});

describe('a connection cut without a word (a pulled cable)', () => {
  it('the server finds it by its pings: offline within seconds; back once the agent connects again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-agent-'));
    const deck = join(dir, 'cabled.mjs');
    await writeFile(deck, "export const probe = { ping() { return 'pong'; } };\n");
    // a TCP relay between the agent and the server that can stop passing bytes without closing anything
    let cut = false;
    const sockets: Socket[] = [];
    const relay = createServer((client) => {
      const upstream = connect((server.address() as AddressInfo).port, '127.0.0.1');
      sockets.push(client, upstream);
      client.on('data', (b) => cut || upstream.write(b));
      upstream.on('data', (b) => cut || client.write(b));
      for (const [s, other] of [
        [client, upstream],
        [upstream, client],
      ]) {
        s.on('close', () => other.destroy());
        s.on('error', () => other.destroy());
      }
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    try {
      const via = `http://127.0.0.1:${(relay.address() as AddressInfo).port}/app`;
      const a = await startAgent({ deck, server: via, token: agentToken, name: 'cabled-pc' }, (l) => lines.push(l));
      agents.push(a);
      await a.welcomed;
      const probe = async () => ((await api('GET', '/instruments')).body.instruments as { name: string; host?: string; offline?: string }[]).find((i) => i.name === 'probe');
      expect(await probe()).toMatchObject({ host: 'cabled-pc' });
      expect((await api('POST', '/instruments/probe', { method: 'ping', args: {} })).body.output).toBe('pong');
      cut = true; // nothing more gets through, and nobody closes anything
      await until(async () => !!(await probe())?.offline, 'the server to find the cut', 20_000);
      expect((await probe())!.offline).toMatch(/the agent cabled-pc is not connected \(connection lost/);
      cut = false;
      await until(async () => (await probe())?.offline === undefined, 'the agent back', 30_000);
      expect((await api('POST', '/instruments/probe', { method: 'ping', args: {} })).body.output).toBe('pong');
    } finally {
      for (const s of sockets) s.destroy();
      relay.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a revoked agent token', () => {
  it('lets its connected agent go within a ping, and its reconnections get 401', async () => {
    const made = await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'short-lived', scope: 'agent' }).expect(201);
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-agent-'));
    const deck = join(dir, 'revoked.mjs');
    await writeFile(deck, "export const doomed = { ping() { return 'pong'; } };\n");
    try {
      const a = await startAgent({ deck, server: base, token: made.body.token, name: 'revoked-pc' }, (l) => lines.push(l));
      agents.push(a);
      await a.welcomed;
      await lab.admin.post(`/app/account/tokens/${made.body.id}/delete`).set('Accept', 'application/json').expect(204);
      await until(async () => lines.some((l) => /agent revoked-pc: the server refused this agent: The agent token was revoked/.test(l)), 'the agent let go', 15_000);
      await until(async () => lines.some((l) => /agent revoked-pc: the server refused the connection \(401\)/.test(l)), 'its reconnection refused', 15_000);
      const doomed = ((await api('GET', '/instruments')).body.instruments as { name: string; offline?: string }[]).find((i) => i.name === 'doomed');
      expect(doomed?.offline).toMatch(/the agent revoked-pc is not connected/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
