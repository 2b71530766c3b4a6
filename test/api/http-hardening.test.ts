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
  it('from a link on another site (at /ivoryos or /app) ends no session; labdeck\'s own link and ivoryOS\'s client do', async () => {
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
