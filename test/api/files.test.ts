/**
 * The "Workflow files" routes: the empty config CSV, config and history uploads (201 JSON / 302 forms / 400
 * naming the line / 413 / 404 workflow), the preview, and downloads of uploads and of a run's data.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const LIMIT = 64 * 1024;

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab({ uploadLimitBytes: LIMIT });
  await lab.runtime.store.workflows.save(
    'dose',
    {
      name: 'dose',
      parameters: [
        { name: 'volume', type: 'number' },
        { name: 'solvent', type: 'string', default: 'water' },
      ],
      outputs: ['mass'],
      main: [],
    },
    null,
  );
});
afterAll(() => lab.close());

const csv = (text: string) => Buffer.from(text);
const uploadJson = (route: string, text: string, fields: Record<string, string> = {}, name = 'mine.csv') => {
  let req = lab.admin.post(`/app/files/${route}`).set('Accept', J);
  for (const [k, v] of Object.entries(fields)) req = req.field(k, v);
  return req.attach('file', csv(text), name);
};

describe('GET /files/execution-configs', () => {
  it("downloads the header of the workflow's parameters, as an attachment", async () => {
    const res = await lab.admin.get('/app/files/execution-configs?workflow=dose').expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="?dose-config\.csv"?$/);
    expect(res.text).toBe('volume,solvent\r\n');
  });

  it('without ?workflow= uses the workflow last named in the session, else 400 naming workflow', async () => {
    const { app } = lab;
    const fresh = request.agent(app);
    await fresh.post('/app/auth/signup').type('form').send({ username: 'nina', password: 'correct horse' }).expect(302);
    await fresh.post('/app/auth/login').type('form').send({ username: 'nina', password: 'correct horse' }).expect(302);
    const none = await fresh.get('/app/files/execution-configs').set('Accept', J).expect(400);
    expect(none.body.error.details).toEqual([{ field: 'workflow', message: 'required' }]);
    // an upload for a workflow makes it the session's workflow too
    await fresh.post('/app/files/execution-data').set('Accept', J).field('workflow', 'dose').attach('file', csv('volume\n1\n'), 'h.csv').expect(201);
    expect((await fresh.get('/app/files/execution-configs').expect(200)).text).toBe('volume,solvent\r\n');
    await lab.runtime.store.workflows.save('bare', { name: 'bare', main: [] }, null);
    // a workflow without parameters: an empty header line
    expect((await fresh.get('/app/files/execution-configs?workflow=bare').expect(200)).text).toBe('\r\n');
    expect((await fresh.get('/app/files/execution-configs').expect(200)).text).toBe('\r\n');
  });

  it('404s an unknown workflow; 401/302 without login', async () => {
    const res = await lab.admin.get('/app/files/execution-configs?workflow=ghost').set('Accept', J).expect(404);
    expect(res.body.error.details).toEqual([{ field: 'workflow', message: 'unknown workflow' }]);
    await request(lab.app).get('/app/files/execution-configs?workflow=dose').set('Accept', J).expect(401);
    const page = await request(lab.app).get('/files/execution-configs?workflow=dose').expect(302);
    expect(page.headers.location).toBe('/auth/login?next=%2Ffiles%2Fexecution-configs%3Fworkflow%3Ddose');
  });
});

describe('POST /files/batch-configs and /files/execution-data', () => {
  it('stores a config under a generated name: 201 { filename, rows, columns } and a Location', async () => {
    const res = await uploadJson('batch-configs', 'volume,solvent\nnumber,str\n1.5,water\n2,\n', { workflow: 'dose' }).expect(201);
    expect(res.body).toMatchObject({ rows: 2, columns: ['volume', 'solvent'], kind: 'config', original_name: 'mine.csv', workflow: 'dose', types: ['number', 'str'] });
    expect(res.body.filename).toMatch(/^cfg-[0-9a-f]{16}\.csv$/);
    expect(res.headers.location).toBe(`/app/files/preview/${res.body.filename}`);
    expect(fs.existsSync(path.join(lab.dataDir, 'files', 'config', res.body.filename))).toBe(true);
    expect(
      await lab.runtime.files.configRows(res.body.filename, {
        name: 'dose',
        parameters: [
          { name: 'volume', type: 'number' },
          { name: 'solvent', type: 'string', default: 'water' },
        ],
      }),
    ).toEqual([
      { volume: 1.5, solvent: 'water' },
      { volume: 2, solvent: 'water' },
    ]);
  });

  it('answers JSON to a script that does not ask for HTML (curl sends */*)', async () => {
    const res = await lab.admin.post('/app/files/execution-data').set('Accept', '*/*').attach('file', csv('volume,mass\n1,2\n'), 'h.csv').expect(201);
    expect(res.body.filename).toMatch(/^hist-[0-9a-f]{16}\.csv$/);
  });

  it('checks a config against the workflow: 400 naming the line and column', async () => {
    const res = await uploadJson('batch-configs', 'volume\n1\nlots\n', { workflow: 'dose' }).expect(400);
    expect(res.body.error.code).toBe('invalid_input');
    expect(res.body.error.details).toEqual([{ field: 'line 3, column volume', message: expect.stringContaining('not a number') }]);
    const col = await uploadJson('batch-configs', 'volume,speed\n1,2\n', { workflow: 'dose' }).expect(400);
    expect(col.body.error.details[0].field).toBe('line 1, column speed');
  });

  it('checks a history file against the workflow: columns are parameters or outputs', async () => {
    await uploadJson('execution-data', 'volume,mass\n1,0.9\n', { workflow: 'dose' }).expect(201);
    const res = await uploadJson('execution-data', 'volume,yield\n1,0.9\n', { workflow: 'dose' }).expect(400);
    expect(res.body.error.details[0]).toMatchObject({ field: 'line 1, column yield' });
  });

  it('400s a malformed CSV naming the line, a missing file, a wrong field or two files', async () => {
    const bad = await uploadJson('batch-configs', 'volume,solvent\n1,water\n2\n').expect(400);
    expect(bad.body.error.message).toContain('line 3');
    expect(bad.body.error.details).toEqual([{ field: 'line 3', message: 'has 1 cell, but the header has 2 columns' }]);
    const quote = await uploadJson('execution-data', 'a,b\n1,2\n"3,4\n').expect(400);
    expect(quote.body.error.details[0].field).toBe('line 3');
    const none = await lab.admin.post('/app/files/batch-configs').set('Accept', J).field('workflow', 'dose').expect(400);
    expect(none.body.error.details).toEqual([{ field: 'file', message: 'is required: upload the CSV as the multipart field "file"' }]);
    await lab.admin.post('/app/files/batch-configs').set('Accept', J).send({ file: 'volume\n1\n' }).expect(400);
    const wrong = await lab.admin.post('/app/files/batch-configs').set('Accept', J).attach('csv', csv('volume\n1\n'), 'c.csv').expect(400);
    expect(wrong.body.error.details[0].field).toBe('file');
    await lab.admin.post('/app/files/batch-configs').set('Accept', J).attach('file', csv('volume\n1\n'), 'a.csv').attach('file', csv('volume\n2\n'), 'b.csv').expect(400);
  });

  it('404s an unknown workflow and 413s a file over the limit, storing nothing', async () => {
    const before = (await lab.runtime.store.files.list('config')).length;
    const res = await uploadJson('batch-configs', 'volume\n1\n', { workflow: 'ghost' }).expect(404);
    expect(res.body.error.details).toEqual([{ field: 'workflow', message: 'unknown workflow' }]);
    const big = `volume\n${'1.000000\n'.repeat(Math.ceil(LIMIT / 9) + 10)}`;
    const tooBig = await uploadJson('batch-configs', big).expect(413);
    expect(tooBig.body.error).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('64 KB') });
    expect((await lab.runtime.store.files.list('config')).length).toBe(before);
  });

  it('sends a browser form back to its page with ?uploaded=, or to the execution page', async () => {
    const host = '127.0.0.1';
    const back = await lab.admin
      .post('/app/files/batch-configs')
      .set('Accept', HTML)
      .set('Host', host)
      .set('Referer', `http://${host}/app/executions/config?workflow=dose`)
      .field('workflow', 'dose')
      .attach('file', csv('volume\n1\n'), 'c.csv')
      .expect(302);
    expect(back.headers.location).toMatch(/^\/app\/executions\/config\?workflow=dose&uploaded=cfg-[0-9a-f]{16}\.csv$/);
    const foreign = await lab.admin.post('/files/execution-data').set('Accept', HTML).set('Referer', 'http://evil.example/x').attach('file', csv('volume\n1\n'), 'h.csv').expect(302);
    expect(foreign.headers.location).toMatch(/^\/executions\/config\?uploaded=hist-[0-9a-f]{16}\.csv$/);
    // a form's error is the error page, with the line
    const err = await lab.admin.post('/app/files/batch-configs').set('Accept', HTML).attach('file', csv('a,b\n1\n'), 'c.csv').expect(400);
    expect(err.headers['content-type']).toContain('text/html');
    expect(err.text).toContain('line 2');
  });

  it('needs login', async () => {
    await request(lab.app).post('/app/files/batch-configs').set('Accept', J).attach('file', csv('volume\n1\n'), 'c.csv').expect(401);
    await request(lab.app).post('/app/files/execution-data').set('Accept', J).attach('file', csv('volume\n1\n'), 'c.csv').expect(401);
  });
});

describe('GET /files/preview/{filename}', () => {
  it('shows the first 200 rows with the count, as JSON and as a page', async () => {
    const text = `volume,note\n${Array.from({ length: 250 }, (_, i) => `${i},<b>n${i}</b>`).join('\n')}\n`;
    const { filename } = (await uploadJson('execution-data', text, {}, 'big <run>.csv').expect(201)).body;
    const json = await lab.admin.get(`/app/files/preview/${filename}`).set('Accept', J).expect(200);
    expect(json.body).toMatchObject({ filename, original_name: 'big <run>.csv', kind: 'history', workflow: null, columns: ['volume', 'note'], total: 250 });
    expect(json.body.rows).toHaveLength(200);
    expect(json.body.rows[199]).toEqual({ volume: '199', note: '<b>n199</b>' });
    const page = await lab.admin.get(`/app/files/preview/${filename}`).expect(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.text).toContain('Showing the first 200 of 250 rows.');
    expect(page.text).toContain('&lt;b&gt;n0&lt;/b&gt;');
    expect(page.text).not.toContain('<b>n0</b>');
    expect(page.text).toContain(`href="/app/files/execution-data/${filename}"`);
  });

  it('404s unknown names and anything that is not a generated name', async () => {
    fs.writeFileSync(path.join(lab.dataDir, 'secret.csv'), 'a\n1\n');
    for (const name of ['hist-0000000000000000.csv', '..%2fsecret.csv', '%2e%2e%2fsecret.csv', '..%2f..%2fsecret.csv', 'run-1.csv', '%2fetc%2fpasswd']) {
      const res = await lab.admin.get(`/app/files/preview/${name}`).set('Accept', J);
      expect({ name, status: res.status }).toEqual({ name, status: 404 });
    }
    await request(lab.app).get('/app/files/preview/hist-0000000000000000.csv').set('Accept', J).expect(401);
  });
});

describe('GET /files/execution-data/{filename}', () => {
  it('downloads an upload written out again: type row dropped, formulas neutralised, numbers kept', async () => {
    const { filename } = (await uploadJson('execution-data', 'volume,note\nfloat,str\n-1.5,=cmd|calc\n2,@SUM(A1)\n', {}, 'evil.csv').expect(201)).body;
    const res = await lab.admin.get(`/app/files/execution-data/${filename}`).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="?evil\.csv"?$/);
    expect(res.text).toBe("volume,note\r\n-1.5,'=cmd|calc\r\n2,'@SUM(A1)\r\n");
  });

  it('downloads run-<id>.csv: parameters then outputs, one row per main iteration', async () => {
    const { store } = lab.runtime;
    const run = await store.runs.create({
      taskId: null,
      name: 'dose × 2',
      workflowName: 'dose',
      workflowVersion: 1,
      workflow: (await store.workflows.get('dose'))!.definition,
      parameters: [],
      status: 'completed',
      userId: null,
      startedAt: new Date(),
    });
    for (const [i, volume, mass] of [
      [0, -1, 0.5],
      [1, 2, -0.25],
    ] as const) {
      const id = await store.phases.create({ runId: run.id, phase: 'main', iteration: i, params: { volume, solvent: i ? '+x' : 'water' }, startedAt: new Date() });
      await store.phases.update(id, { outputs: { mass }, status: 'ok' });
    }
    const res = await lab.admin.get(`/app/files/execution-data/run-${run.id}.csv`).expect(200);
    expect(res.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="?run-${run.id}\\.csv"?$`));
    expect(res.text).toBe("iteration,status,volume,solvent,mass\r\n1,ok,-1,water,0.5\r\n2,ok,2,'+x,-0.25\r\n");
    // it is a history file of the workflow: it uploads back
    await lab.admin
      .post('/app/files/execution-data')
      .set('Accept', J)
      .field('workflow', 'dose')
      .attach('file', Buffer.from(res.text.replace("'+x", 'x')), 'run.csv')
      .expect(201);
  });

  it('spreads a dict output into a column per field (cell.current_ma), not a JSON cell, and it uploads back', async () => {
    const { store } = lab.runtime;
    const workflow = { name: 'cells', parameters: [{ name: 'volume', type: 'number' }], outputs: ['cell', { name: 'power', from: 'cell.power_mw' }], main: [] };
    await store.workflows.save('cells', workflow, null);
    const run = await store.runs.create({ taskId: null, name: 'cells', workflowName: 'cells', workflowVersion: 1, workflow, parameters: [], status: 'completed', userId: null, startedAt: new Date() });
    for (const [i, current] of [
      [0, 2.5],
      [1, 3],
    ] as const) {
      const id = await store.phases.create({ runId: run.id, phase: 'main', iteration: i, params: { volume: i }, startedAt: new Date() });
      await store.phases.update(id, { outputs: { cell: { current_ma: current, power_mw: current * 2 }, power: current * 2 }, status: 'ok' });
    }
    const res = await lab.admin.get(`/app/files/execution-data/run-${run.id}.csv`).expect(200);
    expect(res.text).toBe('iteration,status,volume,cell.current_ma,cell.power_mw,power\r\n1,ok,0,2.5,5,5\r\n2,ok,1,3,6,6\r\n');
    // a history file of the workflow: its field columns are outputs of it
    await lab.admin.post('/app/files/execution-data').set('Accept', J).field('workflow', 'cells').attach('file', Buffer.from(res.text), 'run.csv').expect(201);
  });

  it('404s an unknown run, an unknown upload, and path tricks; 401 without login', async () => {
    for (const name of ['run-999999.csv', 'cfg-0000000000000000.csv', '..%2f..%2fsecret.csv', 'secret.csv', '.%2e%2fsecret.csv']) {
      const res = await lab.admin.get(`/app/files/execution-data/${name}`).set('Accept', J);
      expect({ name, status: res.status }).toEqual({ name, status: 404 });
    }
    await request(lab.app).get('/app/files/execution-data/run-1.csv').set('Accept', J).expect(401);
  });
});

describe('running an uploaded config file', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
    await lab.runtime.store.workflows.save(
      'cf-dose',
      { name: 'cf-dose', parameters: [{ name: 'volume', type: 'number' }], main: [{ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } }] },
      null,
    );
  });
  afterAll(() => lab.close());

  it('queues the rows of an uploaded config CSV, and names the line of a bad value', async () => {
    const up = await lab.admin.post('/app/files/batch-configs').set('Accept', 'application/json').field('workflow', 'cf-dose').attach('file', Buffer.from('volume\n1\n2\n'), 'doses.csv').expect(201);
    const page = await lab.admin.get(`/app/executions/config?workflow=cf-dose&uploaded=${up.body.filename}`).expect(200);
    expect(page.text).toContain('Queue these rows');
    const run = await lab.admin.post('/app/executions/config').set('Accept', 'application/json').send({ workflow: 'cf-dose', config_file: up.body.filename }).expect(200);
    const task = await lab.admin.get(`/app/executions/queue/task/${run.body.task_id}`).expect(200);
    expect(task.body.payload.rows).toEqual([{ volume: 1 }, { volume: 2 }]);
    const bad = await lab.admin.post('/app/files/batch-configs').set('Accept', 'application/json').attach('file', Buffer.from('volume\n1\nlots\n'), 'bad.csv').expect(201);
    const res = await lab.admin.post('/app/executions/config').set('Accept', 'application/json').send({ workflow: 'cf-dose', config_file: bad.body.filename }).expect(400);
    expect(JSON.stringify(res.body.error.details)).toContain('line 3');
    await lab.admin.post('/app/executions/config').set('Accept', 'application/json').send({ workflow: 'cf-dose', config_file: 'cfg-0000000000000000.csv' }).expect(404);
  });
});
