/** The workflow routes: create, read, new versions, delete, list, the builder pages; every status they answer. */
import request from 'supertest';
import { signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';

/** The two-step workflow of DESIGN.md §4 on the demo deck. */
const doseAndWeigh = (name = 'dose-and-weigh') => ({
  name,
  description: 'Dose a volume, weigh it',
  parameters: [{ name: 'volume', type: 'number', default: 1 }],
  outputs: ['mass'],
  main: [
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } },
    { kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' },
  ],
});

describe('workflow routes', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(() => lab.close());

  it('creates a workflow: 201 with version 1, the stored document with defaults, and a Location', async () => {
    const res = await lab.admin.post('/app/workflows').set('Accept', J).send(doseAndWeigh()).expect(201);
    expect(res.body).toMatchObject({ name: 'dose-and-weigh', version: 1 });
    expect(res.body.workflow.prep).toEqual([]);
    expect(res.body.workflow.cleanup).toEqual([]);
    expect(res.body.workflow.main[0].args).toEqual({ volume_ml: { param: 'volume' } });
    expect(res.headers.location).toBe('/app/workflows/dose-and-weigh');
    const row = await lab.runtime.store.workflows.get('dose-and-weigh');
    expect(row?.version).toBe(1);
    expect(row?.definition).toEqual(res.body.workflow);
  });

  it('refuses an existing name with 409, and nothing changes', async () => {
    await lab.admin.post('/app/workflows').set('Accept', J).send(doseAndWeigh('twice')).expect(201);
    const res = await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({ ...doseAndWeigh('twice'), description: 'other' })
      .expect(409);
    expect(res.body.error.code).toBe('conflict');
    expect((await lab.runtime.store.workflows.get('twice'))?.version).toBe(1);
  });

  it('refuses an invalid workflow with 400 naming every step path, and stores nothing', async () => {
    const doc = doseAndWeigh('broken');
    doc.main[0].args = { volume_ml: { value: 99 } } as never; // over the pump's 50 mL
    doc.main.push({ kind: 'call', instrument: 'ghost', method: 'fly' } as never);
    const res = await lab.admin.post('/app/workflows').set('Accept', J).send(doc).expect(400);
    expect(res.body.error.code).toBe('invalid_input');
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['main[0].args.volume_ml', 'main[2].instrument']));
    expect(res.body.error.details.find((d: { field: string }) => d.field === 'main[0].args.volume_ml').message).toMatch(/50/);
    expect(await lab.runtime.store.workflows.get('broken')).toBeNull();
  });

  it('refuses a body that is not a JSON document, and the reserved name "new"', async () => {
    const form = await lab.admin.post('/app/workflows').set('Accept', J).type('form').send({ name: 'x' }).expect(400);
    expect(form.body.error.message).toMatch(/JSON/);
    const list = await lab.admin.post('/app/workflows').set('Accept', J).send([1, 2]).expect(400);
    expect(list.body.error.details[0].field).toBe('(body)');
    const reserved = await lab.admin.post('/app/workflows').set('Accept', J).send(doseAndWeigh('new')).expect(400);
    expect(reserved.body.error.details).toEqual([expect.objectContaining({ field: 'name', message: expect.stringMatching(/reserved/) })]);
    // the route's own problem and validation's are reported together
    const both = await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({ ...doseAndWeigh('new'), outputs: ['nothing'] })
      .expect(400);
    expect(both.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['name', 'outputs[0]']);
  });

  it('reads a workflow as JSON (document, version, who and when) and as a page', async () => {
    const res = await lab.admin.get('/app/workflows/dose-and-weigh').set('Accept', J).expect(200);
    expect(res.body).toMatchObject({ name: 'dose-and-weigh', version: 1, updated_by: 'ada' });
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(res.body.workflow.outputs).toEqual(['mass']);
    const page = await lab.admin.get('/app/workflows/dose-and-weigh').expect(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.text).toContain('href="/app/workflows/dose-and-weigh/builder"');
    expect(page.text).toContain('href="/app/executions/config?workflow=dose-and-weigh"');
    expect(page.text).toContain('pump.dose(volume_ml: #volume)');
    // links follow the mount the request came in on
    const atRoot = await lab.admin.get('/workflows/dose-and-weigh').expect(200);
    expect(atRoot.text).toContain('href="/workflows/dose-and-weigh/builder"');
  });

  it('answers 404 for an unknown workflow on every route that names one', async () => {
    for (const [method, path] of [
      ['get', '/app/workflows/ghost'],
      ['put', '/app/workflows/ghost'],
      ['delete', '/app/workflows/ghost'],
      ['get', '/app/workflows/ghost/builder'],
    ] as const) {
      const res = await lab.admin[method](path)
        .set('Accept', J)
        .send(method === 'put' ? doseAndWeigh('ghost') : undefined);
      expect({ method, path, status: res.status, code: res.body.error?.code }).toEqual({ method, path, status: 404, code: 'not_found' });
    }
    // a PUT does not create it
    expect(await lab.runtime.store.workflows.get('ghost')).toBeNull();
  });

  it('saves a new version with PUT; the name may be left out; older versions stay readable', async () => {
    await lab.admin.post('/app/workflows').set('Accept', J).send(doseAndWeigh('versioned')).expect(201);
    const { name: _n, ...noName } = { ...doseAndWeigh('versioned'), description: 'second' };
    const v2 = await lab.admin.put('/app/workflows/versioned').set('Accept', J).send(noName).expect(200);
    expect(v2.body).toMatchObject({ name: 'versioned', version: 2 });
    expect(v2.body.workflow.description).toBe('second');
    const v3 = await lab.admin
      .put('/app/workflows/versioned')
      .set('Accept', J)
      .send({ ...doseAndWeigh('versioned'), description: 'third' })
      .expect(200);
    expect(v3.body.version).toBe(3);
    expect((await lab.admin.get('/app/workflows/versioned').set('Accept', J).expect(200)).body).toMatchObject({ version: 3, workflow: { description: 'third' } });
    const old = await lab.admin.get('/app/workflows/versioned?version=2').set('Accept', J).expect(200);
    expect(old.body).toMatchObject({ version: 2, workflow: { description: 'second' } });
    const oldPage = await lab.admin.get('/app/workflows/versioned?version=1').expect(200);
    expect(oldPage.text).toContain('the current one is');
    await lab.admin.get('/app/workflows/versioned?version=9').set('Accept', J).expect(404);
    await lab.admin.get('/app/workflows/versioned?version=x').set('Accept', J).expect(400);
  });

  it('refuses a PUT whose name is not the path name (400) or whose document is invalid (400), keeping the version', async () => {
    const res = await lab.admin.put('/app/workflows/versioned').set('Accept', J).send(doseAndWeigh('renamed')).expect(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'name', message: expect.stringContaining('"versioned"') })]);
    const bad = doseAndWeigh('versioned');
    bad.main[1].save_as = 'weight';
    const invalid = await lab.admin.put('/app/workflows/versioned').set('Accept', J).send(bad).expect(400);
    expect(invalid.body.error.details).toEqual([expect.objectContaining({ field: 'outputs[0]' })]);
    expect((await lab.runtime.store.workflows.get('versioned'))?.version).toBe(3);
    expect(await lab.runtime.store.workflows.get('renamed')).toBeNull();
  });

  it('lists the latest version of each workflow, as JSON and as a page with links', async () => {
    const res = await lab.admin.get('/app/workflows').set('Accept', J).expect(200);
    const names = res.body.workflows.map((w: { name: string }) => w.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['dose-and-weigh', 'twice', 'versioned']));
    const v = res.body.workflows.find((w: { name: string }) => w.name === 'versioned');
    expect(v).toMatchObject({
      version: 3,
      description: 'third',
      parameters: [{ name: 'volume', type: 'number', default: 1 }],
      outputs: ['mass'],
      instruments: ['balance', 'pump'],
      steps: { prep: 0, main: 2, cleanup: 0 },
      updated_by: 'ada',
    });
    expect(v.workflow).toBeUndefined();
    const page = await lab.admin.get('/app/workflows').expect(200);
    expect(page.text).toContain('href="/app/workflows/new"');
    expect(page.text).toContain('href="/app/workflows/versioned"');
    expect(page.text).toContain('href="/app/workflows/versioned/builder"');
  });

  it('serves the builder: the saved document and the deck palette in a JSON data island', async () => {
    const page = await lab.admin.get('/app/workflows/dose-and-weigh/builder').expect(200);
    const m = /<script type="application\/json" id="wf-data">([^<]*)<\/script>/.exec(page.text);
    expect(m).not.toBeNull();
    const data = JSON.parse(m![1]);
    expect(data).toMatchObject({
      name: 'dose-and-weigh',
      version: 1,
      urls: { list: '/app/workflows', base: '/app/workflows/', run: '/app/executions/config?workflow=', campaign: '/app/executions/campaign?workflow=' },
    });
    // from a saved workflow, straight to running it or to a campaign on it
    expect(page.text).toContain('id="wf-campaign" class="btn btn-outline-primary" href="/app/executions/campaign?workflow=dose-and-weigh"');
    expect(data.workflow.main).toHaveLength(2);
    const pump = data.instruments.find((i: { name: string }) => i.name === 'pump');
    expect(pump.methods.find((x: { name: string }) => x.name === 'dose').params.properties.volume_ml.type).toBe('number');
    expect(page.text).toContain('data-instrument="pump" data-method="dose"');
    // no inline script: the CSP forbids it; the island is data
    expect(page.text).not.toMatch(/<script(?![^>]*(src=|type="application\/json"))/);
    const json = await lab.admin.get('/app/workflows/dose-and-weigh/builder').set('Accept', J).expect(200);
    expect(json.body).toEqual(data);
    const fresh = await lab.admin.get('/app/workflows/new').set('Accept', J).expect(200);
    expect(fresh.body).toMatchObject({ name: null, version: null, workflow: { name: '', main: [] } });
    const freshPage = await lab.admin.get('/workflows/new').expect(200);
    expect(freshPage.text).toContain('"base":"/workflows/"');
  });

  it('escapes the data island: a description cannot close the script element', async () => {
    const doc = { ...doseAndWeigh('sneaky'), description: '</script><script>alert(1)</script> & \u2028' };
    await lab.admin.post('/app/workflows').set('Accept', J).send(doc).expect(201);
    const page = await lab.admin.get('/app/workflows/sneaky/builder').expect(200);
    expect(page.text).not.toContain('</script><script>alert(1)');
    const m = /<script type="application\/json" id="wf-data">([^<]*)<\/script>/.exec(page.text);
    expect(JSON.parse(m![1]).workflow.description).toBe(doc.description);
  });

  it('lets any logged-in user create, change and delete; delete answers { deleted } and is audit-logged', async () => {
    const olga = await signupAndLogin(lab.app, 'olga');
    await olga.post('/app/workflows').set('Accept', J).send(doseAndWeigh('olgas')).expect(201);
    await lab.admin.put('/app/workflows/olgas').set('Accept', J).send(doseAndWeigh('olgas')).expect(200);
    expect((await olga.get('/app/workflows/olgas').set('Accept', J).expect(200)).body.updated_by).toBe('ada');
    const res = await olga.delete('/app/workflows/olgas').set('Accept', J).expect(200);
    expect(res.body).toEqual({ deleted: 'olgas' });
    expect(await lab.runtime.store.workflows.get('olgas')).toBeNull();
    expect(await lab.runtime.store.workflows.get('olgas', 1)).toMatchObject({ deletedAt: expect.any(Date) }); // kept for the records
    await olga.get('/app/workflows/olgas').set('Accept', J).expect(404);
    await olga.delete('/app/workflows/olgas').set('Accept', J).expect(404);
    const audit = await lab.runtime.store.audit.list(5);
    expect(audit.find((a) => a.action === 'workflow.delete')).toMatchObject({ detail: { name: 'olgas', versions: 2 } });
    // the version a record ran stays readable, said to be deleted; made again, the name goes on from version 3 (v1 and v2 keep naming the old documents)
    expect((await olga.get('/app/workflows/olgas?version=1').expect(200)).text).toContain('a workflow that was deleted since');
    const again = await olga
      .post('/app/workflows')
      .set('Accept', J)
      .send({ ...doseAndWeigh('olgas') })
      .expect(201);
    expect(again.body.version).toBe(3);
  });

  it('requires login: 401 for JSON, 302 to the login form for pages', async () => {
    const anon = request(lab.app);
    await anon.get('/app/workflows').set('Accept', J).expect(401);
    await anon.post('/app/workflows').set('Accept', J).send(doseAndWeigh('anon')).expect(401);
    await anon.put('/app/workflows/dose-and-weigh').set('Accept', J).send(doseAndWeigh()).expect(401);
    await anon.delete('/app/workflows/dose-and-weigh').set('Accept', J).expect(401);
    const page = await anon.get('/app/workflows/dose-and-weigh/builder').expect(302);
    expect(page.headers.location).toBe(`/app/auth/login?next=${encodeURIComponent('/app/workflows/dose-and-weigh/builder')}`);
    await anon.get('/app/workflows/new').expect(302);
    expect(await lab.runtime.store.workflows.get('anon')).toBeNull();
    expect((await lab.runtime.store.workflows.get('dose-and-weigh'))?.version).toBe(1);
  });

  it('refuses a cross-site cookie request to change a workflow (CSRF)', async () => {
    await lab.admin.delete('/app/workflows/dose-and-weigh').set('Origin', 'http://evil.example').set('Accept', J).expect(403);
    expect(await lab.runtime.store.workflows.get('dose-and-weigh')).not.toBeNull();
  });
});
