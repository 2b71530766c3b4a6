/**
 * The safety guard across a lab on one PostgreSQL (issue 28): the lab-wide file is in the database, an edit
 * made on one labdeck is enforced by another before its next call, and a call relayed to the labdeck that
 * drives the instrument is refused there (the host that drives it), its refusal coming back as it gave it.
 * Always PostgreSQL (a fresh database, dropped after).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp, type App } from '../../server/app.js';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { postgresTestDb } from '../helpers/db.js';
import { POLL_MS } from '../../core/safety/index.js';
import { signupAndLogin, until } from './helpers.js';

const J = 'application/json';
const DECK = new URL('../fixtures/safety/deck.ts', import.meta.url).pathname;
const limit = (max: number) => ({ format: 'ivoryos-safety/1', limits: [{ target: 'heater', method: 'set_temperature', param: 'setpoint_c', max }] });

let dataDir: string;
let db: Awaited<ReturnType<typeof postgresTestDb>>;
let a: Runtime;
let b: Runtime;
let app: App;
let admin: ReturnType<typeof request.agent>;
const counts = async () => (await b.deck.call('door', 'counts', {}, { userId: null })).output as Record<string, number>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'labdeck-safety-lab-'));
  db = await postgresTestDb();
  // B's own file seeds the database's lab-wide copy (there is none yet)
  const seed = join(dataDir, 'seed-safety.json');
  await writeFile(seed, JSON.stringify(limit(120)));
  const common = { db: db.url, watch: false, pluginDirs: [] };
  b = await createRuntime({ ...common, dataDir: join(dataDir, 'b'), deck: DECK, safety: seed, labHost: { kind: 'serve', name: 'pc-b', leaseMs: 2000 } });
  a = await createRuntime({ ...common, dataDir: join(dataDir, 'a'), deck: false, labHost: { kind: 'serve', name: 'pc-a', leaseMs: 2000 } });
  app = await createApp(a);
  admin = await signupAndLogin(app, 'ada');
  await until(async () => a.runner.catalogue.list!().some((i) => i.name === 'heater'));
}, 30_000);
afterAll(async () => {
  (app?.locals.sessionStore as { close(): void } | undefined)?.close();
  await a?.close();
  await b?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const heat = (setpoint_c: number) => admin.post('/app/instruments/heater').set('Accept', J).send({ method: 'set_temperature', args: { setpoint_c } });

it('the lab-wide file is in the database: A, which has no file of its own, shows the one B seeded', async () => {
  const shown = await admin.get('/app/safety').set('Accept', J).expect(200);
  expect(shown.body).toMatchObject({ source: expect.stringContaining('database'), file: limit(120), error: null });
});

it('a call made on A is refused by B, which drives the heater: 409 as B gave it, the driver untouched', async () => {
  const before = (await counts())['heater.set_temperature'] ?? 0;
  const res = await heat(150).expect(409);
  expect(res.body.error).toMatchObject({ code: 'safety', details: [{ field: 'setpoint_c', value: 150, limit: { max: 120 } }] });
  expect((await counts())['heater.set_temperature'] ?? 0).toBe(before);
  await heat(100).expect(200);
  expect((await counts())['heater.set_temperature']).toBe(before + 1);
});

it('an edit on A is enforced by B at its next look for a new version (every POLL_MS: within a second)', async () => {
  // B's looks counted from the save on: it takes the edit at the first look after it (the second at most,
  // should a look be under way as the edit commits), so within 2 × POLL_MS (core/safety/index.ts)
  const versions = b.store.safety.versions.bind(b.store.safety);
  let looks = 0;
  b.store.safety.versions = () => {
    looks++;
    return versions();
  };
  try {
    await admin.put('/app/safety').set('Accept', J).send(limit(80)).expect(200);
    looks = 0;
    await until(async () => b.safety.config.limits[0]?.max === 80);
    expect(looks).toBeGreaterThanOrEqual(1); // B looked (through the counted read)
    expect(looks).toBeLessThanOrEqual(2);
    expect(2 * POLL_MS).toBeLessThanOrEqual(1000);
  } finally {
    b.store.safety.versions = versions;
  }
  const before = (await counts())['heater.set_temperature'] ?? 0;
  expect((await heat(100).expect(409)).body.error.details[0].limit).toMatchObject({ max: 80 });
  expect((await counts())['heater.set_temperature'] ?? 0).toBe(before);
});

it('states are lab-wide too: one set on A holds on B', async () => {
  await admin
    .put('/app/safety')
    .set('Accept', J)
    .send({
      ...limit(80),
      rules: [{ id: 'door', when: { target: 'heater', method: 'set_temperature' }, require: [{ left: { state: 'door' }, op: '==', right: { value: 'closed' } }] }],
      states: { door: { values: ['open', 'closed'] } },
    })
    .expect(200);
  await until(async () => b.safety.config.rules.length === 1);
  expect((await heat(50).expect(409)).body.error.message).toMatch(/the state door is unknown/);
  await admin.post('/app/safety/states/door').set('Accept', J).send({ value: 'closed' }).expect(200);
  await until(async () => b.safety.status().states.door?.value === 'closed');
  await heat(50).expect(200);
});
