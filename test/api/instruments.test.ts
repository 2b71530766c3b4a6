import request from 'supertest';
import { signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';

describe('direct control', () => {
  let lab: TestLab;
  let operator: Awaited<ReturnType<typeof signupAndLogin>>;
  beforeAll(async () => {
    lab = await startLab();
    operator = await signupAndLogin(lab.app, 'olga');
  });
  afterAll(() => lab.close());

  it('lists the demo deck as a page and as JSON, under /app and at /', async () => {
    const page = await lab.admin.get('/app/instruments/').expect(200);
    for (const name of ['pump', 'balance', 'hotplate', 'reactor']) expect(page.text).toContain(`/app/instruments/${name}`);
    const json = await lab.admin.get('/instruments/').set('Accept', J).expect(200);
    expect(json.body.instruments.find((i: { name: string }) => i.name === 'pump').methods).toEqual(expect.arrayContaining(['dose', 'prime', 'jam']));
    const rootPage = await lab.admin.get('/instruments/').expect(200);
    expect(rootPage.text).toContain('href="/instruments/pump"');
    expect(rootPage.text).not.toContain('/app/instruments/pump');
  });

  it('shows an instrument with a generated form per method', async () => {
    const page = await lab.admin.get('/app/instruments/pump').expect(200);
    expect(page.text).toContain('name="volume_ml"');
    expect(page.text).toContain('type="number"');
    expect(page.text).toContain('hazardous');
    const json = await lab.admin.get('/app/instruments/pump?format=json').expect(200);
    const dose = json.body.methods.find((m: { name: string }) => m.name === 'dose');
    expect(dose.params.type).toBe('object');
    expect(dose.params.properties.volume_ml.type).toBe('number');
    expect(dose.params.required).toContain('volume_ml');
    await lab.admin.get('/app/instruments/nope').set('Accept', J).expect(404);
  });

  it('marks inferred schemas of plain-class devices', async () => {
    const json = await lab.admin.get('/app/instruments/stirrer').set('Accept', J).expect(200);
    expect(json.body.methods.some((m: { inferred: boolean }) => m.inferred)).toBe(true);
    const page = await lab.admin.get('/app/instruments/stirrer').expect(200);
    expect(page.text).toContain('inferred');
  });

  it('calls a method with JSON and records the call as a task step', async () => {
    const res = await lab.admin
      .post('/app/instruments/pump')
      .send({ method: 'dose', args: { volume_ml: 1.5 } })
      .set('Accept', J)
      .expect(200);
    expect(res.body.output).toBeCloseTo(1.5);
    expect(Number.isInteger(res.body.task_id)).toBe(true);
    const step = await lab.admin.get(`/app/instruments/task/${res.body.task_id}`).set('Accept', J).expect(200);
    expect(step.body).toMatchObject({ task_id: res.body.task_id, instrument: 'pump', method: 'dose', args: { volume_ml: 1.5 }, status: 'ok' });
    expect(step.body.duration_ms).toBeGreaterThanOrEqual(0);
    const page = await lab.admin.get(`/instruments/task/${res.body.task_id}`).expect(200);
    expect(page.text).toContain('dose');
  });

  it('calls a method from a form (typed from strings) and from htmx (a fragment)', async () => {
    const page = await lab.admin.post('/app/instruments/pump').type('form').send({ method: 'dose', volume_ml: '2' }).expect(200);
    expect(page.text).toContain('<!doctype html>');
    expect(page.text).toContain('call-result');
    const frag = await lab.admin.post('/app/instruments/pump').set('HX-Request', 'true').type('form').send({ method: 'dose', volume_ml: '0.5' }).expect(200);
    expect(frag.text).not.toContain('<html');
    expect(frag.text).toContain('0.5');
  });

  it('takes the instrument from the body on POST /instruments/', async () => {
    const res = await lab.admin.post('/app/instruments/').set('Accept', J).send({ instrument: 'balance', method: 'weigh', args: {} }).expect(200);
    expect(typeof res.body.output).toBe('number');
    const missing = await lab.admin.post('/app/instruments/').set('Accept', J).send({ method: 'weigh' }).expect(400);
    expect(missing.body.error.details[0].field).toBe('instrument');
  });

  it('answers 400 naming the field for invalid arguments, and does not call the instrument', async () => {
    const res = await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume_ml: -1 } })
      .expect(400);
    expect(res.body.error.code).toBe('invalid_input');
    expect(res.body.error.details[0].field).toBe('volume_ml');
    const missing = await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'dose', args: {} }).expect(400);
    expect(missing.body.error.details[0].field).toBe('volume_ml');
    const noMethod = await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ args: {} }).expect(400);
    expect(noMethod.body.error.details[0].field).toBe('method');
    const badArgs = await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: [1] })
      .expect(400);
    expect(badArgs.body.error.details[0].field).toBe('args');
    const form = await lab.admin.post('/app/instruments/pump').type('form').send({ method: 'dose', volume_ml: '-3' });
    expect(form.status).toBe(400);
    expect(form.text).toContain('volume_ml');
    const malformed = await lab.admin.post('/app/instruments/pump').set('Content-Type', J).set('Accept', J).send('{"method":');
    expect(malformed.status).toBe(400);
  });

  it('answers 404 for an unknown instrument or method', async () => {
    const inst = await lab.admin.post('/app/instruments/ghost').set('Accept', J).send({ method: 'x', args: {} }).expect(404);
    expect(inst.body.error.message).toContain('ghost');
    const meth = await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'fly', args: {} }).expect(404);
    expect(meth.body.error.message).toContain('fly');
  });

  it('answers 502 with the task id when the instrument fails (jammed pump), once', async () => {
    await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'jam', args: {} }).expect(200);
    const res = await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume_ml: 1 } })
      .expect(502);
    expect(res.body.error.message).toContain('pump jammed');
    const step = await lab.admin.get(`/app/instruments/task/${res.body.task_id}`).set('Accept', J).expect(200);
    expect(step.body).toMatchObject({ status: 'error', error: expect.stringContaining('pump jammed') });
    await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume_ml: 1 } })
      .expect(200);
  });

  it('answers 409 when a task holds the instrument, and other instruments still work', async () => {
    lab.runtime.deck.lock(['hotplate'], 'task-7');
    try {
      const res = await lab.admin.post('/app/instruments/hotplate').set('Accept', J).send({ method: 'temperature', args: {} }).expect(409);
      expect(res.body.error.code).toBe('busy');
      await lab.admin.post('/app/instruments/balance').set('Accept', J).send({ method: 'weigh', args: {} }).expect(200);
    } finally {
      lab.runtime.deck.unlock('task-7');
    }
    await lab.admin.post('/app/instruments/hotplate').set('Accept', J).send({ method: 'temperature', args: {} }).expect(200);
  });

  it('serves concurrent calls to one instrument one after another, none refused', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => lab.admin.post('/app/instruments/balance').set('Accept', J).send({ method: 'weigh', args: {} })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const steps = await Promise.all(results.map((r) => lab.runtime.store.steps.get(r.body.task_id)));
    const spans = steps.map((s) => [s!.startedAt.getTime(), s!.endedAt!.getTime()]).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
  });

  it('reads task steps: 404 unknown, 400 not an integer', async () => {
    await lab.admin.get('/app/instruments/task/999999').set('Accept', J).expect(404);
    await lab.admin.get('/app/instruments/task/abc').set('Accept', J).expect(400);
  });

  it('saves the method order per user (204) and rejects bad orders', async () => {
    await lab.admin
      .post('/app/instruments/pump/actions/order')
      .send({ order: ['prime', 'dose'] })
      .expect(204);
    const mine = await lab.admin.get('/app/instruments/pump').set('Accept', J).expect(200);
    expect(mine.body.methods.slice(0, 2).map((m: { name: string }) => m.name)).toEqual(['prime', 'dose']);
    const theirs = await operator.get('/app/instruments/pump').set('Accept', J).expect(200);
    expect(theirs.body.methods[0].name).toBe('dose');
    const bad = await lab.admin
      .post('/app/instruments/pump/actions/order')
      .set('Accept', J)
      .send({ order: ['prime', 'nope'] })
      .expect(400);
    expect(bad.body.error.message).toContain('nope');
    await lab.admin.post('/app/instruments/pump/actions/order').set('Accept', J).send({ order: 'prime' }).expect(400);
    await lab.admin.post('/app/instruments/ghost/actions/order').set('Accept', J).send({ order: [] }).expect(404);
  });

  it('hides and shows a method per user', async () => {
    const res = await lab.admin.patch('/app/instruments/pump/actions/prime').send({ hidden: true }).expect(200);
    expect(res.body).toEqual({ instrument: 'pump', method: 'prime', hidden: true });
    const json = await lab.admin.get('/app/instruments/pump').set('Accept', J);
    expect(json.body.methods.find((m: { name: string }) => m.name === 'prime').hidden).toBe(true);
    const page = await lab.admin.get('/app/instruments/pump').expect(200);
    expect(page.text).toContain('Hidden methods (1)');
    const other = await operator.get('/app/instruments/pump').set('Accept', J);
    expect(other.body.methods.find((m: { name: string }) => m.name === 'prime').hidden).toBe(false);
    await lab.admin.patch('/app/instruments/pump/actions/prime').send({ hidden: false }).expect(200);
    const again = await lab.admin.get('/app/instruments/pump').set('Accept', J);
    expect(again.body.methods.find((m: { name: string }) => m.name === 'prime').hidden).toBe(false);
    await lab.admin.patch('/app/instruments/pump/actions/prime').set('Accept', J).send({ hidden: 'yes' }).expect(400);
    await lab.admin.patch('/app/instruments/pump/actions/fly').set('Accept', J).send({ hidden: true }).expect(404);
  });

  it('runs console snippets for admins only, captures output, and audits every use', async () => {
    const res = await lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({ code: 'console.log("hi"); await deck.balance.weigh()' }).expect(200);
    expect(res.body.success).toBe(true);
    expect(res.body.stdout).toContain('hi');
    expect(typeof res.body.result).toBe('number');
    const raw = await lab.admin.post('/app/instruments/console/execute').set('Content-Type', 'text/plain').set('Accept', J).send('const x: number = 2; x * 21').expect(200);
    expect(raw.body.result).toBe(42);
    const err = await lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({ code: 'throw new Error("boom")' }).expect(200);
    expect(err.body).toMatchObject({ success: false, error: expect.stringContaining('boom') });
    await lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({}).expect(400);
    await operator.post('/app/instruments/console/execute').set('Accept', J).send({ code: '1' }).expect(403);
    const audit = await lab.runtime.store.audit.list(100);
    expect(audit.filter((a) => a.action === 'console.execute').length).toBeGreaterThanOrEqual(3);
    expect(audit.filter((a) => a.action === 'console.result').length).toBeGreaterThanOrEqual(3);
  });

  it('audits a snippet before it runs, so one that ends its own run still leaves a trace; the server goes on', async () => {
    const code = 'deck.constructor.constructor("return process")().exit(1)';
    const res = await lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({ code }).expect(200);
    expect(res.body.success).toBe(false);
    const audit = await lab.runtime.store.audit.list(10);
    expect(audit.some((a) => a.action === 'console.execute' && (a.detail as { code: string }).code === code)).toBe(true);
    await lab.admin.get('/app/healthz').expect(200);
  });

  it('downloads a Python and a TypeScript client generated from the live deck', async () => {
    const py = await lab.admin.get('/app/instruments/proxy?lang=python').expect(200);
    expect(py.headers['content-disposition']).toContain('labdeck_client.py');
    expect(py.text).toContain('def dose(');
    expect(py.text).toContain('urllib');
    const ts = await lab.admin.get('/app/instruments/proxy?lang=typescript').expect(200);
    expect(ts.text).toContain('dose');
    await lab.admin.get('/app/instruments/proxy?lang=cobol').set('Accept', J).expect(400);
  });

  it('refuses a body field a route does not take, by name (a form passes on one field per parameter, named like one)', async () => {
    const field = (res: { body: { error: { details: { field: string; message: string }[] } } }) => res.body.error.details.map((d) => d.field);
    // a JSON call takes { method, args } (and instrument on POST /instruments/): nothing else
    const call = await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume_ml: 1 }, volume_ml: 1 })
      .expect(400);
    expect(call.body.error.details).toEqual([{ field: 'volume_ml', message: 'is not a field of this request (its fields: method, args)' }]);
    const named = await lab.admin.post('/app/instruments/').set('Accept', J).send({ instrument: 'balance', method: 'weigh', args: {}, colour: 'red' }).expect(400);
    expect(field(named)).toEqual(['colour']);
    // a form: a name no parameter has (a dot, a bracket) is refused before the deck; the page comes back with it
    const form = await lab.admin.post('/app/instruments/pump').type('form').send({ method: 'dose', volume_ml: '1', 'a[b]': '1' }).expect(400);
    expect(form.text).toContain('a[b] is not a field of this request');
    expect(form.text).toContain('name="volume_ml"');
    expect(field(await lab.admin.post('/app/instruments/pump').set('Accept', J).type('form').send({ method: 'dose', volume_ml: '1', 'x.y': '1' }).expect(400))).toEqual(['x.y']);
    expect(field(await lab.admin.post('/app/instruments/').set('Accept', J).type('form').send({ instrument: 'balance', method: 'weigh', 'x.y': '1' }).expect(400))).toEqual(['x.y']);
    // a parameter-like field the method does not have is an argument the deck refuses, naming it; the pump is not called
    const stranger = await lab.admin.post('/app/instruments/pump').set('Accept', J).type('form').send({ method: 'dose', volume_ml: '1', speed: '3' }).expect(400);
    expect(stranger.body.error.details).toEqual([{ field: 'speed', message: expect.stringContaining('is not a parameter of pump.dose') }]);
    expect((await lab.admin.post('/app/instruments/').type('form').send({ instrument: 'balance', method: 'weigh', colour: 'red' }).expect(400)).text).toContain('colour');
    expect(
      field(
        await lab.admin
          .post('/app/instruments/pump/actions/order')
          .set('Accept', J)
          .send({ order: ['dose'], colour: 'red' })
          .expect(400),
      ),
    ).toEqual(['colour']);
    expect(field(await lab.admin.patch('/app/instruments/pump/actions/prime').set('Accept', J).send({ hidden: true, colour: 'red' }).expect(400))).toEqual(['colour']);
    expect(field(await lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({ code: '1', colour: 'red' }).expect(400))).toEqual(['colour']);
    // the console's form (the page) and its raw text body still work; an operator is refused before the body is read
    expect((await lab.admin.post('/app/instruments/console/execute').set('Accept', J).type('form').send({ code: '2 * 3', language: 'javascript' }).expect(200)).body.result).toBe(6);
    expect(field(await lab.admin.post('/app/instruments/console/execute').set('Accept', J).set('Content-Type', 'text/plain').send('   ').expect(400))).toEqual(['code']);
    expect((await operator.post('/app/instruments/console/execute').set('Accept', J).send({ colour: 'red' }).expect(403)).body.error.code).toBe('forbidden');
  });

  it('answers unknown routes with 404 in JSON and as a page', async () => {
    const json = await lab.admin.get('/app/no/such/page').set('Accept', J).expect(404);
    expect(json.body.error.code).toBe('not_found');
    const page = await lab.admin.get('/app/no/such/page').expect(404);
    expect(page.text).toContain('Error 404');
  });
});

describe('direct control without login', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(() => lab.close());

  it('protects every direct-control route', async () => {
    const anon = request(lab.app);
    await anon
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume_ml: 1 } })
      .expect(401);
    await anon.post('/app/instruments/pump').type('form').send({ method: 'dose', volume_ml: '1' }).expect(302);
    await anon.post('/app/instruments/console/execute').set('Accept', J).send({ code: '1' }).expect(401);
    await anon.get('/app/instruments/task/1').set('Accept', J).expect(401);
    await anon.get('/app/instruments/proxy').set('Accept', J).expect(401);
    await anon.patch('/app/instruments/pump/actions/dose').set('Accept', J).send({ hidden: true }).expect(401);
  });
});

describe('recent calls of an instrument', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(() => lab.close());

  it('lists the latest calls newest first, on the page and as JSON', async () => {
    await lab.admin
      .post('/app/instruments/reactor')
      .set('Accept', J)
      .send({ method: 'run', args: { temperature: 80, time: 20 } })
      .expect(200);
    await lab.admin
      .post('/app/instruments/reactor')
      .set('Accept', J)
      .send({ method: 'run', args: { temperature: 200, time: 20 } })
      .expect(400);
    const second = await lab.admin
      .post('/app/instruments/reactor')
      .set('Accept', J)
      .send({ method: 'run', args: { temperature: 90, time: 30 } })
      .expect(200);
    const json = await lab.admin.get('/app/instruments/reactor/calls').set('Accept', J).expect(200);
    expect(json.body.calls.map((c: { args: { temperature: number } }) => c.args.temperature)).toEqual([90, 80]);
    expect(json.body.calls[0].task_id).toBe(second.body.task_id);
    const page = await lab.admin.get('/app/instruments/reactor').expect(200);
    expect(page.text).toContain('Recent calls');
    expect(page.text).toContain(`/app/instruments/task/${second.body.task_id}`);
    const frag = await lab.admin.post('/app/instruments/reactor').set('HX-Request', 'true').type('form').send({ method: 'run', temperature: '85', time: '25' }).expect(200);
    expect(frag.headers['hx-trigger']).toBe('labdeck-called');
    await lab.admin.get('/app/instruments/ghost/calls').set('Accept', J).expect(404);
  });
});
