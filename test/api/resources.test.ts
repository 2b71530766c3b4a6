/**
 * Resources (issue 32): a tip rack of 8 against a 10-iteration run is refused with the numbers and nothing
 * moves; a top-up then the run leaves exactly the expected stock, counted with each call's record; a sample
 * moved through two runs lists both; in-doubt calls are put aside for a person; two hosts on one PostgreSQL
 * see one stock; a renamed argument in a hot-reloaded plugin is a new deck version that flags the workflow
 * by step and field.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from '../../server/app.js';
import { createRuntime } from '../../core/runtime.js';
import { postgresTestDb } from '../helpers/db.js';
import { signupAndLogin, startLab, until, type TestLab } from './helpers.js';

const DOSE = {
  name: 'dose-tips',
  parameters: [{ name: 'volume', type: 'number', default: 1.5 }],
  outputs: [],
  main: [{ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } }],
};
const RULES = [
  { target: 'class:sim-pump', method: 'dose', resource: 'tips', amount: 1 },
  { target: 'pump', method: 'dose', resource: 'water', amount: { arg: 'volume_ml' } },
];

async function taskEnds(lab: TestLab, id: number) {
  await until(async () => !['pending', 'running'].includes((await lab.runtime.store.queue.get(id))!.status));
  return (await lab.runtime.store.queue.get(id))!;
}

const stock = async (lab: TestLab, name: string) => (await lab.admin.get(`/app/resources/${name}`).expect(200)).body;

describe('resources and preflight', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
    await lab.admin.post('/app/workflows').send(DOSE).expect(201);
    await lab.admin.put('/app/resources/consumption').send(RULES).expect(200);
    await lab.admin.post('/app/resources').send({ name: 'tips', kind: 'consumable', quantity: 8, unit: 'each' }).expect(201);
    await lab.admin.post('/app/resources').send({ name: 'water', kind: 'liquid', quantity: 100, unit: 'ml' }).expect(201);
  });
  afterAll(() => lab.close());

  it('refuses a 10-iteration run with 8 tips, naming resource, needed and available, and nothing moves', async () => {
    const pre = await lab.admin.post('/app/executions/preflight').send({ workflow: 'dose-tips', repeat: 10 }).expect(200);
    expect(pre.body.ok).toBe(false);
    expect(pre.body.resources).toEqual(
      expect.arrayContaining([
        { name: 'tips', needed: 10, available: 8, unit: 'each' },
        { name: 'water', needed: 15, available: 100, unit: 'ml' },
      ]),
    );
    expect(pre.body.problems).toContainEqual({ field: 'resources.tips', message: expect.stringContaining('needs 10') });
    expect(pre.body.steps[0]).toMatchObject({ path: 'main[0]', instrument: 'pump', method: 'dose', times: 10, host: 'this labdeck' });
    expect(pre.body.duration_s).toBeNull();
    expect(pre.body.duration_reason).toMatch(/no past call of pump\.dose/);

    const refused = await lab.admin.post('/app/executions/config').send({ workflow: 'dose-tips', repeat: 10 }).expect(409);
    expect(refused.body.error.message).toMatch(/tips: needs 10, 8 available/);
    expect(refused.body.resources).toEqual([{ name: 'tips', needed: 10, available: 8, unit: 'each' }]);
    expect((await lab.admin.get('/app/executions/queue').expect(200)).body.tasks).toEqual([]);
    expect((await stock(lab, 'tips')).resource.quantity).toBe(8);
    // the run page's "Check first": the preflight page, its Start button off
    const page = await lab.admin.post('/app/executions/preflight').type('form').send({ workflow: 'dose-tips', repeat: '10' }).expect(200);
    expect(page.text).toContain('the task needs 10 of &quot;tips&quot;; 8 in stock');
    expect(page.text).toMatch(/<button[^>]*disabled=""[^>]*>Start/);
  });

  it('after a top-up the run leaves exactly the expected stock, each call in the ledger with its run', async () => {
    const topped = await lab.admin.patch('/app/resources/tips').send({ add: 2 }).expect(200);
    expect(topped.body.quantity).toBe(10);
    const started = await lab.admin.post('/app/executions/config').send({ workflow: 'dose-tips', repeat: 10 }).expect(200);
    const task = await taskEnds(lab, started.body.task_id);
    expect(task.status).toBe('done');
    const tips = await stock(lab, 'tips');
    expect(tips.resource.quantity).toBe(0);
    expect((await stock(lab, 'water')).resource.quantity).toBeCloseTo(85, 9);
    const consumed = tips.moves.filter((m: { kind: string }) => m.kind === 'consume');
    expect(consumed).toHaveLength(10);
    expect(new Set(consumed.map((m: { run_id: number }) => m.run_id))).toEqual(new Set([task.runId]));
    expect(tips.moves.find((m: { kind: string }) => m.kind === 'topup')).toMatchObject({ delta: 2, user_id: expect.any(Number) });
    // a direct call counts too, in its own record's transaction
    const call = await lab.admin
      .post('/app/instruments/pump')
      .send({ method: 'dose', args: { volume_ml: 2 } })
      .expect(200);
    const after = await stock(lab, 'tips');
    expect(after.resource.quantity).toBe(-1);
    expect(after.moves[0]).toMatchObject({ kind: 'consume', step_id: call.body.task_id, status: 'done' });
    // the preflight now has a duration from those ten calls
    await lab.admin.patch('/app/resources/tips').send({ quantity: 96 }).expect(200);
    const pre = await lab.admin.post('/app/executions/preflight').send({ workflow: 'dose-tips', repeat: 3 }).expect(200);
    expect(pre.body.ok).toBe(true);
    expect(pre.body.duration_s.p50).toBeGreaterThan(0);
    expect(pre.body.duration_s.p10).toBeLessThanOrEqual(pre.body.duration_s.p90);
  });

  it('puts what an in-doubt call used aside until a person settles it', async () => {
    const id = await lab.runtime.store.steps.insert({
      runId: null,
      phase: null,
      iteration: null,
      stepIndex: null,
      instrument: 'pump',
      method: 'dose',
      args: { volume_ml: 5 },
      output: null,
      status: 'running',
      error: null,
      userId: null,
      startedAt: new Date(),
      endedAt: null,
    });
    await lab.runtime.store.steps.update(id, { status: 'in-doubt', endedAt: new Date() });
    const list = (await lab.admin.get('/app/resources?format=json').expect(200)).body;
    const lines = list.in_doubt.filter((m: { step_id: number }) => m.step_id === id);
    expect(lines.map((m: { resource: string }) => m.resource).sort()).toEqual(['tips', 'water']);
    expect(list.resources.find((r: { name: string }) => r.name === 'tips')).toMatchObject({ quantity: 96, in_doubt: 1 });
    const pre = await lab.admin.post('/app/executions/preflight').send({ workflow: 'dose-tips', repeat: 1 }).expect(200);
    expect(pre.body.problems).toContainEqual({ field: 'resources.tips', message: expect.stringContaining('in-doubt') });
    const water = lines.find((m: { resource: string }) => m.resource === 'water');
    await lab.admin.post(`/app/resources/moves/${water.id}/settle`).send({ used: true }).expect(200);
    await lab.admin.post(`/app/resources/moves/${water.id}/settle`).send({ used: true }).expect(409);
    const tipsLine = lines.find((m: { resource: string }) => m.resource === 'tips');
    await lab.admin.post(`/app/resources/moves/${tipsLine.id}/settle`).send({ used: false }).expect(200);
    expect((await stock(lab, 'water')).resource).toMatchObject({ quantity: 85 - 2 - 5, in_doubt: 0 });
    expect((await stock(lab, 'tips')).resource).toMatchObject({ quantity: 96, in_doubt: 0 });
  });

  it('names positions A1 on containers, refuses one it lacks, and round-trips CSV', async () => {
    await lab.admin.post('/app/resources').send({ name: 'plate1', kind: 'container', quantity: 0, rows: 2, columns: 3 }).expect(201);
    await lab.admin.post('/app/resources').send({ name: 's1', kind: 'sample', identity: 'BC-0001', location: 'plate1:A1' }).expect(201);
    const plate = await stock(lab, 'plate1');
    expect(plate.positions.map((p: { name: string }) => p.name)).toEqual(['A1', 'A2', 'A3', 'B1', 'B2', 'B3']);
    expect(plate.positions[0]).toEqual({ name: 'A1', holds: ['s1'] });
    const bad = await lab.admin.post('/app/resources/s1/move').send({ to: 'plate1:C1' }).expect(400);
    expect(bad.body.error.details).toEqual([{ field: 'to', message: expect.stringContaining('A1 to B3') }]);
    const csv = (await lab.admin.get('/app/resources/export').expect(200)).text;
    expect(csv.split(/\r?\n/)[0]).toBe('name,kind,quantity,unit,rows,columns,location,identity,in_doubt');
    const imported = await lab.admin.post('/app/resources/import').type('text/plain').send('name,kind,quantity,unit\ntips,consumable,200,each\nbuffer,liquid,500,ml\n').expect(200);
    expect(imported.body).toEqual({ created: 1, updated: 1 });
    const badCsv = await lab.admin.post('/app/resources/import').set('Accept', 'application/json').type('text/plain').send('name,kind,quantity\nx,gadget,1\n').expect(400);
    expect(badCsv.body.error.message).toMatch(/Line 2, column kind/);
    expect((await stock(lab, 'tips')).resource.quantity).toBe(200);
    // a container is one thing (the page's container form sends no quantity); a consumable needs its count
    expect((await lab.admin.post('/app/resources').send({ name: 'rack2', kind: 'container', rows: 1, columns: 2 }).expect(201)).body.quantity).toBe(1);
    expect((await lab.admin.post('/app/resources').send({ name: 'tips9', kind: 'consumable' }).expect(400)).body.error.details).toEqual([{ field: 'quantity', message: expect.any(String) }]);
    await lab.admin.post('/app/resources').send({ name: 'bad', kind: 'tool', quantity: 1 }).expect(400);
    await lab.admin
      .put('/app/resources/consumption')
      .send([{ target: 'pump', method: 'dose', resource: 'tips', amount: 'one' }])
      .expect(400);
  });
});

describe('samples that follow moves, and deck versions', () => {
  let dir: string;
  let lab: TestLab;
  const mover = (arg: string) => `export class Mover {\n  /** Move a sample */\n  move_sample(sample = 's', ${arg} = 'plate1:A1') {\n    return ${arg};\n  }\n}\n`;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'labdeck-res-plug-'));
    await mkdir(join(dir, 'plugins'));
    await writeFile(join(dir, 'plugins', 'mover.ts'), mover('to'));
    lab = await startLab({ pluginDirs: [join(dir, 'plugins')] });
    await lab.runtime.deck.connect('Mover', 'mover', {});
  });
  afterAll(async () => {
    await lab.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists both runs that moved a sample', async () => {
    await lab.admin
      .put('/app/resources/consumption')
      .send([{ target: 'class:Mover', method: 'move_sample', resource: { arg: 'sample' }, to: { arg: 'to' } }])
      .expect(200);
    await lab.admin.post('/app/resources').send({ name: 'plate1', kind: 'container', quantity: 0, rows: 8, columns: 12 }).expect(201);
    await lab.admin.post('/app/resources').send({ name: 'S-42', kind: 'sample' }).expect(201);
    const wf = {
      name: 'move',
      parameters: [{ name: 'where', type: 'string', default: 'plate1:A1' }],
      outputs: [],
      main: [{ kind: 'call', instrument: 'mover', method: 'move_sample', args: { sample: { value: 'S-42' }, to: { param: 'where' } } }],
    };
    await lab.admin.post('/app/workflows').send(wf).expect(201);
    const runs: number[] = [];
    for (const where of ['plate1:A1', 'plate1:H12']) {
      const t = await lab.admin
        .post('/app/executions/config')
        .send({ workflow: 'move', config: [{ where }] })
        .expect(200);
      const task = await taskEnds(lab, t.body.task_id);
      expect(task.status).toBe('done');
      runs.push(task.runId!);
    }
    const s = await stock(lab, 'S-42');
    expect(s.resource.location).toBe('plate1:H12');
    const moves = s.moves.filter((m: { kind: string }) => m.kind === 'move');
    expect(moves.map((m: { run_id: number; to: string }) => [m.run_id, m.to]).reverse()).toEqual([
      [runs[0], 'plate1:A1'],
      [runs[1], 'plate1:H12'],
    ]);
    expect(await lab.runtime.store.resources.deckVersions.ofRun(runs[1]!)).toBe(lab.runtime.preflight.deckVersion);
  });

  it('a renamed argument in a hot-reloaded plugin is a new deck version, and the workflow is flagged by step and field', async () => {
    const before = (await lab.admin.get('/app/deck/versions?format=json').expect(200)).body;
    expect(before.broken).toEqual([]);
    await writeFile(join(dir, 'plugins', 'mover.ts'), mover('target'));
    await lab.runtime.plugins.reload(join(dir, 'plugins', 'mover.ts'));
    await lab.runtime.deck.settled();
    const after = (await lab.admin.get('/app/deck/versions?format=json').expect(200)).body;
    expect(after.current).toBeGreaterThan(before.current);
    expect(after.versions[0].changes).toContainEqual({ instrument: 'mover', method: 'move_sample', change: 'argument renamed', argument: 'to', to: 'target' });
    expect(after.broken).toEqual([
      {
        workflow: 'move',
        version: 1,
        problems: [expect.objectContaining({ field: 'main[0].args.to', step: 'main[0]', call: 'mover.move_sample', change: 'mover.move_sample: argument to renamed to target' })],
      },
    ]);
    const diff = (await lab.admin.get(`/app/deck/versions/${after.current}?format=json`).expect(200)).body;
    expect(diff.lines).toContain('mover.move_sample: argument to renamed to target');
    const page = await lab.admin.get('/app/deck/versions').expect(200);
    expect(page.text).toContain('main[0].args.to');
  });
});

describe('two hosts on one PostgreSQL', () => {
  it('see one stock, and count every change of both exactly once', async () => {
    const db = await postgresTestDb();
    const dirs = await Promise.all([0, 1].map(() => mkdtemp(join(tmpdir(), 'labdeck-res-pg-'))));
    const a = await createRuntime({ dataDir: dirs[0], db: db.url, watch: false, pluginDirs: [] });
    const b = await createRuntime({ dataDir: dirs[1], db: db.url, watch: false, pluginDirs: [], deck: false });
    const [appA, appB] = await Promise.all([createApp(a), createApp(b)]);
    try {
      const ada = await signupAndLogin(appA, 'ada');
      const bob = await signupAndLogin(appB, 'bob');
      await ada.put('/app/resources/consumption').send(RULES).expect(200);
      await ada.post('/app/resources').send({ name: 'tips', kind: 'consumable', quantity: 0 }).expect(201);
      await Promise.all([
        ...Array.from({ length: 20 }, () => ada.patch('/app/resources/tips').send({ add: 1 }).expect(200)),
        ...Array.from({ length: 20 }, () => bob.patch('/app/resources/tips').send({ add: 1 }).expect(200)),
      ]);
      for (let i = 0; i < 5; i++)
        await ada
          .post('/app/instruments/pump')
          .send({ method: 'dose', args: { volume_ml: 1 } })
          .expect(200);
      const seenA = (await ada.get('/app/resources/tips').expect(200)).body.resource.quantity;
      const seenB = (await bob.get('/app/resources/tips').expect(200)).body.resource.quantity;
      expect([seenA, seenB]).toEqual([35, 35]);
      expect((await request(appB).get('/app/resources?format=json').set('Cookie', [])).status).toBe(401);
    } finally {
      for (const app of [appA, appB]) (app.locals.sessionStore as { close(): void }).close();
      await b.close();
      await a.close();
      await db.drop();
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    }
  });
});
