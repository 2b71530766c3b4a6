import request from 'supertest';
import type { Test } from 'supertest';
import { PASSWORD, signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';

describe('accounts', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab({ accounts: { maxFailures: 3 } });
  });
  afterAll(() => lab.close());

  it('serves the login and signup forms', async () => {
    const login = await request(lab.app).get('/app/auth/login').expect(200);
    expect(login.text).toContain('name="password"');
    await request(lab.app).get('/auth/signup').expect(200);
  });

  it('makes the first account admin and later ones operators', async () => {
    const me = await lab.admin.get('/app/account?format=json').expect(200);
    expect(me.body.user).toMatchObject({ username: 'ada', role: 'admin' });
    const bob = await signupAndLogin(lab.app, 'bob');
    const res = await bob.get('/app/account').set('Accept', 'application/json').expect(200);
    expect(res.body.user.role).toBe('operator');
  });

  it('answers 409 with the signup form when the user exists', async () => {
    const res = await request(lab.app).post('/app/auth/signup').type('form').send({ username: 'ada', password: PASSWORD });
    expect(res.status).toBe(409);
    expect(res.text).toContain('already exists');
    expect(res.text).toContain('name="username"');
  });

  it('answers 400 naming the field for a short password', async () => {
    const res = await request(lab.app).post('/app/auth/signup').set('Accept', 'application/json').send({ username: 'cy', password: 'short' });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'password', message: 'must be at least 8 characters' }]);
  });

  it('redirects to the home page on login and 401s a wrong password with the form', async () => {
    const ok = await request(lab.app).post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD });
    expect(ok.status).toBe(302);
    expect(ok.headers.location).toBe('/app/');
    const cookies = ok.headers['set-cookie'] as unknown as string[];
    expect(cookies.find((c) => c.startsWith('labdeck.sid='))).toMatch(/labdeck\.sid=.*HttpOnly.*SameSite=Lax/i);
    const bad = await request(lab.app).post('/app/auth/login').type('form').send({ username: 'ada', password: 'nope-nope' });
    expect(bad.status).toBe(401);
    expect(bad.text).toContain('Wrong username or password');
    expect(bad.text).toContain('action="/app/auth/login"');
  });

  it('follows a local next= after login and ignores a foreign one', async () => {
    const local = await request(lab.app).post('/app/auth/login?next=%2Fapp%2Finstruments%2F').type('form').send({ username: 'ada', password: PASSWORD });
    expect(local.headers.location).toBe('/app/instruments/');
    const foreign = await request(lab.app).post('/app/auth/login?next=%2F%2Fevil.example').type('form').send({ username: 'ada', password: PASSWORD });
    expect(foreign.headers.location).toBe('/app/');
  });

  it('throttles repeated failed logins with 429 and Retry-After', async () => {
    await signupAndLogin(lab.app, 'carol');
    for (let i = 0; i < 3; i++) {
      await request(lab.app).post('/app/auth/login').type('form').send({ username: 'carol', password: 'wrong-wrong' }).expect(401);
    }
    const res = await request(lab.app).post('/app/auth/login').type('form').send({ username: 'carol', password: PASSWORD });
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('the throttle stops the one guessing, not the scientist on the same PC: a browser they logged in from gets in', async () => {
    const dora = await signupAndLogin(lab.app, 'dora'); // dora's own browser: it logged in before
    for (let i = 0; i < 3; i++) {
      await request(lab.app).post('/app/auth/login').type('form').send({ username: 'dora', password: 'guess-guess' }).expect(401);
    }
    // a stranger's browser behind the same address is held off, even with the right password
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'dora', password: PASSWORD }).expect(429);
    // dora's browser is not; a forged or another user's device cookie does not help
    await dora.post('/app/auth/login').type('form').send({ username: 'dora', password: PASSWORD }).expect(302);
    await request(lab.app).post('/app/auth/login').set('Cookie', 'labdeck.device=dora.forged').type('form').send({ username: 'dora', password: PASSWORD }).expect(429);
    const adaCookies = (await request(lab.app).post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302)).headers['set-cookie'] as unknown as string[];
    const adaDevice = adaCookies.find((c) => c.startsWith('labdeck.device='))!.split(';')[0];
    await request(lab.app).post('/app/auth/login').set('Cookie', adaDevice).type('form').send({ username: 'dora', password: PASSWORD }).expect(429);
    // a malformed device cookie vouches for nobody, and is no reason for a 500
    await request(lab.app).post('/app/auth/login').set('Cookie', 'labdeck.device=%E0%A4%A').type('form').send({ username: 'dora', password: PASSWORD }).expect(429);
    // and the guesser still gets nothing from dora's login
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'dora', password: 'guess-again' }).expect(429);
  });

  it('requires login: pages redirect with next=, JSON gets 401', async () => {
    const page = await request(lab.app).get('/app/instruments/pump').expect(302);
    expect(page.headers.location).toBe('/app/auth/login?next=%2Fapp%2Finstruments%2Fpump');
    const json = await request(lab.app).get('/app/instruments/').set('Accept', 'application/json').expect(401);
    expect(json.body.error.code).toBe('unauthenticated');
    await request(lab.app).get('/instruments/').expect(302);
  });

  it('changes the password: 302 home, old one stops working, wrong old one is 401', async () => {
    const dan = await signupAndLogin(lab.app, 'dan');
    await dan.get('/app/auth/change-password').expect(200);
    const wrong = await dan.post('/app/auth/change-password').type('form').send({ old_password: 'not-it-at-all', new_password: 'another secret' });
    expect(wrong.status).toBe(401);
    const weak = await dan.post('/app/auth/change-password').type('form').send({ old_password: PASSWORD, new_password: 'x' });
    expect(weak.status).toBe(400);
    const ok = await dan.post('/app/auth/change-password').type('form').send({ old_password: PASSWORD, new_password: 'another secret' });
    expect(ok.status).toBe(302);
    expect(ok.headers.location).toBe('/app/?password_changed=1');
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'dan', password: PASSWORD }).expect(401);
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'dan', password: 'another secret' }).expect(302);
  });

  it('logs out with POST or GET and redirects to the login form', async () => {
    const eve = await signupAndLogin(lab.app, 'eve');
    const out = await eve.post('/app/auth/logout').expect(302);
    expect(out.headers.location).toBe('/app/auth/login?logged_out=1');
    await eve.get('/app/instruments/').set('Accept', 'application/json').expect(401);
    const eve2 = await signupAndLogin(lab.app, 'eve2');
    await eve2.get('/auth/logout').expect(302);
    await eve2.get('/app/').set('Accept', 'application/json').expect(401);
  });

  it('refuses cross-site form posts (CSRF) but accepts same-origin ones', async () => {
    const cross = await lab.admin.post('/app/account/tokens').set('Origin', 'http://evil.example').type('form').send({ name: 'x' });
    expect(cross.status).toBe(403);
    const sameSite = await lab.admin.post('/app/account/tokens').set('Sec-Fetch-Site', 'cross-site').type('form').send({ name: 'x' });
    expect(sameSite.status).toBe(403);
    await lab.admin.post('/app/account/tokens').set('Origin', 'null').type('form').send({ name: 'x' }).expect(403);
    await lab.admin.post('/app/account/tokens').set('Sec-Fetch-Site', 'same-origin').type('form').send({ name: 'x' }).expect(201);
    const host = '127.0.0.1';
    const same = await lab.admin.post('/app/account/tokens').set('Host', host).set('Origin', `http://${host}`).type('form').send({ name: 'x' });
    expect(same.status).toBe(201);
  });

  it('authenticates scripts with bearer tokens, and revoked tokens stop working', async () => {
    const made = await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'notebook' }).expect(201);
    const token = made.body.token as string;
    expect(token).toMatch(/^lab_/);
    const res = await request(lab.app).get('/app/instruments/').set('Authorization', `Bearer ${token}`).set('Accept', 'application/json').expect(200);
    expect(res.body.instruments.map((i: { name: string }) => i.name)).toContain('pump');
    // a cross-site Origin does not matter to a token: no cookie is involved
    await request(lab.app).post('/app/instruments/balance').set('Authorization', `Bearer ${token}`).set('Origin', 'http://elsewhere').send({ method: 'tare', args: {} }).expect(200);
    await request(lab.app).get('/app/instruments/').set('Authorization', 'Bearer lab_wrong').set('Accept', 'application/json').expect(401);
    // a token with more after it is another token (copies are kept by the token, and only of a token's length)
    const longer = await request(lab.app)
      .get('/app/instruments/')
      .set('Authorization', `Bearer ${token}${'x'.repeat(4000)}`)
      .set('Accept', 'application/json');
    expect(longer.status).toBe(401);
    expect(longer.body.error.message).toMatch(/unknown or was revoked/);
    await request(lab.app).get('/app/instruments/').set('Authorization', `Bearer ${token}x`).set('Accept', 'application/json').expect(401);
    await request(lab.app).get('/app/instruments/').set('Authorization', 'Basic abc').set('Accept', 'application/json').expect(401);
    await lab.admin.post(`/app/account/tokens/${made.body.id}/delete`).set('Accept', 'application/json').expect(204);
    await request(lab.app).get('/app/instruments/').set('Authorization', `Bearer ${token}`).set('Accept', 'application/json').expect(401);
  });

  it('lets an admin close sign-up (403 for new sign-ups) and refuses operators', async () => {
    const frank = await signupAndLogin(lab.app, 'frank');
    await frank.post('/app/account/signup').type('form').send({ open: 'false' }).expect(403);
    await lab.admin.post('/app/account/signup').type('form').send({ open: 'false' }).expect(302);
    const res = await request(lab.app).post('/app/auth/signup').type('form').send({ username: 'gina', password: PASSWORD });
    expect(res.status).toBe(403);
    expect(res.text).toContain('Sign-up is closed');
    await lab.admin.post('/app/account/signup').type('form').send({ open: 'true' }).expect(302);
    const audit = await lab.runtime.store.audit.list(50);
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['signup.close', 'signup.open']));
  });

  it('refuses a body field a route does not take, by name, before doing anything; a page form comes back with the message', async () => {
    const ivy = await signupAndLogin(lab.app, 'ivy');
    const tokenId = (await ivy.post('/app/account/tokens').set('Accept', J).send({ name: 'kept' }).expect(201)).body.id as number;
    const anon = { post: (path: string) => request(lab.app).post(path) };
    const cases: [{ post(path: string): Test }, string, Record<string, unknown>][] = [
      [anon, '/app/auth/login', { username: 'ivy', password: PASSWORD }],
      [anon, '/app/auth/signup', { username: 'never-made', password: PASSWORD }],
      [ivy, '/app/auth/change-password', { old_password: PASSWORD, new_password: 'not applied', confirm_password: 'not applied' }],
      [ivy, '/app/auth/logout', {}],
      [ivy, '/app/account/tokens', { name: 'not made' }],
      [ivy, `/app/account/tokens/${tokenId}/delete`, {}],
      [lab.admin, '/app/account/signup', { open: false }],
    ];
    for (const [who, path, body] of cases) {
      const res = await who
        .post(path)
        .set('Accept', J)
        .send({ ...body, colour: 'red' });
      expect({ path, status: res.status, details: res.body.error?.details }).toEqual({
        path,
        status: 400,
        details: [{ field: 'colour', message: expect.stringMatching(/^is not a field of this request/) }],
      });
    }
    // nothing was done: ivy is still logged in with her password and token, no account or token was made, sign-up is open
    const mine = await ivy.get('/app/account').set('Accept', J).expect(200);
    expect(mine.body.tokens.map((t: { name: string }) => t.name)).toEqual(['kept']);
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'ivy', password: PASSWORD }).expect(302);
    expect(await lab.runtime.store.users.byName('never-made')).toBeFalsy();
    expect(await lab.runtime.accounts.signupOpen()).toBe(true);
    // the forms of the login, sign-up and password pages come back with the message and what was typed
    const login = await request(lab.app).post('/app/auth/login?next=%2Fapp%2Finstruments%2F').type('form').send({ username: 'ivy', password: PASSWORD, colour: 'red' }).expect(400);
    expect(login.text).toContain('<code>colour</code> is not a field of this request');
    expect(login.text).toContain('action="/app/auth/login?next=%2Fapp%2Finstruments%2F"');
    expect(login.text).toMatch(/name="username"[^>]*value="ivy"/);
    const signup = await request(lab.app).post('/app/auth/signup').type('form').send({ username: 'never-made', password: PASSWORD, colour: 'red' }).expect(400);
    expect(signup.text).toContain('<code>colour</code> is not a field of this request');
    expect(signup.text).toContain('action="/app/auth/signup"');
    const change = await ivy.post('/app/auth/change-password').type('form').send({ old_password: PASSWORD, new_password: 'x', confirm_password: 'x' }).expect(400);
    expect(change.text).toContain('<code>new_password</code> must be at least 8 characters');
    expect(change.text).toContain('action="/app/auth/change-password"');
  });

  it('keeps sessions in the database', async () => {
    const rows = await lab.runtime.store.sessions.prune(new Date(0));
    expect(rows).toBe(0);
    // a logged-in agent's session survives a new app on the same runtime (no memory store)
    const { createApp } = await import('../../server/app.js');
    const app2 = await createApp(lab.runtime);
    const cookie = (await request(lab.app).post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD })).headers['set-cookie'];
    await request(app2).get('/app/account').set('Cookie', cookie).set('Accept', 'application/json').expect(200);
    (app2.locals.sessionStore as { close(): void }).close();
  });
});

/** A scientist's first day: sign-up, the first password change, log-out and help say what happened. */
describe("a scientist's first day", () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(() => lab.close());

  it('sign-up lands on the login form with the name filled in and says the account was made', async () => {
    const res = await request(lab.app).post('/app/auth/signup').type('form').send({ username: 'vera', password: PASSWORD }).expect(302);
    expect(res.headers.location).toBe('/app/auth/login?signed_up=1&username=vera');
    const form = await request(lab.app).get(res.headers.location).expect(200);
    expect(form.text).toContain('Account created for vera: enter your password to log in.');
    expect(form.text).toMatch(/name="username"[^>]*value="vera"/);
    // a name no account can have is not filled in
    expect((await request(lab.app).get('/app/auth/login?username=%3Cb%3E').expect(200)).text).not.toContain('value="&lt;b&gt;"');
  });

  it('the password change asks for the new password twice and says when it is done', async () => {
    const wes = await signupAndLogin(lab.app, 'wes');
    const form = await wes.get('/app/auth/change-password').expect(200);
    expect(form.text).toContain('name="confirm_password"');
    const differ = await wes.post('/app/auth/change-password').type('form').send({ old_password: PASSWORD, new_password: 'a long secret', confirm_password: 'a long secreT' }).expect(400);
    expect(differ.text).toContain('The two new passwords differ');
    expect(differ.text).toContain('<code>confirm_password</code>');
    // the old password is still the one
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'wes', password: PASSWORD }).expect(302);
    const ok = await wes.post('/app/auth/change-password').type('form').send({ old_password: PASSWORD, new_password: 'a long secret', confirm_password: 'a long secret' }).expect(302);
    expect(ok.headers.location).toBe('/app/?password_changed=1');
    expect((await wes.get(ok.headers.location).expect(200)).text).toContain('Your password was changed.');
    // scripts may leave the confirmation out
    await wes.post('/app/auth/change-password').set('Accept', J).send({ old_password: 'a long secret', new_password: 'another secret' }).expect(302);
  });

  it('log-out says so on the login form', async () => {
    const xia = await signupAndLogin(lab.app, 'xia');
    const out = await xia.post('/app/auth/logout').expect(302);
    expect(out.headers.location).toBe('/app/auth/login?logged_out=1');
    expect((await xia.get(out.headers.location).expect(200)).text).toContain('You are logged out.');
  });

  it('the help page knows who is logged in', async () => {
    const yan = await signupAndLogin(lab.app, 'yan');
    const mine = await yan.get('/app/help').expect(200);
    expect(mine.text).toContain('href="/app/account">yan');
    expect(mine.text).toContain('Log out');
    const anon = await request(lab.app).get('/app/help').expect(200);
    expect(anon.text).not.toContain('Log out');
    expect(anon.text).toContain('href="/app/auth/login">Log in');
    // a token user is known too; an unknown token is nobody, not an error
    const token = (await yan.post('/app/account/tokens').set('Accept', J).send({ name: 'x' }).expect(201)).body.token as string;
    expect((await request(lab.app).get('/help').set('Authorization', `Bearer ${token}`).expect(200)).text).toContain('href="/account">yan');
    expect((await request(lab.app).get('/app/help').set('Authorization', 'Bearer lab_nope').expect(200)).text).not.toContain('Log out');
  });
});
