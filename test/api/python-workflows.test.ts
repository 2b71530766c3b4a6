/**
 * Workflows from and to Python (issue 15 item 2): ivoryOS-style scripts read by the Python host's parser
 * (never run) into workflows validated against the demo deck, at /app/workflows/import/python and at
 * ivoryOS's /ivoryos/draft/submit_python; every workflow exported as a script over labdeck_client.py, and
 * imported back unchanged.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { PASSWORD, startLab, type TestLab } from './helpers.js';

const exec = promisify(execFile);

const J = 'application/json';
let lab: TestLab;

beforeAll(async () => {
  lab = await startLab();
});
afterAll(() => lab.close());

/** An ivoryOS script: a prep, the main function with its parameters, a cleanup. */
const SCRIPT = `"""Dose, weigh, and react while it is light"""
import time


def dose_weigh_prep():
    deck.hotplate.set_temperature(celsius=25)


def dose_weigh(volume: float = 1.5, temperature: float = 60):
    deck.pump.dose(volume_ml=volume)
    mass = deck.balance.weigh()
    time.sleep(0.01)
    for _ in range(2):
        deck.pump.dose(volume_ml="#top_up")
    if mass < 100:
        run = deck.reactor.run(temperature=temperature, time=10)
    else:
        input("Too heavy: check the vial")
    return {"mass": mass}


def dose_weigh_cleanup():
    deck.hotplate.set_temperature(celsius=20)
`;

const importPython = (body: string, query = '') => lab.admin.post(`/app/workflows/import/python${query}`).set('Accept', J).type('text/plain').send(body);

describe('import at /app/workflows/import/python', () => {
  it('reads an ivoryOS-style script into a workflow: parameters, calls, results, sleep, for-range, if/else, pause, outputs; saved (201)', async () => {
    const res = await importPython(SCRIPT).expect(201);
    expect(res.headers.location).toBe('/app/workflows/dose_weigh');
    expect(res.body.workflow).toEqual({
      name: 'dose_weigh',
      description: 'Dose, weigh, and react while it is light',
      parameters: [
        { name: 'volume', type: 'number', default: 1.5 },
        { name: 'temperature', type: 'number', default: 60 },
        { name: 'top_up', type: 'number' },
      ],
      outputs: ['mass'],
      prep: [{ kind: 'call', instrument: 'hotplate', method: 'set_temperature', args: { celsius: { value: 25 } } }],
      main: [
        { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } },
        { kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' },
        { kind: 'wait', seconds: 0.01 },
        { kind: 'repeat', times: 2, steps: [{ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'top_up' } } }] },
        {
          kind: 'if',
          condition: { left: { var: 'mass' }, op: '<', right: { value: 100 } },
          then: [{ kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { value: 10 } }, save_as: 'run' }],
          else: [{ kind: 'pause', message: 'Too heavy: check the vial' }],
        },
      ],
      cleanup: [{ kind: 'call', instrument: 'hotplate', method: 'set_temperature', args: { celsius: { value: 20 } } }],
    });
    expect((await lab.runtime.store.workflows.get('dose_weigh'))?.definition).toEqual(res.body.workflow);
  });

  it('takes { source, name } as JSON; save=false answers the workflow without saving it', async () => {
    const res = await lab.admin.post('/app/workflows/import/python?save=false').set('Accept', J).send({ source: SCRIPT, name: 'unsaved' }).expect(200);
    expect(res.body).toMatchObject({ name: 'unsaved', outputs: ['mass'] });
    expect(await lab.runtime.store.workflows.get('unsaved')).toBeNull();
  });

  it('names each output by its key in the returned dict: {"power": run["yield"]} is the output power, from run.yield', async () => {
    const source = 'def keyed():\n    run = deck.reactor.run(temperature=50, time=5)\n    return {"power": run["yield"], "run.yield": run["yield"], "whole": run}\n';
    const res = await importPython(source, '?save=false').expect(200);
    expect(res.body.outputs).toEqual([{ name: 'power', from: 'run.yield' }, 'run.yield', { name: 'whole', from: 'run' }]);
  });

  it('refuses Python outside the subset with 400 naming the line and the construct, and saves nothing', async () => {
    const cases: [string, number, RegExp][] = [
      ['def w():\n    deck.pump.dose(volume_ml=1)\n    while True:\n        pass\n', 3, /line 3: a while loop is outside the workflow subset/],
      ['def w():\n    x = 1 + 2\n', 2, /line 2: an assignment of 1 \+ 2/],
      ['def w():\n    deck.pump.dose(1.5)\n', 2, /line 2: a positional argument of deck\.pump\.dose.*name every argument/],
      ['def w():\n    for i in range(3):\n        deck.pump.dose(volume_ml=i)\n', 3, /line 3: the name i/],
      ['import os\nos.system("rm -rf /")\n', 2, /line 2: os\.system\("rm -rf \/"\) \(Expr\) is outside/],
      ['def w(:\n', 1, /line 1: invalid syntax/],
    ];
    for (const [source, line, message] of cases) {
      const res = await importPython(source, '?name=bad').expect(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(message), details: [{ field: 'source' }] });
      expect(res.body.error.message).toContain(`line ${line}`);
    }
    expect(await lab.runtime.store.workflows.get('bad')).toBeNull();
  });

  it('refuses calls that do not fit the deck, naming the step', async () => {
    const res = await importPython('def w():\n    deck.ghost.fly()\n    deck.pump.dose(volume_ml=99, speed=2)\n').expect(400);
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['main[0].instrument', 'main[1].args.volume_ml', 'main[1].args.speed']));
    expect(await lab.runtime.store.workflows.get('w')).toBeNull();
  });

  it('the workflows page has the Import Python form; a bad script comes back in it with the message', async () => {
    const page = await lab.admin.get('/app/workflows').expect(200);
    expect(page.text).toContain('Import Python');
    expect(page.text).toContain('action="/app/workflows/import/python"');
    const bad = await lab.admin.post('/app/workflows/import/python').type('form').send({ source: 'def w():\n    while 1:\n        pass\n', name: 'formwf' }).expect(400);
    expect(bad.text).toContain('line 2: a while loop is outside the workflow subset');
    expect(bad.text).toContain('formwf');
    const ok = await lab.admin.post('/app/workflows/import/python').type('form').send({ source: 'def w():\n    deck.noop.ping()\n', name: 'formwf' }).expect(303);
    expect(ok.headers.location).toBe('/app/workflows/formwf');
  });
});

/** Workflows covering every construct the subset has. */
const ROUND_TRIPS = [
  {
    name: 'everything',
    description: 'All of it: "quotes", a backslash \\ and """triple""" quotes',
    parameters: [
      { name: 'volume', type: 'number', default: 2 },
      { name: 'times', type: 'integer', default: 3 },
      { name: 'label', type: 'string', default: 'vial "A"' },
      { name: 'hot', type: 'boolean', default: false },
      { name: 'celsius', type: 'number' },
    ],
    outputs: ['run.yield', 'mass', 'run', { name: 'product', from: 'run.yield' }],
    prep: [{ kind: 'call', instrument: 'noop', method: 'ping' }],
    main: [
      { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } },
      { kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' },
      { kind: 'wait', seconds: 0.5 },
      { kind: 'pause', message: 'Check it' },
      { kind: 'pause' },
      {
        kind: 'repeat',
        times: 2,
        steps: [
          { kind: 'call', instrument: 'hotplate', method: 'set_temperature', args: { celsius: { param: 'celsius' } } },
          { kind: 'repeat', times: 0, steps: [] },
        ],
      },
      {
        kind: 'if',
        condition: { left: { param: 'hot' }, op: '==', right: { value: true } },
        then: [{ kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { value: 80.5 }, time: { value: 10 } }, save_as: 'run' }],
        else: [
          {
            kind: 'if',
            condition: { left: { var: 'mass' }, op: '>=', right: { value: -1.5 } },
            then: [{ kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { value: 40 }, time: { value: 5 } }, save_as: 'run' }],
          },
        ],
      },
    ],
    cleanup: [],
  },
  { name: 'empty-one', description: '', parameters: [], outputs: [], prep: [], main: [], cleanup: [] },
];

describe('export at /app/workflows/{name}/python', () => {
  it.each(ROUND_TRIPS)('exports $name as a script over labdeck_client, which imports back as the same workflow', async (wf) => {
    await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
    const res = await lab.admin.get(`/app/workflows/${wf.name}/python`).expect(200);
    expect(res.headers['content-type']).toMatch(/text\/x-python/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename=${wf.name}.py`);
    const script = res.text;
    expect(script).toContain('import labdeck_client');
    expect(script).toContain('lab = labdeck_client.Lab(');
    if (wf.name === 'everything') {
      expect(script).toContain('lab.pump.dose(volume_ml=volume)');
      expect(script).toContain('mass = lab.balance.weigh()');
      expect(script).toContain('for _ in range(2):');
      expect(script).toContain('return {"run.yield": run["yield"], "mass": mass, "run": run, "product": run["yield"]}');
    }
    const back = await lab.admin.post(`/app/workflows/import/python?save=false&name=${wf.name}`).set('Accept', J).type('text/plain').send(script).expect(200);
    expect(back.body).toEqual(wf);
  });

  it('an older version, and 404 for an unknown workflow', async () => {
    await lab.admin.get('/app/workflows/nope/python').expect(404);
    await lab.admin
      .put('/app/workflows/empty-one')
      .set('Accept', J)
      .send({ main: [{ kind: 'call', instrument: 'noop', method: 'ping' }] })
      .expect(200);
    expect((await lab.admin.get('/app/workflows/empty-one/python').expect(200)).text).toContain('lab.noop.ping()');
    expect((await lab.admin.get('/app/workflows/empty-one/python?version=1').expect(200)).text).not.toContain('lab.noop.ping()');
  });

  it('the exported script runs: over the downloaded labdeck_client.py it makes the calls on the deck and prints the outputs', async () => {
    const wf = {
      name: 'runnable',
      parameters: [{ name: 'volume', type: 'number', default: 0.25 }],
      outputs: ['mass'],
      prep: [{ kind: 'call', instrument: 'noop', method: 'ping' }],
      main: [
        { kind: 'repeat', times: 2, steps: [{ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } }] },
        { kind: 'wait', seconds: 0.01 },
        { kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' },
      ],
      cleanup: [{ kind: 'call', instrument: 'noop', method: 'ping' }],
    };
    await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
    const token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'export' }).expect(201)).body.token as string;
    const server: Server = lab.app.listen(0);
    await new Promise((r) => server.once('listening', r));
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-export-'));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/app`;
      const get = async (path: string) => (await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } })).text();
      await writeFile(join(dir, 'labdeck_client.py'), await get('/instruments/proxy?lang=python'));
      await writeFile(join(dir, 'runnable.py'), await get('/workflows/runnable/python'));
      const recorded = async () => (await Promise.all(['noop', 'pump', 'balance'].map((i) => lab.runtime.store.steps.recent(i, 1000)))).flat().sort((a, b) => a.id - b.id);
      const last = (await recorded()).at(-1)?.id ?? 0;
      const { stdout } = await exec('python3', ['runnable.py'], { cwd: dir, env: { ...process.env, LABDECK_TOKEN: token }, timeout: 30_000 });
      expect(stdout).toMatch(/^\{'mass': /);
      const calls = (await recorded()).filter((st) => st.id > last).map((st) => `${st.instrument}.${st.method}`);
      expect(calls).toEqual(['noop.ping', 'pump.dose', 'pump.dose', 'balance.weigh', 'noop.ping']);
    } finally {
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the exported script takes its parameters as options: one without a default is asked for before prep, not a TypeError after it', async () => {
    const wf = {
      name: 'asks',
      parameters: [
        { name: 'volume', type: 'number' },
        { name: 'times', type: 'integer', default: 1 },
        { name: 'label', type: 'string' },
        { name: 'dry', type: 'boolean', default: false },
      ],
      prep: [{ kind: 'call', instrument: 'noop', method: 'ping' }],
      main: [{ kind: 'repeat', times: 1, steps: [{ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } }] }],
    };
    await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
    const token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'asks' }).expect(201)).body.token as string;
    const server: Server = lab.app.listen(0);
    await new Promise((r) => server.once('listening', r));
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-asks-'));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/app`;
      const get = async (path: string) => (await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } })).text();
      await writeFile(join(dir, 'labdeck_client.py'), await get('/instruments/proxy?lang=python'));
      const script = await get('/workflows/asks/python');
      await writeFile(join(dir, 'asks.py'), script);
      // it still imports back as the same workflow
      const back = await lab.admin.post('/app/workflows/import/python?save=false&name=asks').set('Accept', J).type('text/plain').send(script).expect(200);
      expect(back.body.parameters).toEqual(wf.parameters);
      const env = { ...process.env, LABDECK_TOKEN: token };
      const pings = async () => (await lab.runtime.store.steps.recent('noop', 1000)).length;
      const before = await pings();
      const missing = await exec('python3', ['asks.py', '--times', '2'], { cwd: dir, env, timeout: 30_000 }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('the following arguments are required: --volume, --label');
      expect(missing.stderr).not.toContain('TypeError');
      expect(await pings()).toBe(before); // prep never ran
      const seen = new Set((await lab.runtime.store.steps.recent('pump', 1000)).map((st) => st.id));
      await exec('python3', ['asks.py', '--volume', '0.5', '--label', 'a b', '--dry', 'true'], { cwd: dir, env, timeout: 30_000 });
      const made = (await lab.runtime.store.steps.recent('pump', 1000)).filter((st) => !seen.has(st.id));
      expect(made).toMatchObject([{ method: 'dose', args: { volume_ml: 0.5 } }]);
    } finally {
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the workflow page links to the script', async () => {
    const page = await lab.admin.get('/app/workflows/everything').expect(200);
    expect(page.text).toContain('href="/app/workflows/everything/python"');
  });
});

describe('ivoryOS: POST /ivoryos/draft/submit_python', () => {
  /** ivoryos-client's submit_workflow_script: logged in with the form, JSON { workflow_name, script, cleanup, prep }. */
  async function client() {
    const agent = request.agent(lab.app);
    await agent.post('/ivoryos/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
    return (body: Record<string, string>) => agent.post('/ivoryos/draft/submit_python').set('Accept', '*/*').send(body);
  }

  it('saves the prep / script / cleanup texts as a workflow and selects it as the session draft', async () => {
    const submit = await client();
    const res = await submit({
      workflow_name: 'ivory',
      prep: 'deck.noop.ping()',
      script: 'def ivory(celsius=30):\n    t = deck.hotplate.set_temperature(celsius=celsius)\n    return {"t": t}',
      cleanup: 'deck.hotplate.set_temperature(celsius=20)\ntime.sleep(0)',
    }).expect(200);
    expect(res.body).toMatchObject({ success: true, workflow_name: 'ivory', version: 1 });
    const row = await lab.runtime.store.workflows.get('ivory');
    expect(row?.definition).toMatchObject({
      parameters: [{ name: 'celsius', type: 'integer', default: 30 }],
      outputs: ['t'],
      prep: [{ kind: 'call', instrument: 'noop', method: 'ping' }],
      main: [{ kind: 'call', instrument: 'hotplate', method: 'set_temperature', args: { celsius: { param: 'celsius' } }, save_as: 't' }],
      cleanup: [
        { kind: 'call', instrument: 'hotplate', method: 'set_temperature', args: { celsius: { value: 20 } } },
        { kind: 'wait', seconds: 0 },
      ],
    });
    // submitted again: a new version, as ivoryOS replaces its draft
    expect((await submit({ workflow_name: 'ivory', script: 'deck.noop.ping()', prep: '', cleanup: '' }).expect(200)).body.version).toBe(2);
  });

  it("refuses Python outside the subset or an unknown deck name with 400 in ivoryOS's error shape, naming the field and line", async () => {
    const submit = await client();
    const bad = await submit({ workflow_name: 'ivory2', script: 'deck.noop.ping()\nwith open("x") as f:\n    pass', prep: '', cleanup: '' }).expect(400);
    expect(bad.body).toEqual({ success: false, error: expect.stringContaining('script line 2: with is outside the workflow subset'), details: [{ field: 'script', message: expect.any(String) }] });
    const ghost = await submit({ workflow_name: 'ivory2', script: 'deck.ghost.fly()', prep: '', cleanup: '' }).expect(400);
    expect(ghost.body).toMatchObject({ success: false, error: expect.stringContaining('ghost'), details: [{ field: 'main[0].instrument' }] });
    const reserved = await submit({ workflow_name: 'new', script: 'deck.noop.ping()', prep: '', cleanup: '' }).expect(400);
    expect(reserved.body).toMatchObject({ success: false, details: [{ field: 'workflow_name' }] });
    expect(await lab.runtime.store.workflows.get('ivory2')).toBeNull();
    expect(await lab.runtime.store.workflows.get('new')).toBeNull();
  });
});
