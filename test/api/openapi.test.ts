/**
 * The API docs stay honest: the OpenAPI document is well formed and documents every declared route (each
 * declared once, beside its handler), the express app registers no route that is not declared, every
 * declared body refuses unknown fields, the statuses routes really answer are documented, and the live deck's
 * call bodies are in it.
 */
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import type { Response } from 'supertest';
import { CATALOGUE } from '../helpers/catalogue.js';
import { IVORYOS_ROUTES } from '../../server/ivoryos/routes.js';
import { buildOpenApi, type HttpMethod, type OpenApiDocument, type SchemaObject } from '../../server/openapi.js';
import type { App } from '../../server/app.js';
import { signupAndLogin, startLab, PASSWORD, type TestLab } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

const ROUTES = CATALOGUE.info;
const declaredRoutes = () => CATALOGUE.routes;
/** `POST /workflows/{name}`: how a route is named here (and in its declaration's `key`). */
const routeKey = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

const J = 'application/json';
/** A valid workflow on the demo deck, for the workflow routes' cases. */
const DOC_WF = { name: 'docs-wf', main: [{ kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' }], outputs: ['mass'] };
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/api/${name}`, import.meta.url));

// --- express 5 router internals (router 2.x): just what the walk needs -------------------------------------
interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  rawPath?: string | string[];
}
interface Registered {
  mount: string;
  method: string;
  path: string;
}

/** `/instruments/:instrument` → `/instruments/{instrument}` (and a `*rest` wildcard → `{rest}`) */
const toOpenApiPath = (p: string) => p.replace(/[:*](\w+)/g, '{$1}');

/**
 * Every route of the app, relative to the top-level mount it was found under (`/app`, `/`), and the paths
 * under which plain middleware serves files (express.static).
 */
function walkApp(app: App) {
  const routes: Registered[] = [];
  const mounts: Registered[] = [];
  const mountOf = (layer: Layer) => {
    if (!('rawPath' in layer)) throw new Error('express router internals changed: a layer has no rawPath');
    const p = layer.rawPath;
    if (typeof p !== 'string') throw new Error(`cannot document a mount on ${JSON.stringify(p)}`);
    return p === '/' ? '' : p;
  };
  const walk = (stack: Layer[], mount: string, prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const p of ([] as string[]).concat(layer.route.path)) {
          for (const [m, on] of Object.entries(layer.route.methods)) {
            if (on) routes.push({ mount, method: m.toUpperCase(), path: toOpenApiPath(prefix + p) });
          }
        }
      } else if (Array.isArray(layer.handle?.stack)) {
        // a nested router: at the top level its path is the mount, below it a prefix
        const at = mountOf(layer);
        if (mount === '#top') walk(layer.handle.stack, at || '/', '');
        else walk(layer.handle.stack, mount, prefix + at);
      } else if (mount !== '#top' && mountOf(layer)) {
        mounts.push({ mount, method: 'GET', path: prefix + mountOf(layer) });
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '#top', '');
  return { routes, mounts };
}

/** Every `$ref` and discriminator mapping in the document, with where it was found. */
function refsOf(v: unknown, at = '#', out: [string, string][] = []): [string, string][] {
  if (Array.isArray(v)) v.forEach((x, i) => refsOf(x, `${at}/${i}`, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string') out.push([at, x]);
      else if (k === 'mapping' && x && typeof x === 'object') for (const t of Object.values(x)) out.push([at, String(t)]);
      else refsOf(x, `${at}/${k}`, out);
    }
  }
  return out;
}

function pointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node;
}

const schema = (doc: OpenApiDocument, name: string) => doc.components.schemas[name] as SchemaObject & { properties: Record<string, SchemaObject> };

function expectWellFormed(doc: OpenApiDocument) {
  expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  expect(doc.info.title).toBeTruthy();
  expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
  const tags = new Set(doc.tags.map((t) => t.name));
  const ids = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    expect(path.startsWith('/app/')).toBe(true);
    const ops = Object.entries(item);
    expect(ops.length).toBeGreaterThan(0);
    for (const [method, op] of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(['get', 'post', 'put', 'patch', 'delete']).toContain(method);
      expect(Object.keys(op.responses).length).toBeGreaterThan(0);
      for (const [status, r] of Object.entries(op.responses)) {
        expect(status).toMatch(/^([1-5]\d\d|default)$/);
        expect(r.description).toBeTruthy();
      }
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      for (const t of op.tags) expect(tags.has(t)).toBe(true);
      // every path template has its path parameter, and no other path parameter exists
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
      expect({ where, params: declared.map((p) => p.name).sort() }).toEqual({ where, params: templated });
      for (const p of declared) expect(p.required).toBe(true);
    }
  }
  for (const [at, ref] of refsOf(doc)) {
    expect({ at, ref, resolves: pointer(doc, ref) !== undefined }).toEqual({ at, ref, resolves: true });
  }
  for (const name of Object.keys(doc.components.schemas)) expect(name).toMatch(/^[A-Za-z0-9._-]+$/);
}

/** A saved workflow that pings the no-op instrument once per iteration. */
let savedOnce = false;
async function savedWorkflowIn(lab: TestLab) {
  if (savedOnce) return;
  savedOnce = true;
  await lab.runtime.store.workflows.save('oa-ping', { name: 'oa-ping', main: [{ kind: 'call', instrument: 'noop', method: 'ping' }] }, null);
  // a campaign's workflow: a searched parameter x, a numeric output y
  await lab.runtime.store.workflows.save(
    'oa-camp',
    {
      name: 'oa-camp',
      parameters: [{ name: 'x', type: 'number', default: 0.5 }],
      outputs: ['y'],
      main: [{ kind: 'call', instrument: 'stirrer', method: 'set_speed', args: { rpm: { param: 'x' } }, save_as: 'y' }],
    },
    null,
  );
}

/** Wait until the runner has nothing to do. */
async function idleIn(lab: TestLab) {
  await waitFor(() => !lab.runtime.runner.status().busy, 'the runner to be idle');
}

/** A finished run record of `username` (with a log line unless `log` is false); its id. */
async function recordIn(lab: TestLab, username: string, log = true): Promise<number> {
  const user = await lab.runtime.store.users.byName(username);
  const run = await lab.runtime.store.runs.create({
    taskId: null,
    name: 'oa-record',
    workflowName: 'oa-ping',
    workflowVersion: 1,
    workflow: { name: 'oa-ping', outputs: [] },
    parameters: [{}],
    status: 'completed',
    userId: user!.id,
    startedAt: new Date(),
  });
  if (log) await lab.runtime.store.logs.add(run.id, 'info', 'done');
  return run.id;
}

/** The id of the account `username`, signed up first when there is none. */
async function userIn(lab: TestLab, username: string): Promise<number> {
  const have = await lab.runtime.store.users.byName(username);
  return have ? have.id : (await lab.runtime.accounts.signup(username, PASSWORD, { bypassClosed: true })).id;
}

/** DELETE of the record of a run that waits at a `pause` step (409), then the run is let go. */
async function deleteRunningRecord(lab: TestLab): Promise<{ status: number }> {
  const { runtime } = lab;
  await runtime.store.workflows.save('oa-hold', { name: 'oa-hold', main: [{ kind: 'pause', message: 'hold' }] }, null);
  await idleIn(lab);
  await runtime.runner.submit({ workflow: 'oa-hold', repeat: 1, userId: null });
  await waitFor(() => runtime.runner.status().waiting, 'the run to wait at its pause step');
  const runId = runtime.runner.status().current_task!.run_id!;
  const res = await lab.admin.delete(`/app/executions/records/${runId}`).set('Accept', J);
  await runtime.runner.pauseResume();
  await idleIn(lab);
  return res;
}

/** The status of the event stream, read from its headers (the stream itself never ends). */
async function sseStatus(lab: TestLab, token: string): Promise<{ status: number }> {
  const { createServer } = await import('node:http');
  const server = createServer(lab.app).listen(0);
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as { port: number }).port;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/app/executions/events`, { headers: { Authorization: `Bearer ${token}` } });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('event: hello');
    await reader.cancel();
    return { status: res.status };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

describe('the API document and the API page', () => {
  let lab: TestLab;
  let operator: Awaited<ReturnType<typeof signupAndLogin>>;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    lab = await startLab();
    operator = await signupAndLogin(lab.app, 'olga');
    doc = (await lab.admin.get('/app/openapi.json').expect(200)).body;
  });
  afterAll(() => lab.close());

  it('is OpenAPI 3.1 in shape: responses everywhere, path parameters declared, every $ref resolves', () => {
    expectWellFormed(doc);
    expect(doc.servers[0].url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(doc.info.description).toContain('also served at `/`');
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'labdeck.sid' });
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schema(doc, 'Error').properties.error).toMatchObject({ type: 'object', required: ['code', 'message'] });
  });

  it('documents every route under /app, with its section, summary, operationId and who may call it', () => {
    const declared = new Map(declaredRoutes().map((r) => [r.key, r]));
    for (const r of ROUTES) {
      const op = doc.paths[`/app${r.path}`]?.[r.method.toLowerCase() as HttpMethod];
      expect({ route: routeKey(r), documented: !!op }).toEqual({ route: routeKey(r), documented: true });
      expect(op!.tags).toEqual([r.section]);
      expect(op!.summary).toBe(r.summary);
      expect(op!.operationId).toBe(declared.get(routeKey(r))!.operationId);
      if (r.admin) expect(op!.responses['403']).toBeDefined();
      if (!r.public) expect(op!.responses['401']).toBeDefined();
    }
  });

  it('has each route declared once, and every declared body closed', () => {
    const declared = declaredRoutes();
    expect(declared.length).toBeGreaterThan(0);
    expect(new Set(declared.map((r) => r.key)).size).toBe(declared.length);
    // the list the home page shows is the declarations, each once
    expect(ROUTES.map(routeKey).sort()).toEqual(declared.map((r) => r.key).sort());
    // a declared body is a component of the document, refusing unknown fields unless the route passes some on
    for (const r of declared.filter((x) => x.body)) {
      const op = doc.paths[`/app${r.path}`]![r.method.toLowerCase() as HttpMethod]!;
      const ref = Object.values(op.requestBody!.content)[0]!.schema.$ref as string;
      const schema = doc.components.schemas[ref.split('/').pop()!]!;
      expect({ route: r.key, closed: schema.additionalProperties === false || !!schema.patternProperties }).toEqual({ route: r.key, closed: true });
    }
  });

  it('has in ROUTES every route the express app registers, and nothing it does not', () => {
    const { routes, mounts } = walkApp(lab.app);
    const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;
    const under = (m: string) =>
      routes
        .filter((r) => r.mount === m)
        .map(key)
        .sort();
    // one router, mounted at /app and at /, and the ivoryOS compatibility router at /ivoryos (its own list)
    expect([...new Set(routes.map((r) => r.mount))].sort()).toEqual(['/', '/app', '/ivoryos']);
    expect(under('/ivoryos')).toEqual(Object.values(IVORYOS_ROUTES).map(key).sort());
    expect(under('/')).toEqual(under('/app'));
    const documented = new Set(ROUTES.map(key));
    expect(under('/app').filter((k) => !documented.has(k))).toEqual([]);
    // plain middleware serving a path (express.static under /static) is documented by a route under it, and
    // a documented route is registered or served by such a middleware
    expect(mounts.length).toBeGreaterThan(0);
    for (const m of mounts) expect(ROUTES.some((r) => r.method === 'GET' && r.path.startsWith(`${m.path}/`))).toBe(true);
    const served = (k: string) => under('/app').includes(k) || mounts.some((m) => k.startsWith(`GET ${m.path}/`));
    expect([...documented].filter((k) => !served(k))).toEqual([]);
  });

  it('documents the statuses the routes really answer', async () => {
    const anon = () => request(lab.app);
    const fresh = () => signupAndLogin(lab.app, `u${Math.random().toString(36).slice(2, 8)}`);
    const token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'docs' }).expect(201)).body.token as string;
    const savedWorkflow = () => savedWorkflowIn(lab);
    const idle = () => idleIn(lab);
    // a manual campaign (issue 31) over oa-camp, made once: its points 1 to 3 are suggested at its start
    let manualId: number | null = null;
    const manual = async () => {
      if (manualId) return manualId;
      await savedWorkflow();
      const res = await lab.admin
        .post('/app/executions/campaign')
        .set('Accept', J)
        .send({ workflow: 'oa-camp', execution: 'manual', optimizer_type: 'random', parameters: 'x: 0..1', objectives: 'y:max', batch_size: 4 });
      return (manualId = res.body.campaign_id as number);
    };
    // an AI agent's MCP token, and a request of its waiting in the approval inbox (a hazardous call)
    let made: { token: string; row: { id: number; name: string } } | null = null;
    const agentToken = async () => (made ??= await lab.runtime.accounts.createToken(1, 'docs-agent', 'mcp'));
    const mcpToken = async () => (await agentToken()).token;
    const agentRequest = async () => {
      const { row } = await agentToken();
      const out = await lab.runtime.approvals.call({ user: { id: 1, username: 'ada', role: 'admin' }, token: { id: row.id, name: row.name } }, 'pump', 'dose', { volume_ml: 1 });
      if (!('request' in out)) throw new Error('a hazardous call should wait for approval');
      return out.request.id;
    };
    const cases: [string, number, () => Promise<Response | { status: number }>][] = [
      ['GET /', 200, () => lab.admin.get('/app/')],
      ['GET /', 302, () => anon().get('/app/')],
      ['GET /', 401, () => anon().get('/app/').set('Accept', J)],
      ['GET /help', 200, () => anon().get('/app/help')],
      ['GET /healthz', 200, () => anon().get('/app/healthz')],
      ['GET /logo', 404, () => anon().get('/app/logo')],
      ['POST /customize-logo', 400, () => lab.admin.post('/app/customize-logo').set('Accept', J).field('mode', 'purple')],
      ['POST /customize-logo', 403, () => operator.post('/app/customize-logo').set('Accept', J).field('mode', 'light')],
      ['POST /customize-logo', 302, () => lab.admin.post('/app/customize-logo').field('mode', 'light')],
      ['GET /auth/login', 200, () => anon().get('/app/auth/login')],
      ['GET /auth/login', 401, () => anon().get('/app/auth/login').set('Authorization', 'Bearer lab_nope')],
      ['POST /auth/login', 401, () => anon().post('/app/auth/login').type('form').send({ username: 'ada', password: 'wrong-wrong' })],
      ['POST /auth/login', 302, () => anon().post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD })],
      ['POST /auth/login', 403, () => anon().post('/app/auth/login').set('Origin', 'http://evil.example').type('form').send({ username: 'ada', password: PASSWORD })],
      ['GET /auth/signup', 200, () => anon().get('/app/auth/signup')],
      ['POST /auth/signup', 409, () => anon().post('/app/auth/signup').type('form').send({ username: 'ada', password: PASSWORD })],
      ['POST /auth/signup', 400, () => anon().post('/app/auth/signup').set('Accept', J).send({ username: 'x y', password: 'short' })],
      ['GET /auth/change-password', 200, () => lab.admin.get('/app/auth/change-password')],
      ['POST /auth/change-password', 401, () => operator.post('/app/auth/change-password').set('Accept', J).send({ old_password: 'not-it-at-all', new_password: 'another one' })],
      ['POST /auth/change-password', 400, () => operator.post('/app/auth/change-password').set('Accept', J).send({ old_password: PASSWORD, new_password: 'x' })],
      ['POST /auth/logout', 302, async () => (await fresh()).post('/app/auth/logout')],
      ['GET /auth/logout', 302, async () => (await fresh()).get('/app/auth/logout')],
      ['GET /account', 200, () => lab.admin.get('/app/account').set('Accept', J)],
      ['POST /account/tokens', 201, () => lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'x' })],
      ['POST /account/tokens', 403, () => lab.admin.post('/app/account/tokens').set('Origin', 'http://evil.example').type('form').send({ name: 'x' })],
      ['POST /account/tokens/{id}/delete', 404, () => lab.admin.post('/app/account/tokens/999999/delete').set('Accept', J)],
      ['POST /account/tokens/{id}/delete', 400, () => lab.admin.post('/app/account/tokens/abc/delete').set('Accept', J)],
      ['POST /account/signup', 400, () => lab.admin.post('/app/account/signup').set('Accept', J).send({})],
      ['POST /account/signup', 200, () => lab.admin.post('/app/account/signup').set('Accept', J).send({ open: true })],
      ['POST /account/signup', 403, () => operator.post('/app/account/signup').set('Accept', J).send({ open: true })],
      [
        'POST /auth/login',
        403,
        async () => {
          const id = await userIn(lab, 'oa-off');
          await lab.admin.post(`/app/account/users/${id}/disable`).set('Accept', J).expect(200);
          return anon().post('/app/auth/login').type('form').send({ username: 'oa-off', password: PASSWORD });
        },
      ],
      ['GET /account/users', 200, () => lab.admin.get('/app/account/users').set('Accept', J)],
      ['GET /account/users', 200, () => lab.admin.get('/app/account/users?done=role&user=1')],
      ['GET /account/users', 403, () => operator.get('/app/account/users').set('Accept', J)],
      [
        'POST /account/users/{user_id}/role',
        200,
        async () =>
          lab.admin
            .post(`/app/account/users/${await userIn(lab, 'oa-role')}/role`)
            .set('Accept', J)
            .send({ role: 'admin' }),
      ],
      [
        'POST /account/users/{user_id}/role',
        302,
        async () =>
          lab.admin
            .post(`/app/account/users/${await userIn(lab, 'oa-role')}/role`)
            .type('form')
            .send({ role: 'operator' }),
      ],
      [
        'POST /account/users/{user_id}/role',
        400,
        async () =>
          lab.admin
            .post(`/app/account/users/${await userIn(lab, 'oa-role')}/role`)
            .set('Accept', J)
            .send({ role: 'root' }),
      ],
      [
        'POST /account/users/{user_id}/role',
        403,
        async () =>
          operator
            .post(`/app/account/users/${await userIn(lab, 'oa-role')}/role`)
            .set('Accept', J)
            .send({ role: 'admin' }),
      ],
      ['POST /account/users/{user_id}/role', 404, () => lab.admin.post('/app/account/users/999999/role').set('Accept', J).send({ role: 'admin' })],
      [
        'POST /account/users/{user_id}/role',
        409,
        async () =>
          lab.admin
            .post(`/app/account/users/${await userIn(lab, 'ada')}/role`)
            .set('Accept', J)
            .send({ role: 'operator' }),
      ],
      [
        'POST /account/users/{user_id}/password',
        200,
        async () =>
          lab.admin
            .post(`/app/account/users/${await userIn(lab, 'oa-pw')}/password`)
            .set('Accept', J)
            .send({ new_password: 'a new secret', confirm_password: 'a new secret' }),
      ],
      [
        'POST /account/users/{user_id}/password',
        302,
        async () =>
          lab.admin
            .post(`/app/account/users/${await userIn(lab, 'oa-pw')}/password`)
            .type('form')
            .send({ new_password: 'a new secret' }),
      ],
      [
        'POST /account/users/{user_id}/password',
        400,
        async () =>
          lab.admin
            .post(`/app/account/users/${await userIn(lab, 'oa-pw')}/password`)
            .set('Accept', J)
            .send({ new_password: 'a new secret', confirm_password: 'other' }),
      ],
      [
        'POST /account/users/{user_id}/password',
        409,
        async () =>
          lab.admin
            .post(`/app/account/users/${await userIn(lab, 'ada')}/password`)
            .set('Accept', J)
            .send({ new_password: 'a new secret' }),
      ],
      ['POST /account/users/{user_id}/disable', 200, async () => lab.admin.post(`/app/account/users/${await userIn(lab, 'oa-state')}/disable`).set('Accept', J)],
      ['POST /account/users/{user_id}/disable', 409, async () => lab.admin.post(`/app/account/users/${await userIn(lab, 'ada')}/disable`).set('Accept', J)],
      ['POST /account/users/{user_id}/disable', 400, () => lab.admin.post('/app/account/users/x/disable').set('Accept', J)],
      ['POST /account/users/{user_id}/enable', 302, async () => lab.admin.post(`/app/account/users/${await userIn(lab, 'oa-state')}/enable`)],
      ['POST /account/users/{user_id}/enable', 404, () => lab.admin.post('/app/account/users/999999/enable').set('Accept', J)],
      ['POST /account/users/{user_id}/delete', 302, async () => lab.admin.post(`/app/account/users/${await userIn(lab, 'oa-gone')}/delete`)],
      ['POST /account/users/{user_id}/delete', 404, async () => lab.admin.post(`/app/account/users/${await userIn(lab, 'oa-gone')}/delete`).set('Accept', J)],
      ['POST /account/users/{user_id}/delete', 409, async () => lab.admin.post(`/app/account/users/${await userIn(lab, 'ada')}/delete`).set('Accept', J)],
      [
        'POST /account/users/{user_id}/delete',
        403,
        async () =>
          lab.admin
            .post(`/app/account/users/${await userIn(lab, 'oa-state')}/delete`)
            .set('Origin', 'http://evil.example')
            .type('form'),
      ],
      ['GET /instruments/', 200, () => anon().get('/app/instruments/').set('Authorization', `Bearer ${token}`).set('Accept', J)],
      ['GET /instruments/{instrument}', 200, () => lab.admin.get('/app/instruments/pump')],
      ['GET /instruments/{instrument}', 404, () => lab.admin.get('/app/instruments/ghost').set('Accept', J)],
      ['GET /instruments/{instrument}/calls', 200, () => lab.admin.get('/app/instruments/pump/calls').set('Accept', J)],
      ['GET /instruments/{instrument}/calls', 404, () => lab.admin.get('/app/instruments/ghost/calls').set('Accept', J)],
      ['GET /instruments/{instrument}/labware', 200, () => lab.admin.get('/app/instruments/pump/labware').set('Accept', J)],
      ['GET /instruments/{instrument}/labware', 404, () => lab.admin.get('/app/instruments/ghost/labware').set('Accept', J)],
      [
        'POST /instruments/{instrument}',
        200,
        () =>
          lab.admin
            .post('/app/instruments/pump')
            .set('Accept', J)
            .send({ method: 'dose', args: { volume_ml: 1 } }),
      ],
      [
        'POST /instruments/{instrument}',
        400,
        () =>
          lab.admin
            .post('/app/instruments/pump')
            .set('Accept', J)
            .send({ method: 'dose', args: { volume_ml: -1 } }),
      ],
      ['POST /instruments/{instrument}', 400, () => lab.admin.post('/app/instruments/pump').set('Content-Type', J).set('Accept', J).send('{"method":')],
      ['POST /instruments/{instrument}', 404, () => lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'fly', args: {} })],
      [
        'POST /instruments/{instrument}',
        409,
        async () => {
          lab.runtime.deck.lock(['hotplate'], 'docs-task');
          try {
            return await lab.admin.post('/app/instruments/hotplate').set('Accept', J).send({ method: 'temperature', args: {} });
          } finally {
            lab.runtime.deck.unlock('docs-task');
          }
        },
      ],
      [
        'POST /instruments/{instrument}',
        502,
        async () => {
          await lab.admin.post('/app/instruments/pump').set('Accept', J).send({ method: 'jam', args: {} }).expect(200);
          return lab.admin
            .post('/app/instruments/pump')
            .set('Accept', J)
            .send({ method: 'dose', args: { volume_ml: 1 } });
        },
      ],
      ['POST /instruments/{instrument}', 401, () => anon().post('/app/instruments/pump').set('Accept', J).send({ method: 'prime', args: {} })],
      ['POST /instruments/', 200, () => lab.admin.post('/app/instruments/').set('Accept', J).send({ instrument: 'balance', method: 'weigh', args: {} })],
      ['POST /instruments/', 400, () => lab.admin.post('/app/instruments/').set('Accept', J).send({ method: 'weigh' })],
      ['POST /instruments/{instrument}/actions/order', 204, () => lab.admin.post('/app/instruments/pump/actions/order').send({ order: ['dose'] })],
      ['POST /instruments/{instrument}/actions/order', 400, () => lab.admin.post('/app/instruments/pump/actions/order').set('Accept', J).send({ order: 'dose' })],
      ['POST /instruments/{instrument}/actions/order', 404, () => lab.admin.post('/app/instruments/ghost/actions/order').set('Accept', J).send({ order: [] })],
      ['POST /instruments/{instrument}/retry', 409, () => lab.admin.post('/app/instruments/pump/retry').set('Accept', J)],
      ['POST /instruments/{instrument}/retry', 404, () => lab.admin.post('/app/instruments/ghost/retry').set('Accept', J)],
      ['PATCH /instruments/{instrument}/actions/{function}', 200, () => lab.admin.patch('/app/instruments/pump/actions/prime').send({ hidden: false })],
      ['PATCH /instruments/{instrument}/actions/{function}', 400, () => lab.admin.patch('/app/instruments/pump/actions/prime').set('Accept', J).send({ hidden: 'yes' })],
      ['PATCH /instruments/{instrument}/actions/{function}', 404, () => lab.admin.patch('/app/instruments/pump/actions/fly').set('Accept', J).send({ hidden: true })],
      ['GET /instruments/task/{task_id}', 200, () => lab.admin.get('/app/instruments/task/1').set('Accept', J)],
      ['GET /instruments/task/{task_id}', 404, () => lab.admin.get('/app/instruments/task/999999').set('Accept', J)],
      ['GET /instruments/task/{task_id}', 400, () => lab.admin.get('/app/instruments/task/abc').set('Accept', J)],
      ['POST /instruments/console/execute', 200, () => lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({ code: '1 + 1' })],
      ['POST /instruments/console/execute', 400, () => lab.admin.post('/app/instruments/console/execute').set('Accept', J).send({})],
      ['POST /instruments/console/execute', 403, () => operator.post('/app/instruments/console/execute').set('Accept', J).send({ code: '1' })],
      ['GET /instruments/proxy', 200, () => lab.admin.get('/app/instruments/proxy?lang=typescript')],
      ['GET /instruments/proxy', 400, () => lab.admin.get('/app/instruments/proxy?lang=cobol').set('Accept', J)],
      ['GET /instruments/new/', 200, () => operator.get('/app/instruments/new/').set('Accept', J)],
      ['GET /instruments/new/{instrument}', 200, () => lab.admin.get('/app/instruments/new/sim-pump')],
      ['GET /instruments/new/{instrument}', 404, () => lab.admin.get('/app/instruments/new/Ghost').set('Accept', J)],
      ['POST /instruments/new/{instrument}', 302, () => lab.admin.post('/app/instruments/new/sim-balance').send({ device_name: 'docs_balance', kwargs: {} })],
      ['POST /instruments/new/{instrument}', 409, () => lab.admin.post('/app/instruments/new/sim-balance').set('Accept', J).send({ device_name: 'docs_balance', kwargs: {} })],
      ['POST /instruments/new/{instrument}', 400, () => lab.admin.post('/app/instruments/new/sim-balance').set('Accept', J).send({ device_name: 'bad name!' })],
      ['POST /instruments/new/{instrument}', 404, () => lab.admin.post('/app/instruments/new/Ghost').set('Accept', J).send({ device_name: 'g' })],
      ['POST /instruments/new/{instrument}', 403, () => operator.post('/app/instruments/new/sim-balance').set('Accept', J).send({ device_name: 'x1' })],
      [
        'POST /instruments/new/module',
        302,
        () =>
          lab.admin
            .post('/app/instruments/new/module')
            .type('form')
            .send({ filepath: fixture('thermostat.ts') }),
      ],
      ['POST /instruments/new/module', 400, () => lab.admin.post('/app/instruments/new/module').set('Accept', J).send({ filepath: '/no/such/driver.ts' })],
      ['POST /instruments/new/deck-python', 400, () => lab.admin.post('/app/instruments/new/deck-python').set('Accept', J).send({})],
      [
        'POST /instruments/new/deck-python',
        302,
        () =>
          lab.admin
            .post('/app/instruments/new/deck-python')
            .type('form')
            .send({ filepath: fixture('extra-deck.ts') }),
      ],
      [
        'POST /instruments/new/deck-python',
        409,
        () =>
          lab.admin
            .post('/app/instruments/new/deck-python')
            .set('Accept', J)
            .send({ filepath: fixture('extra-deck.ts') }),
      ],
      ['POST /workflows', 201, () => lab.admin.post('/app/workflows').set('Accept', J).send(DOC_WF)],
      ['POST /workflows', 409, () => lab.admin.post('/app/workflows').set('Accept', J).send(DOC_WF)],
      [
        'POST /workflows',
        400,
        () =>
          lab.admin
            .post('/app/workflows')
            .set('Accept', J)
            .send({ ...DOC_WF, name: 'docs-bad', main: [{ kind: 'call', instrument: 'ghost', method: 'x' }] }),
      ],
      ['GET /workflows', 200, () => lab.admin.get('/app/workflows').set('Accept', J)],
      ['GET /workflows/new', 200, () => operator.get('/app/workflows/new')],
      ['GET /workflows/{name}', 200, () => lab.admin.get('/app/workflows/docs-wf').set('Accept', J)],
      ['GET /workflows/{name}', 404, () => lab.admin.get('/app/workflows/ghost').set('Accept', J)],
      ['GET /workflows/{name}', 400, () => lab.admin.get('/app/workflows/docs-wf?version=x').set('Accept', J)],
      ['PUT /workflows/{name}', 200, () => operator.put('/app/workflows/docs-wf').set('Accept', J).send(DOC_WF)],
      [
        'PUT /workflows/{name}',
        400,
        () =>
          lab.admin
            .put('/app/workflows/docs-wf')
            .set('Accept', J)
            .send({ ...DOC_WF, name: 'other' }),
      ],
      ['PUT /workflows/{name}', 404, () => lab.admin.put('/app/workflows/ghost').set('Accept', J).send(DOC_WF)],
      ['GET /workflows/{name}/builder', 200, () => lab.admin.get('/app/workflows/docs-wf/builder')],
      ['GET /workflows/{name}/builder', 404, () => lab.admin.get('/app/workflows/ghost/builder').set('Accept', J)],
      ['GET /workflows/{name}/python', 200, () => lab.admin.get('/app/workflows/docs-wf/python')],
      ['GET /workflows/{name}/python', 404, () => lab.admin.get('/app/workflows/ghost/python').set('Accept', J)],
      ['GET /workflows/{name}/ivoryos', 200, () => lab.admin.get('/app/workflows/docs-wf/ivoryos').set('Accept', J)],
      ['GET /workflows/{name}/ivoryos', 404, () => lab.admin.get('/app/workflows/ghost/ivoryos').set('Accept', J)],
      [
        'POST /workflows/import/ivoryos',
        201,
        () =>
          lab.admin
            .post('/app/workflows/import/ivoryos')
            .set('Accept', J)
            .send({ workflow: { name: 'docs_edge', script: [{ instrument: 'noop', action: 'ping', args: {} }] } }),
      ],
      [
        'POST /workflows/import/ivoryos',
        200,
        () =>
          lab.admin
            .post('/app/workflows/import/ivoryos?save=false')
            .set('Accept', J)
            .send({ workflow: { name: 'docs_edge2', script: [] } }),
      ],
      [
        'POST /workflows/import/ivoryos',
        400,
        () =>
          lab.admin
            .post('/app/workflows/import/ivoryos')
            .set('Accept', J)
            .send({ workflow: { name: 'x', script: [{ instrument: 'pro_code', action: 'pro_code', args: {} }] } }),
      ],
      [
        'POST /workflows/import/ivoryos',
        409,
        () =>
          lab.admin
            .post('/app/workflows/import/ivoryos')
            .set('Accept', J)
            .send({ workflow: { name: 'docs_edge', script: [] } }),
      ],
      ['POST /workflows/import/python', 201, () => lab.admin.post('/app/workflows/import/python').set('Accept', J).send({ source: 'def docs_py():\n    deck.noop.ping()\n' })],
      ['POST /workflows/import/python', 200, () => lab.admin.post('/app/workflows/import/python?save=false').set('Accept', J).send({ source: 'def docs_py():\n    deck.noop.ping()\n' })],
      ['POST /workflows/import/python', 409, () => lab.admin.post('/app/workflows/import/python').set('Accept', J).send({ source: 'def docs_py():\n    deck.noop.ping()\n' })],
      ['POST /workflows/import/python', 400, () => lab.admin.post('/app/workflows/import/python').set('Accept', J).type('text/plain').send('while True:\n    pass\n')],
      ['DELETE /workflows/{name}', 200, () => lab.admin.delete('/app/workflows/docs-wf').set('Accept', J)],
      ['DELETE /workflows/{name}', 404, () => lab.admin.delete('/app/workflows/docs-wf').set('Accept', J)],
      ['GET /api', 200, () => anon().get('/app/api')],
      ['GET /openapi.json', 200, () => anon().get('/app/openapi.json')],
      ['GET /favicon.ico', 200, () => anon().get('/favicon.ico')],
      ['GET /static/{file}', 200, () => anon().get('/app/static/app.css')],
      ['GET /static/vendor/{file}', 200, () => anon().get('/app/static/vendor/htmx.min.js')],
      ['GET /static/vendor/{file}', 404, () => lab.admin.get('/app/static/vendor/nope.js').set('Accept', J)],
      ['GET /static/vendor/{file}', 404, () => anon().get('/app/static/vendor/nope.js').set('Accept', J)],
      ['GET /static/{file}', 404, () => anon().get('/app/static/nope.css')],
      ['GET /executions/config', 200, () => lab.admin.get('/app/executions/config')],
      ['POST /executions/config', 404, () => lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'no-such', repeat: 1 })],
      ['POST /executions/config', 400, async () => (await savedWorkflow(), lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'oa-ping' }))],
      ['POST /executions/config', 200, async () => (await savedWorkflow(), lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'oa-ping', repeat: 2 }))],
      ['POST /executions/config', 400, () => lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'oa-ping', repeat: 2, batch_size: 2 })],
      ['POST /executions/config', 200, async () => (await savedWorkflow(), lab.admin.post('/app/executions/config').type('form').send({ workflow: 'oa-ping', repeat: '1' }))],
      ['GET /executions/status', 200, () => lab.admin.get('/app/executions/status')],
      ['GET /executions/current_task', 200, () => lab.admin.get('/app/executions/current_task')],
      ['GET /executions/queue', 200, () => lab.admin.get('/app/executions/queue')],
      ['GET /executions/queue/task/{task_id}', 404, () => lab.admin.get('/app/executions/queue/task/999999')],
      ['GET /executions/queue/task/{task_id}', 400, () => lab.admin.get('/app/executions/queue/task/x')],
      ['POST /executions/queue/delete', 404, () => lab.admin.post('/app/executions/queue/delete').send({ id: 999999 })],
      ['POST /executions/queue/delete', 400, () => lab.admin.post('/app/executions/queue/delete').send({ id: 'x' })],
      ['POST /executions/queue/delete', 400, () => lab.admin.post('/app/executions/queue/delete').send({ id: 1, direction: 'up' })],
      ['POST /executions/queue/reorder', 400, () => lab.admin.post('/app/executions/queue/reorder').send({ id: 1, direction: 'sideways' })],
      ['POST /executions/queue/reorder', 404, () => lab.admin.post('/app/executions/queue/reorder').send({ id: 999999, direction: 'up' })],
      ['POST /executions/queue/task/rename', 404, () => lab.admin.post('/app/executions/queue/task/rename').send({ id: 999999, new_name: 'x' })],
      ['POST /executions/queue/task/rename', 400, () => lab.admin.post('/app/executions/queue/task/rename').send({ id: 1, new_name: '' })],
      ['POST /executions/retry', 409, () => lab.admin.post('/app/executions/retry').set('Accept', J)],
      ['GET /attention', 200, () => lab.admin.get('/app/attention').set('Accept', J)],
      ['POST /executions/input', 409, () => lab.admin.post('/app/executions/input').set('Accept', J).send({ value: 1 })],
      ['POST /executions/input', 400, () => lab.admin.post('/app/executions/input').set('Accept', J).send({ value: 1, colour: 'red' })],
      ['POST /executions/rerun-iteration', 409, () => lab.admin.post('/app/executions/rerun-iteration').set('Accept', J)],
      ['POST /executions/retry-step', 409, () => lab.admin.post('/app/executions/retry-step').set('Accept', J)],
      ['POST /executions/abort/next-iteration', 409, async () => (await idle(), lab.admin.post('/app/executions/abort/next-iteration').set('Accept', J))],
      ['POST /executions/abort/next-task', 409, async () => (await idle(), lab.admin.post('/app/executions/abort/next-task').set('Accept', J))],
      ['POST /executions/pause-resume', 200, () => lab.admin.post('/app/executions/pause-resume').set('Accept', J)],
      ['POST /executions/pause-resume', 200, () => lab.admin.post('/app/executions/pause-resume').set('Accept', J)],
      ['POST /executions/pause-resume', 400, () => lab.admin.post('/app/executions/pause-resume').set('Accept', J).send({ force: true })],
      // idle: the toggle holds the queue, release lets it go; the other controls do nothing now (409)
      ['POST /executions/release', 200, async () => (await idle(), await lab.admin.post('/app/executions/pause-resume').expect(200), lab.admin.post('/app/executions/release').set('Accept', J))],
      ['POST /executions/release', 409, () => lab.admin.post('/app/executions/release').set('Accept', J)],
      ['POST /executions/pause', 409, async () => (await idle(), lab.admin.post('/app/executions/pause').set('Accept', J))],
      ['POST /executions/resume', 409, () => lab.admin.post('/app/executions/resume').set('Accept', J)],
      ['POST /executions/continue', 409, () => lab.admin.post('/app/executions/continue').set('Accept', J)],
      ['POST /executions/skip', 409, () => lab.admin.post('/app/executions/skip').set('Accept', J)],
      ['GET /executions/events', 401, () => anon().get('/app/executions/events').set('Accept', J)],
      ['GET /executions/campaign', 200, () => lab.admin.get('/app/executions/campaign')],
      ['POST /executions/optimizer_schema', 200, () => lab.admin.post('/app/executions/optimizer_schema').send({ optimizer_type: 'gp' })],
      ['POST /executions/optimizer_schema', 404, () => lab.admin.post('/app/executions/optimizer_schema').send({ optimizer_type: 'nope' })],
      ['GET /executions/latest_plot', 404, () => lab.admin.get('/app/executions/latest_plot').set('Accept', J)],
      ['POST /executions/campaign', 404, () => lab.admin.post('/app/executions/campaign').set('Accept', J).send({ workflow: 'nope', repeat: 1, optimizer_type: 'random' })],
      [
        'POST /executions/campaign',
        400,
        async () => (
          await savedWorkflow(),
          lab.admin.post('/app/executions/campaign').set('Accept', J).send({ workflow: 'oa-ping', repeat: 1, optimizer_type: 'random', parameters: 'x: 0..1', objectives: 'y:max' })
        ),
      ],
      [
        'POST /executions/campaign',
        302,
        async () => (
          await savedWorkflow(),
          lab.admin.post('/app/executions/campaign').type('form').send({ workflow: 'oa-camp', repeat: '1', optimizer_type: 'random', parameters: 'x: 0..1', objectives: 'y:max' })
        ),
      ],
      [
        'POST /executions/campaign',
        200,
        () => lab.admin.post('/app/executions/campaign').set('Accept', J).send({ workflow: 'oa-camp', repeat: 1, optimizer_type: 'random', parameters: 'x: 0..1', objectives: 'y:max' }),
      ],
      ['GET /executions/latest_plot', 200, () => lab.admin.get('/app/executions/latest_plot').set('Accept', J)],
      [
        'POST /executions/campaign',
        200,
        async () => (
          await savedWorkflow(),
          lab.admin
            .post('/app/executions/campaign')
            .set('Accept', J)
            .send({ workflow: 'oa-camp', execution: 'manual', optimizer_type: 'random', parameters: 'x: 0..1', objectives: 'y:max', batch_size: 3 })
        ),
      ],
      ['GET /executions/campaigns', 200, () => lab.admin.get('/app/executions/campaigns').set('Accept', J)],
      ['GET /executions/campaigns/{id}', 200, async () => lab.admin.get(`/app/executions/campaigns/${await manual()}`)],
      ['GET /executions/campaigns/{id}', 404, () => lab.admin.get('/app/executions/campaigns/999999').set('Accept', J)],
      [
        'POST /executions/campaigns/{id}/suggest',
        200,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/suggest`)
            .set('Accept', J)
            .send({ n: 1 }),
      ],
      [
        'POST /executions/campaigns/{id}/suggest',
        302,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/suggest`)
            .type('form')
            .send({ n: '1' }),
      ],
      [
        'POST /executions/campaigns/{id}/suggest',
        400,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/suggest`)
            .set('Accept', J)
            .send({ n: 0 }),
      ],
      ['POST /executions/campaigns/{id}/suggest', 404, () => lab.admin.post('/app/executions/campaigns/999999/suggest').set('Accept', J).send({ n: 1 })],
      [
        'PUT /executions/campaigns/{id}/points/{n}',
        200,
        async () =>
          lab.admin
            .put(`/app/executions/campaigns/${await manual()}/points/1`)
            .set('Accept', J)
            .send({ results: { y: 1 } }),
      ],
      [
        'PUT /executions/campaigns/{id}/points/{n}',
        409,
        async () =>
          lab.admin
            .put(`/app/executions/campaigns/${await manual()}/points/1`)
            .set('Accept', J)
            .send({ results: { y: 1 } }),
      ],
      [
        'PUT /executions/campaigns/{id}/points/{n}',
        400,
        async () =>
          lab.admin
            .put(`/app/executions/campaigns/${await manual()}/points/2`)
            .set('Accept', J)
            .send({ results: { y: 'abc' } }),
      ],
      [
        'PUT /executions/campaigns/{id}/points/{n}',
        404,
        async () =>
          lab.admin
            .put(`/app/executions/campaigns/${await manual()}/points/999`)
            .set('Accept', J)
            .send({ results: { y: 1 } }),
      ],
      [
        'POST /executions/campaigns/{id}/points/{n}',
        302,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/points/2`)
            .type('form')
            .send({ discarded: 'true', reason: 'spilt' }),
      ],
      [
        'POST /executions/campaigns/{id}/points/{n}',
        200,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/points/3`)
            .set('Accept', J)
            .send({ results: { y: 2 } }),
      ],
      [
        'POST /executions/campaigns/{id}/points/{n}',
        400,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/points/4`)
            .set('Accept', J)
            .send({ discarded: true }),
      ],
      [
        'POST /executions/campaigns/{id}/points/{n}',
        404,
        () =>
          lab.admin
            .post('/app/executions/campaigns/999999/points/1')
            .set('Accept', J)
            .send({ results: { y: 1 } }),
      ],
      [
        'POST /executions/campaigns/{id}/points/{n}',
        409,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/points/1`)
            .set('Accept', J)
            .send({ results: { y: 1 } }),
      ],
      [
        'POST /executions/campaigns/{id}/points',
        201,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/points`)
            .set('Accept', J)
            .send({ parameters: { x: 0.5 } }),
      ],
      [
        'POST /executions/campaigns/{id}/points',
        302,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/points`)
            .type('form')
            .send({ 'parameters.x': '0.25' }),
      ],
      [
        'POST /executions/campaigns/{id}/points',
        400,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/points`)
            .set('Accept', J)
            .send({ parameters: { x: 5 } }),
      ],
      [
        'POST /executions/campaigns/{id}/points',
        404,
        () =>
          lab.admin
            .post('/app/executions/campaigns/999999/points')
            .set('Accept', J)
            .send({ parameters: { x: 0.5 } }),
      ],
      ['GET /executions/campaigns/{id}/plot', 200, async () => lab.admin.get(`/app/executions/campaigns/${await manual()}/plot`)],
      ['GET /executions/campaigns/{id}/plot', 404, () => lab.admin.get('/app/executions/campaigns/999999/plot').set('Accept', J)],
      ['GET /executions/campaigns/{id}/points.csv', 200, async () => lab.admin.get(`/app/executions/campaigns/${await manual()}/points.csv`)],
      ['GET /executions/campaigns/{id}/points.csv', 404, () => lab.admin.get('/app/executions/campaigns/999999/points.csv').set('Accept', J)],
      [
        'POST /executions/campaigns/{id}/results',
        200,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/results`)
            .set('Accept', J)
            .attach('file', Buffer.from('n,y\n4,3\n'), 'r.csv'),
      ],
      ['POST /executions/campaigns/{id}/results', 302, async () => lab.admin.post(`/app/executions/campaigns/${await manual()}/results`).attach('file', Buffer.from('n,y\n4,3\n'), 'r.csv')],
      [
        'POST /executions/campaigns/{id}/results',
        400,
        async () =>
          lab.admin
            .post(`/app/executions/campaigns/${await manual()}/results`)
            .set('Accept', J)
            .attach('file', Buffer.from('n,y\n5,abc\n'), 'r.csv'),
      ],
      ['POST /executions/campaigns/{id}/results', 404, () => lab.admin.post('/app/executions/campaigns/999999/results').set('Accept', J).attach('file', Buffer.from('n,y\n1,1\n'), 'r.csv')],
      ['GET /executions/events', 200, () => sseStatus(lab, token)],
      ['GET /executions/records', 200, () => lab.admin.get('/app/executions/records?keyword=oa&page=1').set('Accept', J)],
      ['GET /executions/records', 400, () => lab.admin.get('/app/executions/records?page=0').set('Accept', J)],
      ['GET /executions/records/{workflow_id}', 200, async () => lab.admin.get(`/app/executions/records/${await recordIn(lab, 'ada')}`)],
      ['GET /executions/records/{workflow_id}', 404, () => lab.admin.get('/app/executions/records/999999').set('Accept', J)],
      ['GET /executions/records/{workflow_id}', 400, () => lab.admin.get('/app/executions/records/abc').set('Accept', J)],
      ['GET /executions/records/{workflow_id}/steps_data_csv', 200, async () => lab.admin.get(`/app/executions/records/${await recordIn(lab, 'ada')}/steps_data_csv`)],
      ['GET /executions/records/{workflow_id}/steps_data_csv', 404, () => lab.admin.get('/app/executions/records/999999/steps_data_csv').set('Accept', J)],
      ['GET /executions/records/{workflow_id}/steps_data_csv', 400, () => lab.admin.get('/app/executions/records/1.5/steps_data_csv').set('Accept', J)],
      ['GET /executions/records/{workflow_id}/logs', 200, async () => lab.admin.get(`/app/executions/records/${await recordIn(lab, 'ada')}/logs`)],
      ['GET /executions/records/{workflow_id}/logs', 404, async () => lab.admin.get(`/app/executions/records/${await recordIn(lab, 'ada', false)}/logs`).set('Accept', J)],
      ['GET /executions/records/{workflow_id}/logs', 400, () => lab.admin.get('/app/executions/records/x/logs').set('Accept', J)],
      ['GET /executions/data/{workflow_id}', 200, async () => lab.admin.get(`/app/executions/data/${await recordIn(lab, 'ada')}`)],
      ['GET /executions/data/{workflow_id}', 404, () => lab.admin.get('/app/executions/data/999999').set('Accept', J)],
      ['GET /executions/data/{workflow_id}', 400, () => lab.admin.get('/app/executions/data/0').set('Accept', J)],
      ['DELETE /executions/records/{workflow_id}', 403, async () => operator.delete(`/app/executions/records/${await recordIn(lab, 'ada')}`).set('Accept', J)],
      ['DELETE /executions/records/{workflow_id}', 200, async () => operator.delete(`/app/executions/records/${await recordIn(lab, 'olga')}`).set('Accept', J)],
      ['DELETE /executions/records/{workflow_id}', 404, () => lab.admin.delete('/app/executions/records/999999').set('Accept', J)],
      ['DELETE /executions/records/{workflow_id}', 400, () => lab.admin.delete('/app/executions/records/abc').set('Accept', J)],
      ['DELETE /executions/records/{workflow_id}', 409, () => deleteRunningRecord(lab)],
      ['GET /files/execution-configs', 200, async () => (await savedWorkflow(), lab.admin.get('/app/files/execution-configs?workflow=oa-ping'))],
      ['GET /files/execution-configs', 400, () => anon().get('/app/files/execution-configs').set('Authorization', `Bearer ${token}`).set('Accept', J)],
      ['GET /files/execution-configs', 404, () => lab.admin.get('/app/files/execution-configs?workflow=no-such').set('Accept', J)],
      ['GET /files/execution-configs', 401, () => anon().get('/app/files/execution-configs').set('Accept', J)],
      ['POST /files/batch-configs', 201, () => lab.admin.post('/app/files/batch-configs').set('Accept', J).attach('file', Buffer.from('x\n1\n'), 'c.csv')],
      ['POST /files/batch-configs', 302, () => lab.admin.post('/app/files/batch-configs').set('Accept', 'text/html').attach('file', Buffer.from('x\n1\n'), 'c.csv')],
      ['POST /files/batch-configs', 400, () => lab.admin.post('/app/files/batch-configs').set('Accept', J).attach('file', Buffer.from('x,y\n1\n'), 'c.csv')],
      ['POST /files/batch-configs', 404, () => lab.admin.post('/app/files/batch-configs').set('Accept', J).field('workflow', 'no-such').attach('file', Buffer.from('x\n1\n'), 'c.csv')],
      [
        'POST /files/batch-configs',
        413,
        () =>
          lab.admin
            .post('/app/files/batch-configs')
            .set('Accept', J)
            .attach('file', Buffer.alloc(10 * 1024 * 1024 + 1, 0x31), 'big.csv'),
      ],
      ['POST /files/execution-data', 201, () => lab.admin.post('/app/files/execution-data').set('Accept', J).attach('file', Buffer.from('x,y\n1,2\n'), 'h.csv')],
      ['POST /files/execution-data', 400, () => lab.admin.post('/app/files/execution-data').set('Accept', J)],
      [
        'GET /files/preview/{filename}',
        200,
        async () => {
          const up = await lab.admin.post('/app/files/execution-data').set('Accept', J).attach('file', Buffer.from('x,y\n1,2\n'), 'h.csv').expect(201);
          return lab.admin.get(`/app/files/preview/${up.body.filename}`).set('Accept', J);
        },
      ],
      ['GET /files/preview/{filename}', 404, () => lab.admin.get('/app/files/preview/..%2fsession-secret').set('Accept', J)],
      [
        'GET /files/execution-data/{filename}',
        200,
        async () => {
          const up = await lab.admin.post('/app/files/execution-data').set('Accept', J).attach('file', Buffer.from('x,y\n1,2\n'), 'h.csv').expect(201);
          return lab.admin.get(`/app/files/execution-data/${up.body.filename}`);
        },
      ],
      ['GET /files/execution-data/{filename}', 404, () => lab.admin.get('/app/files/execution-data/run-999999.csv').set('Accept', J)],
      ['GET /approvals', 200, () => lab.admin.get('/app/approvals').set('Accept', J)],
      ['GET /approvals/{id}', 200, async () => lab.admin.get(`/app/approvals/${await agentRequest()}`).set('Accept', J)],
      ['GET /approvals/{id}', 404, () => lab.admin.get('/app/approvals/999999').set('Accept', J)],
      [
        'POST /approvals/{id}/approve',
        200,
        async () =>
          lab.admin
            .post(`/app/approvals/${await agentRequest()}/approve`)
            .set('Accept', J)
            .send({}),
      ],
      [
        'POST /approvals/{id}/approve',
        403,
        async () =>
          operator
            .post(`/app/approvals/${await agentRequest()}/approve`)
            .set('Accept', J)
            .send({}),
      ],
      ['POST /approvals/{id}/approve', 404, () => lab.admin.post('/app/approvals/999999/approve').set('Accept', J).send({})],
      [
        'POST /approvals/{id}/reject',
        302,
        async () =>
          lab.admin
            .post(`/app/approvals/${await agentRequest()}/reject`)
            .type('form')
            .send({ reason: 'not now' }),
      ],
      [
        'POST /approvals/{id}/reject',
        400,
        async () =>
          lab.admin
            .post(`/app/approvals/${await agentRequest()}/reject`)
            .set('Accept', J)
            .send({ reason: ' ' }),
      ],
      [
        'POST /approvals/{id}/reject',
        409,
        async () => {
          const id = await agentRequest();
          await lab.admin.post(`/app/approvals/${id}/reject`).set('Accept', J).send({ reason: 'no' }).expect(200);
          return lab.admin.post(`/app/approvals/${id}/reject`).set('Accept', J).send({ reason: 'no again' });
        },
      ],
      [
        'POST /approvals/policy',
        200,
        () =>
          lab.admin
            .post('/app/approvals/policy')
            .set('Accept', J)
            .send({ default: ['hazardous'] }),
      ],
      [
        'POST /approvals/policy',
        400,
        () =>
          lab.admin
            .post('/app/approvals/policy')
            .set('Accept', J)
            .send({ default: ['risky'] }),
      ],
      ['POST /approvals/policy', 403, () => operator.post('/app/approvals/policy').set('Accept', J).send({ default: [] })],
      ['GET /safety', 200, () => lab.admin.get('/app/safety').set('Accept', J)],
      ['PUT /safety', 400, () => lab.admin.put('/app/safety').set('Accept', J).send({ format: 'ivoryos-safety/9' })],
      ['PUT /safety', 403, () => operator.put('/app/safety').set('Accept', J).send({ format: 'ivoryos-safety/1' })],
      ['PUT /safety', 200, () => lab.admin.put('/app/safety').set('Accept', J).send({ format: 'ivoryos-safety/1' })],
      ['POST /safety/file', 400, () => lab.admin.post('/app/safety/file').set('Accept', J).send({ text: '{' })],
      ['POST /safety/file', 302, () => lab.admin.post('/app/safety/file').type('form').send({ text: '{"format": "ivoryos-safety/1"}' })],
      [
        'POST /safety/check',
        200,
        () =>
          lab.admin
            .post('/app/safety/check')
            .set('Accept', J)
            .send({ instrument: 'pump', method: 'dose', args: { volume_ml: 1 } }),
      ],
      ['POST /safety/check', 404, () => lab.admin.post('/app/safety/check').set('Accept', J).send({ instrument: 'nope', method: 'dose' })],
      ['POST /safety/states/{name}', 404, () => lab.admin.post('/app/safety/states/nope').set('Accept', J).send({ value: 'closed' })],
      [
        'POST /mcp',
        200,
        async () =>
          anon()
            .post('/app/mcp')
            .set('Authorization', `Bearer ${await mcpToken()}`)
            .set('Accept', 'application/json, text/event-stream')
            .send({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      ],
      ['POST /mcp', 401, () => anon().post('/app/mcp').set('Authorization', 'Bearer labmcp_nope').set('Accept', J).send({ jsonrpc: '2.0', id: 1, method: 'ping' })],
      ['POST /mcp', 403, () => lab.admin.post('/app/mcp').set('Accept', J).send({ jsonrpc: '2.0', id: 1, method: 'ping' })],
      [
        'GET /mcp',
        405,
        async () =>
          anon()
            .get('/app/mcp')
            .set('Authorization', `Bearer ${await mcpToken()}`)
            .set('Accept', J),
      ],
      ['GET /notifications', 200, () => lab.admin.get('/app/notifications').set('Accept', J)],
      ['GET /notifications', 403, () => operator.get('/app/notifications').set('Accept', J)],
      ['PUT /notifications', 200, () => lab.admin.put('/app/notifications').set('Accept', J).send({ channels: [] })],
      ['PUT /notifications', 400, () => lab.admin.put('/app/notifications').set('Accept', J).send({ colour: 'red' })],
      ['POST /notifications', 302, () => lab.admin.post('/app/notifications').type('form').send({ document: '{"channels": []}' })],
      ['POST /notifications', 400, () => lab.admin.post('/app/notifications').type('form').send({ document: '{nope' })],
      ['POST /notifications/test', 404, () => lab.admin.post('/app/notifications/test').set('Accept', J).send({ channel: 'nope' })],
      ['GET /notifications/me', 200, () => operator.get('/app/notifications/me').set('Accept', J)],
      ['PUT /notifications/me', 200, () => operator.put('/app/notifications/me').set('Accept', J).send({ email: 'olga@example.org' })],
      ['PUT /notifications/me', 400, () => operator.put('/app/notifications/me').set('Accept', J).send({ email: 'olga' })],
      ['POST /notifications/me', 302, () => operator.post('/app/notifications/me').type('form').send({ email: '' })],
      ['POST /resources', 201, () => lab.admin.post('/app/resources').set('Accept', J).send({ name: 'oa-tips', kind: 'consumable', quantity: 8 })],
      ['POST /resources', 409, () => lab.admin.post('/app/resources').set('Accept', J).send({ name: 'oa-tips', kind: 'consumable', quantity: 8 })],
      ['POST /resources', 400, () => lab.admin.post('/app/resources').set('Accept', J).send({ name: 'oa-x', kind: 'gadget', quantity: 1 })],
      ['POST /resources', 302, () => lab.admin.post('/app/resources').type('form').send({ name: 'oa-sample', kind: 'sample' })],
      ['GET /resources', 200, () => lab.admin.get('/app/resources')],
      ['GET /resources/consumption', 200, () => lab.admin.get('/app/resources/consumption').set('Accept', J)],
      [
        'PUT /resources/consumption',
        200,
        () =>
          lab.admin
            .put('/app/resources/consumption')
            .set('Accept', J)
            .send([{ target: 'noop', method: 'ping', resource: 'oa-tips' }]),
      ],
      [
        'PUT /resources/consumption',
        400,
        () =>
          lab.admin
            .put('/app/resources/consumption')
            .set('Accept', J)
            .send([{ target: 'noop' }]),
      ],
      ['GET /resources/export', 200, () => lab.admin.get('/app/resources/export')],
      ['POST /resources/import', 200, () => lab.admin.post('/app/resources/import').set('Accept', J).type('text/plain').send('name,kind,quantity\noa-tips,consumable,9\n')],
      ['POST /resources/import', 400, () => lab.admin.post('/app/resources/import').set('Accept', J).type('text/plain').send('name,kind\noa-y,gadget\n')],
      ['POST /resources/import', 302, () => lab.admin.post('/app/resources/import').type('form').send({ csv: 'name,kind,quantity\noa-tips,consumable,9\n' })],
      ['POST /resources/moves/{id}/settle', 409, () => lab.admin.post('/app/resources/moves/999999/settle').set('Accept', J).send({ used: true })],
      ['GET /resources/{name}', 200, () => lab.admin.get('/app/resources/oa-tips').set('Accept', J)],
      ['GET /resources/{name}', 404, () => lab.admin.get('/app/resources/oa-none').set('Accept', J)],
      ['PATCH /resources/{name}', 200, () => lab.admin.patch('/app/resources/oa-tips').set('Accept', J).send({ add: 1 })],
      ['PATCH /resources/{name}', 400, () => lab.admin.patch('/app/resources/oa-tips').set('Accept', J).send({})],
      ['PATCH /resources/{name}', 404, () => lab.admin.patch('/app/resources/oa-none').set('Accept', J).send({ add: 1 })],
      ['POST /resources/{name}/quantity', 302, () => lab.admin.post('/app/resources/oa-tips/quantity').type('form').send({ add: '2' })],
      ['POST /resources/{name}/move', 200, () => lab.admin.post('/app/resources/oa-sample/move').set('Accept', J).send({ to: 'shelf 2' })],
      ['DELETE /resources/{name}', 204, () => lab.admin.delete('/app/resources/oa-sample').set('Accept', J)],
      ['DELETE /resources/{name}', 404, () => lab.admin.delete('/app/resources/oa-sample').set('Accept', J)],
      ['POST /executions/preflight', 200, async () => (await savedWorkflow(), lab.admin.post('/app/executions/preflight').set('Accept', J).send({ workflow: 'oa-ping', repeat: 2 }))],
      ['GET /deck/versions', 200, () => lab.admin.get('/app/deck/versions')],
      ['GET /deck/versions/{id}', 200, () => lab.admin.get(`/app/deck/versions/${lab.runtime.preflight.deckVersion}`).set('Accept', J)],
      ['GET /deck/versions/{id}', 404, () => lab.admin.get('/app/deck/versions/999999').set('Accept', J)],
      ['PUT /resources/consumption', 200, () => lab.admin.put('/app/resources/consumption').set('Accept', J).send([])],
    ];
    const seen = new Set<string>();
    for (const [key, want, send] of cases) {
      const res = await send();
      const [method, path] = key.split(' ');
      const op = doc.paths[`/app${path}`]?.[method.toLowerCase() as HttpMethod];
      expect({ key, status: res.status }).toEqual({ key, status: want });
      expect({ key, status: want, documented: !!op?.responses[String(want)] }).toEqual({ key, status: want, documented: true });
      seen.add(key);
    }
    // the table exercises every API route (the asset script depends on a build)
    const missing = ROUTES.map(routeKey).filter((k) => !seen.has(k) && k !== 'GET /static/app.js');
    expect(missing).toEqual([]);
  }, 60_000); // some 250 requests, a few of them runs and uploads: more than the default 20 s on a loaded machine

  it("gives each instrument a direct-call body: oneOf its methods, with the method's arguments", async () => {
    const doc: OpenApiDocument = (await lab.admin.get('/app/openapi.json').expect(200)).body;
    const pumpOp = doc.paths['/app/instruments/pump']?.post;
    expect(pumpOp?.['x-labdeck-live']).toBe(true);
    expect(pumpOp?.requestBody?.content[J].schema).toEqual({ $ref: '#/components/schemas/Call.pump' });
    const call = schema(doc, 'Call.pump');
    const variants = (call.oneOf as SchemaObject[]).map((v) => pointer(doc, String(v.$ref)) as SchemaObject & { properties: Record<string, SchemaObject> });
    expect(variants.map((v) => v.properties.method.const)).toEqual(expect.arrayContaining(['dose', 'prime', 'jam']));
    const dose = variants.find((v) => v.properties.method.const === 'dose')!;
    expect(dose.required).toEqual(['method', 'args']);
    const args = pointer(doc, String(dose.properties.args.$ref)) as SchemaObject & { properties: Record<string, SchemaObject> };
    expect(args.properties.volume_ml).toMatchObject({ type: 'number' });
    expect(args.required).toContain('volume_ml');
    expect((call.discriminator as { propertyName: string }).propertyName).toBe('method');
    // POST /instruments/ names the instrument in the body: oneOf the instruments
    const any = schema(doc, 'CallAnyBody');
    expect((any.oneOf as SchemaObject[]).length).toBe(lab.runtime.deck.list().length);
  });

  it('leaves the live deck out for visitors, and puts it in for token users', async () => {
    const pub: OpenApiDocument = (await request(lab.app).get('/openapi.json').expect(200)).body;
    expectWellFormed(pub);
    expect(pub.components.schemas['Call.pump']).toBeUndefined();
    expect(pub.paths['/app/instruments/pump']).toBeUndefined();
    expect(pub.paths['/app/instruments/{instrument}']?.post?.requestBody?.content[J].schema).toEqual({ $ref: '#/components/schemas/CallBody' });
    expect(pub.info.description).toContain('not logged in');
    const token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'gen' }).expect(201)).body.token as string;
    const viaToken: OpenApiDocument = (await request(lab.app).get('/app/openapi.json').set('Authorization', `Bearer ${token}`).expect(200)).body;
    expect(viaToken.components.schemas['Call.pump']).toBeDefined();
  });

  it('renders the API page: sections by tag, method, path, statuses and body fields', async () => {
    const page = await request(lab.app).get('/app/api').expect(200);
    expect(page.headers['content-type']).toContain('text/html');
    for (const section of new Set(ROUTES.map((r) => r.section))) expect(page.text).toContain(`<h2 class="h5">${section}</h2>`);
    expect(page.text).toContain('/app/instruments/{instrument}/actions/order');
    expect(page.text).toContain('href="/app/openapi.json"');
    expect(page.text).toContain('Log in</a> to see the call bodies');
    expect(page.text).toContain('<code>device_name</code>');
    expect(page.text).not.toContain('<h2 class="h5">Live deck</h2>');
    const mine = await lab.admin.get('/api').expect(200);
    expect(mine.text).toContain('href="/openapi.json"');
    expect(mine.text).toContain('<h2 class="h5">Live deck</h2>');
    expect(mine.text).toContain('<code>args.volume_ml</code>');
    const asJson = await lab.admin.get('/app/api?format=json').expect(200);
    expect(asJson.body.openapi).toBe(doc.openapi);
  });
});

describe('buildOpenApi', () => {
  it("moves a plugin schema's local references ($defs, recursion) into components", () => {
    const params = {
      type: 'object',
      properties: { tree: { $ref: '#/$defs/Node' }, again: { $ref: '#' } },
      required: ['tree'],
      $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } },
    };
    const doc = buildOpenApi({
      routes: CATALOGUE.routes,
      serverUrl: 'http://lab.local:8000/',
      instruments: [
        {
          name: 'odd-one',
          driver: 'x',
          description: '',
          source: 'deck',
          methods: [{ name: 'walk', description: '', safety: 'readonly', hidden: false, order: 0, params, inferred: false, inferredFields: [] }],
        },
      ],
    });
    expectWellFormed(doc);
    expect(doc.servers[0].url).toBe('http://lab.local:8000');
    expect(schema(doc, 'Args.odd-one.walk').properties.tree).toEqual({ $ref: '#/components/schemas/Args.odd-one.walk.Node' });
    expect(schema(doc, 'Args.odd-one.walk').properties.again).toEqual({ $ref: '#/components/schemas/Args.odd-one.walk' });
    expect(schema(doc, 'Args.odd-one.walk').$defs).toBeUndefined();
    expect(doc.paths['/app/instruments/odd-one']?.post?.operationId).toBe('call_odd_one');
  });

  it('does not let a device named like a fixed route replace it', () => {
    const doc = buildOpenApi({
      routes: CATALOGUE.routes,
      serverUrl: 'http://x',
      instruments: [
        {
          name: 'proxy',
          driver: 'x',
          description: '',
          source: 'deck',
          methods: [{ name: 'go', description: '', safety: 'readonly', hidden: false, order: 0, params: { type: 'object', properties: {} }, inferred: false, inferredFields: [] }],
        },
      ],
    });
    expect(doc.paths['/app/instruments/proxy']?.get?.operationId).toBe('downloadClient');
    expect(doc.paths['/app/instruments/proxy']?.post?.operationId).toBe('call_proxy');
    expect(doc.components.schemas['Call.proxy']).toBeDefined();
  });
});
