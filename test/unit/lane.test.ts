/** The direct lane (server/lane.ts): a call goes straight to its route, and is answered as the router would. */
import express, { Router, type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { directLane, fixedHeaders } from '../../server/fast/lane.js';

const CALL = { method: 'POST', expressPath: '/things/:name' };

/** An app shaped like labdeck's: middleware, then sub-routers; `/app` and `/` mounts; the lane in front. */
function build(extra?: (top: Router) => void) {
  const log: string[] = [];
  const mark =
    (name: string): RequestHandler =>
    (req, _res, next) => (log.push(`${name} ${req.baseUrl}${req.url}`), next());
  const router = Router();
  router.use(mark('guard'));
  router.use(express.json({ limit: 100 }));
  router.use(mark('auth'));
  const forms = Router();
  forms.post('/things/new', (_req, res) => res.json({ by: 'new-form' }));
  forms.get('/other', (_req, res) => res.json({ by: 'other' }));
  router.use(forms);
  router.use('/static', (_req, res) => res.json({ by: 'static' }));
  extra?.(router);
  const things = Router();
  things.get('/things/:name', (req, res) => res.json({ by: 'page', name: req.params.name }));
  things.post('/things/:name', async (req: Request, res) => {
    if (req.body?.fail) throw Object.assign(new Error(`cannot ${req.body.fail}`), { status: 409 });
    res.json({ by: 'call', name: req.params.name, base: req.baseUrl, url: req.url, body: req.body });
  });
  things.post('/things/:name/more', (_req, res) => res.json({ by: 'more' }));
  router.use(things);
  const onError: ErrorRequestHandler = (e: { status?: number; message: string }, _req, res, _next) => {
    res.status(e.status ?? 500).json({ error: e.message });
  };
  router.use(onError);
  const app = express();
  let viaRouter = 0;
  app.use(directLane(router, CALL, ['/app', ''], onError));
  app.use((_req, _res, next) => (viaRouter++, next()));
  app.use('/app', router);
  app.use('/', router);
  return { app, log, viaRouter: () => viaRouter };
}

it("takes a call under either mount, through the router's middleware in order, with the route's parameters", async () => {
  const { app, log, viaRouter } = build();
  const r = await request(app).post('/app/things/pump-1').send({ volume: 2 });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({ by: 'call', name: 'pump-1', base: '/app', url: '/things/pump-1', body: { volume: 2 } });
  expect(log).toEqual(['guard /app/things/pump-1', 'auth /app/things/pump-1']);
  const root = await request(app).post('/things/pump.2').send({});
  expect(root.body).toMatchObject({ by: 'call', name: 'pump.2', base: '', url: '/things/pump.2' });
  expect(viaRouter()).toBe(0);
});

it('leaves to the router what another route owns or what is not one plain value, and the same routes answer', async () => {
  const { app, viaRouter } = build();
  const cases: [string, string, unknown][] = [
    ['post', '/app/things/new', { by: 'new-form' }],
    ['post', '/app/things/NEW', { by: 'new-form' }], // the router matches without regard to case
    ['post', '/app/things/a%20b', { by: 'call', name: 'a b' }],
    ['post', '/app/things/a?x=1', { by: 'call', name: 'a' }],
    ['post', '/app/things/a/', { by: 'call', name: 'a' }],
    ['post', '/app/things/a/more', { by: 'more' }],
    ['get', '/app/things/a', { by: 'page', name: 'a' }],
    ['post', '/App/things/a', { by: 'call', name: 'a' }],
  ];
  for (const [method, path, body] of cases) {
    const r = await (method === 'get' ? request(app).get(path) : request(app).post(path).send({}));
    expect({ path, body: r.body }).toMatchObject({ path, body });
  }
  expect(viaRouter()).toBe(cases.length);
});

it("answers a failing middleware's error and a handler's rejection through the router's error handler", async () => {
  const { app, log } = build();
  const bad = await request(app).post('/app/things/a').set('content-type', 'application/json').send('{"x":');
  expect(bad.status).toBe(400);
  expect(log).toEqual(['guard /app/things/a']); // the body parser refused: auth never ran
  const big = await request(app)
    .post('/app/things/a')
    .send({ pad: 'x'.repeat(200) });
  expect(big.status).toBe(413);
  const failed = await request(app).post('/app/things/a').send({ fail: 'pump' });
  expect(failed.status).toBe(409);
  expect(failed.body).toEqual({ error: 'cannot pump' });
});

it('refuses to be made for a router it cannot read with certainty', () => {
  const sub = (fn: (r: Router) => void) => (top: Router) => {
    const r = Router();
    fn(r);
    top.use(r);
  };
  // a route that could take any value, before the call's
  expect(() => build(sub((r) => r.post('/things/:other', (_q, s) => s.end())))).toThrow(/could take requests/);
  expect(() => build(sub((r) => r.all('/things/:other', (_q, s) => s.end())))).toThrow(/could take requests/);
  expect(() => build(sub((r) => r.post('/things{/:x}', (_q, s) => s.end())))).toThrow(/could take requests/);
  expect(() => build(sub((r) => r.post('/:area/:name', (_q, s) => s.end())))).toThrow(/could take requests/);
  // middleware inside a sub-router runs only on some paths: the lane could not place it
  expect(() => build(sub((r) => r.use((_q, _s, n) => n())))).toThrow(/cannot place/);
  // middleware mounted where the lane's requests go
  expect(() => build((top) => top.use('/things', (_q, _s, n) => n()))).toThrow(/mounted where/);
  // a route of the same path and another method, or a literal value, is fine
  expect(() => build(sub((r) => r.put('/things/:other', (_q, s) => s.end())))).not.toThrow();
  expect(() => build(sub((r) => r.post('/things/special', (_q, s) => s.end())))).not.toThrow();
  expect(() => directLane(Router(), CALL, [''], (_e, _q, _s, n) => n())).toThrow(/no route/);
});

it("sets helmet's headers as helmet sets them", async () => {
  const options = { contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'self'"] } }, strictTransportSecurity: false, referrerPolicy: { policy: 'same-origin' as const } };
  const answer = (mw: RequestHandler) => {
    const app = express();
    app.use(mw);
    app.get('/', (_req, res) => res.json({}));
    return request(app).get('/');
  };
  const [a, b] = await Promise.all([answer(helmet(options)), answer(fixedHeaders(helmet(options)))]);
  const strip = (h: Record<string, string>) => ({ ...h, date: undefined });
  expect(strip(b.headers)).toEqual(strip(a.headers));
  expect(b.headers['content-security-policy']).toBe("default-src 'self'");
  expect(b.headers['x-powered-by']).toBeUndefined();
});

it("hands what the error handler itself throws to express's final handler, as the router does", async () => {
  const router = Router();
  router.post('/things/:name', () => {
    throw new Error('first');
  });
  const app = express();
  app.use(
    directLane(router, CALL, [''], async () => {
      throw new Error('the error page failed too');
    }),
  );
  app.use(router);
  const r = await request(app).post('/things/a').send({});
  expect(r.status).toBe(500);
});
