/**
 * Who may call a route is its declaration (issue 27 item 2), not where it is mounted: every route of the
 * catalogue is asked by nobody logged in (a `login` or `admin` route: 401 for a script, the login form for a
 * page) and by an operator (an `admin` route: 403), whatever router holds it; a path no route declares is
 * answered by the gate as before. And the API document cannot drift from what a handler sends: a JSON answer
 * that does not fit its route's declared schema is a 500 under test (server/answer-check.ts).
 */
import { jest } from '@jest/globals';
import express, { Router } from 'express';
import request from 'supertest';
import { checkGroup, routeGroup, type Catalogue } from '../../server/catalogue.js';
import { handle, route, type Route } from '../../server/route.js';
import { json } from '../../server/api-doc.js';
import { answerProblem } from '../../server/answer-check.js';
import { CATALOGUE } from '../helpers/catalogue.js';
import { signupAndLogin, startLab, type TestLab } from './helpers.js';

const J = 'application/json';
/** A route's path under /app with each parameter filled (the access check comes before the input is read). */
const pathOf = (r: Route) => `/app${r.path.replace(/\{\w+\}/g, '1')}`;
const ask = (agent: ReturnType<typeof request.agent> | ReturnType<typeof request>, r: Route) =>
  (agent as ReturnType<typeof request.agent>)[r.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](pathOf(r));

describe('access is the route declaration, on every route', () => {
  let lab: TestLab;
  let catalogue: Catalogue;
  let operator: Awaited<ReturnType<typeof signupAndLogin>>;
  beforeAll(async () => {
    lab = await startLab();
    catalogue = lab.app.locals.catalogue as Catalogue;
    operator = await signupAndLogin(lab.app, 'olga');
  });
  afterAll(() => lab.close());

  it('refuses nobody logged in on every login and admin route: 401 JSON for a script, the login form for a page', async () => {
    const gated = catalogue.routes.filter((r) => r.access !== 'public');
    expect(gated.length).toBeGreaterThan(50);
    for (const r of gated) {
      const res = await ask(request(lab.app), r).set('Accept', J);
      expect({ route: r.key, status: res.status, code: res.body?.error?.code }).toEqual({ route: r.key, status: 401, code: 'unauthenticated' });
      const page = await ask(request(lab.app), r).set('Accept', 'text/html');
      const next = r.method === 'GET' ? `?next=${encodeURIComponent(pathOf(r))}` : '';
      expect({ route: r.key, status: page.status, location: page.headers.location }).toEqual({ route: r.key, status: 302, location: `/app/auth/login${next}` });
    }
  });

  it('refuses an operator on every admin route (403), before reading its input', async () => {
    const admin = catalogue.routes.filter((r) => r.access === 'admin');
    expect(admin.length).toBeGreaterThan(5);
    for (const r of admin) {
      const res = await ask(operator, r).set('Accept', J);
      expect({ route: r.key, status: res.status, code: res.body?.error?.code }).toEqual({ route: r.key, status: 403, code: 'forbidden' });
    }
  });

  it('answers a path no route declares as the gate always did: the login form or 401, and 404 to a user', async () => {
    await request(lab.app).get('/app/no-such-page').expect(302).expect('Location', '/app/auth/login?next=%2Fapp%2Fno-such-page');
    expect((await request(lab.app).get('/app/no-such-page').set('Accept', J).expect(401)).body.error.code).toBe('unauthenticated');
    expect((await operator.get('/app/no-such-page').set('Accept', J).expect(404)).body.error.code).toBe('not_found');
    // a method the path's route does not serve is not found either, after the login
    await request(lab.app).delete('/app/healthz').set('Accept', J).expect(401);
    await operator.delete('/app/healthz').set('Accept', J).expect(404);
  });

  it('keeps a public route public and answers a health check to nobody logged in', async () => {
    await request(lab.app).get('/app/healthz').expect(200);
  });

  it("answers OPTIONS (express's list of a path's methods) to nobody logged in on public paths only, as before", async () => {
    await request(lab.app).options('/app/auth/login').expect(200).expect('Allow', 'GET, HEAD, POST');
    await request(lab.app).options('/app/workflows').expect(302).expect('Location', '/app/auth/login');
    await request(lab.app).options('/app/instruments/pump').set('Accept', J).expect(401);
    await operator.options('/app/workflows').expect(200).expect('Allow', 'GET, HEAD, POST');
  });

  it('answers a path express cannot decode (`%ZZ`) to nobody logged in with the gate, to a user with 400, on a public path as that route does', async () => {
    await request(lab.app).post('/app/approvals/%ZZ/approve').type('form').send({}).expect(302).expect('Location', '/app/auth/login');
    expect((await request(lab.app).put('/app/executions/campaigns/6/points/%ZZ').set('Accept', J).send({}).expect(401)).body.error.code).toBe('unauthenticated');
    await operator.post('/app/approvals/%ZZ/approve').set('Accept', J).send({}).expect(400);
    await request(lab.app).get('/app/static/%ZZ').expect(404); // a public path: no gate (no such file)
  });
});

describe('a route checks its own access, on any router', () => {
  const mine = route({ method: 'GET', path: '/mine', section: 'Home', summary: 'Mine', operationId: 'mine', responses: { 200: json('Mine', 'Health') } });
  const admins = route({ method: 'GET', path: '/admins', section: 'Home', summary: 'Admins', operationId: 'admins', access: 'admin', responses: { 200: json('Admins', 'Health') } });

  it('a login route mounted with no login gate before it refuses nobody logged in, and an admin route an operator', async () => {
    const app = express();
    const r = Router();
    r.use((req, _res, next) => {
      if (req.headers['x-who'] === 'operator') req.user = { id: 2, username: 'olga', role: 'operator' } as never;
      next();
    });
    handle(r, mine, (_req, res) => res.json({ ok: true, instruments: 0 }));
    handle(r, admins, (_req, res) => res.json({ ok: true, instruments: 0 }));
    app.use(r);
    app.use(((e, _req, res, _next) => res.status(e.code === 'forbidden' ? 403 : e.code === 'unauthenticated' ? 401 : 500).json({ code: e.code })) as express.ErrorRequestHandler);
    expect((await request(app).get('/mine').set('Accept', J)).status).toBe(401);
    expect((await request(app).get('/mine')).headers.location).toBe('/auth/login?next=%2Fmine');
    expect((await request(app).get('/mine').set('x-who', 'operator')).status).toBe(200);
    expect((await request(app).get('/admins').set('x-who', 'operator').set('Accept', J)).status).toBe(403);
  });
});

describe('a group declares what it mounts and mounts what it declares', () => {
  const one = route({ method: 'GET', path: '/one/{id}', section: 'Home', summary: 'One', operationId: 'one', responses: { 200: json('One', 'Health') } });
  const two = route({ method: 'POST', path: '/two', section: 'Home', summary: 'Two', operationId: 'two', responses: { 200: json('Two', 'Health') } });
  const ok = (_req: unknown, res: express.Response) => void res.json({ ok: true, instruments: 0 });

  it('takes a group whose routers register exactly its routes, with handle', () => {
    const r = Router();
    handle(r, one, ok);
    handle(r, two, ok);
    expect(() => checkGroup(routeGroup({ name: 'things', routes: { one, two } }), [r])).not.toThrow();
  });

  it('refuses a route it does not declare, one registered without handle, and one it declares but does not mount', () => {
    const stray = Router();
    handle(stray, one, ok);
    handle(stray, two, ok);
    expect(() => checkGroup(routeGroup({ name: 'things', routes: [one] }), [stray])).toThrow('The route group things registers routes it does not declare: POST /two');
    const raw = Router();
    handle(raw, one, ok);
    raw.post('/two', ok);
    expect(() => checkGroup(routeGroup({ name: 'things', routes: [one, two] }), [raw])).toThrow('The route group things registers POST /two without handle(router, ROUTE, fn)');
    const short = Router();
    handle(short, one, ok);
    expect(() => checkGroup(routeGroup({ name: 'things', routes: [one, two] }), [short])).toThrow('The route group things declares routes it does not mount: POST /two');
    expect(() => checkGroup(routeGroup({ name: 'things', routes: [one, two], servedByMiddleware: [two] }), [short])).not.toThrow();
  });
});

describe('a JSON answer fits its route declaration', () => {
  it('has a zod schema for every component a JSON answer of a route names', () => {
    const named = CATALOGUE.routes.flatMap((r) =>
      Object.entries(r.responses)
        .filter(([, resp]) => typeof resp.content?.['application/json']?.schema.$ref === 'string')
        .map(([status]) => ({ route: `${r.key} ${status}`, zod: !!r.answers[status] })),
    );
    expect(named.length).toBeGreaterThan(80);
    expect(named.filter((x) => !x.zod)).toEqual([]);
  });

  it('names the field that does not fit, a status the route does not declare, and an error that is not an Error', () => {
    const health = route({ method: 'GET', path: '/h', section: 'Home', summary: 'H', operationId: 'h', responses: { 200: json('Ready', 'Health'), 302: { description: 'Elsewhere' } } });
    expect(answerProblem(health, 200, { ok: true, instruments: 2 })).toBeNull();
    expect(answerProblem(health, 200, { ok: true, instruments: 'two' })).toMatch(/^GET \/h answered 200 with JSON that does not fit its declared schema: instruments: /);
    expect(answerProblem(health, 201, { ok: true })).toBe('GET /h answered 201, a status it does not declare');
    expect(answerProblem(health, 302, { ok: true })).toBe('GET /h answered 302 with JSON, but declares that status without a JSON body');
    expect(answerProblem(health, 404, { error: { code: 'not_found', message: 'No.' } })).toBeNull();
    expect(answerProblem(health, 404, { error: 'No.' })).toMatch(/answered 404 with JSON that does not fit/);
    // what the client reads is checked: a Date is its ISO text
    const account = route({ method: 'GET', path: '/d', section: 'Home', summary: 'D', operationId: 'd', responses: { 200: json('D', 'SignupState') } });
    expect(answerProblem(account, 200, { signup_open: true, at: new Date() })).toBeNull();
  });

  it('answers a handler that sends another shape than its declaration with a 500 naming it (under test), and lets it through when the check is off', async () => {
    const spoil = (lab: TestLab) => {
      (lab.runtime.ops.instruments as { local: () => unknown }).local = () => ({ length: 'many' });
    };
    const checked = await startLab();
    const plain = await startLab({}, { checkAnswers: false });
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      spoil(checked);
      spoil(plain);
      const res = await request(checked.app).get('/app/healthz').expect(500);
      expect(res.body.error.message).toMatch(/^The answer does not fit the API document: GET \/healthz answered 200 with JSON that does not fit its declared schema: instruments: /);
      expect(errors).toHaveBeenCalledWith(expect.stringContaining('GET /healthz answered 200'));
      expect((await request(plain.app).get('/app/healthz').expect(200)).body).toEqual({ ok: true, instruments: 'many' });
    } finally {
      errors.mockRestore();
      await checked.close();
      await plain.close();
    }
  });
});
