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

let lab: TestLab;
let server: Server;
let base: string;
let userToken: string;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  lab = await startLab({ deck: false });
  server = lab.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  attachAgents(server, lab.runtime);
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
  userToken = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'me' }).expect(201)).body.token;
  for (const name of ['pc-a', 'pc-b']) {
    tokens[name] = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name, scope: 'agent' }).expect(201)).body.token;
  }
}, 30_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await lab?.close();
});

export const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, { method, headers: { Authorization: `Bearer ${userToken}`, Accept: 'application/json', 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
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
const method = (name: string, params: Record<string, unknown> = { type: 'object', properties: {} }) => ({ name, description: '', safety: 'readonly', hidden: false, params, inferred: false, inferredFields: [] });
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
