/**
 * The safety guard on every path to an instrument (issue 28): the instrument page's form, the /app API, the
 * /ivoryos routes, an MCP tool, a workflow step and a campaign iteration each refuse what the file forbids,
 * with the driver untouched (the fixture deck counts every call that reaches a driver). The routes: the file
 * and its problems, replacing it (validated, audited), the check, states. A file that does not validate
 * blocks every call. (Two labdecks on one PostgreSQL: test/api/safety-lab.test.ts.)
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PASSWORD, startLab, until, type TestLab } from './helpers.js';
import { usingPostgres } from '../helpers/db.js';

/** Where the guard read its file: the data folder's safety.json, or on PostgreSQL the lab-wide copy in the database. */
const fileSource = () => (usingPostgres() ? 'the database (lab-wide safety file)' : join(lab.dataDir, 'safety.json'));

const J = 'application/json';
const DECK = new URL('../fixtures/safety/deck.ts', import.meta.url).pathname;
/** How many calls reached a driver method (the fixture deck counts them; reading them is a call of its own). */
const count = async (what: string) => ((await lab.runtime.deck.call('door', 'counts', {}, { userId: null })).output as Record<string, number>)[what] ?? 0;

const FILE = {
  format: 'ivoryos-safety/1',
  enabled: true,
  trays: { rack: { label: 'Vial rack', rows: 2, columns: 3, naming: 'A1', order: 'row', blocked: ['B3'] } },
  limits: [
    { target: 'heater', method: 'set_temperature', param: 'setpoint_c', min: 0, max: 120 },
    { target: 'class:SafePump', method: 'dispense', param: 'vial', tray: 'rack' },
  ],
  rules: [
    {
      id: 'hot',
      name: 'No dispensing into a hot vial',
      when: { target: 'pump', method: 'dispense' },
      require: [{ left: { read: 'heater.read_temperature' }, op: '<=', right: { value: 60 } }],
      message: 'Cool the heater below 60 C before dispensing.',
    },
    { id: 'door', when: { target: 'heater', method: 'set_temperature' }, require: [{ left: { state: 'door' }, op: '==', right: { value: 'closed' } }] },
  ],
  states: {
    door: {
      label: 'Enclosure door',
      values: ['open', 'closed'],
      set_by: [
        { target: 'door', method: 'open_door', value: 'open' },
        { target: 'door', method: 'close_door', value: 'closed' },
      ],
    },
  },
};

let lab: TestLab;
const call = (instrument: string, method: string, args: Record<string, unknown> = {}) => lab.admin.post(`/app/instruments/${instrument}`).set('Accept', J).send({ method, args });

beforeAll(async () => {
  lab = await startLab({ deck: DECK, safetyReadTimeoutMs: 300 });
  await lab.admin.put('/app/safety').set('Accept', J).send(FILE).expect(200);
  await call('door', 'close_door').expect(200);
}, 30_000);
afterAll(async () => {
  await lab?.close();
});

describe('the /app API', () => {
  it('refuses an out-of-limit call with 409 code safety, naming field, limit and value; no driver is touched; an audit line', async () => {
    const before = await count('heater.set_temperature');
    const res = await call('heater', 'set_temperature', { setpoint_c: 150 }).expect(409);
    expect(res.body.error).toMatchObject({ code: 'safety', message: expect.stringContaining('setpoint_c = 150 is above the maximum of 120') });
    expect(res.body.error.details).toEqual([{ field: 'setpoint_c', message: expect.any(String), limit: { source: 'limits[0]', target: 'heater', min: 0, max: 120 }, value: 150 }]);
    expect(await count('heater.set_temperature')).toBe(before);
    const audit = await lab.runtime.store.audit.list(5);
    expect(audit.find((a) => a.action === 'safety.blocked')).toMatchObject({ detail: { instrument: 'heater', method: 'set_temperature', args: { setpoint_c: 150 } } });
    await call('heater', 'set_temperature', { setpoint_c: 40 }).expect(200);
    expect(await count('heater.set_temperature')).toBe(before + 1);
  });

  it('tray positions: off the tray and blocked ones are refused, a free one passes (the omitted default A1 is checked too)', async () => {
    await call('heater', 'set_temperature', { setpoint_c: 30 }).expect(200);
    const before = await count('pump.dispense');
    expect((await call('pump', 'dispense', { vial: 'C1' }).expect(409)).body.error.details[0]).toMatchObject({ field: 'vial', value: 'C1', limit: { tray: 'rack' } });
    expect((await call('pump', 'dispense', { vial: 'B3' }).expect(409)).body.error.message).toMatch(/blocked position/);
    expect(await count('pump.dispense')).toBe(before);
    await call('pump', 'dispense', {}).expect(200);
    expect(await count('pump.dispense')).toBe(before + 1);
  });

  it('an interlock on a live reading blocks and unblocks; a failing or slow reading blocks', async () => {
    await call('heater', 'set_temperature', { setpoint_c: 90 }).expect(200);
    const before = await count('pump.dispense');
    const hot = await call('pump', 'dispense', { vial: 'A2' }).expect(409);
    expect(hot.body.error.details[0]).toMatchObject({ rule: 'hot', value: 90 });
    expect(hot.body.error.message).toMatch(/Cool the heater below 60 C before dispensing \(heater.read_temperature is 90, must be at most 60\)/);
    await call('heater', 'set_temperature', { setpoint_c: 50 }).expect(200);
    await call('pump', 'dispense', { vial: 'A2' }).expect(200);
    await call('heater', 'set_sensor', { fail: true }).expect(200);
    expect((await call('pump', 'dispense', { vial: 'A2' }).expect(409)).body.error.message).toMatch(/reading it failed \(sensor unplugged\)/);
    await call('heater', 'set_sensor', { slow: true }).expect(200);
    expect((await call('pump', 'dispense', { vial: 'A2' }).expect(409)).body.error.message).toMatch(/no answer within 0.3 s/);
    await call('heater', 'set_sensor', {}).expect(200);
    expect(await count('pump.dispense')).toBe(before + 1);
  });

  it('a state: set by calls, unknown blocks, a person settles it', async () => {
    await call('door', 'open_door').expect(200);
    const before = await count('heater.set_temperature');
    const res = await call('heater', 'set_temperature', { setpoint_c: 30 }).expect(409);
    expect(res.body.error.details[0]).toMatchObject({ rule: 'door', value: 'open' });
    await lab.admin.post('/app/safety/states/door').set('Accept', J).send({ value: 'closed' }).expect(200);
    await call('heater', 'set_temperature', { setpoint_c: 30 }).expect(200);
    await lab.admin.post('/app/safety/states/door').set('Accept', J).send({ value: null }).expect(200);
    expect((await call('heater', 'set_temperature', { setpoint_c: 30 }).expect(409)).body.error.message).toMatch(/the state door is unknown/);
    await lab.admin.post('/app/safety/states/door').set('Accept', J).send({ value: 'ajar' }).expect(400);
    await call('door', 'close_door').expect(200);
    expect(await count('heater.set_temperature')).toBe(before + 1);
  });
});

describe('the other doors', () => {
  it('the instrument page form: shows the limit and refuses out-of-limit input before sending (min/max); sent anyway, refused with the reason', async () => {
    const form = await lab.admin.get('/app/instruments/heater').expect(200);
    expect(form.text).toMatch(/<input[^>]*id="set_temperature-setpoint_c"[^>]*min="0" max="120"/);
    expect(form.text).toContain('Lab safety limit: min 0, max 120.');
    const before = await count('heater.set_temperature');
    const page = await lab.admin.post('/app/instruments/heater').type('form').send({ method: 'set_temperature', setpoint_c: '150', mode: 'slow' });
    expect(page.status).toBe(409);
    expect(page.text).toContain('above the maximum of 120');
    expect(await count('heater.set_temperature')).toBe(before);
  });

  it('the /ivoryos routes', async () => {
    const agent = (await import('supertest')).default.agent(lab.app);
    await agent.post('/ivoryos/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).redirects(0).expect(302);
    const before = await count('heater.set_temperature');
    const res = await agent.post('/ivoryos/instruments/deck.heater').set('Accept', J).send({ hidden_name: 'set_temperature', setpoint_c: 150 });
    expect(res.status).toBe(409);
    expect(JSON.stringify(res.body)).toContain('above the maximum of 120');
    expect(await count('heater.set_temperature')).toBe(before);
  });

  it('an MCP tool: an undeclared method is advertised as unknown and waits for a person; approved, the guard still refuses it', async () => {
    const server: Server = lab.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const made = await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'agent', scope: 'mcp' }).expect(201);
    const client = new Client({ name: 'safety-test', version: '1.0.0' });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/app`;
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${made.body.token}` } } }));
    const answer = (r: Awaited<ReturnType<Client['callTool']>>) => JSON.parse((r.content as { text: string }[])[0].text);
    try {
      const { tools } = await client.listTools();
      const dispense = tools.find((t) => t.name === 'pump_dispense')!;
      expect(dispense.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false, destructiveHint: true });
      expect(dispense.description).toContain('safety: unknown');
      expect(tools.find((t) => t.name === 'heater_read_temperature')!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, destructiveHint: false });
      // a read-only method runs at once
      expect(answer(await client.callTool({ name: 'heater_read_temperature', arguments: {} }))).toMatchObject({ task_id: expect.any(Number) });
      const before = await count('pump.dispense');
      const req = answer(await client.callTool({ name: 'pump_dispense', arguments: { vial: 'C9' } }));
      expect(req).toMatchObject({ state: 'pending', approval_id: expect.any(Number) });
      await lab.admin.post(`/app/approvals/${req.approval_id}/approve`).set('Accept', J).send({}).expect(200);
      const done = answer(await client.callTool({ name: 'lab_approval', arguments: { approval_id: req.approval_id, wait_seconds: 10 } }));
      expect(JSON.stringify(done.outcome)).toContain('not a position on Vial rack');
      expect(await count('pump.dispense')).toBe(before);
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  const status = async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;

  it('a workflow step: blocked, the run waits like a failed step; settled, retry goes on', async () => {
    await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({
        name: 'heat',
        parameters: [{ name: 't', type: 'number', default: 30 }],
        outputs: ['temp'],
        main: [
          { kind: 'call', instrument: 'heater', method: 'set_temperature', args: { setpoint_c: { param: 't' } } },
          { kind: 'call', instrument: 'heater', method: 'read_temperature', args: {}, save_as: 'temp' },
        ],
      })
      .expect(201);
    await call('door', 'open_door').expect(200);
    const before = await count('heater.set_temperature');
    const { body } = await lab.admin
      .post('/app/executions/config')
      .set('Accept', J)
      .send({ workflow: 'heat', config: [{ t: 35 }] })
      .expect(200);
    await until(async () => (await status()).state === 'failed');
    expect((await status()).failed_step).toMatchObject({ path: 'main[0]', error: expect.stringContaining('Blocked by the safety guard') });
    const run = (await lab.runtime.store.queue.get(body.task_id))!.runId!;
    expect((await lab.runtime.store.runSteps.list(run)).map((s) => s.status)).toContain('blocked');
    expect(await count('heater.set_temperature')).toBe(before);
    await call('door', 'close_door').expect(200);
    await lab.admin.post('/app/executions/retry').set('Accept', J).expect(200);
    await until(async () => (await lab.runtime.store.queue.get(body.task_id))?.status === 'done');
    expect(await count('heater.set_temperature')).toBe(before + 1);
  });

  it('a campaign iteration: blocked like a step', async () => {
    await call('door', 'open_door').expect(200);
    const before = await count('heater.set_temperature');
    await lab.admin.post('/app/executions/campaign').set('Accept', J).send({ workflow: 'heat', repeat: 1, optimizer_type: 'random', parameters: 't: 20..100', objectives: 'temp:max' }).expect(200);
    await until(async () => (await status()).state === 'failed');
    expect((await status()).failed_step.error).toContain('Blocked by the safety guard');
    expect(await count('heater.set_temperature')).toBe(before);
    await call('door', 'close_door').expect(200);
    await lab.admin.post('/app/executions/retry').set('Accept', J).expect(200);
    await until(async () => (await status()).state === 'idle');
    expect(await count('heater.set_temperature')).toBe(before + 1);
  });
});

describe('refused before anything moves', () => {
  it('POST /executions/config: a config row or a literal value over a limit is 400 naming the row and field; nothing is queued', async () => {
    const before = (await lab.runtime.store.queue.open()).length;
    const rows = await lab.admin
      .post('/app/executions/config')
      .set('Accept', J)
      .send({ workflow: 'heat', config: [{ t: 40 }, { t: 150 }] })
      .expect(400);
    expect(rows.body.error.details).toEqual([
      {
        field: 'config[1].t',
        step: 'main[0]',
        message: expect.stringContaining('row 2, t: heater.set_temperature: setpoint_c = 150 is above the maximum of 120'),
        limit: expect.objectContaining({ max: 120 }),
        value: 150,
      },
    ]);
    const repeat = await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({ name: 'too-hot', main: [{ kind: 'call', instrument: 'heater', method: 'set_temperature', args: { setpoint_c: { value: 130 } } }] })
      .expect(201);
    expect(repeat.body.name).toBe('too-hot');
    const literal = await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'too-hot', repeat: 2 }).expect(400);
    expect(literal.body.error.details[0]).toMatchObject({ field: 'main[0].args.setpoint_c', value: 130 });
    expect((await lab.runtime.store.queue.open()).length).toBe(before);
  });

  it('POST /executions/campaign: a search range or a choice reaching past a limit is 400 naming the parameter and the limit', async () => {
    const before = (await lab.runtime.store.queue.open()).length;
    const res = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ workflow: 'heat', repeat: 2, optimizer_type: 'random', parameters: 't: 20..150', objectives: 'temp:max' })
      .expect(400);
    expect(res.body.error.details).toEqual([
      {
        field: 'parameters[0].bounds',
        step: 'main[0]',
        message: expect.stringContaining('the search range of t reaches 150: heater.set_temperature: setpoint_c = 150 is above the maximum of 120'),
        limit: expect.objectContaining({ source: 'limits[0]', max: 120 }),
        value: 150,
      },
    ]);
    // a choice the driver's own Literal does not have: refused with nothing configured for it
    await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({
        name: 'heat-mode',
        parameters: [{ name: 'mode', type: 'string', default: 'slow' }],
        outputs: ['temp'],
        main: [
          { kind: 'call', instrument: 'heater', method: 'set_temperature', args: { setpoint_c: { value: 30 }, mode: { param: 'mode' } } },
          { kind: 'call', instrument: 'heater', method: 'read_temperature', args: {}, save_as: 'temp' },
        ],
      })
      .expect(201);
    const choice = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ workflow: 'heat-mode', repeat: 2, optimizer_type: 'random', parameters: 'mode: fast|warp', objectives: 'temp:max' })
      .expect(400);
    expect(choice.body.error.details).toEqual([expect.objectContaining({ field: 'parameters[0].choices', value: 'warp', limit: { source: 'declared', allowed: ['fast', 'slow'] } })]);
    expect((await lab.runtime.store.queue.open()).length).toBe(before);
  });

  it("POST /executions/campaign under linear constraints: what the polytope reaches is held to the limit, not the range's ends", async () => {
    await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({
        name: 'heat-split',
        parameters: [
          { name: 't', type: 'number', default: 30 },
          { name: 'u', type: 'number', default: 0 },
        ],
        outputs: ['temp'],
        main: [
          { kind: 'call', instrument: 'heater', method: 'set_temperature', args: { setpoint_c: { param: 't' } } },
          { kind: 'call', instrument: 'heater', method: 'read_temperature', args: {}, save_as: 'temp' },
        ],
      })
      .expect(201);
    const campaign = (parameters: string, parameter_constraints: string[]) =>
      lab.admin.post('/app/executions/campaign').set('Accept', J).send({ workflow: 'heat-split', repeat: 1, optimizer_type: 'random', parameters, objectives: 'temp:max', parameter_constraints });
    const before = (await lab.runtime.store.queue.open()).length;
    // t - u <= 100 with u up to 50 lets t reach 150, past the heater's 120
    const far = await campaign('t: 20..200; u: 0..50', ['t - u <= 100']).expect(400);
    expect(far.body.error.details).toEqual([
      {
        field: 'parameters[0].bounds',
        step: 'main[0]',
        message: expect.stringContaining('under the parameter constraints t reaches 150 (its range is 20..200): heater.set_temperature: setpoint_c = 150 is above the maximum of 120'),
        limit: expect.objectContaining({ source: 'limits[0]', max: 120 }),
        value: 150,
      },
    ]);
    // with t + u <= 110 as well, t reaches at most 110: queued
    const fit = await campaign('t: 20..200; u: 0..50', ['t - u <= 100', 't + u <= 110']).expect(200);
    // constraints that exclude each other: the optimizer's refusal (nothing reaches a limit), not the guard's
    const empty = await campaign('t: 20..200; u: 0..50', ['t + u <= 30', 't + u >= 200']).expect(400);
    expect(empty.body.error.details[0].field).toMatch(/^parameter_constraints/);
    expect(empty.body.error.code).toBe('invalid_input');
    expect(JSON.stringify(empty.body)).not.toContain('safety');
    await until(async () => (await lab.runtime.store.queue.get(fit.body.task_id))?.status === 'done');
    expect((await lab.runtime.store.queue.open()).length).toBe(before);
  });
});

describe('the preflight (POST /executions/preflight)', () => {
  const preflight = (body: Record<string, unknown>) => lab.admin.post('/app/executions/preflight').set('Accept', J).send(body).expect(200);

  it("gives the guard's verdict for every step whose values are known: a row, a literal, a search range, each naming row or parameter, step, field and limit", async () => {
    const before = (await lab.runtime.store.queue.open()).length;
    const rows = (await preflight({ workflow: 'heat', config: [{ t: 40 }, { t: 150 }, { t: 130 }] })).body;
    const over = (t: number, row: number) => ({
      field: `config[${row - 1}].t`,
      step: 'main[0]',
      message: `row ${row}, t: heater.set_temperature: setpoint_c = ${t} is above the maximum of 120`,
      limit: { source: 'limits[0]', target: 'heater', min: 0, max: 120 },
      value: t,
    });
    expect(rows).toMatchObject({ ok: false, safety: { allowed: false, error: null, problems: [over(150, 2), over(130, 3)], source: fileSource() } });
    expect(rows.problems.slice(0, 2)).toEqual([over(150, 2), over(130, 3)]);
    // the rest of the preflight is there all the same: each step, how many times
    expect(rows.steps.map((s: { path: string; times: number }) => [s.path, s.times])).toEqual([
      ['main[0]', 3],
      ['main[1]', 3],
    ]);
    const literal = (await preflight({ workflow: 'too-hot', repeat: 2 })).body;
    expect(literal.safety.problems).toEqual([expect.objectContaining({ field: 'main[0].args.setpoint_c', step: 'main[0]', value: 130, limit: expect.objectContaining({ max: 120 }) })]);
    const space = (await preflight({ workflow: 'heat', repeat: 2, optimizer_type: 'random', parameters: 't: 20..150', objectives: 'temp:max' })).body;
    expect(space.safety.problems).toEqual([expect.objectContaining({ field: 'parameters[0].bounds', step: 'main[0]', value: 150 })]);
    expect(space.ok).toBe(false);
    expect((await lab.runtime.store.queue.open()).length).toBe(before);
  });

  it('a run within the limits: allowed, no problems, and it says what is left to each call; the page says it too', async () => {
    const fine = (await preflight({ workflow: 'heat', config: [{ t: 40 }, { t: 120 }] })).body;
    expect(fine).toMatchObject({ ok: true, problems: [], safety: { allowed: true, problems: [], error: null, note: expect.stringContaining('checked at each call') } });
    const page = await lab.admin.post('/app/executions/preflight').type('form').send({ workflow: 'heat', 'rows[0][t]': '150' }).expect(200);
    expect(page.text).toMatch(/id="preflight-safety"[^>]*>1 value\(s\) break the lab&#x27;s limits/);
    expect(page.text).toContain('row 1, t: heater.set_temperature: setpoint_c = 150 is above the maximum of 120');
  });
});

describe('the routes', () => {
  it('GET /app/safety: the file, its problems, the states; the page draws trays and rules', async () => {
    const res = await lab.admin.get('/app/safety').set('Accept', J).expect(200);
    expect(res.body).toMatchObject({ source: fileSource(), error: null, problems: [], file: FILE, states: { door: { value: 'closed' } } });
    const page = await lab.admin.get('/app/safety').expect(200);
    expect(page.text).toContain('Vial rack');
    expect(page.text).toContain('<s>B3</s>');
    expect(page.text).toContain('No dispensing into a hot vial');
    expect((await lab.admin.get('/safety').set('Accept', J).expect(200)).body.file).toEqual(FILE);
  });

  it('POST /app/safety/check answers what the guard would say, without making the call', async () => {
    const before = await count('heater.set_temperature');
    const no = await lab.admin
      .post('/app/safety/check')
      .set('Accept', J)
      .send({ instrument: 'heater', method: 'set_temperature', args: { setpoint_c: 130 } })
      .expect(200);
    expect(no.body).toMatchObject({ allowed: false, problems: [{ field: 'setpoint_c', value: 130 }] });
    const yes = await lab.admin
      .post('/app/safety/check')
      .set('Accept', J)
      .send({ instrument: 'heater', method: 'set_temperature', args: { setpoint_c: 100 } })
      .expect(200);
    expect(yes.body).toEqual({ allowed: true, problems: [] });
    expect(await count('heater.set_temperature')).toBe(before);
  });

  it('PUT /app/safety: 400 naming each problem keeps the old file; operators may not; every change audited with before and after', async () => {
    const bad = await lab.admin
      .put('/app/safety')
      .set('Accept', J)
      .send({ ...FILE, limits: [{ target: 'heater', method: 'set_temperature', param: 'setpoint_c', min: 10, max: 5 }], extra: true })
      .expect(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['(file)']);
    expect(bad.body.error.details[0].message).toMatch(/unknown field "extra"/);
    const bad2 = await lab.admin
      .put('/app/safety')
      .set('Accept', J)
      .send({ ...FILE, limits: [{ target: 'heater', method: 'set_temperature', param: 'setpoint_c', min: 10, max: 5 }] })
      .expect(400);
    expect(bad2.body.error.details).toEqual([{ field: 'limits[0].min', message: expect.stringMatching(/above the maximum/) }]);
    expect((await lab.admin.get('/app/safety').set('Accept', J)).body.file).toEqual(FILE);
    const { signupAndLogin } = await import('./helpers.js');
    const op = await signupAndLogin(lab.app, 'olga');
    await op.put('/app/safety').set('Accept', J).send(FILE).expect(403);
    await op.get('/app/safety').set('Accept', J).expect(200);
    const tighter = { ...FILE, limits: [{ ...FILE.limits[0], max: 80 }, FILE.limits[1]] };
    await lab.admin.put('/app/safety').set('Accept', J).send(tighter).expect(200);
    const audit = (await lab.runtime.store.audit.list(10)).find((a) => a.action === 'safety.replace');
    expect(audit?.detail).toMatchObject({ before: FILE, after: tighter });
    await call('heater', 'set_temperature', { setpoint_c: 100 }).expect(409);
    await lab.admin.put('/app/safety').set('Accept', J).send(FILE).expect(200);
  });
});

describe('fail-closed', () => {
  it('a file that does not validate blocks every call (503 naming the file and the first problem); the lab starts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-safety-'));
    const file = join(dir, 'lab-safety.json');
    await writeFile(file, '{"format": "ivoryos-safety/1", "limits": [{"target": "heater"}]');
    const other = await startLab({ deck: DECK, safety: file });
    try {
      const res = await other.admin.post('/app/instruments/door').set('Accept', J).send({ method: 'close_door', args: {} }).expect(503);
      expect(res.body.error.code).toBe('safety_file');
      expect(res.body.error.message).toContain(file);
      expect(res.body.error.message).toMatch(/is not JSON/);
      const shown = await other.admin.get('/app/safety').set('Accept', J).expect(200);
      expect(shown.body.error).toMatch(/every instrument call is blocked/);
      // the preflight says so too (a run would be refused at submit)
      await other.admin
        .post('/app/workflows')
        .set('Accept', J)
        .send({ name: 'shut', main: [{ kind: 'call', instrument: 'door', method: 'close_door', args: {} }] })
        .expect(201);
      const pre = await other.admin.post('/app/executions/preflight').set('Accept', J).send({ workflow: 'shut', repeat: 1 }).expect(200);
      expect(pre.body).toMatchObject({ ok: false, safety: { allowed: false, error: expect.stringContaining(file) }, problems: [{ field: 'safety', message: expect.stringMatching(/is not JSON/) }] });
      await other.admin.put('/app/safety').set('Accept', J).send({ format: 'ivoryos-safety/1' }).expect(200);
      await other.admin.post('/app/instruments/door').set('Accept', J).send({ method: 'close_door', args: {} }).expect(200);
    } finally {
      await other.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
