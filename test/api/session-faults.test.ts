/**
 * Sessions when the store cannot write (issue 26 item 3): logging in, signing up or logging out on a full disk
 * answers 507 saying so, and the server goes on (the session write's failure was an unhandled rejection,
 * which ends a real server). SQLite: the database is really full (test/helpers/full-disk.ts); PostgreSQL
 * keeps its own disk, so there its disk-full error (53100) is what the store's writes answer.
 */
import request from 'supertest';
import { storageFailure } from '../../core/errors.js';
import { fillDisk } from '../helpers/full-disk.js';
import { PASSWORD, REACTOR, signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';
let lab: TestLab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(() => lab.close());

/** Unhandled promise rejections while `fn` runs (each would end a real server). */
async function unhandledDuring(fn: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const on = (e: unknown) => seen.push(e);
  process.on('unhandledRejection', on);
  try {
    await fn();
    // a rejection nobody handles is reported once the microtasks of its turn have run
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('unhandledRejection', on);
  }
  return seen;
}

/** The disk full while `fn` runs: the real thing on SQLite; PostgreSQL's disk-full error on the store's writes there. */
async function onFullDisk(fn: () => Promise<void>) {
  if (lab.runtime.store.dialect === 'sqlite') {
    const disk = fillDisk(lab.runtime);
    try {
      return await fn();
    } finally {
      disk.free();
    }
  }
  const s = lab.runtime.store;
  const saved = { sessions: { ...s.sessions }, users: { ...s.users } };
  const full = () => Promise.reject(storageFailure(Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' }), 'postgres://127.0.0.1/labdeck'));
  Object.assign(s.sessions, { create: full, update: full, destroy: full });
  Object.assign(s.users, { create: full });
  try {
    return await fn();
  } finally {
    Object.assign(s.sessions, saved.sessions);
    Object.assign(s.users, saved.users);
  }
}

const cookies = (res: request.Response): string[] => ([] as string[]).concat(res.headers['set-cookie'] ?? []);

describe('on a full disk', () => {
  it('a log-in answers 507 saying it did not log in and why, sets no cookie, and the server goes on', async () => {
    await signupAndLogin(lab.app, 'fay');
    let json!: request.Response;
    let form!: request.Response;
    const unhandled = await unhandledDuring(() =>
      onFullDisk(async () => {
        // the database's last free bytes still take a few sessions; then the disk is full
        for (let i = 0; i < 500; i++) {
          json = await request(lab.app).post('/app/auth/login').set('Accept', J).send({ username: 'fay', password: PASSWORD });
          if (json.status !== 302) break;
        }
        form = await request(lab.app).post('/app/auth/login').type('form').send({ username: 'fay', password: PASSWORD });
        // and ivoryOS's log-in, on the same sessions
        const ivory = await request(lab.app).post('/ivoryos/auth/login').type('form').send({ username: 'fay', password: PASSWORD });
        expect(ivory.status).toBe(507);
        expect(cookies(ivory).filter((c) => c.startsWith('labdeck.sid='))).toEqual([]);
      }),
    );
    expect(unhandled).toEqual([]);
    expect(json.status).toBe(507);
    expect(json.body.error.message).toMatch(/^You are not logged in: the session could not be stored: .* has no space left \((SQLITE_FULL|53100)\)\. Free space/);
    expect(cookies(json)).toEqual([]);
    expect(form.status).toBe(507);
    expect(form.text).toContain('You are not logged in');
    expect(cookies(form)).toEqual([]);
    // still serving; once there is room, the log-in works
    await request(lab.app).get('/app/healthz').expect(200);
    await lab.admin.get('/app/instruments/').set('Accept', J).expect(200);
    const ok = await request(lab.app).post('/app/auth/login').type('form').send({ username: 'fay', password: PASSWORD }).expect(302);
    expect(cookies(ok).some((c) => c.startsWith('labdeck.sid='))).toBe(true);
  });

  it('a sign-up answers 507, and a log-out answers 507 saying the session is still open', async () => {
    const gus = await signupAndLogin(lab.app, 'gus');
    let signup!: request.Response;
    let logout!: request.Response;
    const unhandled = await unhandledDuring(() =>
      onFullDisk(async () => {
        for (let i = 0; i < 500; i++) {
          signup = await request(lab.app)
            .post('/app/auth/signup')
            .set('Accept', J)
            .send({ username: `hal${i}`, password: PASSWORD });
          if (signup.status !== 302) break;
        }
        // SQLite deletes on a full disk; a database that cannot (PostgreSQL's 53100 here) must not say "logged out"
        if (lab.runtime.store.dialect === 'sqlite') {
          const s = lab.runtime.store.sessions;
          const destroy = s.destroy;
          s.destroy = () => Promise.reject(storageFailure(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }), 'labdeck.db'));
          try {
            logout = await gus.post('/app/auth/logout').set('Accept', J);
          } finally {
            s.destroy = destroy;
          }
        } else logout = await gus.post('/app/auth/logout').set('Accept', J);
      }),
    );
    expect(unhandled).toEqual([]);
    expect(signup.status).toBe(507);
    expect(signup.body.error.message).toMatch(/has no space left/);
    expect(logout.status).toBe(507);
    expect(logout.body.error.message).toMatch(/^You are still logged in: the end of the session could not be stored: .*has no space left/);
    await gus.get('/app/instruments/').set('Accept', J).expect(200);
    await gus.post('/app/auth/logout').expect(302);
    await gus.get('/app/instruments/').set('Accept', J).expect(401);
  });

  it('a page that changes its session still answers, without a rejection nobody handles', async () => {
    const ida = await signupAndLogin(lab.app, 'ida');
    await lab.admin.post('/app/workflows').set('Accept', J).send(REACTOR).expect(201);
    const s = lab.runtime.store.sessions;
    const saved = { update: s.update, set: (s as { set?: unknown }).set };
    const full = () => Promise.reject(storageFailure(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }), 'labdeck.db'));
    // (an in-place rewrite of a row needs no new page: the write of a changed session is made to fail)
    Object.assign(s, { update: full, set: full });
    let res!: request.Response;
    try {
      const unhandled = await unhandledDuring(async () => {
        // the config template remembers the workflow in the session (its answer does not depend on it)
        res = await ida.get(`/app/files/execution-configs?workflow=${REACTOR.name}`);
      });
      expect(unhandled).toEqual([]);
    } finally {
      Object.assign(s, saved);
    }
    expect(res.status).toBe(200);
    await request(lab.app).get('/app/healthz').expect(200);
    await ida.get('/app/instruments/').set('Accept', J).expect(200);
  });
});
