/**
 * A request authenticates from this process's copies of tokens, sessions and accounts (no database read),
 * yet a revoked token, a logout, a disabled account or a demoted admin is refused on the very next request:
 * in the process that made the change and in another one on the same database (SQLite file, or PostgreSQL
 * with LABDECK_TEST_DB=postgres).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp, type App } from '../../server/app.js';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { openStore } from '../../core/store/index.js';
import { Accounts } from '../../core/accounts/index.js';
import { testDbUrl } from '../helpers/db.js';
import { PASSWORD } from './helpers.js';

const J = 'application/json';
/** The session cookie a login answered with. */
const sessionCookie = (res: request.Response): string =>
  ([] as string[])
    .concat(res.headers['set-cookie'] ?? [])
    .find((c) => c.startsWith('labdeck.sid='))!
    .split(';')[0];

interface Host {
  runtime: Runtime;
  app: App;
}
let dataDir: string;
let db: Awaited<ReturnType<typeof testDbUrl>>;
let a: Host;
let b: Host;

async function host(): Promise<Host> {
  const runtime = await createRuntime({ dataDir, db: db.url, watch: false, pluginDirs: [] });
  return { runtime, app: await createApp(runtime) };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'labdeck-revoke-'));
  db = await testDbUrl();
  a = await host();
  b = await host();
  // the first account is the admin
  await request(a.app).post('/app/auth/signup').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
});

afterAll(async () => {
  for (const h of [a, b]) {
    (h.app.locals.sessionStore as { close(): void }).close();
    await h.runtime.close();
  }
  await db.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/** A user's session cookie (logged in on A) and an API token. */
async function account(name: string): Promise<{ id: number; cookie: string; token: string; tokenId: number }> {
  await request(a.app).post('/app/auth/signup').type('form').send({ username: name, password: PASSWORD }).expect(302);
  const login = await request(a.app).post('/app/auth/login').type('form').send({ username: name, password: PASSWORD }).expect(302);
  const cookie = sessionCookie(login);
  const made = await request(a.app).post('/app/account/tokens').set('Cookie', cookie).set('Accept', J).send({ name: 'script' }).expect(201);
  const id = (await a.runtime.store.users.byName(name))!.id;
  return { id, cookie, token: made.body.token, tokenId: made.body.id };
}

const adminCookie = async () => {
  const login = await request(a.app).post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);
  return sessionCookie(login);
};

const viaCookie = (h: Host, cookie: string, path = '/app/instruments/') => request(h.app).get(path).set('Cookie', cookie).set('Accept', J);
const viaToken = (h: Host, token: string, path = '/app/instruments/') => request(h.app).get(path).set('Authorization', `Bearer ${token}`).set('Accept', J);

/** Counts the reads of sessions, accounts and tokens `h`'s store receives while `fn` runs. */
async function reads(h: Host, fn: () => Promise<void>): Promise<number> {
  const { sessions, users, tokens } = h.runtime.store;
  const originals = { get: sessions.get, byId: users.byId, userFor: tokens.userFor };
  let n = 0;
  sessions.get = (...x) => (n++, originals.get(...x));
  users.byId = (...x) => (n++, originals.byId(...x));
  tokens.userFor = (...x) => (n++, originals.userFor(...x));
  try {
    await fn();
  } finally {
    Object.assign(sessions, { get: originals.get });
    Object.assign(users, { byId: originals.byId });
    Object.assign(tokens, { userFor: originals.userFor });
  }
  return n;
}

it('authenticates repeated cookie and token requests without reading the database', async () => {
  const olga = await account('olga');
  await viaCookie(b, olga.cookie).expect(200);
  await viaToken(b, olga.token).expect(200);
  const n = await reads(b, async () => {
    for (let i = 0; i < 20; i++) {
      await viaCookie(b, olga.cookie).expect(200);
      await viaToken(b, olga.token).expect(200);
    }
  });
  // another host's writes (SQLite) may drop the copies now and then, never on each request
  expect(n).toBeLessThan(10);
});

describe.each([
  ['the host that made the change', () => a],
  ['another host on the same database', () => b],
])('is refused at once on %s', (_where, other) => {
  let n = 0;
  const fresh = async () => {
    const acct = await account(`user${++n}${other() === a ? 'a' : 'b'}`);
    // both are copied on the host that will be asked next
    await viaCookie(other(), acct.cookie).expect(200);
    await viaToken(other(), acct.token).expect(200);
    await viaToken(other(), acct.token).expect(200);
    return acct;
  };

  it('a revoked token', async () => {
    const u = await fresh();
    await request(a.app).post(`/app/account/tokens/${u.tokenId}/delete`).set('Cookie', u.cookie).set('Accept', J).expect(204);
    await viaToken(other(), u.token).expect(401);
    await viaCookie(other(), u.cookie).expect(200);
  });

  it('a logout', async () => {
    const u = await fresh();
    await request(a.app).post('/app/auth/logout').set('Cookie', u.cookie).expect(302);
    await viaCookie(other(), u.cookie).expect(401);
    await viaToken(other(), u.token).expect(200);
  });

  it('a disabled account: its session and its tokens', async () => {
    const u = await fresh();
    await request(a.app)
      .post(`/app/account/users/${u.id}/disable`)
      .set('Cookie', await adminCookie())
      .set('Accept', J)
      .expect(200);
    await viaToken(other(), u.token).expect(401);
    await viaCookie(other(), u.cookie).expect(401);
  });

  it('a demoted admin', async () => {
    const u = await fresh();
    const admin = await adminCookie();
    await request(a.app).post(`/app/account/users/${u.id}/role`).set('Cookie', admin).set('Accept', J).send({ role: 'admin' }).expect(200);
    await viaToken(other(), u.token, '/app/account/users').expect(200);
    await viaCookie(other(), u.cookie, '/app/account/users').expect(200);
    await request(a.app).post(`/app/account/users/${u.id}/role`).set('Cookie', admin).set('Accept', J).send({ role: 'operator' }).expect(200);
    await viaToken(other(), u.token, '/app/account/users').expect(403);
    await viaCookie(other(), u.cookie, '/app/account/users').expect(403);
  });
});

it('sees `lab user`-style changes made through another connection to the database', async () => {
  const u = await account('cli');
  await viaCookie(b, u.cookie).expect(200);
  await viaToken(b, u.token).expect(200);
  // what `lab user` does: its own store on the same data folder or URL
  const store = await openStore({ dataDir, url: db.url });
  try {
    const ada = (await store.users.byName('ada'))!;
    await new Accounts(store).setDisabled({ id: ada.id, username: 'ada', role: 'admin' }, u.id, true);
  } finally {
    await store.close();
  }
  await viaToken(b, u.token).expect(401);
  await viaCookie(b, u.cookie).expect(401);
});

/**
 * A stolen cookie's request in flight while its session ends (issue 26 item 4): the request changes its
 * session (the config template remembers the workflow named), and its write, made after the end, must not
 * bring the session back (it was an upsert of the whole session, user id and all).
 */
describe('a request of the cookie in flight when its session ends', () => {
  let n = 0;
  const WF = { name: 'inflight', main: [{ kind: 'wait', seconds: 0 }] };
  beforeAll(async () => {
    const admin = await adminCookie();
    await request(a.app).post('/app/workflows').set('Cookie', admin).set('Accept', J).send(WF).expect(201);
  });

  /** A request of `cookie` on B that reads its session, is held until `release`, then writes its session. */
  function held(cookie: string) {
    const workflows = b.runtime.store.workflows;
    const get = workflows.get;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const inside = new Promise<void>((r) => (reached = r));
    workflows.get = async (...x) => {
      workflows.get = get;
      reached();
      await gate;
      return get(...x);
    };
    const res = viaCookie(b, cookie, `/app/files/execution-configs?workflow=${WF.name}`).then((r) => r);
    return { inside, release, res };
  }

  /** A user logged in twice: their own browser (`own`) and the cookie a thief took (`stolen`), both copied on B. */
  async function victim() {
    const u = await account(`victim${++n}`);
    const login = await request(a.app)
      .post('/app/auth/login')
      .type('form')
      .send({ username: `victim${n}`, password: PASSWORD })
      .expect(302);
    const own = sessionCookie(login);
    await viaCookie(b, u.cookie).expect(200);
    await viaCookie(b, own).expect(200);
    return { ...u, own, stolen: u.cookie };
  }

  it.each([
    [
      'a log-out with that cookie',
      async (v: Awaited<ReturnType<typeof victim>>) => {
        await request(a.app).post('/app/auth/logout').set('Cookie', v.stolen).expect(302);
      },
    ],
    [
      'a password change in the own browser',
      async (v: Awaited<ReturnType<typeof victim>>) => {
        await request(a.app)
          .post('/app/auth/change-password')
          .set('Cookie', v.own)
          .set('Accept', J)
          .send({ old_password: PASSWORD, new_password: 'a brand new one', confirm_password: 'a brand new one' })
          .expect(302);
      },
    ],
    [
      "an admin's reset of the password",
      async (v: Awaited<ReturnType<typeof victim>>) => {
        await request(a.app)
          .post(`/app/account/users/${v.id}/password`)
          .set('Cookie', await adminCookie())
          .set('Accept', J)
          .send({ new_password: 'set by the admin', confirm_password: 'set by the admin' })
          .expect(200);
      },
    ],
  ])('%s: the cookie is refused afterwards, on both hosts', async (_what, end) => {
    const v = await victim();
    const slow = held(v.stolen);
    await slow.inside; // the request has its session (and its user) and is under way
    await end(v);
    slow.release();
    expect((await slow.res).status).toBe(200); // it was let in before the end: it finishes
    await viaCookie(b, v.stolen).expect(401);
    await viaCookie(a, v.stolen).expect(401);
    expect(await b.runtime.store.sessions.get(decodeURIComponent(v.stolen.split('=')[1]!).slice(2).split('.')[0]!)).toBeNull();
  });
});
