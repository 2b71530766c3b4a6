import { fileURLToPath } from 'node:url';
import { signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/api/${name}`, import.meta.url));

describe('temporary devices', () => {
  let lab: TestLab;
  let operator: Awaited<ReturnType<typeof signupAndLogin>>;
  beforeAll(async () => {
    lab = await startLab();
    operator = await signupAndLogin(lab.app, 'olga');
  });
  afterAll(() => lab.close());

  it('lists the connectable drivers', async () => {
    const page = await lab.admin.get('/app/instruments/new/').expect(200);
    expect(page.text).toContain('Import a driver module');
    const json = await lab.admin.get('/app/instruments/new/').set('Accept', J).expect(200);
    expect(json.body.drivers.length).toBeGreaterThan(0);
  });

  it('imports an API module: its classes become connectable, with an inferred options form', async () => {
    const res = await lab.admin
      .post('/app/instruments/new/module')
      .type('form')
      .send({ filepath: fixture('thermostat.ts') })
      .expect(302);
    expect(res.headers.location).toBe(`/app/instruments/new/?imported=${encodeURIComponent(fixture('thermostat.ts'))}`);
    // the page it goes to says what the import added, with links
    const after = await lab.admin.get(res.headers.location).expect(200);
    expect(after.text).toContain(`Imported <code>${fixture('thermostat.ts')}</code>`);
    expect(after.text).toContain('Drivers you can connect: <span><a href="/app/instruments/new/Thermostat">Thermostat</a>');
    // a JSON client is told at once
    const again = await lab.admin
      .post('/app/instruments/new/module')
      .set('Accept', J)
      .send({ filepath: fixture('thermostat.ts') })
      .expect(200);
    expect(again.body).toEqual({ file: fixture('thermostat.ts'), instruments: [], drivers: ['Thermostat'] });
    const form = await lab.admin.get('/app/instruments/new/Thermostat').expect(200);
    expect(form.text).toContain('name="device_name"');
    expect(form.text).toContain('name="start"');
    const audit = await lab.runtime.store.audit.list(20);
    expect(audit.some((a) => a.action === 'import.module')).toBe(true);
  });

  it('answers 400 with the loader message for a bad path or a module that throws', async () => {
    const missing = await lab.admin.post('/app/instruments/new/module').set('Accept', J).send({ filepath: '/no/such/driver.ts' }).expect(400);
    expect(missing.body.error.message).toMatch(/no\/such\/driver\.ts/);
    const broken = await lab.admin
      .post('/app/instruments/new/module')
      .type('form')
      .send({ filepath: fixture('broken-module.ts') });
    expect(broken.status).toBe(400);
    expect(broken.text).toContain('serial port /dev/ttyUSB9 not found');
    await lab.admin.post('/app/instruments/new/module').set('Accept', J).send({}).expect(400);
  });

  it('connects a new device from a form and from JSON (302 to its page), 409 when the name is taken', async () => {
    const res = await lab.admin.post('/app/instruments/new/Thermostat').type('form').send({ device_name: 'thermo1', start: '30' }).expect(302);
    expect(res.headers.location).toBe('/app/instruments/thermo1');
    const read = await lab.admin.post('/app/instruments/thermo1').set('Accept', J).send({ method: 'read', args: {} }).expect(200);
    expect(read.body.output).toBe(30);
    const viaJson = await lab.admin
      .post('/instruments/new/Thermostat')
      .send({ device_name: 'thermo2', kwargs: { start: 12 } })
      .expect(302);
    expect(viaJson.headers.location).toBe('/instruments/thermo2');
    const list = await lab.admin.get('/app/instruments/').set('Accept', J);
    expect(list.body.instruments.find((i: { name: string }) => i.name === 'thermo2').source).toBe('temporary');
    const taken = await lab.admin.post('/app/instruments/new/Thermostat').set('Accept', J).send({ device_name: 'thermo1', kwargs: {} }).expect(409);
    expect(taken.body.error.message).toContain('thermo1');
    await lab.admin.post('/app/instruments/new/Thermostat').set('Accept', J).send({ device_name: 'bad name!', kwargs: {} }).expect(400);
    await lab.admin.post('/app/instruments/new/Thermostat').set('Accept', J).send({ device_name: 'task', kwargs: {} }).expect(400);
    await lab.admin.post('/app/instruments/new/Ghost').set('Accept', J).send({ device_name: 'g', kwargs: {} }).expect(404);
  });

  it('imports a deck module: its devices join the deck, then back to the previous page', async () => {
    const res = await lab.admin
      .post('/app/instruments/new/deck-python')
      .set('Referer', 'http://127.0.0.1/app/instruments/pump')
      .set('Host', '127.0.0.1')
      .type('form')
      .send({ filepath: fixture('extra-deck.ts') })
      .expect(302);
    expect(res.headers.location).toBe('/app/instruments/pump');
    const shake = await lab.admin
      .post('/app/instruments/shaker')
      .set('Accept', J)
      .send({ method: 'shake', args: { rpm: 300 } })
      .expect(200);
    expect(shake.body.output).toBe(300);
    // the deck's own classes are connectable (another Shaker), listed as from the deck
    const drivers = (await lab.admin.get('/app/instruments/new/').set('Accept', J).expect(200)).body.drivers;
    expect(drivers.find((d: { name: string }) => d.name === 'Shaker')).toMatchObject({ origin: 'deck', file: fixture('extra-deck.ts') });
    await lab.admin.post('/app/instruments/new/Shaker').set('Accept', J).send({ device_name: 'shaker2', kwargs: {} }).expect(302);
    expect(
      (
        await lab.admin
          .post('/app/instruments/shaker2')
          .set('Accept', J)
          .send({ method: 'shake', args: { rpm: 5 } })
          .expect(200)
      ).body.output,
    ).toBe(5);
    // from the Connect page (or no page), the form comes back to it saying what it added; JSON is told
    const fromConnect = await lab.admin
      .post('/app/instruments/new/deck-python')
      .type('form')
      .send({ filepath: fixture('second-deck.ts') })
      .expect(302);
    expect(fromConnect.headers.location).toBe(`/app/instruments/new/?imported=${encodeURIComponent(fixture('second-deck.ts'))}`);
    const told = await lab.admin.get(fromConnect.headers.location).expect(200);
    expect(told.text).toContain('Instruments added to the deck: <span><a href="/app/instruments/mixer">mixer</a></span>');
    expect(told.text).toContain('<a href="/app/instruments/new/Mixer">Mixer</a>');
    expect(told.text).toContain('from the deck');
    const viaJson = await lab.admin
      .post('/app/instruments/new/deck-python')
      .set('Accept', J)
      .send({ filepath: fixture('third-deck.ts') })
      .expect(200);
    expect(viaJson.body).toEqual({ file: fixture('third-deck.ts'), instruments: ['agitator_a', 'agitator_b'], drivers: ['Agitator'] });
    await lab.admin
      .post('/app/instruments/new/deck-python')
      .set('Accept', J)
      .send({ filepath: fixture('nope.ts') })
      .expect(400);
    // a device named like one of the app's own pages could never be reached: refused, naming it
    const reserved = await lab.admin
      .post('/app/instruments/new/deck-python')
      .set('Accept', J)
      .send({ filepath: fixture('reserved-deck.ts') })
      .expect(400);
    expect(reserved.body.error.message).toContain('proxy');
    await lab.admin.get('/app/instruments/proxy?lang=python').expect(200);
  });

  it('refuses a body field a route does not take, by name (the connect form passes on one field per option)', async () => {
    const field = (res: { body: { error: { details: { field: string }[] } } }) => res.body.error.details.map((d) => d.field);
    await lab.admin
      .post('/app/instruments/new/module')
      .type('form')
      .send({ filepath: fixture('thermostat.ts') })
      .expect(302);
    const json = await lab.admin.post('/app/instruments/new/Thermostat').set('Accept', J).send({ device_name: 'thermo9', kwargs: {}, start: 3 }).expect(400);
    expect(json.body.error.details).toEqual([{ field: 'start', message: 'is not a field of this request (its fields: device_name, kwargs)' }]);
    // a form field no option could be named like: refused, the form again with the name typed
    const form = await lab.admin.post('/app/instruments/new/Thermostat').type('form').send({ device_name: 'thermo9', start: '3', 'a[b]': '1' }).expect(400);
    expect(form.text).toContain('a[b] is not a field of this request');
    expect(form.text).toContain('value="thermo9"');
    expect(
      field(
        await lab.admin
          .post('/app/instruments/new/module')
          .set('Accept', J)
          .send({ filepath: fixture('thermostat.ts'), colour: 'red' })
          .expect(400),
      ),
    ).toEqual(['colour']);
    expect(
      field(
        await lab.admin
          .post('/app/instruments/new/deck-python')
          .set('Accept', J)
          .send({ filepath: fixture('extra-deck.ts'), colour: 'red' })
          .expect(400),
      ),
    ).toEqual(['colour']);
    // an operator is refused before the body is read
    await operator.post('/app/instruments/new/module').set('Accept', J).send({ colour: 'red' }).expect(403);
    await lab.admin.get('/app/instruments/thermo9').set('Accept', J).expect(404);
  });

  it('is admin-only for imports and connections', async () => {
    await operator
      .post('/app/instruments/new/module')
      .set('Accept', J)
      .send({ filepath: fixture('thermostat.ts') })
      .expect(403);
    await operator
      .post('/app/instruments/new/deck-python')
      .set('Accept', J)
      .send({ filepath: fixture('extra-deck.ts') })
      .expect(403);
    await operator.post('/app/instruments/new/Thermostat').set('Accept', J).send({ device_name: 'x1', kwargs: {} }).expect(403);
    await operator.get('/app/instruments/new/').expect(200);
  });
});
