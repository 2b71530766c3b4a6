/** A request with a session cookie reads its session but does not write it (issue: speed); revocation is at once. */
import request from 'supertest';
import { DbSessionStore, TOUCH_EVERY_MS } from '../../server/session-store.js';
import { signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';
let lab: TestLab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(() => lab.close());

/** Count the session writes the store receives while `fn` runs. */
async function writes(fn: () => Promise<void>): Promise<number> {
  const sessions = lab.runtime.store.sessions;
  const { touch, set } = sessions;
  let n = 0;
  sessions.touch = (...a) => (n++, touch.apply(sessions, a));
  sessions.set = (...a) => (n++, set.apply(sessions, a));
  try {
    await fn();
  } finally {
    sessions.touch = touch;
    sessions.set = set;
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
