/**
 * Safety levels for Python drivers (issue 28 item 5, "Done when"): a method nobody declared is `unknown`, and
 * an AI agent's (MCP) call to it waits in the approval inbox with its driver untouched, while a method the
 * driver declares `readonly` with the documented attribute (`__labdeck_safety__`, no labdeck import) runs at
 * once. A real Python host runs test/fixtures/safety/deck.py, whose driver counts the calls that reach it.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const DECK = fileURLToPath(new URL('../fixtures/safety/deck.py', import.meta.url));

let lab: TestLab;
let server: Server;
let client: Client;
beforeAll(async () => {
  lab = await startLab({ deck: DECK });
  server = lab.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const made = await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'agent', scope: 'mcp' }).expect(201);
  client = new Client({ name: 'safety-python-test', version: '1.0.0' });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${made.body.token}` } } }));
}, 60_000);
afterAll(async () => {
  await client?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await lab?.close();
});

const answer = (r: Awaited<ReturnType<Client['callTool']>>) => JSON.parse((r.content as { text: string }[])[0].text);
const calls = async () => (await lab.runtime.deck.call('doser', 'count', {}, { userId: null })).output as number;

it("an agent's call to an undeclared Python method waits in the inbox, its driver untouched; a declared readonly one runs at once", async () => {
  const { tools } = await client.listTools();
  const dose = tools.find((t) => t.name === 'doser_dose_solid')!;
  expect(dose.description).toContain('safety: unknown');
  expect(dose.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false, destructiveHint: true });
  expect(tools.find((t) => t.name === 'doser_count')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });

  expect(answer(await client.callTool({ name: 'doser_count', arguments: {} }))).toMatchObject({ task_id: expect.any(Number), output: 0 });
  const req = answer(await client.callTool({ name: 'doser_dose_solid', arguments: { mg: 5 } }));
  expect(req).toMatchObject({ state: 'pending', approval_id: expect.any(Number) });
  const inbox = (await lab.admin.get('/app/approvals').set('Accept', J).expect(200)).body;
  expect(JSON.stringify(inbox)).toContain('dose_solid');
  expect(await calls()).toBe(0);

  // a person approves it: only then does it reach the driver
  await lab.admin.post(`/app/approvals/${req.approval_id}/approve`).set('Accept', J).send({}).expect(200);
  const done = answer(await client.callTool({ name: 'lab_approval', arguments: { approval_id: req.approval_id, wait_seconds: 10 } }));
  expect(done).toMatchObject({ state: expect.stringMatching(/done|approved/) });
  expect(await calls()).toBe(1);
});
