/**
 * labdeck's session middleware (server/session.ts): a request with a session cookie reads its session but does
 * not write it (issue 16); the cookie is signed, httpOnly and SameSite=Lax; log-in gives a new session; a
 * tampered cookie opens nothing; a logout or a session ended elsewhere is seen by the very next request.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from '../../server/app.js';
import { createRuntime } from '../../core/runtime.js';
import { dataSourceOf } from '../../core/store/index.js';
import { CHECK_MS } from '../../core/store/signals.js';
import { cookieValue, sign, unsign } from '../../server/session.js';
import { DbSessionStore, TOUCH_EVERY_MS } from '../../server/session-store.js';
import { testDbUrl } from '../helpers/db.js';
import { PASSWORD, signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';
let lab: TestLab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(() => lab.close());

/** Count the session writes the store receives while `fn` runs. */
async function writes(fn: () => Promise<void>): Promise<number> {
  const sessions = lab.runtime.store.sessions;
  const { touch, create, update } = sessions;
  let n = 0;
  sessions.touch = (...a) => (n++, touch.apply(sessions, a));
  sessions.create = (...a) => (n++, create.apply(sessions, a));
  sessions.update = (...a) => (n++, update.apply(sessions, a));
  try {
    await fn();
  } finally {
    Object.assign(sessions, { touch, create, update });
  }
  return n;
}

it('answers 30 requests of one browser session with at most one write to the database', async () => {
  const olga = await signupAndLogin(lab.app, 'olga');
  const n = await writes(async () => {
    for (let i = 0; i < 30; i++) await olga.get('/app/instruments/').set('Accept', J).expect(200);
  });
  expect(n).toBeLessThanOrEqual(1);
});

it('still ends a session at once: a logout elsewhere, or its row deleted, is seen by the next request', async () => {
  const vic = await signupAndLogin(lab.app, 'vic');
  await vic.get('/app/instruments/').set('Accept', J).expect(200);
  const user = await lab.runtime.store.users.byName('vic');
  await lab.runtime.store.sessions.destroyForUser(user!.id);
  await vic.get('/app/instruments/').set('Accept', J).expect(401);
  await request(lab.app).get('/app/instruments/').set('Accept', J).expect(401);
});

it('writes a session expiry again once a minute has passed, and forgets a destroyed session', async () => {
  let now = 1_000_000;
  const calls: string[] = [];
  const fake = { sessions: { touch: async (sid: string) => void calls.push(`touch ${sid}`), destroy: async (sid: string) => void calls.push(`destroy ${sid}`), prune: async () => 0 } };
  const store = new DbSessionStore(fake as never, () => now);
  const sess = { cookie: { expires: new Date(now + 60_000) } } as never;
  const touch = (sid: string) => new Promise<void>((resolve) => store.touch(sid, sess, () => resolve()));
  await touch('a');
  await touch('a');
  now += TOUCH_EVERY_MS - 1;
  await touch('a');
  now += 1;
  await touch('a');
  await touch('b');
  await new Promise<void>((resolve) => store.destroy('a', () => resolve()));
  await touch('a');
  store.close();
  expect(calls).toEqual(['touch a', 'touch a', 'touch b', 'destroy a', 'touch a']);
});

/** The `labdeck.sid=…` part of a response's Set-Cookie, or undefined. */
const setCookieOf = (res: request.Response): string | undefined => ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('labdeck.sid='));
const login = (app: Parameters<typeof request>[0], username: string, cookie?: string) => {
  const r = request(app).post('/app/auth/login').type('form');
  if (cookie) r.set('Cookie', cookie);
  return r.send({ username, password: PASSWORD }).expect(302);
};
const signup = (username: string) => request(lab.app).post('/app/auth/signup').type('form').send({ username, password: PASSWORD }).expect(302);
const asCookie = (cookie: string) => request(lab.app).get('/app/instruments/').set('Cookie', cookie).set('Accept', J);

describe('the session cookie', () => {
  it('is set at log-in: signed with the secret of the data folder, httpOnly, SameSite=Lax, for the whole site', async () => {
    await signup('sig');
    const header = setCookieOf(await login(lab.app, 'sig'))!;
    expect(header).toMatch(/; Path=\/(;|$)/);
    expect(header).toMatch(/; HttpOnly(;|$)/i);
    expect(header).toMatch(/; SameSite=Lax(;|$)/i);
    expect(header).toMatch(/; Expires=/);
    const value = decodeURIComponent(header.split(';')[0].slice('labdeck.sid='.length));
    const secret = (await readFile(join(lab.dataDir, 'session-secret'), 'utf8')).trim();
    const id = unsign(value, secret);
    expect(id).toMatch(/^[\w-]{32}$/);
    expect(sign(id!, secret)).toBe(value);
    expect(await lab.runtime.store.sessions.get(id!)).not.toBeNull();
  });

  it('is not set, and nothing is written, for a request that changes nothing in its session', async () => {
    await signup('quiet');
    const cookie = setCookieOf(await login(lab.app, 'quiet'))!.split(';')[0];
    const res = await asCookie(cookie).expect(200);
    expect(setCookieOf(res)).toBeUndefined();
    expect(setCookieOf(await request(lab.app).get('/app/instruments/').set('Accept', J).expect(401))).toBeUndefined();
  });

  it('names a new session at each log-in: the one the browser came with (even a valid one) ends', async () => {
    await signup('fix');
    const first = setCookieOf(await login(lab.app, 'fix'))!.split(';')[0];
    await asCookie(first).expect(200);
    const second = setCookieOf(await login(lab.app, 'fix', first))!.split(';')[0];
    expect(second).not.toBe(first);
    await asCookie(second).expect(200);
    await asCookie(first).expect(401);
  });

  it('opens nothing when tampered with: another signature, another id under the old signature, or no signature', async () => {
    await signup('tamper');
    const cookie = setCookieOf(await login(lab.app, 'tamper'))!.split(';')[0];
    await asCookie(cookie).expect(200); // its check is remembered: a tampered value is still checked
    const value = decodeURIComponent(cookie.slice('labdeck.sid='.length));
    const dot = value.lastIndexOf('.');
    const sig = value.slice(dot + 1);
    const flipped = `${value.slice(0, dot + 1)}${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
    const id = value.slice(2, dot);
    const otherId = `${id[0] === 'a' ? 'b' : 'a'}${id.slice(1)}`;
    for (const bad of [flipped, `s:${otherId}.${sig}`, `s:${id}`, id, sign(id, 'not the secret')]) {
      await asCookie(`labdeck.sid=${encodeURIComponent(bad)}`).expect(401);
    }
    await asCookie(cookie).expect(200);
  });

  it('ends at log-out before the answer: the cookie opens nothing afterwards, and is cleared', async () => {
    await signup('bye');
    const cookie = setCookieOf(await login(lab.app, 'bye'))!.split(';')[0];
    await asCookie(cookie).expect(200);
    const out = await request(lab.app).post('/app/auth/logout').set('Cookie', cookie).expect(302);
    expect(setCookieOf(out)).toMatch(/^labdeck\.sid=;.*Expires=Thu, 01 Jan 1970/);
    await asCookie(cookie).expect(401);
  });

  it('on two hosts of one database: a log-out or a new log-in on one is refused on the other at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-sessions-'));
    const db = await testDbUrl();
    const hosts = [];
    try {
      for (let i = 0; i < 2; i++) {
        const runtime = await createRuntime({ dataDir: dir, db: db.url, watch: false, pluginDirs: [] });
        hosts.push({ runtime, app: await createApp(runtime) });
      }
      const [a, b] = hosts;
      await request(a.app).post('/app/auth/signup').type('form').send({ username: 'two', password: PASSWORD }).expect(302);
      const first = setCookieOf(await login(a.app, 'two'))!.split(';')[0];
      const onB = (cookie: string) => request(b.app).get('/app/instruments/').set('Cookie', cookie).set('Accept', J);
      await onB(first).expect(200);
      await onB(first).expect(200); // B has its copy now
      const second = setCookieOf(await login(a.app, 'two', first))!.split(';')[0];
      await onB(first).expect(401);
      await onB(second).expect(200);
      await onB(second).expect(200);
      await request(a.app).post('/app/auth/logout').set('Cookie', second).expect(302);
      await onB(second).expect(401);

      if (b.runtime.store.dialect === 'postgres') {
        // however late B hears of it: B's listening connection is busy (PostgreSQL delivers nothing to it
        // meanwhile) when the log-out on A is answered, and B's next request is refused all the same
        const third = setCookieOf(await login(a.app, 'two'))!.split(';')[0];
        await onB(third).expect(200);
        await onB(third).expect(200); // B has its copy
        const pool = (dataSourceOf(b.runtime.store).driver as unknown as { master: { _clients: { listenerCount(e: string): number; query(sql: string): Promise<unknown> }[] } }).master;
        const listening = pool._clients.find((c) => c.listenerCount('notification') > 0)!;
        const busy = listening.query('SELECT pg_sleep(0.5)');
        await request(a.app).post('/app/auth/logout').set('Cookie', third).expect(302);
        await onB(third).expect(401);
        await busy;

        // a listening connection that stops answering (the database's PC went away) holds a request at most
        // CHECK_MS: then B reads the database, and opens another connection
        const fourth = setCookieOf(await login(a.app, 'two'))!.split(';')[0];
        const stuck = pool._clients.find((c) => c.listenerCount('notification') > 0)!;
        const held = stuck.query(`SELECT pg_sleep(${CHECK_MS / 1000 + 5})`).catch(() => 'dropped');
        const t0 = Date.now();
        await onB(fourth).expect(200); // answered, not held for as long as the connection is stuck
        expect(Date.now() - t0).toBeGreaterThanOrEqual(CHECK_MS - 100); // it gave the connection its CHECK_MS first
        expect(await held).toBe('dropped'); // and let that connection go
        await request(a.app).post('/app/auth/logout').set('Cookie', fourth).expect(302);
        await onB(fourth).expect(401);
      }
    } finally {
      for (const h of hosts) {
        (h.app.locals.sessionStore as { close(): void }).close();
        await h.runtime.close();
      }
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a session expiry', () => {
  it('is written again only once a minute has passed since this process last wrote it', async () => {
    let now = 1_000_000;
    const calls: string[] = [];
    const fake = {
      sessions: {
        touch: async (sid: string) => void calls.push(`touch ${sid}`),
        create: async (sid: string) => void calls.push(`create ${sid}`),
        destroy: async (sid: string) => void calls.push(`destroy ${sid}`),
        prune: async () => 0,
      },
    };
    const store = new DbSessionStore(fake as never, () => now);
    const later = () => new Date(now + 7 * 24 * 3600_000);
    await store.write('a', { userId: 1 }, later(), { create: true }); // a log-in writes it: no touch for a minute after
    await store.extend('a', later());
    now += TOUCH_EVERY_MS - 1;
    await store.extend('a', later());
    now += 1;
    await store.extend('a', later());
    await store.extend('a', later());
    await store.extend('b', later());
    await store.remove('a');
    await store.extend('a', later());
    store.close();
    expect(calls).toEqual(['create a', 'touch a', 'touch b', 'destroy a', 'touch a']);
  });
});

describe('the cookie header', () => {
  it('is read as browsers send it: the first of a name, quoted or percent-encoded values, spaces', () => {
    expect(cookieValue('a=1; labdeck.sid=s%3Aabc.def; labdeck.sid=other', 'labdeck.sid')).toBe('s:abc.def');
    expect(cookieValue('labdeck.sid="s:x.y"', 'labdeck.sid')).toBe('s:x.y');
    expect(cookieValue('xlabdeck.sid=1;labdeck.sid=2', 'labdeck.sid')).toBe('2');
    expect(cookieValue('labdeck.sid=%E0%A4%A', 'labdeck.sid')).toBe('%E0%A4%A');
    expect(cookieValue('other=1', 'labdeck.sid')).toBeUndefined();
    expect(cookieValue(undefined, 'labdeck.sid')).toBeUndefined();
  });
});
