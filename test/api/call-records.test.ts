/**
 * One recorder for every call record (issue 27 item 5): a direct call's record is begun before the driver is
 * touched and completed after, in place, whichever door made it, so a call to a driver that hangs is listed
 * `running` with its args and no end while it hangs, like a run's step; one call leaves exactly one record;
 * a labdeck stopped during a direct call leaves it in-doubt for the next one, as recovery does a run's step.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { defineInstrument, z } from '../../core/contracts/index.js';
import { systemCaller } from '../../core/operations/caller.js';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { CallRecordSchema } from '../../core/records/call-record.js';
import { RunnerStatusSchema } from '../../core/runner/status-schema.js';
import { testDbUrl } from '../helpers/db.js';
import { exactly } from '../helpers/schemas.js';
import { startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';

/** The calls to `gate.hold` hanging now: settle one to end its call. */
const held: { res: (v: unknown) => void; rej: (e: unknown) => void }[] = [];

const gate = defineInstrument({
  name: 'test-gate',
  version: '1.0.0',
  options: z.object({}),
  create: () => ({}),
  methods: {
    hold: { params: z.object({ ml: z.number() }), safety: 'readonly', run: () => new Promise((res, rej) => held.push({ res, rej })) },
  },
});

async function withGate(runtime: Runtime) {
  runtime.deck.setFileDrivers('/virtual/test-gate.ts', 'imported', [gate]);
  await runtime.deck.connect('test-gate', 'gate', {});
}

type CallJson = { task_id: number; status: string; args: unknown; output: unknown; ended_at: string | null; error: string | null };

describe('call records', () => {
  let lab: TestLab;
  const calls = async (): Promise<CallJson[]> => (await lab.admin.get('/app/instruments/gate/calls').set('Accept', J).expect(200)).body.calls;
  beforeAll(async () => {
    lab = await startLab({ deck: false });
    await withGate(lab.runtime);
  });
  afterAll(async () => {
    for (const h of held.splice(0)) h.res(null);
    await lab.close();
  });

  it('lists a direct call to a driver that hangs while it hangs (running, its args, no end), then completes it in place', async () => {
    const answer = lab.admin
      .post('/app/instruments/gate')
      .set('Accept', J)
      .send({ method: 'hold', args: { ml: 2 } })
      .then((r) => r);
    await until(async () => held.length === 1);
    const [running] = await calls();
    expect(running).toMatchObject({ status: 'running', args: { ml: 2 }, output: null, ended_at: null });
    const one = await lab.admin.get(`/app/instruments/task/${running.task_id}`).set('Accept', J).expect(200);
    expect(one.body).toMatchObject({ task_id: running.task_id, status: 'running', ended_at: null, duration_ms: null });

    held.shift()!.res(7);
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ task_id: running.task_id, output: 7 });
    // the same record, completed: one call, one row
    expect(await calls()).toEqual([expect.objectContaining({ task_id: running.task_id, status: 'ok', output: 7, ended_at: expect.any(String) })]);
  });

  it('answers a call record and the runner status exactly as their zod in core declares them', async () => {
    const [last] = await calls();
    const one = (await lab.admin.get(`/app/instruments/task/${last.task_id}`).set('Accept', J).expect(200)).body;
    expect(exactly(CallRecordSchema, one)).toEqual(one);
    const answer = lab.admin
      .post('/app/instruments/gate')
      .set('Accept', J)
      .send({ method: 'hold', args: { ml: 1 } })
      .then((r) => r);
    await until(async () => held.length === 1);
    const [running] = await calls();
    expect(exactly(CallRecordSchema, running)).toEqual(running);
    held.shift()!.res(null);
    await answer;
    // the status route adds the watchdog's timing to the runner's status
    const status = (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;
    expect(exactly(RunnerStatusSchema.extend({ timing: z.unknown() }), status)).toEqual(status);
  });

  it('a call that hangs and then fails: its one record says so, in place', async () => {
    const before = (await calls()).length;
    const answer = lab.admin
      .post('/app/instruments/gate')
      .set('Accept', J)
      .send({ method: 'hold', args: { ml: 3 } })
      .then((r) => r);
    await until(async () => held.length === 1);
    const [running] = await calls();
    expect(running).toMatchObject({ status: 'running', args: { ml: 3 }, ended_at: null });
    held.shift()!.rej(new Error('the valve stuck'));
    const res = await answer;
    expect(res.status).toBe(502);
    expect(res.body.task_id).toBe(running.task_id);
    const after = await calls();
    expect(after).toHaveLength(before + 1);
    expect(after[0]).toMatchObject({ task_id: running.task_id, status: 'error', error: 'the valve stuck', ended_at: expect.any(String) });
  });

  it("an agent's call through MCP is recorded the same way: running while it hangs, one record", async () => {
    const server: Server = lab.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const made = await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'helper', scope: 'mcp' }).expect(201);
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${made.body.token}` } } }));
      const before = (await calls()).length;
      const answer = client.callTool({ name: 'gate_hold', arguments: { ml: 4 } });
      await until(async () => held.length === 1);
      const [running] = await calls();
      expect(running).toMatchObject({ status: 'running', args: { ml: 4 }, ended_at: null });
      held.shift()!.res('done');
      const text = JSON.parse(((await answer).content as { text: string }[])[0].text);
      expect(text).toMatchObject({ task_id: running.task_id, output: 'done' });
      const after = await calls();
      expect(after).toHaveLength(before + 1);
      expect(after[0]).toMatchObject({ task_id: running.task_id, status: 'ok', output: 'done' });
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('a labdeck stopped during a direct call', () => {
  it('leaves its record running, and the next labdeck to drive the instrument marks it in-doubt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-call-records-'));
    const db = await testDbUrl();
    const options = { dataDir: dir, db: db.url, deck: false as const, pluginDirs: [], watch: false };
    try {
      const first = await createRuntime(options);
      await withGate(first);
      const call = first.ops.instruments.call(systemCaller('cli', 'a test'), { instrument: 'gate', method: 'hold', args: { ml: 5 } });
      call.catch(() => undefined);
      await until(async () => held.length === 1);
      const [record] = await first.ops.instruments.recent('gate', 5);
      expect(record).toMatchObject({ status: 'running', endedAt: null, args: { ml: 5 } });
      await first.close(); // the call is still in the driver: as if the process had been killed during it

      const next = await createRuntime(options);
      try {
        await withGate(next);
        await until(async () => (await next.ops.instruments.record(record.id)).status === 'in-doubt');
        expect(await next.ops.instruments.record(record.id)).toMatchObject({ status: 'in-doubt', endedAt: null, error: expect.stringContaining('may or may not have reached the instrument') });
        // a call this labdeck makes now is its own, not in doubt
        const fresh = next.ops.instruments.call(systemCaller('cli', 'a test'), { instrument: 'gate', method: 'hold', args: { ml: 6 } });
        await until(async () => held.length === 2);
        held.pop()!.res(1);
        await fresh;
        expect((await next.ops.instruments.recent('gate', 1))[0]).toMatchObject({ status: 'ok', output: 1 });
      } finally {
        await next.close();
      }
    } finally {
      for (const h of held.splice(0)) h.res(null);
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
