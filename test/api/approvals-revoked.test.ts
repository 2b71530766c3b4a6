/**
 * Revoking an agent's token rejects what it asked for (found by the every-form browser test: the inbox kept
 * offering Approve on a request of a revoked token, and Approve could only answer 409).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLab, type TestLab } from './helpers.js';

let lab: TestLab;
let server: Server;
let base: string;

beforeAll(async () => {
  lab = await startLab({ approvalTtlMs: 60_000 });
  server = lab.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await lab?.close();
});

const J = 'application/json';

it("rejects a revoked token's pending requests, saying why, and leaves other tokens' requests pending", async () => {
  const made = async (name: string) => (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name, scope: 'mcp' }).expect(201)).body as { id: number; token: string };
  const ask = async (token: string) => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'pump_dose', arguments: { volume_ml: 1 } } }),
    });
    expect(res.status).toBe(200);
  };
  const [a, b] = [await made('agent-a'), await made('agent-b')];
  await ask(a.token);
  await ask(b.token);
  const inbox = async () =>
    (await lab.admin.get('/app/approvals').set('Accept', J).expect(200)).body as { pending: { id: number; token_name?: string }[]; done: { id: number; state: string; reason: string | null }[] };
  const before = await inbox();
  expect(before.pending).toHaveLength(2);

  await lab.admin.post(`/app/account/tokens/${a.id}/delete`).set('Accept', J).expect(204);
  const after = await inbox();
  expect(after.pending).toHaveLength(1);
  const closed = after.done.find((r) => !after.pending.some((p) => p.id === r.id))!;
  expect(closed).toMatchObject({ state: 'rejected', reason: 'The token "agent-a" that asked was revoked.' });
  // the other token's request still waits for a person, and can be approved
  const other = after.pending[0]!.id;
  await lab.admin.post(`/app/approvals/${other}/approve`).set('Accept', J).send({}).expect(200);
  const ran = (await lab.admin.get(`/app/approvals/${other}?wait=10`).set('Accept', J).expect(200)).body as { state: string; outcome: unknown };
  expect(ran).toMatchObject({ state: 'approved', outcome: expect.anything() });
});
