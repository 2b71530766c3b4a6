/**
 * The same next-generation deck served through `lab agent` behaves as under `lab serve` (issue 29 item 7): the
 * plr-style deck (test/fixtures/ivoryos-next/plr_deck.py) once on the server's own Python host, once on an
 * agent connected over its WebSocket; the schemas (Labware choices, Wells' labware, units), the refusal of a
 * well outside the grid before the driver is called, the calls and the labware view answer the same.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startAgent, type RunningAgent } from '../../cli/agent.js';
import { attachAgents } from '../../server/agents.js';
import { startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const DECK = fileURLToPath(new URL('../fixtures/ivoryos-next/plr_deck.py', import.meta.url));

let local: TestLab;
let remote: TestLab;
let server: Server;
let agent: RunningAgent;

beforeAll(async () => {
  local = await startLab({ deck: DECK });
  remote = await startLab({ deck: false });
  server = remote.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  attachAgents(server, remote.runtime);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
  const token = (await remote.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'bench-pc', scope: 'agent' }).expect(201)).body.token;
  agent = await startAgent({ deck: DECK, server: base, token, name: 'bench-pc' }, () => undefined);
  await agent.welcomed;
}, 60_000);
afterAll(async () => {
  await agent?.stop();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await remote?.close();
  await local?.close();
});

const both = async <T>(ask: (lab: TestLab) => Promise<T>): Promise<[T, T]> => [await ask(local), await ask(remote)];
const call = (lab: TestLab, method: string, args: Record<string, unknown>) => lab.admin.post('/app/instruments/liquid_handler').set('Accept', J).send({ method, args });

describe('a next-generation deck through lab agent', () => {
  it('has the same methods and marker schemas (choices of the worktable, wells, units), no dunder among them', async () => {
    const [here, there] = await both(async (lab) => (await lab.admin.get('/app/instruments/liquid_handler').set('Accept', J).expect(200)).body);
    expect(there.host).toBe('bench-pc');
    const shape = (inst: { methods: { name: string; params: unknown; returns?: unknown }[] }) => inst.methods.map((m) => ({ name: m.name, params: m.params, returns: m.returns }));
    expect(shape(there)).toEqual(shape(here));
    expect(there.methods.find((m: { name: string }) => m.name === 'pick_up_tips').params.properties.rack.enum).toEqual(['tips_300']);
  });

  it('refuses a well outside the grid with the same 400 before the driver is called, and makes the same calls', async () => {
    const bad = { source: 'reservoir[A1]', targets: 'assay_plate[A1:I1]', volumes: 10 };
    const [here, there] = await both(async (lab) => (await call(lab, 'transfer', bad).expect(400)).body.error.details);
    expect(there).toEqual(here);
    expect(there).toEqual([{ field: 'targets', message: expect.stringContaining("'I1' is not a position on assay_plate") }]);
    const [n1, n2] = await both(async (lab) => (await call(lab, 'driver_calls', {}).expect(200)).body.output);
    expect([n1, n2]).toEqual([0, 0]);
    const good = { source: 'reservoir[A1]', targets: 'assay_plate[A1:H1]', volumes: 5 };
    const [o1, o2] = await both(async (lab) => (await call(lab, 'transfer', good).expect(200)).body.output);
    expect(o2).toBe(o1);
  });

  it('shows the same labware view (grid, contents, tips left), as JSON and on the page', async () => {
    const [here, there] = await both(async (lab) => (await lab.admin.get('/app/instruments/liquid_handler/labware').set('Accept', J).expect(200)).body);
    expect(there).toEqual(here);
    expect(there.labware.find((l: { name: string }) => l.name === 'tips_300').tips_left).toBe(95);
    const page = await remote.admin.get('/app/instruments/liquid_handler').expect(200);
    expect(page.text).toContain('labware-tips-left">tips left: 95');
  });
});
