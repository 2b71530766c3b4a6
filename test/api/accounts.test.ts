/**
 * An admin manages the lab's accounts (role, password reset, disable, delete) on the users page or over
 * JSON; the rules: admins only, never your own account, never the last admin who can log in.
 */
import request from 'supertest';
import { PASSWORD, signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';
type Agent = ReturnType<typeof request.agent>;

describe('accounts managed by an admin', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(() => lab.close());

  const idOf = async (username: string) => (await lab.runtime.store.users.byName(username))!.id;
  const tokenOf = async (agent: Agent) => (await agent.post('/app/account/tokens').set('Accept', J).send({ name: 'nb' }).expect(201)).body.token as string;
  const asToken = (token: string) => request(lab.app).get('/app/instruments/').set('Authorization', `Bearer ${token}`).set('Accept', J);
  const lastAudit = async (action: string) => (await lab.runtime.store.audit.list(200)).find((a) => a.action === action);

  it('lists every account for an admin (page and JSON), and refuses operators and visitors', async () => {
    const olga = await signupAndLogin(lab.app, 'olga');
    const json = await lab.admin.get('/app/account/users').set('Accept', J).expect(200);
    expect(json.body.users).toEqual([
      expect.objectContaining({ username: 'ada', role: 'admin', disabled: false, created_at: expect.any(String) }),
      expect.objectContaining({ username: 'olga', role: 'operator', disabled: false }),
    ]);
    const page = await lab.admin.get('/app/account/users').expect(200);
    expect(page.text).toContain('<h1 class="h3">Users</h1>');
    expect(page.text).toContain(`action="/app/account/users/${await idOf('olga')}/role"`);
    // the account page and the nav lead there
    expect((await lab.admin.get('/app/account').expect(200)).text).toContain('href="/app/account/users"');
    await olga.get('/app/account/users').set('Accept', J).expect(403);
    expect((await olga.get('/app/account/users').expect(403)).text).toContain('Only an admin');
    await request(lab.app).get('/app/account/users').set('Accept', J).expect(401);
    expect((await request(lab.app).get('/app/account/users').expect(302)).headers.location).toContain('/app/auth/login');
  });

  it('makes an operator an admin and back, at once for their session and token; audit-logged; 302 back with a notice', async () => {
    const pia = await signupAndLogin(lab.app, 'pia');
    const token = await tokenOf(pia);
    const id = await idOf('pia');
    await pia.post('/app/account/signup').set('Accept', J).send({ open: true }).expect(403);
    await asToken(token).expect(200); // the token is now cached with pia's role

    const up = await lab.admin.post(`/app/account/users/${id}/role`).type('form').send({ role: 'admin' }).expect(302);
    expect(up.headers.location).toBe(`/app/account/users?done=role&user=${id}`);
    expect((await lab.admin.get(up.headers.location).expect(200)).text).toContain('pia is now an admin.');
    await pia.post('/app/account/signup').set('Accept', J).send({ open: true }).expect(200);
    await request(lab.app).post('/app/account/signup').set('Authorization', `Bearer ${token}`).send({ open: true }).expect(200);
    expect(await lastAudit('user.role')).toMatchObject({ userId: await idOf('ada'), detail: { user_id: id, username: 'pia', from: 'operator', to: 'admin' } });

    const down = await lab.admin.post(`/app/account/users/${id}/role`).set('Accept', J).send({ role: 'operator' }).expect(200);
    expect(down.body.user).toMatchObject({ id, username: 'pia', role: 'operator', disabled: false });
    await pia.post('/app/account/signup').set('Accept', J).send({ open: true }).expect(403);
    await request(lab.app).post('/app/account/signup').set('Authorization', `Bearer ${token}`).send({ open: true }).expect(403);

    const bad = await lab.admin.post(`/app/account/users/${id}/role`).set('Accept', J).send({ role: 'root' }).expect(400);
    expect(bad.body.error.details).toEqual([{ field: 'role', message: 'must be admin or operator' }]);
    // the page shows the error on the users page
    const badPage = await lab.admin.post(`/app/account/users/${id}/role`).type('form').send({}).expect(400);
    expect(badPage.text).toContain('role must be');
    expect(badPage.text).toContain('<h1 class="h3">Users</h1>');
  });

  it('never leaves the lab without an admin who can log in: the last one cannot be demoted, disabled or deleted', async () => {
    const adaId = await idOf('ada');
    const demote = await lab.admin.post(`/app/account/users/${adaId}/role`).set('Accept', J).send({ role: 'operator' }).expect(409);
    expect(demote.body.error.message).toContain('ada is the last admin who can log in');
    expect(demote.body.error.details).toEqual([{ field: 'user_id', message: 'the last admin' }]);
    // with a second admin, ada may step down; then the other is the last one
    const quinn = await signupAndLogin(lab.app, 'quinn');
    const quinnId = await idOf('quinn');
    await lab.admin.post(`/app/account/users/${quinnId}/role`).set('Accept', J).send({ role: 'admin' }).expect(200);
    await quinn.post(`/app/account/users/${quinnId}/delete`).set('Accept', J).expect(409); // not themselves
    const stepDown = await lab.admin.post(`/app/account/users/${adaId}/role`).type('form').send({ role: 'operator' }).expect(302);
    expect(stepDown.headers.location).toBe('/app/account'); // no longer allowed on the users page
    await lab.admin.get('/app/account/users').set('Accept', J).expect(403);
    for (const action of ['disable', 'delete']) {
      const res = await quinn.post(`/app/account/users/${quinnId}/${action}`).set('Accept', J).expect(409);
      expect(res.body.error.message).toMatch(/your own account/);
    }
    expect((await quinn.post(`/app/account/users/${quinnId}/role`).set('Accept', J).send({ role: 'operator' }).expect(409)).body.error.message).toContain('quinn is the last admin');
    // a disabled admin does not count: ada back as admin, quinn disabled by ada, then ada is the last one again
    await quinn.post(`/app/account/users/${adaId}/role`).set('Accept', J).send({ role: 'admin' }).expect(200);
    await lab.admin.post(`/app/account/users/${quinnId}/disable`).set('Accept', J).expect(200);
    await lab.admin.post(`/app/account/users/${adaId}/role`).set('Accept', J).send({ role: 'operator' }).expect(409);
    await lab.admin.post(`/app/account/users/${quinnId}/enable`).set('Accept', J).expect(200);
    await lab.admin.post(`/app/account/users/${quinnId}/role`).set('Accept', J).send({ role: 'operator' }).expect(200);
  });

  it('of any number of admins demoting each other at once, one stays an admin', async () => {
    const names = ['r1', 'r2', 'r3'];
    const agents = await Promise.all(names.map((n) => signupAndLogin(lab.app, n)));
    const ids = await Promise.all(names.map(idOf));
    for (const id of ids) await lab.admin.post(`/app/account/users/${id}/role`).set('Accept', J).send({ role: 'admin' }).expect(200);
    const adaId = await idOf('ada');
    // ada steps down first (r1..r3 remain); then each of them demotes all of the others and itself at once
    await lab.admin.post(`/app/account/users/${adaId}/role`).set('Accept', J).send({ role: 'operator' }).expect(200);
    const answers = await Promise.all(agents.flatMap((a) => ids.map((id) => a.post(`/app/account/users/${id}/role`).set('Accept', J).send({ role: 'operator' }))));
    expect(answers.every((r) => r.status === 200 || r.status === 409 || r.status === 403)).toBe(true);
    const admins = (await lab.runtime.accounts.users()).filter((u) => u.role === 'admin');
    expect(admins).toHaveLength(1);
    // whoever is left makes ada an admin again
    const left = agents[ids.indexOf(admins[0].id)];
    await left.post(`/app/account/users/${adaId}/role`).set('Accept', J).send({ role: 'admin' }).expect(200);
  });

  it('resets a password: the admin types the new one twice; the user logs in with it, their sessions end, their tokens stay', async () => {
    const rosa = await signupAndLogin(lab.app, 'rosa');
    const token = await tokenOf(rosa);
    const id = await idOf('rosa');
    const mismatch = await lab.admin.post(`/app/account/users/${id}/password`).set('Accept', J).send({ new_password: 'a new secret', confirm_password: 'a new secrte' }).expect(400);
    expect(mismatch.body.error.details).toEqual([{ field: 'confirm_password', message: 'does not match new_password' }]);
    const short = await lab.admin.post(`/app/account/users/${id}/password`).set('Accept', J).send({ new_password: 'short' }).expect(400);
    expect(short.body.error.details[0].field).toBe('new_password');
    const ok = await lab.admin.post(`/app/account/users/${id}/password`).type('form').send({ new_password: 'a new secret', confirm_password: 'a new secret' }).expect(302);
    expect((await lab.admin.get(ok.headers.location).expect(200)).text).toContain('rosa&#x27;s password was reset');
    await rosa.get('/app/account').set('Accept', J).expect(401);
    await asToken(token).expect(200);
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'rosa', password: PASSWORD }).expect(401);
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'rosa', password: 'a new secret' }).expect(302);
    const audit = await lastAudit('user.password');
    expect(audit).toMatchObject({ detail: { user_id: id, username: 'rosa', sessions_ended: 1 } });
    expect(JSON.stringify(audit)).not.toContain('a new secret');
    // your own password is changed on the change-password form, which asks for the current one
    const self = await lab.admin
      .post(`/app/account/users/${await idOf('ada')}/password`)
      .set('Accept', J)
      .send({ new_password: 'a new secret' })
      .expect(409);
    expect(self.body.error.message).toContain('Change password');
  });

  it('disables an account: no log-in, its sessions and API tokens stop working; enabling lets it back in', async () => {
    const sam = await signupAndLogin(lab.app, 'sam');
    const token = await tokenOf(sam);
    await asToken(token).expect(200); // cached: disabling must not wait for the cache
    const id = await idOf('sam');
    const off = await lab.admin.post(`/app/account/users/${id}/disable`).type('form').expect(302);
    expect((await lab.admin.get(off.headers.location).expect(200)).text).toContain('sam is disabled');
    await sam.get('/app/account').set('Accept', J).expect(401);
    await asToken(token).expect(401);
    const login = await request(lab.app).post('/app/auth/login').type('form').send({ username: 'sam', password: PASSWORD }).expect(403);
    expect(login.text).toContain('is disabled: ask an admin');
    // a wrong password says nothing about the account's state
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'sam', password: 'wrong-wrong' }).expect(401);
    expect((await lab.admin.get('/app/account/users').set('Accept', J)).body.users.find((u: { id: number }) => u.id === id)).toMatchObject({ disabled: true });
    expect(await lastAudit('user.disable')).toMatchObject({ detail: { user_id: id, username: 'sam', sessions_ended: 1 } });

    const on = await lab.admin.post(`/app/account/users/${id}/enable`).set('Accept', J).expect(200);
    expect(on.body.user).toMatchObject({ id, disabled: false });
    await asToken(token).expect(200);
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'sam', password: PASSWORD }).expect(302);
    expect(await lastAudit('user.enable')).toMatchObject({ detail: { user_id: id, username: 'sam' } });
  });

  it('deletes an account: it cannot log in, its tokens go, its records keep its name, and the name is not free again', async () => {
    const tess = await signupAndLogin(lab.app, 'tess');
    const token = await tokenOf(tess);
    const id = await idOf('tess');
    const run = await lab.runtime.store.runs.create({
      taskId: null,
      name: 'tess run',
      workflowName: 'w',
      workflowVersion: 1,
      workflow: { name: 'w', outputs: [] },
      parameters: [{}],
      status: 'completed',
      userId: id,
      startedAt: new Date(),
    });
    const gone = await lab.admin.post(`/app/account/users/${id}/delete`).type('form').expect(302);
    expect((await lab.admin.get(gone.headers.location).expect(200)).text).toContain('tess was deleted');
    await tess.get('/app/account').set('Accept', J).expect(401);
    await asToken(token).expect(401);
    expect(await lab.runtime.store.tokens.list(id)).toEqual([]);
    await request(lab.app).post('/app/auth/login').type('form').send({ username: 'tess', password: PASSWORD }).expect(401);
    const users = (await lab.admin.get('/app/account/users').set('Accept', J)).body.users as { username: string }[];
    expect(users.map((u) => u.username)).not.toContain('tess');
    // what tess made stays hers
    const record = await lab.admin.get(`/app/executions/records/${run.id}`).set('Accept', J).expect(200);
    expect(record.body).toMatchObject({ user_id: id, user: 'tess' });
    const again = await request(lab.app).post('/app/auth/signup').set('Accept', J).send({ username: 'tess', password: PASSWORD }).expect(409);
    expect(again.body.error.message).toContain('belonged to an account that was deleted');
    expect(await lastAudit('user.delete')).toMatchObject({ detail: { user_id: id, username: 'tess', sessions_ended: 1 } });
    // a deleted account is gone for every action
    for (const action of ['disable', 'enable', 'delete']) await lab.admin.post(`/app/account/users/${id}/${action}`).set('Accept', J).expect(404);
    await lab.admin.post(`/app/account/users/${id}/role`).set('Accept', J).send({ role: 'admin' }).expect(404);
    await lab.admin.post(`/app/account/users/${id}/password`).set('Accept', J).send({ new_password: 'resurrected!' }).expect(404);
    await lab.admin.post('/app/account/users/abc/delete').set('Accept', J).expect(400);
    await lab.admin.post('/app/account/users/999999/delete').set('Accept', J).expect(404);
  });

  it('refuses a body field an action does not take, by name, before acting; the users page shows the message', async () => {
    await signupAndLogin(lab.app, 'vic');
    const id = await idOf('vic');
    for (const [path, body] of [
      ['role', { role: 'admin' }],
      ['password', { new_password: 'some password' }],
      ['disable', {}],
      ['enable', {}],
      ['delete', {}],
    ] as const) {
      const res = await lab.admin
        .post(`/app/account/users/${id}/${path}`)
        .set('Accept', J)
        .send({ ...body, colour: 'red' });
      expect({ path, status: res.status, details: res.body.error?.details }).toEqual({
        path,
        status: 400,
        details: [{ field: 'colour', message: expect.stringMatching(/^is not a field of this request/) }],
      });
    }
    const page = await lab.admin.post(`/app/account/users/${id}/disable`).type('form').send({ colour: 'red' }).expect(400);
    expect(page.text).toContain('<h1 class="h3">Users</h1>');
    expect(page.text).toContain('<code>colour</code> is not a field of this request');
    expect(await lab.runtime.store.users.byId(id)).toMatchObject({ role: 'operator', disabledAt: null, deletedAt: null });
  });

  it('lets only admins act, checks the admin before the id, and refuses cross-site form posts', async () => {
    const uma = await signupAndLogin(lab.app, 'uma');
    const id = await idOf('uma');
    for (const [path, body] of [
      ['role', { role: 'admin' }],
      ['password', { new_password: 'some password' }],
      ['disable', {}],
      ['enable', {}],
      ['delete', {}],
    ] as const) {
      await uma.post(`/app/account/users/${id}/${path}`).set('Accept', J).send(body).expect(403);
      await uma.post(`/app/account/users/junk/${path}`).set('Accept', J).send(body).expect(403);
      await request(lab.app).post(`/app/account/users/${id}/${path}`).set('Accept', J).send(body).expect(401);
      await lab.admin.post(`/app/account/users/${id}/${path}`).set('Origin', 'http://evil.example').type('form').send(body).expect(403);
    }
    expect(await lab.runtime.store.users.byId(id)).toMatchObject({ role: 'operator', disabledAt: null, deletedAt: null });
  });
});
