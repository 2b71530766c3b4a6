/**
 * Hostile instrument PCs (issue 26): a compromised PC with an agent token speaks the agent protocol by hand.
 * It must not end the server (every message is checked against the protocol; a bad one closes that connection
 * with a reason), pose as another PC (an agent's name belongs to the first token that connected under it, or
 * to the token an admin made for it), or make pages and MCP fail with what it describes (depth, size, names,
 * patterns that would stall the event loop).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { attachAgents } from '../../server/agents.js';
import { startLab, type TestLab } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

let lab: TestLab;
let server: Server;
let base: string;
let userToken: string;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  // a short bound on relayed calls, for the agent that never answers
  lab = await startLab({ deck: false, agentCallTimeoutMs: 1500 });
  server = lab.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  attachAgents(server, lab.runtime);
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
  userToken = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'me' }).expect(201)).body.token;
  for (const name of ['pc-a', 'pc-b']) {
    tokens[name] = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name, scope: 'agent' }).expect(201)).body.token;
  }
}, 30_000);
const opened: WebSocket[] = [];
afterAll(async () => {
  for (const ws of opened) ws.terminate();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await lab?.close();
});

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${userToken}`, Accept: 'application/json', 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};

/** A raw agent connection: what it was sent, and how it ended. */
interface Raw {
  ws: WebSocket;
  received: Record<string, unknown>[];
  open: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  next(type: string): Promise<Record<string, unknown>>;
}
function raw(token: string): Raw {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/agent`, { headers: { Authorization: `Bearer ${token}` } });
  opened.push(ws);
  const received: Record<string, unknown>[] = [];
  const waiting: { type: string; resolve(m: Record<string, unknown>): void }[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as Record<string, unknown>;
    received.push(m);
    for (const w of waiting.filter((x) => x.type === m.type)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(m);
    }
  });
  ws.on('error', () => undefined);
  return {
    ws,
    received,
    open: new Promise((r) => ws.once('open', () => r())),
    closed: new Promise((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() }))),
    next: (type) => {
      const seen = received.find((m) => m.type === type);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiting.push({ type, resolve }));
    },
  };
}
const method = (name: string, params: Record<string, unknown> = { type: 'object', properties: {} }) => ({
  name,
  description: '',
  safety: 'readonly',
  hidden: false,
  params,
  inferred: false,
  inferredFields: [],
});
const params = (props: Record<string, unknown>) => ({ type: 'object', properties: props });
const hello = (name: string, instruments: unknown[]) => ({ type: 'hello', protocol: 1, name, instruments });
const instrument = (name: string, methods = [method('read')]) => ({ name, class: 'Probe', description: 'a probe', methods });

async function healthy() {
  const r = await fetch(`${base}/healthz`);
  expect(r.status).toBe(200);
}

describe('a rogue agent cannot end the server', () => {
  it.each([
    ['the text null after its hello', [hello('rogue-1', [instrument('r1')]), null]],
    ['a hello whose instrument list holds null', [hello('rogue-2', [null])]],
    ['a result that is a number', [hello('rogue-3', [instrument('r3')]), 42]],
    ['an event with no call', [hello('rogue-4', [instrument('r4')]), { type: 'event', kind: 'log', text: 'x' }]],
  ])('%s: that connection is closed with a reason, the server goes on', async (_what, messages: unknown[]) => {
    const c = raw(tokens['pc-a']);
    await c.open;
    for (const m of messages) {
      c.ws.send(JSON.stringify(m));
      if ((m as { type?: string } | null)?.type === 'hello' && messages.length > 1) await c.next('welcome');
    }
    const end = await c.closed;
    expect(end.code).toBe(4400);
    expect(end.reason).toMatch(/\S/);
    await healthy();
  });
});

describe('an agent name belongs to its token', () => {
  it('another token cannot take the name of an agent that is offline; the refusal is audited', async () => {
    const real = raw(tokens['pc-a']);
    await real.open;
    real.ws.send(JSON.stringify(hello('balance-pc', [instrument('balance')])));
    await real.next('welcome');
    real.ws.close(1000, 'done');
    await real.closed;

    const thief = raw(tokens['pc-b']);
    await thief.open;
    thief.ws.send(JSON.stringify(hello('balance-pc', [instrument('balance')])));
    const end = await thief.closed;
    expect(end.code).toBe(4403);
    expect(end.reason).toMatch(/balance-pc belongs to another agent token/);
    expect(thief.received.some((m) => m.type === 'welcome')).toBe(false);
    const audit = await lab.runtime.store.audit.list(20);
    expect(audit.find((a) => a.action === 'agent.refused')?.detail).toMatchObject({ agent: 'balance-pc', token_name: 'pc-b' });

    // the real PC's token still may
    const back = raw(tokens['pc-a']);
    await back.open;
    back.ws.send(JSON.stringify(hello('balance-pc', [instrument('balance')])));
    expect((await back.next('welcome')).name).toBe('balance-pc');
    back.ws.close(1000, 'done');
    await back.closed;
  });
});

describe('an admin binds an agent name to a new token', () => {
  it('the name moves to that token (audited): the old token is refused, the new one serves', async () => {
    const made = await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'balance-pc new', scope: 'agent', agent_name: 'balance-pc' }).expect(201);
    expect(made.body).toMatchObject({ agent_name: 'balance-pc' });
    const audit = await lab.runtime.store.audit.list(20);
    expect(audit.find((a) => a.action === 'agent.name.bound' && (a.detail as { token_name: string }).token_name === 'balance-pc new')?.detail).toMatchObject({
      agent: 'balance-pc',
      taken_from: 'pc-a',
    });
    const old = raw(tokens['pc-a']);
    await old.open;
    old.ws.send(JSON.stringify(hello('balance-pc', [instrument('balance')])));
    expect((await old.closed).code).toBe(4403);
    const fresh = raw(made.body.token);
    await fresh.open;
    fresh.ws.send(JSON.stringify(hello('balance-pc', [instrument('balance')])));
    expect((await fresh.next('welcome')).name).toBe('balance-pc');
    fresh.ws.close(1000);
    await fresh.closed;
    // only for agent tokens, and only agent names
    const bad = await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'x', agent_name: 'balance-pc' }).expect(400);
    expect(bad.body.error.details[0].field).toBe('agent_name');
    await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'x', scope: 'agent', agent_name: 'not a name!' }).expect(400);
  });
});

describe('one token, few names', () => {
  it('an admin binding a connected name to another token lets that connection go', async () => {
    const c = raw(tokens['pc-b']);
    await c.open;
    c.ws.send(JSON.stringify(hello('kick-pc', [instrument('kick_probe')])));
    await c.next('welcome');
    await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'kick-pc', scope: 'agent', agent_name: 'kick-pc' }).expect(201);
    const end = await c.closed;
    expect(end).toEqual({ code: 4403, reason: 'An admin bound the agent name kick-pc to another agent token.' });
  });

  it('a token serves under at most 16 names', async () => {
    const t = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'greedy', scope: 'agent' }).expect(201)).body.token;
    for (let i = 0; i < 16; i++) {
      const c = raw(t);
      await c.open;
      c.ws.send(JSON.stringify(hello(`greedy-${i}`, [])));
      await c.next('welcome');
      c.ws.close(1000);
      await c.closed;
    }
    const c = raw(t);
    await c.open;
    c.ws.send(JSON.stringify(hello('greedy-16', [])));
    expect(await c.closed).toEqual({ code: 4409, reason: expect.stringMatching(/serves under 16 names already/) });
  });
});

describe('what an agent describes is bounded', () => {
  const deep = (n: number) => {
    let s: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < n; i++) s = { type: 'object', properties: { x: s } };
    return s;
  };

  it('refuses, one by one, instruments that break a rule (saying why), serves the rest, and every page still answers', async () => {
    const c = raw(tokens['pc-a']);
    await c.open;
    c.ws.send(
      JSON.stringify(
        hello('bounded-pc', [
          instrument('fine_probe', [method('read', params({ s: { type: 'string', pattern: '^(?P<name>\\w+)$' } }))]),
          instrument('deep_probe', [method('read', params({ x: deep(1000) }))]),
          instrument('huge_probe', [{ ...method('read'), description: 'x'.repeat(70_000) }]),
          instrument('lookahead_probe', [method('read', params({ s: { type: 'string', pattern: '^(?=a)a+$' } }))]),
          instrument('code_probe', [method('read(); __import__("os").system("id"); x', params({}))]),
          instrument('param_probe', [method('read', params({ 'a); import os; (b': { type: 'string' } }))]),
          instrument(`n${'x'.repeat(100)}`),
          instrument('twice_probe'),
          instrument('twice_probe'),
        ]),
      ),
    );
    const w = await c.next('welcome');
    expect(w.instruments).toEqual(['fine_probe', 'twice_probe']);
    const why = Object.fromEntries((w.refused as { name: string; reason: string }[]).map((r) => [r.name.slice(0, 20), r.reason]));
    expect(why).toEqual({
      deep_probe: expect.stringMatching(/method read: its schema is nested deeper than 32 levels/),
      huge_probe: expect.stringMatching(/method read: its description is 69 KB of JSON, more than the 64 KB allowed/),
      lookahead_probe: expect.stringMatching(/the pattern "\^\(\?=a\)a\+\$", refused: it uses a lookaround/),
      code_probe: expect.stringMatching(/is not an identifier/),
      param_probe: expect.stringMatching(/the parameter name "a\); import os; \(b" is not an identifier/),
      nxxxxxxxxxxxxxxxxxxx: expect.stringMatching(/is not a name \(letters, digits, _ and -, at most 64\)/),
      twice_probe: 'twice_probe is described twice',
    });
    await lab.admin.get('/app/openapi.json').expect(200);
    await lab.admin.get('/app/api').expect(200);
    await lab.admin.get('/app/workflows/new').expect(200);
    const mcp = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'assistant', scope: 'mcp' }).expect(201)).body.token;
    const list = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${mcp}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(list.status).toBe(200);
    expect(await list.text()).toMatch(/fine_probe_read/);
    c.ws.close(1000);
    await c.closed;
    // offline, its tools are not offered to an AI assistant
    await waitFor(() => !lab.runtime.agents.list().some((a) => a.name === 'bounded-pc' && a.connected), 'bounded-pc to be offline');
    const after = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${mcp}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    const text = await after.text();
    expect(text).toMatch(/lab_status|"tools"/);
    expect(text).not.toMatch(/fine_probe_read/);
  });

  it('an agent name longer than 64 characters closes the connection', async () => {
    const c = raw(tokens['pc-a']);
    await c.open;
    c.ws.send(JSON.stringify(hello(`pc-${'x'.repeat(70)}`, [])));
    const end = await c.closed;
    expect(end.code).toBe(4400);
    expect(end.reason).toMatch(/name/);
  });

  it('a pattern that backtracks exponentially in JavaScript is tested in linear time: the call is refused at once', async () => {
    const c = raw(tokens['pc-a']);
    await c.open;
    c.ws.send(JSON.stringify(hello('redos-pc', [instrument('redos_probe', [method('read', params({ s: { type: 'string', pattern: '^(a+)+$' } }))])])));
    await c.next('welcome');
    // JavaScript's own engine takes 2^40 steps for this one
    const r = await api('POST', '/instruments/redos_probe', { method: 'read', args: { s: `${'a'.repeat(40)}!` } });
    expect(r.status).toBe(400);
    expect(r.body.error.details[0]).toMatchObject({ field: 's', message: 'must match the pattern ^(a+)+$' });
    c.ws.close(1000);
    await c.closed;
  });
});

describe('an agent that connects again, and one that never answers', () => {
  it("a reconnect's description replaces the old one", async () => {
    const first = raw(tokens['pc-a']);
    await first.open;
    first.ws.send(JSON.stringify(hello('changing-pc', [instrument('dial', [method('set', params({ x: { type: 'integer' } }))])])));
    await first.next('welcome');
    first.ws.close(1000);
    await first.closed;
    await waitFor(() => !lab.runtime.agents.list().some((a) => a.name === 'changing-pc' && a.connected), 'changing-pc to be offline');
    const again = raw(tokens['pc-a']);
    await again.open;
    again.ws.send(JSON.stringify(hello('changing-pc', [instrument('dial', [method('set', params({ x: { type: 'string' } }))])])));
    await again.next('welcome');
    const answer = api('POST', '/instruments/dial', { method: 'set', args: { x: 'high' } });
    const asked = await again.next('call');
    again.ws.send(JSON.stringify({ type: 'result', id: asked.id, value: 'ok' }));
    expect((await answer).status).toBe(200);
    const dial = lab.runtime.deck.list().find((i) => i.name === 'dial')!;
    expect(dial.methods[0].params.properties).toEqual({ x: { type: 'string' } });
    again.ws.close(1000);
    await again.closed;
  });

  it('a call it never answers fails in doubt (503) after the bound; a second caller meanwhile gets 409 at once', async () => {
    const c = raw(tokens['pc-a']);
    await c.open;
    c.ws.send(JSON.stringify(hello('silent-pc', [instrument('silent_probe')])));
    await c.next('welcome');
    const first = api('POST', '/instruments/silent_probe', { method: 'read', args: {} });
    await c.next('call'); // it has the call, and says nothing
    const second = await api('POST', '/instruments/silent_probe', { method: 'read', args: {} });
    expect(second.status).toBe(409);
    expect(second.body.error.message).toMatch(/silent_probe is busy with another call \(on the PC silent-pc\)/);
    const r = await first;
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ in_doubt: true, instrument: 'silent_probe' });
    expect(r.body.error.message).toMatch(/did not answer silent_probe.read within 2 s/);
    expect((await api('GET', `/instruments/task/${r.body.task_id}`)).body.status).toBe('in-doubt');
    // the instrument is free again; a late answer to the old call is dropped
    c.ws.send(JSON.stringify({ type: 'result', id: 1, value: 'late' }));
    const next = api('POST', '/instruments/silent_probe', { method: 'read', args: {} });
    const asked =
      c.received.filter((m) => m.type === 'call').length === 2
        ? c.received.filter((m) => m.type === 'call')[1]
        : await new Promise<Record<string, unknown>>((res) => c.ws.once('message', (d) => res(JSON.parse(d.toString()))));
    c.ws.send(JSON.stringify({ type: 'result', id: asked.id, value: 7 }));
    expect(await next).toMatchObject({ status: 200, body: { output: 7 } });
    c.ws.close(1000);
    await c.closed;
  });
});
