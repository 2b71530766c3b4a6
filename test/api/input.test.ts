/**
 * Input steps (issue 31): a run waits in `waiting_input` until a person gives the value (POST
 * /executions/input); a value that does not fit is a 400 naming the field and the run keeps waiting; the value
 * is recorded with who gave it, saved as the step's variable, and in the run's data CSV. A waiting input
 * survives a restart: the labdeck that starts next asks for it again, and the run completes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp, type App } from '../../server/app.js';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { testDbUrl } from '../helpers/db.js';
import { PASSWORD, signupAndLogin, startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';

const PH = {
  name: 'read-ph',
  outputs: ['pH'],
  main: [
    { kind: 'call', instrument: 'noop', method: 'ping', args: {} },
    { kind: 'input', prompt: 'Read the pH of the sample', save_as: 'pH', schema: { type: 'number', minimum: 0, maximum: 14, unit: 'pH' } },
  ],
};

describe('an input step (pH 0-14)', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
    await lab.admin.post('/app/workflows').set('Accept', J).send(PH).expect(201);
  });
  afterAll(() => lab.close());

  const status = async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;

  it('waits, refuses "abc" and 15 naming the field, completes on 7.2 with 7.2 in its data CSV', async () => {
    const { task_id } = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'read-ph', repeat: 1 }).expect(200)).body;
    await until(async () => (await status()).state === 'waiting_input');
    const s = await status();
    expect(s.input).toMatchObject({ task_id, prompt: 'Read the pH of the sample', save_as: 'pH', schema: { type: 'number', minimum: 0, maximum: 14 }, expects: 'a number from 0 to 14 (pH)' });

    for (const bad of ['abc', 15, '']) {
      const res = await lab.admin.post('/app/executions/input').set('Accept', J).send({ value: bad }).expect(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'value', message: expect.stringContaining('from 0 to 14') })]);
      expect((await status()).state).toBe('waiting_input'); // still waiting
    }
    // a field the route does not take is refused by name
    const extra = await lab.admin.post('/app/executions/input').set('Accept', J).send({ value: 7, colour: 'red' }).expect(400);
    expect(JSON.stringify(extra.body.error)).toContain('colour');

    // a form's text is read as a number
    await lab.admin.post('/app/executions/input').type('form').send({ value: '7.2' }).expect(302);
    await until(async () => (await lab.admin.get(`/app/executions/queue/task/${task_id}`).set('Accept', J).expect(200)).body.status === 'done');
    const run = (await lab.admin.get(`/app/executions/queue/task/${task_id}`).set('Accept', J)).body.run_id;
    const csv = (await lab.admin.get(`/app/files/execution-data/run-${run}.csv`).expect(200)).text;
    expect(csv.split(/\r?\n/)[0]).toBe('iteration,status,pH');
    expect(csv.split(/\r?\n/)[1]).toBe('1,ok,7.2');
    // recorded with who gave it and when
    const record = (await lab.admin.get(`/app/executions/records/${run}`).set('Accept', J).expect(200)).body;
    const step = JSON.stringify(record);
    expect(step).toContain('(input)');
    const steps = await lab.runtime.store.runSteps.list(run);
    const given = steps.find((x) => x.instrument === '(input)')!;
    expect(given).toMatchObject({ method: 'pH', output: 7.2, status: 'ok' });
    expect(given.userId).toBe((await lab.runtime.store.users.byName('ada'))!.id);
    expect(given.endedAt).toBeInstanceOf(Date);
    // nothing waits now
    await lab.admin.post('/app/executions/input').set('Accept', J).send({ value: 7 }).expect(409);
  });

  it('a file input takes an upload (multipart "file"), kept under a generated name; a file of another type is refused', async () => {
    const wf = { name: 'plate-map', outputs: ['map'], main: [{ kind: 'input', prompt: 'Upload the plate map', save_as: 'map', schema: { type: 'file', accept: '.csv', max_bytes: 1000 } }] };
    await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
    const { task_id } = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'plate-map', repeat: 1 }).expect(200)).body;
    await until(async () => (await status()).state === 'waiting_input');
    const png = await lab.admin.post('/app/executions/input').set('Accept', J).attach('file', Buffer.from('not a csv'), 'photo.png').expect(400);
    expect(png.body.error.details[0].field).toBe('file');
    const noFile = await lab.admin.post('/app/executions/input').set('Accept', J).send({ value: 'x' }).expect(400);
    expect(noFile.body.error.details[0]).toMatchObject({ field: 'file', message: expect.stringContaining('"file"') });
    const ok = await lab.admin.post('/app/executions/input').set('Accept', J).field('task_id', String(task_id)).attach('file', Buffer.from('well,dose\nA1,1\n'), 'plate.csv').expect(200);
    expect(ok.body.value).toMatchObject({ original_name: 'plate.csv', bytes: 15, filename: expect.stringMatching(/^[0-9a-f]{24}\.csv$/) });
    await until(async () => (await lab.admin.get(`/app/executions/queue/task/${task_id}`).set('Accept', J)).body.status === 'done');
  });

  it('refuses a workflow whose input schema is wrong, naming the step path', async () => {
    const bad = { name: 'bad-input', main: [{ kind: 'input', prompt: 'x', save_as: 'x', schema: { type: 'number', minimum: 5, maximum: 1 } }] };
    const res = await lab.admin.post('/app/workflows').set('Accept', J).send(bad).expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'main[0].schema.maximum' })]);
    const kind = await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({ name: 'bad2', main: [{ kind: 'input', prompt: 'x', save_as: 'x', schema: { type: 'colour' } }] })
      .expect(400);
    expect(kind.body.error.details[0].field).toBe('main[0].schema.type');
  });
});

describe('a waiting input survives a restart', () => {
  it('the next labdeck asks for it again; the value given there completes the run', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'labdeck-input-'));
    const db = await testDbUrl();
    const open = async (): Promise<{ runtime: Runtime; app: App }> => {
      const runtime = await createRuntime({ dataDir, db: db.url, watch: false, pluginDirs: [], labHost: { kind: 'serve', leaseMs: 2000 } });
      return { runtime, app: await createApp(runtime) };
    };
    let first: { runtime: Runtime; app: App } | null = await open();
    let second: { runtime: Runtime; app: App } | null = null;
    try {
      const ada = await signupAndLogin(first.app, 'ada');
      await ada.post('/app/workflows').set('Accept', J).send(PH).expect(201);
      const { task_id } = (await ada.post('/app/executions/config').set('Accept', J).send({ workflow: 'read-ph', repeat: 2 }).expect(200)).body;
      const st = async (agent: ReturnType<typeof request.agent>) => (await agent.get('/app/executions/status').set('Accept', J).expect(200)).body;
      await until(async () => (await st(ada)).state === 'waiting_input');
      await ada.post('/app/executions/input').set('Accept', J).send({ value: 6.5 }).expect(200);
      await until(async () => (await st(ada)).state === 'waiting_input' && (await st(ada)).progress.iteration === 2);
      // kill: the process stops heart-beating and its lease is over, its run left as it was
      first.runtime.runner.host.halt();
      await first.runtime.notifications.close(); // a killed process delivers nothing either
      await first.runtime.store.hosts.stop(first.runtime.runner.host.id);
      (first.app.locals.sessionStore as { close(): void }).close();
      const dead = first;
      first = null;
      second = await open();
      const again = request.agent(second.app);
      await again.post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
      await until(async () => (await st(again)).state === 'waiting_input');
      expect((await st(again)).input).toMatchObject({ task_id, save_as: 'pH', prompt: 'Read the pH of the sample' });
      await again.post('/app/executions/input').set('Accept', J).send({ value: '15' }).expect(400);
      await again.post('/app/executions/input').set('Accept', J).send({ value: 7.2 }).expect(200);
      await until(async () => (await again.get(`/app/executions/queue/task/${task_id}`).set('Accept', J)).body.status === 'done');
      const run = (await again.get(`/app/executions/queue/task/${task_id}`).set('Accept', J)).body.run_id;
      const csv = (await again.get(`/app/files/execution-data/run-${run}.csv`).expect(200)).text.split(/\r?\n/);
      expect(csv.slice(1, 3)).toEqual(['1,ok,6.5', '2,ok,7.2']);
      // the input of iteration 2 has one record, given after the restart; the first one's value was replayed
      const inputs = (await second.runtime.store.runSteps.list(run)).filter((s) => s.instrument === '(input)');
      expect(inputs.map((s) => [s.iteration, s.output, s.status])).toEqual([
        [0, 6.5, 'ok'],
        [1, 7.2, 'ok'],
      ]);
      await dead.runtime.close().catch(() => undefined);
    } finally {
      if (first) await first.runtime.close().catch(() => undefined);
      if (second) {
        (second.app.locals.sessionStore as { close(): void }).close();
        await second.runtime.close();
      }
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('the attention list', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
    await lab.admin.post('/app/workflows').set('Accept', J).send(PH).expect(201);
  });
  afterAll(() => lab.close());
  const attention = async () => (await lab.admin.get('/app/attention').set('Accept', J).expect(200)).body;

  it('lists a waiting input with what to do and a link, read from the database; the navigation counts it', async () => {
    expect((await attention()).items.filter((i: { kind: string }) => i.kind === 'input')).toEqual([]);
    const { task_id } = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'read-ph', repeat: 1 }).expect(200)).body;
    await until(async () => (await attention()).items.some((i: { kind: string }) => i.kind === 'input'));
    const list = await attention();
    const item = list.items.find((i: { kind: string }) => i.kind === 'input');
    expect(item).toMatchObject({
      task_id,
      title: 'read-ph × 1: Read the pH of the sample',
      link: '/executions/config',
      url: '/app/executions/config',
      detail: { save_as: 'pH', expects: 'a number from 0 to 14 (pH)' },
    });
    expect(item.action).toContain('Give pH');
    expect(list.count).toBe(list.items.length);
    const page = await lab.admin.get('/app/attention').expect(200);
    expect(page.text).toContain('Read the pH of the sample');
    expect(page.text).toMatch(/id="attention-count"[^>]*>1</);
    await lab.admin.post('/app/executions/input').set('Accept', J).send({ value: 7 }).expect(200);
    await until(async () => (await lab.admin.get(`/app/executions/queue/task/${task_id}`).set('Accept', J)).body.status === 'done');
    expect((await attention()).items).toEqual([]);
  });

  it('lists a held queue after an abort, and a pending task whose instruments no labdeck drives', async () => {
    const { task_id } = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'read-ph', repeat: 1 }).expect(200)).body;
    await until(async () => (await lab.admin.get('/app/executions/status').set('Accept', J)).body.state === 'waiting_input');
    await lab.admin.post('/app/executions/abort/next-task').set('Accept', J).expect(200);
    await until(async () => (await attention()).items.some((i: { kind: string }) => i.kind === 'held_queue'));
    expect((await attention()).items.find((i: { kind: string }) => i.kind === 'held_queue')).toMatchObject({ task_id, action: expect.stringContaining('Release the queue') });
    // the input's record says no value was given
    const run = (await lab.admin.get(`/app/executions/queue/task/${task_id}`).set('Accept', J)).body.run_id;
    expect((await lab.runtime.store.runSteps.list(run)).find((s) => s.instrument === '(input)')).toMatchObject({ status: 'error' });
    // the queue is held in the database as the abort begins; the runner lets the task go a moment later
    await until(async () => (await lab.admin.get('/app/executions/status').set('Accept', J)).body.busy === false);
    await lab.admin.post('/app/executions/release').set('Accept', J).expect(200);
    // a task queued for an instrument that goes away: the labdeck that drove it is gone
    await lab.runtime.store.queue.add({
      name: 'ghost × 1',
      kind: 'workflow',
      payload: {
        workflow: 'g',
        version: 1,
        definition: { name: 'g', parameters: [], outputs: [], prep: [], main: [{ kind: 'call', instrument: 'ghost', method: 'x', args: {} }], cleanup: [] },
        repeat: { times: 1, row: {} },
      },
      createdBy: null,
    });
    const items = (await attention()).items;
    expect(items.find((i: { kind: string }) => i.kind === 'host_offline')).toMatchObject({ title: expect.stringContaining('waits for ghost, which no labdeck drives now') });
  });
});
