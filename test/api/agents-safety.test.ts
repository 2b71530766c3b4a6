/**
 * The safety guard on a `lab agent` PC (issue 28: a relayed call is enforced by the host that drives the
 * instrument). A real agent (startAgent, its own deck, the counting fixture deck) connected to a real labdeck
 * server gets the lab-wide file right behind the welcome and each change of it; a call past a limit is
 * refused with its driver untouched. The agent's own check is shown by speaking the agent protocol to it
 * from this test in the server's place: it refuses every call until a file has come (fail-closed), then
 * refuses what the file forbids (an omitted argument at its default too), and blocks all while the server's
 * file is broken.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { startAgent, type RunningAgent } from '../../cli/agent.js';
import { attachAgents } from '../../server/agents.js';
import { startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';
const DECK = fileURLToPath(new URL('../fixtures/safety/deck.ts', import.meta.url));
const limits = (...l: Record<string, unknown>[]) => ({ format: 'ivoryos-safety/1', limits: l });
const heaterMax = (max: number) => ({ target: 'heater', method: 'set_temperature', param: 'setpoint_c', max });
const lines: string[] = [];
const agents: RunningAgent[] = [];

const stopAgents = async () => {
  for (const a of agents.splice(0)) await a.stop();
};

describe('a real lab server and agent', () => {
  let lab: TestLab;
  let server: Server;
  beforeAll(async () => {
    lab = await startLab({ deck: false });
    await lab.admin
      .put('/app/safety')
      .set('Accept', J)
      .send(limits(heaterMax(120)))
      .expect(200);
    server = lab.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    attachAgents(server, lab.runtime);
    const token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'pc-safe', scope: 'agent' }).expect(201)).body.token;
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
    const a = await startAgent({ deck: DECK, server: base, token, name: 'pc-safe' }, (l) => lines.push(l));
    agents.push(a);
    await a.welcomed;
  }, 30_000);
  afterAll(async () => {
    await stopAgents();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await lab?.close();
  });
  const call = (instrument: string, method: string, args: Record<string, unknown> = {}) => lab.admin.post(`/app/instruments/${instrument}`).set('Accept', J).send({ method, args });
  const count = async (what: string) => ((await call('door', 'counts').expect(200)).body.output as Record<string, number>)[what] ?? 0;

  it('the agent gets the lab-wide file behind the welcome; a call past a limit is refused, its driver untouched', async () => {
    await until(async () => lines.some((l) => /agent pc-safe: enforcing the lab's safety file \((?:.*safety\.json|the database \(lab-wide safety file\))\): 1 limit\(s\)/.test(l)));
    const before = await count('heater.set_temperature');
    const res = await call('heater', 'set_temperature', { setpoint_c: 150 }).expect(409);
    expect(res.body.error).toMatchObject({ code: 'safety', details: [{ field: 'setpoint_c', value: 150, limit: { max: 120 } }] });
    expect(await count('heater.set_temperature')).toBe(before);
    await call('heater', 'set_temperature', { setpoint_c: 100 }).expect(200);
    expect(await count('heater.set_temperature')).toBe(before + 1);
  });

  it('an edit of the file reaches the agent before the next call', async () => {
    await lab.admin
      .put('/app/safety')
      .set('Accept', J)
      .send(limits(heaterMax(80), { target: 'class:SafePump', method: 'dispense', param: 'volume_ml', max: 5 }))
      .expect(200);
    await until(async () => lines.some((l) => /agent pc-safe: enforcing the lab's safety file .*: 2 limit\(s\)/.test(l)));
    const before = await count('pump.dispense');
    await call('pump', 'dispense', { volume_ml: 9 }).expect(409);
    expect(await count('pump.dispense')).toBe(before);
  });
});

describe("the agent's own guard (the protocol spoken to it in the server's place)", () => {
  let wss: WebSocketServer;
  let ws: WebSocket;
  let nextId = 1;
  const answers = new Map<number, (m: { type: string; value?: unknown; error?: { kind: string; message: string; field?: string } }) => void>();
  beforeAll(async () => {
    wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((r) => wss.once('listening', r));
    const connected = new Promise<WebSocket>((resolve) =>
      wss.once('connection', (socket) => {
        socket.once('message', (hello) => {
          const h = JSON.parse(hello.toString()) as { name: string; instruments: { name: string }[] };
          socket.on('message', (data) => {
            const m = JSON.parse(data.toString());
            answers.get(m.id)?.(m);
          });
          // a labdeck server that ships no safety file: only the welcome
          socket.send(JSON.stringify({ type: 'welcome', name: h.name, instruments: h.instruments.map((i) => i.name) }));
          resolve(socket);
        });
      }),
    );
    const a = await startAgent({ deck: DECK, server: `http://127.0.0.1:${(wss.address() as AddressInfo).port}/app`, token: 'labagent_test', name: 'pc-bare' }, (l) => lines.push(l));
    agents.push(a);
    ws = await connected;
    await a.welcomed;
  }, 30_000);
  afterAll(async () => {
    await stopAgents();
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(r));
  });
  const relay = (instrument: string, method: string, args: Record<string, unknown> = {}) =>
    new Promise<{ type: string; value?: unknown; error?: { kind: string; message: string; field?: string } }>((resolve) => {
      const id = nextId++;
      answers.set(id, resolve);
      ws.send(JSON.stringify({ type: 'call', id, instrument, method, args }));
    });
  const ship = async (body: Record<string, unknown>, line: RegExp) => {
    const seen = lines.length;
    ws.send(JSON.stringify({ type: 'safety', source: 'the database (lab-wide safety file)', ...body }));
    await until(async () => lines.slice(seen).some((l) => line.test(l)));
  };
  const count = async (what: string) => ((await relay('door', 'counts')).value as Record<string, number>)[what] ?? 0;

  it('until a file has come from the server, every call is refused (fail-closed), reaching no driver', async () => {
    const refused = await relay('heater', 'set_temperature', { setpoint_c: 30 });
    expect(refused).toMatchObject({ type: 'error', error: { kind: 'safety_file', message: expect.stringMatching(/has not received the lab's safety file/) } });
    expect((await relay('door', 'counts')).error?.kind).toBe('safety_file');
    await ship({ file: null, error: null }, /enforcing the lab's safety file .*: 0 limit\(s\)/);
    expect(await count('heater.set_temperature')).toBe(0);
  });

  it("with the lab's file: a value past a limit and an omitted argument at its default are refused; within it runs", async () => {
    await ship({ file: limits(heaterMax(20)), error: null }, /enforcing the lab's safety file .*: 1 limit\(s\)/);
    const over = await relay('heater', 'set_temperature', { setpoint_c: 30 });
    expect(over).toMatchObject({ type: 'error', error: { kind: 'safety', field: 'setpoint_c', message: expect.stringContaining('setpoint_c = 30 is above the maximum of 20') } });
    // the driver's default (25) is what it would get: checked as such
    expect((await relay('heater', 'set_temperature', {})).error).toMatchObject({ kind: 'safety', message: expect.stringContaining('setpoint_c = 25') });
    expect(await count('heater.set_temperature')).toBe(0);
    expect(await relay('heater', 'set_temperature', { setpoint_c: 15 })).toMatchObject({ type: 'result', value: 15 });
    expect(await count('heater.set_temperature')).toBe(1);
  });

  it("while the server's file is broken, or one this agent cannot validate comes, every call is blocked", async () => {
    await ship({ file: null, error: 'The safety file x is not valid (limits[0].max: must be a number)' }, /safety file is broken, so every call is refused/);
    expect((await relay('door', 'counts')).error).toMatchObject({ kind: 'safety_file', message: expect.stringContaining('limits[0].max') });
    await ship({ file: { format: 'ivoryos-safety/9' }, error: null }, /does not validate here/);
    expect((await relay('heater', 'set_temperature', { setpoint_c: 5 })).error?.kind).toBe('safety_file');
    await ship({ file: limits(heaterMax(20)), error: null }, /1 limit\(s\)/);
    expect(await count('heater.set_temperature')).toBe(1);
  });
});
