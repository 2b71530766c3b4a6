/**
 * One operation through every door (issue 27 item 1, docs/architecture.md): a run control and a direct call
 * asked through /app, /ivoryos and the MCP server are the same operation of core/operations: the same effect
 * on the runner or the instrument, and the same audit line (the same user, action and detail; `via` names
 * the door when it is not /app, and an agent's line names its token).
 */
import request from 'supertest';
import { PASSWORD, startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';
/** A task that stays running until it is aborted: one long wait. */
const LONG = { name: 'long', main: [{ kind: 'wait', seconds: 30 }] };

let lab: TestLab;
let ivoryos: ReturnType<typeof request.agent>;
let mcpToken: string;
let adaId: number;
let rpcId = 0;

beforeAll(async () => {
  lab = await startLab();
  adaId = (await lab.runtime.store.users.byName('ada'))!.id;
  await lab.admin.post('/app/workflows').set('Accept', J).send(LONG).expect(201);
  ivoryos = request.agent(lab.app);
  await ivoryos.post('/ivoryos/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
  mcpToken = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'claude', scope: 'mcp' }).expect(201)).body.token;
}, 30_000);
afterAll(async () => {
  await lab?.close();
});

/** An MCP tool call as an assistant makes it (one stateless JSON-RPC message); its answer, or what it refused. */
async function tool(name: string, args: Record<string, unknown> = {}) {
  const res = await request(lab.app)
    .post('/app/mcp')
    .set('Authorization', `Bearer ${mcpToken}`)
    .set('Accept', 'application/json, text/event-stream')
    .send({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name, arguments: args } })
    .expect(200);
  const result = res.body.result as { isError?: boolean; content: { text: string }[] };
  if (result.isError) throw new Error(`${name}: ${result.content[0].text}`);
  return JSON.parse(result.content[0].text);
}

const status = () => lab.runtime.ops.runs.status();

/** Queue LONG through /app and wait until it runs. */
async function running(): Promise<number> {
  const { task_id } = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'long', repeat: 1 }).expect(200)).body;
  await until(async () => status().current_task?.id === task_id && status().state === 'running');
  return task_id;
}

/** The latest audit line of `action`, as compared across doors: `via` and `token` apart. */
async function lastLine(action: string) {
  const row = (await lab.runtime.store.audit.list(50)).find((a) => a.action === action);
  expect(row).toBeDefined();
  const { via, token, ...detail } = row!.detail as Record<string, unknown>;
  return { line: { userId: row!.userId, action: row!.action, detail }, via, token };
}

it('pause: /app and MCP pause the running task alike and write the same runner.pause line', async () => {
  const lines = [];
  for (const [door, pause] of [
    ['app', () => lab.admin.post('/app/executions/pause').set('Accept', J).send({}).expect(200)],
    ['mcp', () => tool('lab_pause')],
  ] as const) {
    const task = await running();
    await pause();
    expect(status()).toMatchObject({ paused: true, current_task: { id: task } });
    const { line, via, token } = await lastLine('runner.pause');
    expect(via).toBe(door === 'app' ? undefined : door);
    if (door === 'mcp') expect(token).toMatchObject({ name: 'claude' });
    lines.push(line);
    await lab.admin.post('/app/executions/resume').set('Accept', J).send({}).expect(200);
    await lab.admin.post('/app/executions/abort/next-task').set('Accept', J).send({}).expect(200);
    await until(async () => (await lab.runtime.ops.runs.task(task)).status === 'aborted' && !status().busy);
    await lab.admin.post('/app/executions/release').set('Accept', J).send({}).expect(200);
    expect(status()).toMatchObject({ paused: false, queue_held: false });
  }
  // the status after the pause is the runner's: running while the step in flight ends, paused once it has
  for (const line of lines) expect(line).toEqual({ userId: adaId, action: 'runner.pause', detail: { status: expect.stringMatching(/^(running|paused)$/) } });
}, 30_000);

it('pause-resume: /app and /ivoryos toggle the pause of the running task alike, with the same runner.pause-resume line', async () => {
  const task = await running();
  const lines = [];
  for (const [door, toggle] of [
    ['app', () => lab.admin.post('/app/executions/pause-resume').set('Accept', J).send({}).expect(200)],
    ['ivoryos', () => ivoryos.post('/ivoryos/executions/pause-resume').set('Accept', '*/*').expect(200)],
  ] as const) {
    await toggle();
    expect(status()).toMatchObject({ paused: true, current_task: { id: task } });
    const { line, via } = await lastLine('runner.pause-resume');
    expect(via).toBe(door === 'app' ? undefined : door);
    lines.push(line);
    await lab.admin.post('/app/executions/resume').set('Accept', J).send({}).expect(200);
    expect(status().paused).toBe(false);
  }
  expect(lines[1]).toEqual(lines[0]);
  await lab.admin.post('/app/executions/abort/next-task').set('Accept', J).send({}).expect(200);
  await until(async () => (await lab.runtime.ops.runs.task(task)).status === 'aborted' && !status().busy);
  await lab.admin.post('/app/executions/release').set('Accept', J).send({}).expect(200);
}, 30_000);

it('abort next-task: /app, /ivoryos and MCP abort the running task alike (aborted, queue held) and write the same runner.abort.next-task line', async () => {
  const lines = [];
  for (const [door, abort] of [
    ['app', () => lab.admin.post('/app/executions/abort/next-task').set('Accept', J).send({}).expect(200)],
    ['ivoryos', () => ivoryos.post('/ivoryos/executions/abort/next-task').set('Accept', '*/*').expect(200)],
    ['mcp', () => tool('lab_abort')],
  ] as const) {
    const task = await running();
    await abort();
    await until(async () => (await lab.runtime.ops.runs.task(task)).status === 'aborted' && !status().busy);
    expect(status().queue_held).toBe(true);
    const { line, via } = await lastLine('runner.abort.next-task');
    expect(via).toBe(door === 'app' ? undefined : door);
    lines.push(line);
    await lab.admin.post('/app/executions/release').set('Accept', J).send({}).expect(200);
  }
  expect(lines[1]).toEqual(lines[0]);
  expect(lines[2]).toEqual(lines[0]);
  expect(lines[0]).toMatchObject({ userId: adaId, action: 'runner.abort.next-task' });
}, 40_000);

it('a direct call through /app, /ivoryos and MCP is the same call: one record each, by the same user, with the same instrument, method, arguments and output', async () => {
  const ids = [
    (await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'status', args: {} }).expect(200)).body.task_id,
    (await ivoryos.post('/ivoryos/instruments/deck.pump').set('Accept', '*/*').send({ hidden_name: 'status', hidden_wait: true }).expect(200)).body.task_id,
    (await tool('pump_status')).task_id, // read-only: an agent's call runs at once
  ];
  expect(new Set(ids).size).toBe(3);
  const records = await Promise.all(ids.map((id: number) => lab.runtime.store.steps.get(id)));
  const same = records.map((s) => ({ instrument: s!.instrument, method: s!.method, args: s!.args, output: s!.output, status: s!.status, userId: s!.userId, runId: s!.runId }));
  expect(same[0]).toEqual({ instrument: 'pump', method: 'status', args: {}, output: expect.anything(), status: 'ok', userId: adaId, runId: null });
  expect(same[1]).toEqual(same[0]);
  expect(same[2]).toEqual(same[0]);
});
