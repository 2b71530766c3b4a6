/**
 * PostgreSQL going away under a serving labdeck (issue 26 #14), whatever LABDECK_TEST_DB says: through a
 * relay the test cuts (connections dropped, new ones refused) or silences (nothing answers). Requests answer
 * 503 `store_unavailable` with a reason instead of 500, a silent database does not hold them without bound
 * (LABDECK_DB_TIMEOUT_MS), and once the database is back they are answered as before.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type request from 'supertest';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { createApp, type App } from '../../server/app.js';
import { postgresTestDb } from '../helpers/db.js';
import { pgProxy, type PgProxy } from '../helpers/pg-proxy.js';
import { signupAndLogin } from './helpers.js';

const J = 'application/json';

let dir: string;
let db: Awaited<ReturnType<typeof postgresTestDb>>;
let relay: PgProxy;
let runtime: Runtime;
let app: App;
let ada: ReturnType<typeof request.agent>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labdeck-outage-'));
  db = await postgresTestDb();
  relay = await pgProxy();
  const before = process.env.LABDECK_DB_TIMEOUT_MS;
  process.env.LABDECK_DB_TIMEOUT_MS = '1500'; // read when the store opens
  try {
    runtime = await createRuntime({ dataDir: dir, db: relay.url(db.url), deck: false, pluginDirs: [], watch: false });
  } finally {
    if (before === undefined) delete process.env.LABDECK_DB_TIMEOUT_MS;
    else process.env.LABDECK_DB_TIMEOUT_MS = before;
  }
  app = await createApp(runtime, {});
  ada = await signupAndLogin(app, 'ada');
  await ada.get('/app/executions/records').set('Accept', J).expect(200);
}, 30_000);

afterAll(async () => {
  await relay?.restore();
  (app?.locals.sessionStore as { close(): void } | undefined)?.close();
  await runtime?.close();
  await relay?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('PostgreSQL out of reach', () => {
  it('answers 503 store_unavailable naming the reason, and answers again once it is back', async () => {
    await relay.cut();
    const res = await ada.get('/app/executions/records').set('Accept', J);
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'store_unavailable', message: expect.stringMatching(/database .* cannot be reached \((ECONNREFUSED|Connection terminated[^)]*)\)/) });
    await relay.restore();
    await ada.get('/app/executions/records').set('Accept', J).expect(200);
  }, 30_000);

  it('a silent database: a request ends with 503 once its time limit has passed, instead of waiting for ever', async () => {
    relay.silence();
    const res = await ada.get('/app/executions/records').set('Accept', J);
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('store_unavailable');
    await relay.restore();
    await ada.get('/app/executions/records').set('Accept', J).expect(200);
  }, 30_000);
});
