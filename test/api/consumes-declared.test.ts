/**
 * Consumption declared by the driver (issue 32, item 2): a TypeScript driver's contract (`consumes`) and a
 * Python method's `__labdeck_consumes__` attribute (no labdeck import) are counted with each call's record and
 * by the preflight, with no rule in the lab's document; a rule of the lab's for the same method wins.
 */
import { fileURLToPath } from 'node:url';
import { defineInstrument, z } from '../../core/contracts/index.js';
import { startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/consumes/${name}`, import.meta.url));
const WF = {
  name: 'pipetting',
  parameters: [{ name: 'volume', type: 'number', default: 2 }],
  outputs: [],
  main: [
    { kind: 'call', instrument: 'pipette', method: 'pick_tip', args: {} },
    { kind: 'call', instrument: 'pipette', method: 'aspirate', args: { source: { value: 'water' }, volume_ml: { param: 'volume' } } },
  ],
};
const quantity = async (lab: TestLab, name: string) => (await lab.admin.get(`/app/resources/${name}`).set('Accept', J).expect(200)).body.resource.quantity;

async function declaredAndMerged(lab: TestLab) {
  await lab.admin.post('/app/workflows').send(WF).expect(201);
  await lab.admin.post('/app/resources').send({ name: 'tips', kind: 'consumable', quantity: 3 }).expect(201);
  await lab.admin.post('/app/resources').send({ name: 'water', kind: 'liquid', quantity: 100, unit: 'ml' }).expect(201);
  expect((await lab.admin.get('/app/resources/consumption').set('Accept', J).expect(200)).body).toEqual([]);

  // the preflight counts the declaration: 4 rows need 4 tips, 3 in stock; queuing it is refused
  const rows = [{ volume: 2 }, { volume: 3 }, { volume: 1 }, { volume: 4 }];
  const pre = (await lab.admin.post('/app/executions/preflight').send({ workflow: 'pipetting', config: rows }).expect(200)).body;
  expect(pre.resources).toEqual(
    expect.arrayContaining([
      { name: 'tips', needed: 4, available: 3, unit: 'each' },
      { name: 'water', needed: 10, available: 100, unit: 'ml' },
    ]),
  );
  const refused = await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'pipetting', config: rows }).expect(409);
  expect(refused.body.resources).toEqual([{ name: 'tips', needed: 4, available: 3, unit: 'each' }]);

  // a call counts it in its record's transaction
  await lab.admin.post('/app/instruments/pipette').set('Accept', J).send({ method: 'pick_tip', args: {} }).expect(200);
  await lab.admin
    .post('/app/instruments/pipette')
    .set('Accept', J)
    .send({ method: 'aspirate', args: { source: 'water', volume_ml: 2.5 } })
    .expect(200);
  expect(await quantity(lab, 'tips')).toBe(2);
  expect(await quantity(lab, 'water')).toBeCloseTo(97.5, 9);

  // the lab's rule for pick_tip wins over the declaration (2 tips a call); aspirate keeps its declaration
  await lab.admin
    .put('/app/resources/consumption')
    .send([{ target: 'pipette', method: 'pick_tip', resource: 'tips', amount: 2 }])
    .expect(200);
  await lab.admin.post('/app/instruments/pipette').set('Accept', J).send({ method: 'pick_tip', args: {} }).expect(200);
  expect(await quantity(lab, 'tips')).toBe(0);
  const again = (
    await lab.admin
      .post('/app/executions/preflight')
      .send({ workflow: 'pipetting', config: rows.slice(0, 1) })
      .expect(200)
  ).body;
  expect(again.resources).toEqual(
    expect.arrayContaining([
      { name: 'tips', needed: 2, available: 0, unit: 'each' },
      { name: 'water', needed: 2, available: 97.5, unit: 'ml' },
    ]),
  );
  // and an amount of 0 turns a declaration off
  await lab.admin
    .put('/app/resources/consumption')
    .send([{ target: 'pipette', method: 'aspirate', resource: 'water', amount: 0 }])
    .expect(200);
  await lab.admin
    .post('/app/instruments/pipette')
    .set('Accept', J)
    .send({ method: 'aspirate', args: { source: 'water', volume_ml: 5 } })
    .expect(200);
  expect(await quantity(lab, 'water')).toBeCloseTo(97.5, 9);
}

describe('a TypeScript driver declares consumption in its contract', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab({ deck: fixture('deck.ts') });
  });
  afterAll(() => lab.close());

  it('is counted with each call and by the preflight; the lab rule wins', async () => {
    const schema = (await lab.admin.get('/app/instruments/pipette').set('Accept', J).expect(200)).body;
    expect(schema.methods.find((m: { name: string }) => m.name === 'pick_tip').consumes).toEqual([{ resource: 'tips' }]);
    await declaredAndMerged(lab);
  });

  it('a declaration naming an argument the method lacks is refused by defineInstrument, naming it', () => {
    expect(() =>
      defineInstrument({
        name: 'Bad',
        version: '1',
        options: z.object({}),
        create: () => ({}),
        methods: { go: { params: z.object({ x: z.number() }), consumes: [{ resource: { arg: 'nope' } }], run: () => 1 } },
      }),
    ).toThrow(/method "go" consumes\[0\]\.resource names the argument "nope", which the method does not have/);
  });
});

describe('a Python driver declares consumption with __labdeck_consumes__', () => {
  let lab: TestLab;
  const logged: string[] = [];
  beforeAll(async () => {
    lab = await startLab({ deck: fixture('deck.py'), log: (l) => logged.push(l) });
  }, 60_000);
  afterAll(() => lab.close());

  it('is counted with each call and by the preflight; the lab rule wins; one that does not fit is logged and not counted', async () => {
    const schema = (await lab.admin.get('/app/instruments/pipette').set('Accept', J).expect(200)).body;
    const by = (n: string) => schema.methods.find((m: { name: string }) => m.name === n);
    expect(by('pick_tip').consumes).toEqual([{ resource: 'tips' }]);
    expect(by('aspirate').consumes).toEqual([{ resource: { arg: 'source' }, amount: { arg: 'volume_ml' } }]);
    expect(by('wrong').consumes).toBeUndefined();
    expect(logged.some((l) => l.includes('pipette.wrong: __labdeck_consumes__ does not fit') && l.includes('"nope"'))).toBe(true);
    await declaredAndMerged(lab);
  });
});
