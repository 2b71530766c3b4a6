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
import { testDbUrl } from '../helpers/db.js';

const J = 'application/json';

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
