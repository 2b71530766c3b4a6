/** One declaration per route (server/route.ts): the input a handler gets, and the 400s before it runs. */
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import { errorBody, statusOf } from '../../server/http.js';
import { ID, handle, route } from '../../server/route.js';

const SAMPLE = route({
  method: 'POST',
  path: '/things/{id}',
  section: 'Test',
  summary: 'A sample',
  operationId: 'sample',
  params: z.object({ id: ID }),
  query: z.object({ verbose: z.enum(['yes', 'no']).optional() }),
  body: {
    schema: z.object({
      name: z.string().min(1),
      count: z.int().min(1).optional(),
      ratio: z.number().optional(),
      on: z.boolean().optional(),
      tags: z.array(z.string()).optional(),
    }),
    extra: /^arg\./,
  },
  responses: {},
});
const ADMIN_ONLY = route({ method: 'POST', path: '/admin', section: 'Test', summary: 'admin', operationId: 'admin', access: 'admin', body: { schema: z.object({ x: z.string() }) }, responses: {} });

function app(role: 'admin' | 'operator' = 'operator') {
  const a = express();
  a.use(express.json());
  a.use(express.urlencoded({ extended: false }));
  a.use(express.text({ type: 'text/plain' }));
  a.use((req, _res, next) => {
    req.user = { id: 1, username: 'u', role };
    next();
  });
  const r = Router();
  handle(r, SAMPLE, (_req, res, input) => void res.json(input));
  handle(r, ADMIN_ONLY, (_req, res, input) => void res.json(input.body));
  handle(
    r,
    route({ method: 'POST', path: '/form', section: 'Test', summary: 'form', operationId: 'form', body: { schema: z.object({ n: z.int() }) }, responses: {} }),
    () => undefined,
    (_req, res, err) => void res.status(400).type('html').send(`<form>again: ${err.message}</form>`),
  );
  a.use(r);
  a.use((e: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const err = e instanceof LabError ? e : new LabError('internal', String(e));
    res.status(statusOf(err)).json(errorBody(err));
  });
  return a;
}

describe('handle(route)', () => {
  it('gives the handler the parsed path, query and body; a form is read into the schema types', async () => {
    const json = await request(app())
      .post('/things/7?verbose=yes&other=1')
      .send({ name: 'a', count: 2, tags: ['x'] })
      .expect(200);
    expect(json.body).toEqual({ params: { id: 7 }, query: { verbose: 'yes' }, body: { name: 'a', count: 2, tags: ['x'] } });
    const form = await request(app()).post('/things/7').type('form').send('name=a&count=3&ratio=0.5&on=on&tags=x&tags=y&arg.volume=2').expect(200);
    expect(form.body.body).toEqual({ name: 'a', count: 3, ratio: 0.5, on: true, tags: ['x', 'y'], 'arg.volume': '2' });
    // an empty optional field of a form is left out
    expect((await request(app()).post('/things/7').type('form').send('name=a&count=').expect(200)).body.body).toEqual({ name: 'a' });
  });

  it('refuses a body field the route does not take, by name, listing the fields it takes', async () => {
    const res = await request(app()).post('/things/7').send({ name: 'a', colour: 'red', __proto__x: 1 }).expect(400);
    expect(res.body.error.details).toEqual([
      { field: 'colour', message: 'is not a field of this request (its fields: name, count, ratio, on, tags)' },
      { field: '__proto__x', message: 'is not a field of this request (its fields: name, count, ratio, on, tags)' },
    ]);
    // a form field named like an Object.prototype member is an unknown field like any other (it was a 500)
    const form = await request(app()).post('/things/7').type('form').send('name=a&toString=1&constructor=2').expect(400);
    expect(form.body.error.details.map((d: { field: string }) => d.field)).toEqual(['toString', 'constructor']);
  });

  it('names every field that does not fit, path, query and body at once, before the handler runs', async () => {
    const res = await request(app()).post('/things/0?verbose=maybe').type('form').send('count=two&on=perhaps').expect(400);
    expect(res.body.error.code).toBe('invalid_input');
    expect(res.body.error.message).toMatch(/^The request does not fit POST \/things\/\{id\}: /);
    expect(res.body.error.details).toEqual([
      { field: 'id', message: 'must be at least 1' },
      { field: 'verbose', message: 'must be one of "yes", "no"' },
      { field: 'name', message: 'is required' },
      { field: 'count', message: 'must be a number' },
      { field: 'on', message: 'must be a boolean' },
    ]);
    expect((await request(app()).post('/things/99999999999').send({ name: 'a' }).expect(400)).body.error.details).toEqual([{ field: 'id', message: 'must be a whole number' }]);
  });

  it('refuses a body of a kind the route does not read, and a JSON body that is not an object', async () => {
    expect((await request(app()).post('/things/1').type('text/plain').send('name=a').expect(400)).body.error.details).toEqual([
      { field: '(body)', message: 'must be JSON or a form (application/x-www-form-urlencoded), not plain text' },
    ]);
    expect((await request(app()).post('/things/1').send([1, 2]).expect(400)).body.error.details).toEqual([{ field: '(body)', message: 'must be an object of fields' }]);
  });

  it('checks the role before it reads the body', async () => {
    const res = await request(app('operator')).post('/admin').send({ nonsense: true }).expect(403);
    expect(res.body.error.code).toBe('forbidden');
    expect((await request(app('admin')).post('/admin').send({ x: 'y' }).expect(200)).body).toEqual({ x: 'y' });
  });

  it('enforces the access a route declares, not the order it is mounted in: no user, a login route answers 401 (JSON) or 302 to the login form', async () => {
    const open = route({ method: 'GET', path: '/open', section: 'Test', summary: 'open', operationId: 'open', access: 'public', responses: {} });
    const mine = route({ method: 'GET', path: '/mine', section: 'Test', summary: 'mine', operationId: 'mine', responses: {} });
    // no login gate in front of this router: the declarations alone decide
    const a = express();
    const r = Router();
    handle(r, open, (_req, res) => void res.json({ open: true }));
    handle(r, mine, (_req, res) => void res.json({ mine: true }));
    handle(r, ADMIN_ONLY, (_req, res) => void res.json({ admin: true }));
    a.use(r);
    a.use((e: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const err = e instanceof LabError ? e : new LabError('internal', String(e));
      res.status(statusOf(err)).json(errorBody(err));
    });
    expect((await request(a).get('/open').expect(200)).body).toEqual({ open: true });
    expect((await request(a).get('/mine').set('Accept', 'application/json').expect(401)).body.error.code).toBe('unauthenticated');
    expect((await request(a).get('/mine').expect(302)).headers.location).toBe('/auth/login?next=%2Fmine');
    expect((await request(a).post('/admin').set('Accept', 'application/json').send({ x: 'y' }).expect(401)).body.error.code).toBe('unauthenticated');
  });

  it("answers a page's form that does not fit with the form again; JSON clients get the error", async () => {
    const page = await request(app()).post('/form').type('form').send('n=x').expect(400);
    expect(page.text).toBe('<form>again: The request does not fit POST /form: n must be a number</form>');
    const json = await request(app()).post('/form').set('Accept', 'application/json').send({ n: 'x' }).expect(400);
    expect(json.body.error.details).toEqual([{ field: 'n', message: 'must be a number' }]);
  });
});

describe('handle(route): a plain-text body, fields passed on from a form only', () => {
  const TEXT = route({
    method: 'POST',
    path: '/run',
    section: 'Test',
    summary: 'text',
    operationId: 'run',
    body: { kinds: ['json', 'form', 'text'], text: 'code', schema: z.object({ code: z.string().min(1), language: z.string().optional() }) },
    responses: {},
  });
  const CALL = route({
    method: 'POST',
    path: '/call',
    section: 'Test',
    summary: 'call',
    operationId: 'call',
    body: { schema: z.object({ method: z.string() }), extra: /^[a-z_]+$/, extraKinds: ['form'] },
    responses: {},
  });
  const app = () => {
    const a = express();
    a.use(express.json());
    a.use(express.urlencoded({ extended: false }));
    a.use(express.text({ type: 'text/plain' }));
    a.use((req, _res, next) => {
      req.user = { id: 1, username: 'u', role: 'operator' }; // logged in: these routes take any user
      next();
    });
    const r = Router();
    handle(r, TEXT, (_req, res, input) => void res.json(input.body));
    handle(r, CALL, (_req, res, input) => void res.json(input.body));
    a.use(r);
    a.use((e: unknown, _req: Request, res: Response, _next: NextFunction) => {
      const err = e instanceof LabError ? e : new LabError('internal', String(e));
      res.status(statusOf(err)).json(errorBody(err));
    });
    return a;
  };

  it('reads a plain-text body as the value of its field', async () => {
    expect((await request(app()).post('/run').type('text/plain').send('1 + 1').expect(200)).body).toEqual({ code: '1 + 1' });
    expect((await request(app()).post('/run').send({ code: '2', language: 'js' }).expect(200)).body).toEqual({ code: '2', language: 'js' });
    expect((await request(app()).post('/run').send({ code: '' }).expect(400)).body.error.details).toEqual([{ field: 'code', message: 'must not be empty' }]);
  });

  it('passes fields on from the kinds it names, and refuses them by name in the others', async () => {
    expect((await request(app()).post('/call').type('form').send('method=m&volume=2').expect(200)).body).toEqual({ method: 'm', volume: '2' });
    expect((await request(app()).post('/call').type('form').send('method=m&Volume=2').expect(400)).body.error.details).toEqual([
      { field: 'Volume', message: 'is not a field of this request (its fields: method)' },
    ]);
    expect((await request(app()).post('/call').send({ method: 'm', volume: 2 }).expect(400)).body.error.details).toEqual([
      { field: 'volume', message: 'is not a field of this request (its fields: method)' },
    ]);
  });
});
