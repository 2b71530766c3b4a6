/**
 * ivoryOS's next-generation driver markers and worktable over HTTP (issue 29 items 3 and 4), on a plr-style
 * deck (test/fixtures/ivoryos-next/plr_deck.py) that defines its markers and dunders itself: `Unit` beside the
 * form field, on the call's result, in the record, the data CSV header and the plot data; `Labware` a choice of
 * the worktable's labware; `Wells` checked against the labware's grid before the driver is called; the labware
 * view on the instrument's page.
 */
import { fileURLToPath } from 'node:url';
import { startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';
const DECK = fileURLToPath(new URL('../fixtures/ivoryos-next/plr_deck.py', import.meta.url));
type Prop = Record<string, unknown>;

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab({ deck: DECK });
});
afterAll(() => lab.close());

const call = (method: string, args: Record<string, unknown>) => lab.admin.post('/app/instruments/liquid_handler').set('Accept', J).send({ method, args });
const driverCalls = async () => (await call('driver_calls', {}).expect(200)).body.output as number;

describe('Wells and Labware arguments', () => {
  it('offers the worktable: Labware as a choice of its labware, Wells with the labware it may name, no dunder as a method', async () => {
    const inst = (await lab.admin.get('/app/instruments/liquid_handler').set('Accept', J).expect(200)).body;
    const params = (name: string) => inst.methods.find((m: { name: string }) => m.name === name).params.properties as Record<string, Prop>;
    expect(params('pick_up_tips').rack.enum).toEqual(['tips_300']);
    expect(params('move_plate').plate).toMatchObject({ enum: ['assay_plate'], 'x-labware': ['plate'] });
    expect(params('transfer').targets['x-wells-of']).toEqual([{ name: 'assay_plate', category: 'plate', rows: 8, columns: 12, first: 'A1', last: 'H12' }]);
    expect(params('transfer').volumes['x-unit']).toBe('uL');
    expect(inst.methods.map((m: { name: string }) => m.name).filter((n: string) => n.startsWith('_'))).toEqual([]);
    const page = await lab.admin.get('/app/instruments/liquid_handler').expect(200);
    expect(page.text).toContain('<select class="form-select form-select-sm" id="pick_up_tips-rack"');
    expect(page.text).toMatch(/wells-hint[^]*<code>assay_plate<\/code> \(8 × 12, A1 to H12\)/);
    expect(page.text).not.toContain('__ivoryos_labware');
  });

  it('refuses a well outside the grid, a labware of another kind and a per-well list of the wrong length: 400 naming the field, the driver never called', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ source: 'reservoir[A1]', targets: 'assay_plate[A1:I1]' }, 'targets', /'I1' is not a position on assay_plate \(its positions are A1 to H12\)/],
      [{ source: 'reservoir[A13]', targets: 'assay_plate[A1]' }, 'source', /'A13' is not a position on reservoir/],
      [{ source: 'reservoir[A1]', targets: 'reservoir[A2]' }, 'targets', /'reservoir', a reservoir, not a plate/],
      [{ source: 'reservoir[A1]', targets: 'A1' }, 'targets', /write wells with their labware/],
      [{ source: 'reservoir[A1]', targets: 'assay_plate[A1:H1]', volumes: [1, 2] }, 'volumes', /has 2 values, but targets names 8 wells/],
    ];
    for (const [args, field, message] of cases) {
      const res = await call('transfer', args).expect(400);
      expect(res.body.error.details).toEqual([{ field, message: expect.stringMatching(message) }]);
    }
    const labware = await call('pick_up_tips', { rack: 'assay_plate' }).expect(400);
    expect(labware.body.error.details[0].field).toBe('rack');
    expect(await driverCalls()).toBe(0);
    // a range as the format writes it reaches the driver as written
    expect((await call('transfer', { source: 'reservoir[A1]', targets: 'assay_plate[A1:H1]', volumes: [5, 5, 5, 5, 5, 5, 5, 5] }).expect(200)).body.output).toBe(40);
    expect(await driverCalls()).toBe(1);
  });

  it('takes a wells field of the page form as written, and refuses it by name there too', async () => {
    const ok = await lab.admin.post('/app/instruments/liquid_handler').type('form').send({ method: 'transfer', source: 'reservoir[A1]', targets: 'assay_plate[A1]', volumes: '7' }).expect(200);
    expect(ok.text).toContain('data-testid="call-result"');
    expect(ok.text).toMatch(/output-unit">in uL</);
    const bad = await lab.admin.post('/app/instruments/liquid_handler').type('form').send({ method: 'transfer', source: 'reservoir[A1]', targets: 'assay_plate[Z9]' }).expect(400);
    expect(bad.text).toContain('targets');
    expect(bad.text).toContain('&#x27;Z9&#x27; is not a position on assay_plate');
  });
});

describe('the labware view', () => {
  it('shows each labware with its grid, contents and tips left, as JSON and on the page', async () => {
    const view = (await lab.admin.get('/app/instruments/liquid_handler/labware').set('Accept', J).expect(200)).body;
    expect(view).toMatchObject({ worktable: true, deck: { label: 'Opentrons OT-2' }, editable: true, catalog: true });
    const by = Object.fromEntries(view.labware.map((l: { name: string }) => [l.name, l]));
    expect(by.assay_plate.grid[7][11]).toBe('H12');
    expect(by.assay_plate.contents.A1.volume_ul).toBeGreaterThan(0);
    expect(by.tips_300.tips_left).toBe(95);
    const page = await lab.admin.get('/app/instruments/liquid_handler').expect(200);
    expect(page.text).toContain('<h2 class="h6">Labware</h2>');
    expect(page.text).toContain('labware-tips-left">tips left: 95');
    expect(page.text).toContain('data-well="H12"');
    // an instrument without a worktable has no view
    expect((await lab.admin.get('/app/instruments/pump/labware').set('Accept', J).expect(200)).body).toEqual({ worktable: false });
    expect((await lab.admin.get('/app/instruments/pump').expect(200)).text).not.toContain('<h2 class="h6">Labware</h2>');
  });
});

describe('Unit', () => {
  it('shows beside the form field, on the result, in the record, the data CSV header and the plot data', async () => {
    const page = await lab.admin.get('/app/instruments/pump').expect(200);
    expect(page.text).toMatch(/id="dose-volume"[^>]*\/><span class="input-group-text field-unit">mL<\/span>/);
    const wf = {
      name: 'dosing',
      parameters: [{ name: 'volume', type: 'number', default: 1 }],
      outputs: ['total'],
      main: [{ kind: 'call', instrument: 'pump', method: 'dose', args: { volume: { param: 'volume' } }, save_as: 'total' }],
    };
    await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
    const { task_id } = (
      await lab.admin
        .post('/app/executions/config')
        .set('Accept', J)
        .send({ workflow: 'dosing', config: [{ volume: 1.5 }, { volume: 2 }] })
        .expect(200)
    ).body;
    await until(async () => (await lab.runtime.store.queue.get(task_id))?.status === 'done');
    const runId = (await lab.runtime.store.runs.list({ page: 1, perPage: 1 })).rows[0]!.id;
    const csv = await lab.admin.get(`/app/files/execution-data/run-${runId}.csv`).expect(200);
    expect(csv.text.split('\r\n')[0]).toBe('iteration,status,volume (mL),total (mL)');
    // the units are not part of the names: the file uploads back as a history file of the workflow
    await lab.admin.post('/app/files/execution-data').set('Accept', J).field('workflow', 'dosing').attach('file', Buffer.from(csv.text), 'run.csv').expect(201);
    expect((await lab.admin.get(`/app/executions/data/${runId}`).set('Accept', J).expect(200)).body.units).toEqual({ volume: 'mL', total: 'mL' });
    const record = await lab.admin.get(`/app/executions/records/${runId}`).expect(200);
    expect(record.text).toContain('step-unit"> mL<');
  });
});
