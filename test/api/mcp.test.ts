/**
 * labdeck's MCP server (issue 15 item 3) through the official SDK's client over Streamable HTTP, against a
 * real labdeck on the demo deck: tools from the live deck's schemas and safety levels and from the runner;
 * read-only and idempotent calls at once; a hazardous call, a run and a campaign wait in the approval inbox
 * until a person decides; rejected and expired requests never run; MCP tokens open /app/mcp and nothing else,
 * and never decide; the policy per instrument; every agent action audited with its token.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PassThrough } from 'node:stream';
import { startMcpBridge } from '../../cli/mcp.js';
import { REACTOR, signupAndLogin, startLab, until, type TestLab } from './helpers.js';

let lab: TestLab;
let server: Server;
let base: string;
let mcpToken: string;
let clients: Client[] = [];

async function connect(token = mcpToken): Promise<Client> {
  const client = new Client({ name: 'test-assistant', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

/** The JSON a tool answered (its text content). */
const answer = (r: Awaited<ReturnType<Client['callTool']>>) => JSON.parse((r.content as { type: string; text: string }[])[0].text);

beforeAll(async () => {
  lab = await startLab({ approvalTtlMs: 60_000 });
  server = lab.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
  const made = await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'claude', scope: 'mcp' }).expect(201);
  expect(made.body).toMatchObject({ scope: 'mcp', token: expect.stringMatching(/^labmcp_/) });
  mcpToken = made.body.token;
  await lab.admin.post('/app/workflows').set('Accept', 'application/json').send(REACTOR).expect(201);
}, 30_000);
afterEach(async () => {
  for (const c of clients) await c.close();
  clients = [];
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await lab?.close();
});

const decide = (id: number, decision: 'approve' | 'reject', reason?: string, who = lab.admin) =>
  who
    .post(`/app/approvals/${id}/${decision}`)
    .set('Accept', 'application/json')
    .send(reason === undefined ? {} : { reason });

describe('tools', () => {
  it('lists one tool per method of the live deck, named <instrument>_<method>, with its schema and safety hints, and the runner tools', async () => {
    const client = await connect();
    expect(client.getServerVersion()?.name).toBe('labdeck');
    expect(client.getInstructions()).toMatch(/approval/);
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const n of ['lab_status', 'lab_workflows', 'lab_queue_workflow', 'lab_start_campaign', 'lab_records', 'lab_record', 'lab_approval', 'lab_pause', 'lab_resume', 'lab_abort'])
      expect(byName.has(n)).toBe(true);
    const dose = byName.get('pump_dose')!;
    expect(dose.inputSchema).toMatchObject({ type: 'object', properties: { volume_ml: { type: 'number' } }, required: ['volume_ml'] });
    expect(dose.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(dose.description).toMatch(/hazardous.*approve/);
    expect(byName.get('pump_status')!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get('hotplate_temperature')).toBeDefined();
    // the runner tools' schemas are their routes' (declared once): queueing takes the execution route's fields
    expect(Object.keys(byName.get('lab_queue_workflow')!.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['workflow', 'config', 'repeat', 'name']));
    expect(byName.get('lab_approval')!.inputSchema).toMatchObject({ required: ['approval_id'] });
    // an agent reads what waits for a person, but cannot answer an input: a person does
    expect(byName.get('lab_attention')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(answer(await client.callTool({ name: 'lab_attention', arguments: {} }))).toMatchObject({ items: expect.any(Array) });
    expect([...byName.keys()].filter((n) => /input/.test(n))).toEqual([]);
  });

  it('a device connected at run time becomes a tool without a restart', async () => {
    const client = await connect();
    expect((await client.listTools()).tools.some((t) => t.name === 'pump2_status')).toBe(false);
    await lab.runtime.deck.connect('sim-pump', 'pump2', {});
    expect((await client.listTools()).tools.some((t) => t.name === 'pump2_status')).toBe(true);
  });
});

describe('calls', () => {
  it('runs a read-only call at once and records it; bad arguments come back as a tool error naming the field', async () => {
    const client = await connect();
    const r = await client.callTool({ name: 'hotplate_temperature', arguments: {} });
    expect(r.isError).toBeFalsy();
    const out = answer(r);
    expect(typeof out.output).toBe('number');
    const rec = await lab.admin.get(`/app/instruments/task/${out.task_id}`).set('Accept', 'application/json').expect(200);
    expect(rec.body).toMatchObject({ instrument: 'hotplate', method: 'temperature' });

    const bad = await client.callTool({ name: 'pump_dose', arguments: { volume_ml: -1 } });
    expect(bad.isError).toBe(true);
    expect(answer(bad).error).toMatchObject({ code: 'invalid_input', details: [expect.objectContaining({ field: 'volume_ml' })] });
    const unknown = await client.callTool({ name: 'nope_nothing', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(answer(unknown).error.code).toBe('not_found');
  });

  it('a hazardous call waits for a person; approved in the browser session, it runs once as the agent asked and the agent learns the output', async () => {
    const client = await connect();
    const r = await client.callTool({ name: 'hotplate_set_temperature', arguments: { celsius: 80 } });
    const req = answer(r);
    expect(req).toMatchObject({ state: 'pending', summary: expect.stringContaining('hotplate.set_temperature(celsius=80)') });
    // nothing ran yet
    const temp0 = answer(await client.callTool({ name: 'hotplate_temperature', arguments: {} })).output;
    expect(temp0).not.toBe(80);
    // the inbox shows it, with the call and its arguments
    const inbox = await lab.admin.get('/app/approvals').set('Accept', 'application/json').expect(200);
    expect(inbox.body.pending.map((a: { id: number }) => a.id)).toContain(req.approval_id);
    const page = await lab.admin.get('/app/approvals').expect(200);
    expect(page.text).toContain('hotplate.set_temperature');
    expect(page.text).toContain('celsius');

    const decided = await decide(req.approval_id, 'approve', 'fine, 80 is safe').expect(200);
    expect(decided.body).toMatchObject({ state: 'approved', decided_by: 'ada', reason: 'fine, 80 is safe' });
    const done = answer(await client.callTool({ name: 'lab_approval', arguments: { approval_id: req.approval_id, wait_seconds: 10 } }));
    expect(done).toMatchObject({ state: 'approved', outcome: { task_id: expect.any(Number) } });
    // the call was made once, as the person saw it, recorded under the agent's account
    const made = (await lab.runtime.store.steps.recent('hotplate', 50)).filter((st) => st.method === 'set_temperature');
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ id: done.outcome.task_id, args: { celsius: 80 }, status: 'ok', userId: 1 });
    // decided once: a second decision is a conflict
    await decide(req.approval_id, 'reject', 'too late').expect(409);
  });

  it('a rejected request never runs and the agent is told why', async () => {
    const client = await connect();
    const req = answer(await client.callTool({ name: 'pump_dose', arguments: { volume_ml: 5 } }));
    const steps = await lab.runtime.store.steps.recent('pump', 100);
    await decide(req.approval_id, 'reject').expect(400); // a rejection says why
    await decide(req.approval_id, 'reject', 'the vial is not in place').expect(200);
    const told = answer(await client.callTool({ name: 'lab_approval', arguments: { approval_id: req.approval_id } }));
    expect(told).toMatchObject({ state: 'rejected', reason: 'the vial is not in place' });
    // a call made after the rejection is recorded; the rejected one is not (nor before it)
    await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', 'application/json')
      .send({ method: 'dose', args: { volume_ml: 1 } })
      .expect(200);
    const after = await lab.runtime.store.steps.recent('pump', 100);
    expect(after.length).toBe(steps.length + 1);
    expect(after.filter((st) => (st.args as { volume_ml?: number }).volume_ml === 5).length).toBe(steps.filter((st) => (st.args as { volume_ml?: number }).volume_ml === 5).length);
    await decide(req.approval_id, 'approve').expect(409);
  });

  it('an expired request never runs', async () => {
    const client = await connect();
    const ttl = lab.runtime.approvals.ttlMs;
    Object.assign(lab.runtime.approvals, { ttlMs: 50 }); // a request that waits 50 ms instead of an hour
    const req = answer(await client.callTool({ name: 'pump_dose', arguments: { volume_ml: 2 } }));
    Object.assign(lab.runtime.approvals, { ttlMs: ttl });
    // the agent's wait ends when the request is decided or expires: here it expires
    expect(answer(await client.callTool({ name: 'lab_approval', arguments: { approval_id: req.approval_id, wait_seconds: 10 } }))).toMatchObject({ state: 'expired' });
    const inbox = await lab.admin.get('/app/approvals').set('Accept', 'application/json').expect(200);
    expect(inbox.body.pending.map((a: { id: number }) => a.id)).not.toContain(req.approval_id);
    const res = await decide(req.approval_id, 'approve').expect(409);
    expect(res.body.error.message).toMatch(/expired/);
    expect(answer(await client.callTool({ name: 'lab_approval', arguments: { approval_id: req.approval_id } }))).toMatchObject({ state: 'expired' });
  });
});

describe('runs and campaigns', () => {
  it('a run an agent queues waits for approval, shows its workflow and rows, and then runs', async () => {
    const client = await connect();
    const bad = await client.callTool({ name: 'lab_queue_workflow', arguments: { workflow: 'react', config: [{ temperature: 'hot' }] } });
    expect(bad.isError).toBe(true); // checked as the route checks it, before any person sees it
    const bogus = await client.callTool({ name: 'lab_queue_workflow', arguments: { workflow: 'react', repeat: 1, colour: 'red' } });
    expect(answer(bogus).error.details).toEqual([expect.objectContaining({ field: 'colour' })]);

    const req = answer(
      await client.callTool({
        name: 'lab_queue_workflow',
        arguments: {
          workflow: 'react',
          config: [
            { temperature: 70, time: 5 },
            { temperature: 90, time: 5 },
          ],
        },
      }),
    );
    expect(req.state).toBe('pending');
    const page = await lab.admin.get('/app/approvals').expect(200);
    expect(page.text).toContain('reactor.run');
    expect(page.text).toMatch(/2 rows/);
    const decided = await decide(req.approval_id, 'approve').expect(200);
    const taskId = decided.body.outcome.task_id;
    expect(taskId).toEqual(expect.any(Number));
    await until(async () => (await lab.runtime.runner.task(taskId)).status === 'done');
    const records = answer(await client.callTool({ name: 'lab_records', arguments: { keyword: 'react' } }));
    expect(records.records.length).toBeGreaterThan(0);
  }, 30_000);

  it('a campaign an agent starts waits for approval with its space, then runs on the demo deck', async () => {
    const client = await connect();
    const req = answer(
      await client.callTool({
        name: 'lab_start_campaign',
        arguments: { workflow: 'react', repeat: 3, optimizer_type: 'random', parameters: 'temperature: 40..120', objectives: 'run.yield:max', seed: 1 },
      }),
    );
    expect(req.state).toBe('pending');
    const page = await lab.admin.get('/app/approvals').expect(200);
    expect(page.text).toContain('The space it searches');
    expect(page.text).toContain('temperature');
    const decided = await decide(req.approval_id, 'approve').expect(200);
    await until(async () => (await lab.runtime.runner.task(decided.body.outcome.task_id)).status === 'done', 30_000);
    const status = answer(await client.callTool({ name: 'lab_status', arguments: {} }));
    expect(status).toHaveProperty('state');
  }, 40_000);
});

describe('pause and resume', () => {
  it("an agent's resume of a run a person paused waits for a person's approval; its own pause it resumes at once", async () => {
    const J = 'application/json';
    const client = await connect();
    const task = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'react', repeat: 1000 }).expect(200)).body.task_id;
    const status = async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;
    await until(async () => (await status()).current_task?.id === task);
    await lab.admin.post('/app/executions/pause').set('Accept', J).send({}).expect(200);

    const req = answer(await client.callTool({ name: 'lab_resume', arguments: {} }));
    expect(req).toMatchObject({ state: 'pending', summary: expect.stringMatching(new RegExp(`resume task ${task}, which a person paused`)) });
    expect((await status()).paused).toBe(true); // still the person's pause
    const page = await lab.admin.get('/app/approvals').expect(200);
    expect(page.text).toContain(`Resume task ${task}, which a person paused`);
    const decided = await decide(req.approval_id, 'approve').expect(200);
    expect(decided.body.outcome).toEqual({ task_id: task });
    expect((await status()).paused).toBe(false);
    // approved, it ran through the operation a person's resume runs through: the approver's runner.resume line
    const resumeLine = (await lab.runtime.store.audit.list(50)).find((a) => a.action === 'runner.resume');
    expect(resumeLine).toMatchObject({ userId: (await lab.runtime.store.users.byName('ada'))!.id, detail: { task_id: task } });

    // the agent's own pause: the agent may undo it
    expect(answer(await client.callTool({ name: 'lab_pause', arguments: {} })).paused).toBe(true);
    const resumed = answer(await client.callTool({ name: 'lab_resume', arguments: {} }));
    expect(resumed).toMatchObject({ paused: false });
    expect(resumed.approval_id).toBeUndefined();

    await lab.admin.post('/app/executions/abort/next-task').set('Accept', J).send({}).expect(200);
    await until(async () => (await lab.runtime.runner.task(task)).status === 'aborted');
    await lab.admin.post('/app/executions/pause-resume').set('Accept', J).send({}).expect(200); // release the held queue
  }, 30_000);
});

describe('who may do what', () => {
  it('an MCP token opens /app/mcp and nothing else; a user token or a session does not open /app/mcp', async () => {
    const other = await fetch(`${base}/executions/status`, { headers: { Authorization: `Bearer ${mcpToken}`, Accept: 'application/json' } });
    expect(other.status).toBe(401);
    expect((await other.json()).error.message).toMatch(/MCP token/);
    // nor ivoryOS's routes, where a person's login acts without approvals (its /mcp included)
    for (const path of ['/ivoryos/backend_control', '/ivoryos/mcp']) {
      const res = await fetch(`${base.replace(/\/app$/, '')}${path}`, { headers: { Authorization: `Bearer ${mcpToken}`, Accept: 'application/json' } });
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
    }
    const user = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'script' }).expect(201)).body.token;
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${user}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(403);
    await lab.admin.post('/app/mcp').set('Accept', 'application/json').send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }).expect(403);
    const none = await fetch(`${base}/mcp`, { method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: '{}' });
    expect(none.status).toBe(401);
  });

  it("no token decides: an agent's token cannot reach the inbox, a user's token is refused; only the agent's account or an admin decides", async () => {
    const client = await connect();
    const req = answer(await client.callTool({ name: 'pump_dose', arguments: { volume_ml: 1 } }));
    const viaMcp = await fetch(`${base}/approvals/${req.approval_id}/approve`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${mcpToken}`, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(viaMcp.status).toBe(401);
    const user = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'bot' }).expect(201)).body.token;
    const viaToken = await fetch(`${base}/approvals/${req.approval_id}/approve`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${user}`, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(viaToken.status).toBe(403);
    const operator = await signupAndLogin(lab.app, 'olga');
    await decide(req.approval_id, 'approve', undefined, operator).expect(403);
    await decide(req.approval_id, 'reject', 'not now').expect(200);
  });

  it("a user reads their own account's requests only (an admin every one): another's arguments, plans and token names are not shown", async () => {
    const J = 'application/json';
    const client = await connect();
    const adminsReq = answer(await client.callTool({ name: 'pump_dose', arguments: { volume_ml: 7.25 } }));
    const olga = await signupAndLogin(lab.app, 'olga2');
    const olgasToken = (await olga.post('/app/account/tokens').set('Accept', J).send({ name: 'olgas-bot', scope: 'mcp' }).expect(201)).body.token;
    const olgasReq = answer(await (await connect(olgasToken)).callTool({ name: 'pump_dose', arguments: { volume_ml: 3 } }));

    const seen = (await olga.get('/app/approvals').set('Accept', J).expect(200)).body;
    const ids = [...seen.pending, ...seen.done].map((a: { id: number }) => a.id);
    expect(ids).toContain(olgasReq.approval_id);
    expect(ids).not.toContain(adminsReq.approval_id);
    expect(JSON.stringify(seen)).not.toContain('claude');
    await olga.get(`/app/approvals/${adminsReq.approval_id}`).set('Accept', J).expect(404);
    expect((await olga.get(`/app/approvals/${adminsReq.approval_id}`).expect(404)).text).not.toContain('7.25');
    await olga.get(`/app/approvals/${olgasReq.approval_id}`).set('Accept', J).expect(200);
    // an admin reads every one
    const all = (await lab.admin.get('/app/approvals').set('Accept', J).expect(200)).body.pending.map((a: { id: number }) => a.id);
    expect(all).toEqual(expect.arrayContaining([adminsReq.approval_id, olgasReq.approval_id]));
    await lab.admin.get(`/app/approvals/${olgasReq.approval_id}`).set('Accept', J).expect(200);
    await decide(adminsReq.approval_id, 'reject', 'test over').expect(200);
    await decide(olgasReq.approval_id, 'reject', 'test over').expect(200);
  });

  it('a revoked MCP token is refused at once, and its pending request can no longer be approved', async () => {
    const made = (await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'temp', scope: 'mcp' }).expect(201)).body;
    const client = await connect(made.token);
    const req = answer(await client.callTool({ name: 'pump_dose', arguments: { volume_ml: 1 } }));
    await lab.admin
      .post(`/app/account/tokens/${made.id}/delete`)
      .set('Accept', 'application/json')
      .expect((r) => expect(r.status).toBeLessThan(400));
    await expect(client.listTools()).rejects.toThrow();
    const res = await decide(req.approval_id, 'approve').expect(409);
    expect(res.body.error.message).toMatch(/revoked/);
  });

  it('an admin decides per instrument which safety levels need approval; operators cannot', async () => {
    const operator = await signupAndLogin(lab.app, 'oscar');
    await operator.post('/app/approvals/policy').set('Accept', 'application/json').send({ default: [] }).expect(403);
    await lab.admin
      .post('/app/approvals/policy')
      .set('Accept', 'application/json')
      .send({ default: ['hazardous', 'bold'] })
      .expect(400);
    const set = await lab.admin
      .post('/app/approvals/policy')
      .set('Accept', 'application/json')
      .send({ default: ['hazardous'], instruments: { pump: ['idempotent', 'hazardous'] } })
      .expect(200);
    expect(set.body).toEqual({ default: ['hazardous'], instruments: { pump: ['idempotent', 'hazardous'] } });
    const client = await connect();
    const prime = answer(await client.callTool({ name: 'pump_prime', arguments: {} }));
    expect(prime.state).toBe('pending'); // idempotent, but the pump's own policy says so
    const off = answer(await client.callTool({ name: 'hotplate_off', arguments: {} }));
    expect(off.task_id).toEqual(expect.any(Number)); // idempotent elsewhere: at once
    // the page's form: the hotplate needs nothing approved, the pump as before
    await lab.admin.post('/app/approvals/policy').type('form').send('default=hazardous&instrument.hotplate=&instrument.pump=&instrument.pump=idempotent&instrument.pump=hazardous').expect(302);
    expect(await lab.runtime.approvals.policy()).toEqual({ default: ['hazardous'], instruments: { hotplate: [], pump: ['idempotent', 'hazardous'] } });
    const hot = answer(await client.callTool({ name: 'hotplate_set_temperature', arguments: { celsius: 30 } }));
    expect(hot.output).toBe(30);
    await lab.admin
      .post('/app/approvals/policy')
      .set('Accept', 'application/json')
      .send({ default: ['hazardous'] })
      .expect(200);
  });

  it('every agent action is in the audit log with the token that made it', async () => {
    const audit = await lab.runtime.store.audit.list(500);
    const tool = audit.find((a) => a.action === 'agent.tool');
    expect(tool?.detail).toMatchObject({ token: { name: 'claude' }, tool: expect.any(String) });
    expect(audit.some((a) => a.action === 'agent.request')).toBe(true);
    expect(audit.find((a) => a.action === 'approval.approve')?.detail).toMatchObject({ agent_token: { name: 'claude' } });
    expect(audit.some((a) => a.action === 'approval.reject')).toBe(true);
    expect(audit.some((a) => a.action === 'agent.outcome')).toBe(true);
  });
});

describe('lab mcp (stdio)', () => {
  /** The bridge on two in-memory pipes: write a JSON-RPC line in, read the answer with that id out. */
  async function bridge(server: string, token = mcpToken) {
    const input = new PassThrough();
    const output = new PassThrough();
    const logs: string[] = [];
    const b = await startMcpBridge({ server, token }, { input, output }, (l) => logs.push(l));
    let buffer = '';
    const answers = new Map<number, unknown>();
    output.on('data', (d: Buffer) => {
      buffer += d.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const m = JSON.parse(buffer.slice(0, nl)) as { id?: number };
        buffer = buffer.slice(nl + 1);
        if (typeof m.id === 'number') answers.set(m.id, m);
      }
    });
    const ask = async (id: number, method: string, params: unknown = {}) => {
      input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      await until(async () => answers.has(id), 10_000);
      return answers.get(id) as { result?: Record<string, unknown>; error?: { message: string } };
    };
    return { b, ask, logs };
  }
  const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'desktop', version: '1' } };

  it('passes messages between stdio and the running labdeck: initialize, the tools, a call', async () => {
    const { b, ask } = await bridge(base);
    expect((await ask(1, 'initialize', init)).result).toMatchObject({ serverInfo: { name: 'labdeck' } });
    const tools = (await ask(2, 'tools/list')).result as { tools: { name: string }[] };
    expect(tools.tools.map((t) => t.name)).toContain('pump_dose');
    const call = (await ask(3, 'tools/call', { name: 'pump_status', arguments: {} })).result as { content: { text: string }[] };
    expect(JSON.parse(call.content[0].text)).toHaveProperty('task_id');
    await b.stop();
  });

  it('answers each request with an error saying so when labdeck cannot be reached, and refuses a token that is not an MCP token', async () => {
    const { b, ask, logs } = await bridge('http://127.0.0.1:9/app');
    const r = await ask(1, 'initialize', init);
    expect(r.error?.message).toMatch(/did not answer/);
    expect(logs.join('\n')).toMatch(/did not answer/);
    await b.stop();
    await expect(startMcpBridge({ server: base, token: 'lab_xyz' })).rejects.toThrow(/MCP token/);
    await expect(startMcpBridge({ server: 'ftp://x', token: mcpToken })).rejects.toThrow(/http/);
  });
});
