/**
 * Attacks an outsider can make before logging in (issue: hardening): a page that rebinds its own name to
 * the lab PC, sign-ups racing for the first admin, and a flood of failed logins with huge usernames.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { createApp, type App } from '../../server/app.js';
import { fileURLToPath } from 'node:url';
import { dataSourceOf } from '../../core/store/index.js';
import { testDbUrl } from '../helpers/db.js';

const J = 'application/json';
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/python/${name}`, import.meta.url));

async function emptyLab(appOpts: Parameters<typeof createApp>[1] = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-hard-'));
  const db = await testDbUrl();
  const runtime: Runtime = await createRuntime({ dataDir: dir, db: db.url, deck: false, pluginDirs: [], watch: false });
  const app: App = await createApp(runtime, appOpts);
  return {
    app,
    runtime,
    async close() {
      (app.locals.sessionStore as { close(): void }).close();
      await runtime.close();
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe('DNS rebinding: only the names labdeck serves are answered', () => {
  let lab: Awaited<ReturnType<typeof emptyLab>>;
  beforeAll(async () => {
    lab = await emptyLab({ listen: '0.0.0.0', allowedHosts: ['labpc.chem.example.org', '.lab.example.org'] });
  });
  afterAll(() => lab.close());

  it('refuses a sign-up sent to a rebound name, with a message naming the fix', async () => {
    const res = await request(lab.app).post('/app/auth/signup').set('Host', 'attacker.example.com').set('Accept', J).send({ username: 'eve', password: 'rebinding!' });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('--allowed-hosts attacker.example.com');
    expect(await lab.runtime.store.users.count()).toBe(0);
    await request(lab.app).get('/').set('Host', 'attacker.example.com:8000').expect(403);
    await request(lab.app).get('/app/healthz').set('Host', 'localhost.attacker.example.com').expect(403);
  });

  it('answers IP addresses, localhost names, this machine, and the allowed names', async () => {
    for (const host of ['127.0.0.1:8000', '[::1]:8000', '192.168.1.20', 'localhost:8000', 'app.localhost', 'labpc.chem.example.org:8000', 'b12.lab.example.org']) {
      const res = await request(lab.app).get('/app/auth/login').set('Host', host);
      expect([host, res.status]).toEqual([host, 200]);
    }
  });
});

describe('the first account', () => {
  it('of 20 sign-ups racing on an empty lab, exactly one becomes admin', async () => {
    const lab = await emptyLab();
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => lab.runtime.accounts.signup(`racer${i}`, 'a long password')),
      );
      expect(results.filter((u) => u.role === 'admin')).toHaveLength(1);
      expect((await lab.runtime.accounts.users()).filter((u) => u.role === 'admin')).toHaveLength(1);
    } finally {
      await lab.close();
    }
  });
});

describe('failed logins', () => {
  it('are remembered within a bound, and a username no account can have is never kept', async () => {
    const lab = await emptyLab();
    try {
      const huge = 'x'.repeat(1_000_000);
      const res = await request(lab.app).post('/app/auth/login').set('Accept', J).send({ username: huge, password: 'whatever!' });
      expect(res.status).toBe(401);
      expect(lab.runtime.accounts.throttled).toBe(0);
      for (let i = 0; i < 10_050; i++) {
        await lab.runtime.accounts.login(`user${i}`, 'wrong password', '10.0.0.1').catch(() => undefined);
      }
      expect(lab.runtime.accounts.throttled).toBeLessThanOrEqual(10_000);
    } finally {
      await lab.close();
    }
  });
});

describe('a full disk', () => {
  it('a direct call whose record cannot be stored answers 507 without an id; every id given is a stored record', async () => {
    const lab = await emptyLab();
    try {
      if (lab.runtime.store.dialect !== 'sqlite') return; // the SQLite file's disk: PostgreSQL keeps its own
      const agent = request.agent(lab.app);
      await agent.post('/app/auth/signup').type('form').send({ username: 'ada', password: 'correct horse' }).expect(302);
      await agent.post('/app/auth/login').type('form').send({ username: 'ada', password: 'correct horse' }).expect(302);
      await lab.runtime.deck.importModule(fixture('drivers.py'));
      await lab.runtime.deck.connect('Pump', 'pump', {});
      // the database may not grow any more: SQLite answers SQLITE_FULL, as on a full disk
      type Db = { pragma(s: string, o?: object): unknown; prepare(s: string): { run(...v: unknown[]): unknown } };
      const db = (dataSourceOf(lab.runtime.store).driver as unknown as { databaseConnection: Db }).databaseConnection;
      const pages = db.pragma('page_count', { simple: true }) as number;
      db.pragma(`max_page_count = ${pages}`);
      const filler = db.prepare('INSERT INTO "settings" ("key", "value") VALUES (?, ?)');
      for (let i = 0; ; i++) {
        try {
          filler.run(`filler-${i}`, JSON.stringify('x'.repeat(i < 1000 ? 2000 : 50)));
        } catch {
          if (i >= 1000) break; // big rows, then small ones, until not even those fit
          i = 999;
        }
      }
      const answers: { status: number; task_id?: number; message?: string }[] = [];
      // the table's last pages still take a few rows; then the disk is full
      while (answers.length < 500 && answers.filter((a) => a.status === 507).length < 3) {
        const res = await agent.post('/app/instruments/pump').set('Accept', J).send({ method: 'slow', args: { seconds: 0 } });
        answers.push({ status: res.status, task_id: res.body.task_id, message: res.body.error?.message });
      }
      const refused = answers.filter((a) => a.status === 507);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0].task_id).toBeUndefined();
      expect(refused[0].message).toMatch(/pump\.slow ran .*record could not be written.*labdeck\.db has no space left \(SQLITE_FULL\)/);
      for (const a of answers.filter((x) => x.status === 200)) {
        expect((await lab.runtime.store.steps.get(a.task_id!))?.method).toBe('slow');
      }
      db.pragma(`max_page_count = ${pages * 10}`);
      const after = await agent.post('/app/instruments/pump').set('Accept', J).send({ method: 'slow', args: { seconds: 0 } }).expect(200);
      expect((await lab.runtime.store.steps.get(after.body.task_id))?.method).toBe('slow');
    } finally {
      await lab.close();
    }
  }, 30000);
});
