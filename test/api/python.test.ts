/**
 * Python instruments end to end over HTTP, with a real Python host process running the fixture deck (an
 * ivoryOS deck script, unchanged) and driver module in test/fixtures/python.
 */
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime } from '../../core/runtime.js';
import { startLab, type TestLab } from './helpers.js';
import { waitForValue } from '../helpers/wait.js';

const J = 'application/json';
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/python/${name}`, import.meta.url));

const until = <T>(get: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 10_000): Promise<T> => waitForValue(get, ok, what, ms, 50);

describe('a Python deck (ivoryOS style)', () => {
  let lab: TestLab;
  const logged: string[] = [];
  beforeAll(async () => {
    lab = await startLab({ deck: fixture('deck.py'), log: (l) => logged.push(l), consoleTimeoutMs: 1500 });
  });
  afterAll(() => lab.close());

  it('turns the top-level instances into instruments, including those made under __main__', async () => {
    const res = await lab.admin.get('/app/instruments/').set('Accept', J).expect(200);
    const names = res.body.instruments.map((i: { name: string }) => i.name);
    expect(names).toEqual(['pump', 'hotplate', 'robot']);
    expect(res.body.instruments[0].driver).toBe('Pump');
    expect(logged.join('\n')).toContain('deck loaded');
  });

  it('describes methods from hints and docstrings: declared in full is not marked inferred; lifecycle hooks are no methods', async () => {
    const pump = (await lab.admin.get('/app/instruments/pump').set('Accept', J).expect(200)).body;
    const dose = pump.methods.find((m: { name: string }) => m.name === 'dose');
    expect(dose.description).toBe('Dispense a volume.');
    expect(dose.inferred).toBe(false); // every parameter and the return hinted, and a docstring
    expect(pump.methods.find((m: { name: string }) => m.name === 'jam').inferred).toBe(true); // no return hint
    const page = await lab.admin.get('/app/instruments/pump').expect(200);
    expect(page.text).toContain('id="method-dose"');
    expect(page.text.slice(page.text.indexOf('id="method-dose"'), page.text.indexOf('id="method-noop"'))).not.toContain('inferred');
    expect(dose.params.properties.volume_ml).toMatchObject({ type: 'number', description: 'volume to dispense, in mL' });
    expect(dose.params.properties.solvent.enum).toEqual(['water', 'ethanol']);
    expect(dose.params.required).toEqual(['volume_ml']);
    // close() is labdeck's to call (before a reload, at shutdown): not on the page, in the API or the builder
    expect(pump.methods.map((m: { name: string }) => m.name)).not.toContain('close');
    await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'close', args: {} }).expect(404);
    const list = (await lab.admin.get('/app/instruments/').set('Accept', J).expect(200)).body.instruments;
    expect(list.find((i: { name: string }) => i.name === 'pump').methods).not.toContain('close');
    const volume = pump.methods.find((m: { name: string }) => m.name === 'volume');
    expect(volume.safety).toBe('readonly');
    const hot = (await lab.admin.get('/app/instruments/hotplate').set('Accept', J).expect(200)).body;
    expect(hot.methods.map((m: { name: string }) => m.name)).toEqual(expect.arrayContaining(['target', 'set_target', 'heat', 'program']));
    const heat = hot.methods.find((m: { name: string }) => m.name === 'heat');
    expect(heat.params.properties.mode.enum).toEqual(['fast', 'gentle']);
    expect(heat.returns.prefixItems).toHaveLength(2);
  });

  it('calls a method: output, a record with what the driver printed and logged', async () => {
    const res = await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume_ml: 1.5, solvent: 'ethanol' } })
      .expect(200);
    expect(res.body.output).toBe(1.5);
    const task = await lab.admin.get(`/app/instruments/task/${res.body.task_id}`).set('Accept', J).expect(200);
    expect(task.body).toMatchObject({ instrument: 'pump', method: 'dose', status: 'ok', args: { volume_ml: 1.5, solvent: 'ethanol' } });
    expect(task.body.log).toContain('dosing 1.5 mL of ethanol');
    expect(task.body.log).toContain('lab.pump: pump at COM3 dosed 1.5');
    const page = await lab.admin.get(`/app/instruments/task/${res.body.task_id}`).expect(200);
    expect(page.text).toContain('dosing 1.5 mL of ethanol');
  });

  it('form posts are coerced by the Python schema', async () => {
    const res = await lab.admin.post('/app/instruments/pump').type('form').send({ method: 'dose', volume_ml: '2' }).expect(200);
    expect(res.text).toContain('3.5');
  });

  it('refuses bad arguments with 400 naming the field, before Python is asked', async () => {
    const wrong = await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume_ml: 'lots' } })
      .expect(400);
    expect(wrong.body.error.details).toEqual([{ field: 'volume_ml', message: 'must be a number' }]);
    const missing = await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'dose', args: {} }).expect(400);
    expect(missing.body.error.details[0]).toEqual({ field: 'volume_ml', message: 'is required' });
    const extra = await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume_ml: 1, speed: 3 } })
      .expect(400);
    expect(extra.body.error.details.map((d: { field: string }) => d.field)).toContain('speed');
    const enumBad = await lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'dose', args: { volume_ml: 1, solvent: 'oil' } })
      .expect(400);
    expect(enumBad.body.error.details[0].field).toBe('solvent');
  });

  it('private and dunder methods are not there (404)', async () => {
    for (const m of ['_private', '__init__', '__class__']) {
      await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: m, args: {} }).expect(404);
    }
  });

  it('a driver exception is a 502 with its type and message; the traceback is in the record', async () => {
    const res = await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'jam', args: {} }).expect(502);
    expect(res.body.error.message).toBe('RuntimeError: pump jammed at COM3');
    const task = await lab.admin.get(`/app/instruments/task/${res.body.task_id}`).set('Accept', J).expect(200);
    expect(task.body.status).toBe('error');
    expect(task.body.error).toContain('Traceback (most recent call last)');
    expect(task.body.error).toContain('drivers.py');
  });

  it('async methods, properties and setters, dataclass arguments, tuple returns', async () => {
    const heat = await lab.admin
      .post('/app/instruments/hotplate')
      .set('Accept', J)
      .send({ method: 'heat', args: { celsius: 80, mode: 'fast' } })
      .expect(200);
    expect(heat.body.output).toEqual([80, 'fast']);
    await lab.admin
      .post('/app/instruments/hotplate')
      .set('Accept', J)
      .send({ method: 'set_target', args: { value: 120 } })
      .expect(200);
    const target = await lab.admin.post('/app/instruments/hotplate').set('Accept', J).send({ method: 'target', args: {} }).expect(200);
    expect(target.body.output).toBe(120);
    const bad = await lab.admin
      .post('/app/instruments/hotplate')
      .set('Accept', J)
      .send({ method: 'set_target', args: { value: 999 } })
      .expect(502);
    expect(bad.body.error.message).toBe('ValueError: target must be 0-300 C');
    const prog = await lab.admin
      .post('/app/instruments/hotplate')
      .set('Accept', J)
      .send({ method: 'program', args: { ramp: { start: 20, end: 90 } } })
      .expect(200);
    expect(prog.body.output).toEqual({ start: 20, end: 90, minutes: 10, repeats: null, tags: [] });
    const badRamp = await lab.admin
      .post('/app/instruments/hotplate')
      .set('Accept', J)
      .send({ method: 'program', args: { ramp: { start: 20 } } })
      .expect(400);
    expect(badRamp.body.error.details[0].field).toMatch(/^ramp/);
  });

  it('returns non-JSON values as JSON (datetimes, Enums, dataclasses) or as a repr', async () => {
    const stamp = await lab.admin.post('/app/instruments/hotplate').set('Accept', J).send({ method: 'stamp', args: {} }).expect(200);
    expect(stamp.body.output).toEqual({ at: '2026-01-02T03:04:05', solvent: 'ethanol', ramp: { start: 1, end: 2, minutes: 10 } });
    const profile = await lab.admin
      .post('/app/instruments/hotplate')
      .set('Accept', J)
      .send({ method: 'profile', args: { points: 3 } })
      .expect(200);
    expect(profile.body.output).toEqual({ t: [0, 0.5, 1], peak: 80.5, n: 3 });
    const weird = await lab.admin.post('/app/instruments/hotplate').set('Accept', J).send({ method: 'weird', args: {} }).expect(200);
    expect(weird.body.output).toMatch(/^<object object at/);
  });

  it('a slow call on one instrument does not hold a call on another', async () => {
    let slowEnded = false;
    // the pump prints as its slow call starts: from then on it is in the driver
    const started = new Promise<void>((res) => lab.runtime.deck.on('log', (e: { instrument: string; message: string }) => e.instrument === 'pump' && /pumping/.test(e.message) && res()));
    const slowDone = lab.admin
      .post('/app/instruments/pump')
      .set('Accept', J)
      .send({ method: 'slow', args: { seconds: 3 } })
      .then((r) => ((slowEnded = true), r));
    await started;
    await lab.admin.post('/app/instruments/hotplate').set('Accept', J).send({ method: 'target', args: {} }).expect(200);
    expect(slowEnded).toBe(false); // answered while the other instrument's call still runs
    expect((await slowDone).status).toBe(200);
  });

  it('the console runs Python in the deck namespace, like a REPL', async () => {
    const res = await lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({ code: 'x = pump.volume\nprint("vol", x)\nx * 2' }).expect(200);
    expect(res.body).toMatchObject({ success: true, stdout: expect.stringContaining('vol') });
    expect(typeof res.body.result).toBe('number');
    const err = await lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({ code: '1/0' }).expect(200);
    expect(err.body.success).toBe(false);
    expect(err.body.error).toContain('ZeroDivisionError');
    const audit = await lab.runtime.store.audit.list(5);
    expect(audit.some((a) => a.action === 'console.execute')).toBe(true);
  });

  it('workflows run over Python instruments, and the generated clients and API document list them', async () => {
    const wf = {
      name: 'py-dose',
      parameters: [{ name: 'volume', type: 'number', default: 1 }],
      outputs: ['total', 'heated.0'],
      main: [
        { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } }, save_as: 'total' },
        { kind: 'call', instrument: 'hotplate', method: 'heat', args: { celsius: { value: 60 } }, save_as: 'heated' },
      ],
    };
    await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
    const bad = await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({ ...wf, name: 'py-bad', main: [{ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: 'x' } } }] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('main[0].args.volume_ml');
    expect(bad.body.error.message).toMatch(/^Workflow "py-bad"/);
    const run = await lab.admin
      .post('/app/executions/config')
      .set('Accept', J)
      .send({ workflow: 'py-dose', config: [{ volume: 0.5 }, { volume: 0.25 }] })
      .expect(200);
    const record = await until(
      async () => (await lab.admin.get('/app/executions/records').set('Accept', J).expect(200)).body.records[0],
      (r: { id: number; status: string } | undefined) => r?.status === 'completed',
      'the run to complete',
    );
    const detail = (await lab.admin.get(`/app/executions/records/${record!.id}`).set('Accept', J).expect(200)).body;
    const mains = detail.phases.filter((p: { phase: string }) => p.phase === 'main');
    expect(mains.map((p: { outputs: Record<string, unknown> }) => p.outputs['heated.0'])).toEqual([60, 60]); // one output per tuple position
    expect(detail.logs.map((l: { message: string }) => l.message).join('\n')).toContain('dosing 0.5 mL of water');
    expect(run.body.task_id).toBeGreaterThan(0);
    const proxy = await lab.admin.get('/app/instruments/proxy?lang=python').expect(200);
    expect(proxy.text).toContain('def dose(');
    const api = await lab.admin.get('/app/openapi.json').expect(200);
    expect(JSON.stringify(api.body)).toContain('volume_ml');
  });

  it("Connect device lists the deck's own classes (from its drivers module) and connects one", async () => {
    const drivers = (await lab.admin.get('/app/instruments/new/').set('Accept', J).expect(200)).body.drivers;
    // (the deck made them connectable: its file is theirs here)
    for (const name of ['Pump', 'Hotplate', 'Robot']) expect(drivers.find((d: { name: string }) => d.name === name)).toMatchObject({ origin: 'deck', file: fixture('deck.py') });
    const page = await lab.admin.get('/app/instruments/new/').expect(200);
    expect(page.text).toContain('href="/app/instruments/new/Pump"');
    await lab.admin.post('/app/instruments/new/Pump').type('form').send({ device_name: 'pump_b', port: 'COM4' }).expect(302);
    const v = await lab.admin
      .post('/app/instruments/pump_b')
      .set('Accept', J)
      .send({ method: 'slow', args: { seconds: 0 } })
      .expect(200);
    expect(v.body.output).toBe('done');
  });

  it('imports another Python deck at run time (deck-python); a name it reuses is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-pydeck-'));
    try {
      await copyFile(fixture('drivers.py'), join(dir, 'drivers.py'));
      await writeFile(join(dir, 'extra.py'), 'from drivers import Pump\npump2 = Pump(port="COM7")\n');
      await writeFile(join(dir, 'clash.py'), 'from drivers import Pump\npump = Pump(port="COM8")\n');
      await writeFile(join(dir, 'reserved.py'), 'from drivers import Pump\nconsole = Pump()\n');
      await lab.admin
        .post('/app/instruments/new/deck-python')
        .type('form')
        .send({ filepath: join(dir, 'extra.py') })
        .expect(302);
      const list = (await lab.admin.get('/app/instruments/').set('Accept', J).expect(200)).body.instruments;
      expect(list.find((i: { name: string }) => i.name === 'pump2')).toMatchObject({ source: 'temporary', driver: 'Pump' });
      const clash = await lab.admin
        .post('/app/instruments/new/deck-python')
        .set('Accept', J)
        .send({ filepath: join(dir, 'clash.py') })
        .expect(409);
      expect(clash.body.error.message).toContain('already has pump');
      const reserved = await lab.admin
        .post('/app/instruments/new/deck-python')
        .set('Accept', J)
        .send({ filepath: join(dir, 'reserved.py') })
        .expect(400);
      expect(reserved.body.error.message).toContain('console is a name the web app uses');
      // the deck's own pump is still the one it was
      const v = await lab.admin
        .post('/app/instruments/pump')
        .set('Accept', J)
        .send({ method: 'slow', args: { seconds: 0 } })
        .expect(200);
      expect(v.body.output).toBe('done');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a console snippet that never returns is stopped, and nothing else waits for it', async () => {
    const run = lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({ code: 'while True:\n    pass' });
    const other = await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'noop', args: {} }).expect(200);
    expect(other.body.output).toBeNull();
    const res = await run.expect(200);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toMatch(/TimeoutError/);
  }, 20000);
});

describe('Python driver modules and a host that dies', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab({ deck: false, log: () => undefined, consoleTimeoutMs: 1000 });
  });
  afterAll(() => lab.close());

  it('imports a .py module: its classes become connectable; an instrument argument takes a connected instrument', async () => {
    await lab.admin
      .post('/app/instruments/new/module')
      .type('form')
      .send({ filepath: fixture('drivers.py') })
      .expect(302);
    const form = await lab.admin.get('/app/instruments/new/Pump').expect(200);
    expect(form.text).toContain('name="port"');
    await lab.admin
      .post('/app/instruments/new/Pump')
      .set('Accept', J)
      .send({ device_name: 'p1', kwargs: { port: 'COM9' } })
      .expect(302);
    await lab.admin
      .post('/app/instruments/new/Robot')
      .set('Accept', J)
      .send({ device_name: 'arm', kwargs: { pump: 'p1' } })
      .expect(302);
    const fed = await lab.admin
      .post('/app/instruments/arm')
      .set('Accept', J)
      .send({ method: 'feed', args: { volume_ml: 2 } })
      .expect(200);
    expect(fed.body.output).toBe(2);
    const bad = await lab.admin
      .post('/app/instruments/new/Robot')
      .set('Accept', J)
      .send({ device_name: 'arm2', kwargs: { pump: 'nobody' } })
      .expect(400);
    expect(bad.body.error.details[0].field).toBe('pump');
  });

  it('a module that fails to import is a 400 with the Python error, file and line', async () => {
    const res = await lab.admin
      .post('/app/instruments/new/module')
      .set('Accept', J)
      .send({ filepath: fixture('broken_import.py') })
      .expect(400);
    expect(res.body.error.message).toContain("NameError: name 'undefined_name' is not defined");
    expect(res.body.error.message).toContain('broken_import.py, line 5');
    const syntax = await lab.admin
      .post('/app/instruments/new/module')
      .set('Accept', J)
      .send({ filepath: fixture('syntax_error.py') })
      .expect(400);
    expect(syntax.body.error.message).toMatch(/SyntaxError.*syntax_error\.py, line 2/);
  });

  it("a deck whose driver imports a package this Python lacks: 400 naming the driver's import line, and --python", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-pymissing-'));
    try {
      await writeFile(join(dir, 'valve.py'), 'import labdeck_no_such_modbus_package\n\nclass Valve:\n    def open(self) -> None:\n        pass\n');
      await writeFile(join(dir, 'bench.py'), 'from valve import Valve\nvalve = Valve()\n');
      const res = await lab.admin
        .post('/app/instruments/new/deck-python')
        .set('Accept', J)
        .send({ filepath: join(dir, 'bench.py') })
        .expect(400);
      expect(res.body.error.message).toContain("ModuleNotFoundError: No module named 'labdeck_no_such_modbus_package'");
      expect(res.body.error.message).toContain(`the import that failed: ${join(dir, 'valve.py')}:1: import labdeck_no_such_modbus_package`);
      expect(res.body.error.message).toContain('start labdeck with --python PATH');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a workflow step whose host dies is failed in-doubt and never re-run by itself', async () => {
    await lab.admin
      .post('/app/workflows')
      .set('Accept', J)
      .send({ name: 'py-crash', main: [{ kind: 'call', instrument: 'arm', method: 'crash' }] })
      .expect(201);
    await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'py-crash', repeat: 1 }).expect(200);
    const status = await until(
      async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body,
      (s: { state: string }) => s.state === 'failed',
      'the run to fail',
    );
    expect(status.state).toBe('failed');
    const records = (await lab.admin.get('/app/executions/records').set('Accept', J).expect(200)).body.records;
    const detail = (await lab.admin.get(`/app/executions/records/${records[0].id}`).set('Accept', J).expect(200)).body;
    const steps = detail.phases.flatMap((p: { steps: { status: string; method: string }[] }) => p.steps);
    expect(steps.filter((x: { method: string }) => x.method === 'crash').map((x: { status: string }) => x.status)).toEqual(['in-doubt']);
    // the host comes back; the step stays failed until a person decides
    await until(
      async () => (await lab.admin.get('/app/instruments/arm').set('Accept', J)).body.offline,
      (o) => o === undefined,
      'arm back online',
    );
    expect((await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body.state).toBe('failed');
    await lab.admin.post('/app/executions/abort/next-task').set('Accept', J).expect(200);
    await until(
      async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body.state,
      (s) => s === 'idle',
      'idle',
    );
    await lab.admin.post('/app/executions/pause-resume').set('Accept', J); // release the held queue
  }, 20000);

  it('a host that dies: the call fails in-doubt, instruments go offline (503), then come back', async () => {
    const died = await lab.admin.post('/app/instruments/arm').set('Accept', J).send({ method: 'crash', args: {} });
    expect(died.status).toBe(503);
    expect(died.body.in_doubt).toBe(true);
    const task = await lab.admin.get(`/app/instruments/task/${died.body.task_id}`).set('Accept', J).expect(200);
    expect(task.body.status).toBe('in-doubt');
    const off = await lab.admin.post('/app/instruments/p1').set('Accept', J).send({ method: 'noop', args: {} });
    if (off.status !== 200) {
      expect(off.status).toBe(503);
      expect(off.body.error.message).toMatch(/offline/);
    }
    // the host is restarted and the devices re-created
    const back = await waitForValue(
      async () => (await lab.admin.post('/app/instruments/arm').set('Accept', J).send({ method: 'feed', args: {} })).status,
      (st) => st === 200,
      'the restarted host to answer',
      10_000,
      200,
    );
    expect(back).toBe(200);
  }, 20000);
});

describe('Python plugins hot-reload', () => {
  it('loads .py plugins, disposes old instances first on change, and keeps the last good version of a broken file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-pyplug-'));
    const plugins = join(dir, 'plugins');
    await import('node:fs/promises').then((fs) => fs.mkdir(plugins));
    const file = join(plugins, 'shaker.py');
    const marker = join(dir, 'closed.txt');
    const version = (n: number) =>
      `class Shaker:\n    def __init__(self, rpm: int = 100):\n        self.rpm = rpm\n    def version(self) -> int:\n        return ${n}\n` +
      `    def close(self):\n        open(${JSON.stringify(marker)}, "a").write("closed v${n}\\n")\n`;
    await writeFile(file, version(1));
    const logged: string[] = [];
    const runtime = await createRuntime({ dataDir: join(dir, 'data'), deck: false, pluginDirs: [plugins], watch: false, log: (l) => logged.push(l) });
    try {
      expect(runtime.plugins.list()).toContainEqual({ file, kind: 'instrument', name: 'Shaker' });
      await runtime.deck.connect('Shaker', 's1', { rpm: 200 });
      expect((await runtime.deck.call('s1', 'version', {}, { userId: null })).output).toBe(1);
      await writeFile(file, version(2));
      await runtime.plugins.reload(file);
      expect((await runtime.deck.call('s1', 'version', {}, { userId: null })).output).toBe(2);
      const fs = await import('node:fs/promises');
      expect(await fs.readFile(marker, 'utf8')).toBe('closed v1\n');
      // held by a task: left alone until it is free
      runtime.deck.lock(['s1'], 'task:7');
      await writeFile(file, version(3));
      await runtime.plugins.reload(file);
      expect((await runtime.deck.call('s1', 'version', {}, { userId: null, owner: 'task:7' })).output).toBe(2);
      runtime.deck.unlock('task:7');
      await runtime.deck.settled();
      expect((await runtime.deck.call('s1', 'version', {}, { userId: null })).output).toBe(3);
      // a broken edit: reported with file and line, the last good version stays
      await writeFile(file, 'class Shaker:\n    def version(self):\n        return undefined_thing\n    x = nope\n');
      await runtime.plugins.reload(file);
      expect(runtime.plugins.errors()).toEqual([{ file, message: expect.stringContaining("NameError: name 'nope' is not defined (shaker.py, line 4)") }]);
      expect((await runtime.deck.call('s1', 'version', {}, { userId: null })).output).toBe(3);
    } finally {
      await runtime.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 20000);

  it("the README's example Python lab loads and answers", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-example-'));
    const example = fileURLToPath(new URL('../../examples/python/deck.py', import.meta.url));
    const runtime = await createRuntime({ dataDir: dir, deck: example, watch: false, pluginDirs: [], log: () => undefined });
    try {
      expect(runtime.deck.list().map((i) => i.name)).toEqual(['pump', 'balance', 'reactor']);
      await runtime.deck.call('balance', 'tare', {}, { userId: null });
      expect((await runtime.deck.call('pump', 'dose', { volume_ml: 0.1, rate_ml_min: 60 }, { userId: null })).output).toBeCloseTo(0.1);
      const [y] = (await runtime.deck.call('reactor', 'run', { temperature_c: 78, minutes: 25 }, { userId: null })).output as number[];
      expect(y).toBeCloseTo(0.9);
      const jam = runtime.deck.call('pump', 'dose', { volume_ml: 50 }, { userId: null });
      await expect(jam).rejects.toMatchObject({ code: 'instrument_error' });
      await expect(jam).rejects.toThrow('ValueError: volume_ml must be in (0, 10.0], got 50');
    } finally {
      await runtime.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a campaign drives a Python instrument: bounds, a tuple output as the objective, the plot', async () => {
    const example = fileURLToPath(new URL('../../examples/python/deck.py', import.meta.url));
    const lab = await startLab({ deck: example, log: () => undefined });
    try {
      await lab.admin
        .post('/app/workflows')
        .set('Accept', J)
        .send({
          name: 'py-react',
          parameters: [
            { name: 't', type: 'number', default: 60 },
            { name: 'm', type: 'number', default: 10 },
          ],
          outputs: ['r.0'],
          main: [{ kind: 'call', instrument: 'reactor', method: 'run', args: { temperature_c: { param: 't' }, minutes: { param: 'm' } }, save_as: 'r' }],
        })
        .expect(201);
      await lab.admin
        .post('/app/executions/campaign')
        .type('form')
        .send({ workflow: 'py-react', repeat: '4', optimizer_type: 'sobol', seed: '3', parameters: 't: 20..120, m: 1..60', objectives: 'r.0:max' })
        .expect(302);
      const plot = await until(
        async () => (await lab.admin.get('/app/executions/latest_plot').set('Accept', J)).body,
        (p: { campaign?: { status: string }; points: { params: { t: number }; values: Record<string, unknown> }[]; best_so_far: unknown[] }) => p.campaign?.status === 'done',
        'the campaign to finish',
        20_000,
      );
      expect(plot.points).toHaveLength(4);
      for (const p of plot.points) {
        expect(p.params.t).toBeGreaterThanOrEqual(20);
        expect(p.params.t).toBeLessThanOrEqual(120);
        expect(typeof p.values['r.0']).toBe('number'); // the yield, position 0 of the tuple the method returned
      }
      expect(plot.best_so_far).toHaveLength(4);
    } finally {
      await lab.close();
    }
  }, 30000);

  it('names --python when there is no Python to run a Python deck', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-nopy-'));
    try {
      await expect(createRuntime({ dataDir: dir, deck: fixture('deck.py'), python: '/no/such/python3', watch: false, pluginDirs: [] })).rejects.toThrow(/--python PATH/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
