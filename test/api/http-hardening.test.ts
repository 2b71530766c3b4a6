/**
 * The HTTP parts of issue 26 item 14: a log-out by a link on another site, the remembered-browser cookie,
 * the Host header's port, an over-limit body, and a client gone before its call was dispatched.
 */
import request from 'supertest';
import { PASSWORD, signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';
let lab: TestLab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(() => lab.close());

describe('a log-out by GET', () => {
  it("from a link on another site (at /ivoryos or /app) ends no session; labdeck's own link and ivoryOS's client do", async () => {
    const a = await signupAndLogin(lab.app, 'lou');
    const refused = [
      ['/ivoryos/auth/logout', { 'Sec-Fetch-Site': 'cross-site' }],
      ['/ivoryos/auth/logout', { 'Sec-Fetch-Site': 'same-site' }],
      ['/app/auth/logout', { 'Sec-Fetch-Site': 'same-site' }],
      // a browser too old for Sec-Fetch-Site: its Origin or Referer
      ['/ivoryos/auth/logout', { Referer: 'http://attacker.example.com/page' }],
      ['/app/auth/logout', { Origin: 'http://127.0.0.1:9999' }],
    ] as const;
    for (const [path, headers] of refused) {
      const res = await a.get(path).set(headers).set('Accept', J);
      expect([path, headers, res.status]).toEqual([path, headers, 403]);
      await a.get('/app/account').set('Accept', J).expect(200);
    }
    const host = '127.0.0.1';
    await a.get('/ivoryos/auth/logout').set('Host', host).set('Referer', `http://${host}/app/`).expect(302);
    await a.get('/app/account').set('Accept', J).expect(401);
    const b = await signupAndLogin(lab.app, 'lou2');
    await b.get('/ivoryos/auth/logout').expect(302); // ivoryos-client sends none of those headers
    await b.get('/app/account').set('Accept', J).expect(401);
    const c = await request.agent(lab.app);
    await c.post('/app/auth/login').type('form').send({ username: 'lou2', password: PASSWORD }).expect(302);
    await c.get('/app/auth/logout').set('Sec-Fetch-Site', 'same-origin').expect(302);
    await c.get('/app/account').set('Accept', J).expect(401);
  });
});

describe('the remembered browser (labdeck.device)', () => {
  const login = (agent: ReturnType<typeof request.agent> | ReturnType<typeof request>, username: string, password: string) =>
    (agent as ReturnType<typeof request.agent>).post('/app/auth/login').type('form').send({ username, password });

  it('is throttled like any login: its cookie gives a guesser no more tries than anyone', async () => {
    const mine = await signupAndLogin(lab.app, 'remy'); // this browser is remembered now
    let status = 0;
    for (let i = 0; i < 20 && status !== 429; i++) status = (await login(mine, 'remy', `guess number ${i}`)).status;
    expect(status).toBe(429);
    await login(mine, 'remy', PASSWORD).expect(429);
  });

  it('is forgotten when the password changes: with the address throttled, it no longer gets in', async () => {
    const mine = await signupAndLogin(lab.app, 'rosa');
    const stranger = () => request(lab.app);
    // a stranger behind the same address throttles it; rosa's remembered browser still gets in
    for (let i = 0; i < 20 && (await login(stranger(), 'rosa', `guess ${i}`)).status !== 429; i++);
    await login(stranger(), 'rosa', PASSWORD).expect(429);
    await login(mine, 'rosa', PASSWORD).expect(302);
    // the password is changed (by rosa elsewhere, or an admin's reset): the cookie vouches for nothing
    const rosa = (await lab.runtime.store.users.byName('rosa'))!;
    await lab.admin.post(`/app/account/users/${rosa.id}/password`).set('Accept', J).send({ new_password: 'the new one!', confirm_password: 'the new one!' }).expect(200);
    await login(mine, 'rosa', 'the new one!').expect(429);
  });
});
