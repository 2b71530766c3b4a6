/**
 * ivoryOS's workflow JSON (issue 29 item 5): the next generation's workflow file imports as a labdeck workflow,
 * runs, and exports back (round trip); Classic's script_dict imports too; pro_code, for/endfor and the other
 * steps labdeck has none for are a 400 naming the step. Fixtures: test/fixtures/ivoryos-next/workflows (the
 * edge's file format) and test/fixtures/ivoryos-classic (written by ivoryOS 1.6.11's own compiler).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { PASSWORD, startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';
const read = async (path: string) => JSON.parse(await readFile(fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url)), 'utf8'));
const step = (instrument: string, action: string, args: Record<string, unknown> = {}, ret = '') => ({ id: 1, instrument, action, args, arg_types: {}, return: ret, batch_action: false });

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(() => lab.close());

const importJson = (workflow: unknown, extra: Record<string, unknown> = {}, query = '') =>
  lab.admin
    .post(`/app/workflows/import/ivoryos${query}`)
    .set('Accept', J)
    .send({ workflow, ...extra });

describe("the next generation's workflow JSON", () => {
  it('imports (#name parameters, return bindings, If, Comment), runs, and exports back to the same workflow', async () => {
    const file = await read('ivoryos-next/workflows/Dose and check.json');
    const saved = await importJson(file).expect(201);
    expect(saved.body.name).toBe('Dose_and_check');
    const wf = saved.body.workflow;
    expect(wf.parameters).toEqual([{ name: 'volume', type: 'number' }]);
    expect(wf.outputs).toEqual(['mass']);
    expect(wf.prep).toEqual([{ kind: 'call', instrument: 'hotplate', method: 'set_temperature', args: { celsius: { value: 25 } } }]);
    expect(wf.main[1]).toEqual({ kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' });
    expect(wf.main[2]).toEqual({
      kind: 'if',
      condition: { left: { var: 'mass' }, op: '>', right: { value: 1000 } },
      then: [{ kind: 'wait', seconds: 0, label: 'Comment: Mass #mass is above the range: dose less.' }],
    });
    // it runs
    const { task_id } = (
      await lab.admin
        .post('/app/executions/config')
        .set('Accept', J)
        .send({ workflow: 'Dose_and_check', config: [{ volume: 1 }] })
        .expect(200)
    ).body;
    await until(async () => (await lab.runtime.store.queue.get(task_id))?.status === 'done');
    const run = (await lab.runtime.store.runs.list({ page: 1, perPage: 1 })).rows[0]!;
    expect(run.status).toBe('completed');
    // and exports back: the same steps, and the same workflow once imported again
    const out = (await lab.admin.get('/app/workflows/Dose_and_check/ivoryos').expect(200)).body;
    const strip = (steps: Record<string, unknown>[]) => steps.map(({ instrument, action, args, return: ret }) => ({ instrument, action, args, return: ret }));
    expect(strip(out.script)).toEqual(strip(file.script));
    expect(strip(out.prep)).toEqual(strip(file.prep));
    expect(out.script[1].return_bindings).toEqual([{ path: '', var: 'mass' }]);
    const again = (await importJson(out, { name: 'Dose_and_check' }, '?save=false').expect(200)).body;
    expect(again).toEqual(wf);
  });

  it('reads User_Input as an input step and writes it back as one', async () => {
    const file = {
      name: 'asked',
      script: [{ ...step('Flow_Control', 'User_Input', { prompt: 'Sample mass?' }, 'sample_mass'), arg_types: { prompt: 'float' } }, step('pump', 'dose', { volume_ml: '#sample_mass' })],
    };
    const wf = (await importJson(file, {}, '?save=false').expect(200)).body;
    expect(wf.main[0]).toEqual({ kind: 'input', prompt: 'Sample mass?', save_as: 'sample_mass', schema: { type: 'number' } });
    expect(wf.main[1].args).toEqual({ volume_ml: { var: 'sample_mass' } });
    await importJson(file).expect(201);
    const out = (await lab.admin.get('/app/workflows/asked/ivoryos').expect(200)).body;
    expect(out.script[0]).toMatchObject({ instrument: 'Flow_Control', action: 'User_Input', args: { prompt: 'Sample mass?' }, return: 'sample_mass' });
    expect((await importJson(out, {}, '?save=false').expect(200)).body).toEqual(wf);
  });
});

describe("Classic's script_dict", () => {
  it('imports as written by its compiler (if/else/endif, repeat/endrepeat, pause), also as its library row', async () => {
    const dict = await read('ivoryos-classic/if_repeat.json');
    const wf = (await importJson({ name: 'if_repeat', script_dict: dict }).expect(201)).body.workflow;
    expect(wf.main.map((s: { kind: string }) => s.kind)).toEqual(['call', 'if', 'repeat']);
    expect(wf.main[1].else).toEqual([{ kind: 'pause', message: 'Too heavy' }]);
    expect(wf.main[2]).toMatchObject({ kind: 'repeat', times: 3 });
    const plain = (await importJson(await read('ivoryos-classic/dose_weigh.json'), { name: 'dw' }, '?save=false').expect(200)).body;
    expect(plain.outputs).toEqual(['mass']);
  });

  it('refuses pro_code, for/endfor, while, variables and batch steps naming the step; nothing is saved', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ ...step('pro_code', 'pro_code', { statement: 'import os; os.remove("x")' }) }, 'script[1]', /Python code \(pro_code\): labdeck never runs code/],
      [step('for', 'for', { statement: 'x in [1, 2]' }), 'script[1]', /for marker/],
      [step('for', 'endfor'), 'script[1]', /endfor marker/],
      [step('while', 'while', { statement: 'mass < 3' }), 'script[1]', /while loop/],
      [step('variable', 'volume', { statement: 2 }), 'script[1]', /is a variable/],
      [{ ...step('deck.pump', 'dose', { volume_ml: 1 }), batch_action: true }, 'script[1]', /batch step/],
    ];
    for (const [bad, field, message] of cases) {
      const res = await importJson({ name: 'refused', script: [step('deck.balance', 'weigh', {}, 'mass'), bad] }).expect(400);
      expect(res.body.error.details).toEqual([{ field, message: expect.stringMatching(message) }]);
    }
    await lab.admin.get('/app/workflows/refused').set('Accept', J).expect(404);
    // an unclosed If and a step the deck does not have are named too
    const open = await importJson({ name: 'x', script: [step('Flow_Control', 'If', { condition: 'a > 1' })] }).expect(400);
    expect(open.body.error.details[0].field).toBe('script[0]');
    const unknown = await importJson({ name: 'x', script: [step('deck.ghost', 'dose')] }).expect(400);
    expect(unknown.body.error.message).toMatch(/ghost/);
  });

  it('refuses what Classic compiles pro_code and a for loop into, through /draft/submit_python, naming the line', async () => {
    const agent = request.agent(lab.app);
    await agent.post('/ivoryos/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
    const cases: [string, RegExp][] = [
      ["def coded():\n    deck.noop.ping()\n    import os\n    os.remove('data.csv')\n", /script line 3/],
      ['def looped():\n    for v in [1, 2]:\n        deck.pump.dose(**{"volume_ml": v})\n', /script line 2/],
    ];
    for (const [script, line] of cases) {
      const res = await agent.post('/ivoryos/draft/submit_python').set('Accept', '*/*').send({ workflow_name: 'refused_py', script }).expect(400);
      expect(res.body).toMatchObject({ success: false, details: [expect.objectContaining({ field: 'script' })] });
      expect(res.body.error).toMatch(line);
    }
    await lab.admin.get('/app/workflows/refused_py').set('Accept', J).expect(404);
  });
});
