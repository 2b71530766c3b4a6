/**
 * The schema-driven fuzzer (test/full/fuzz.test.ts) for two more doors (issue 26 #15), drawn the same way:
 *
 * - MCP (`/app/mcp`, with an MCP token): JSON-RPC messages built from the tools the server lists (each tool
 *   called with arguments from its input schema, valid-looking and hostile) and malformed envelopes (not
 *   JSON, batches, no `jsonrpc`, ids of every type, unknown methods, junk params, deep nesting, huge strings,
 *   NUL, wrong content types and Accept headers);
 * - the `/ivoryos` forms and JSON: every route of server/ivoryos/routes.ts, its body from its declared schema
 *   (valid-looking and hostile values, wrong types, unknown fields), as JSON and form-encoded, its path
 *   parameters from real names and junk.
 *
 * Each MCP tool and each ivoryOS route is one `it`, its requests drawn by fast-check from tapes of random
 * numbers (test/helpers/fuzz-tape.ts), so a failing request is shrunk to the simplest one that still fails and
 * reported with its seed (issue 27 item 6).
 *
 * Every answer must be below 500 (ivoryOS's instrument routes may answer 502/503/507: the instrument raised,
 * is offline, or its record could not be stored), no promise may be left rejected, and the server answers
 * its health check after. A failure names the request and the answer. The
 * ivoryOS log-out is not sent (it would end the session under test). The Python import routes are fuzzed too
 * (they hung on tiny scripts until issue 26 #2: test/api/python-hostile.test.ts).
 */
import request from 'supertest';
import { z } from 'zod';
import { IVORYOS_ROUTES } from '../../server/ivoryos/routes.js';
import { REACTOR, startLab } from '../api/helpers.js';
import { onTapes } from '../helpers/fuzz-tape.js';

const SEED = 0x1ab_d005;
const CASES_PER_TOOL = 6;
const CASES_PER_ROUTE = 10;
const J = 'application/json';
/** A request that has not answered by then is reported as hanging (and the test goes on). */
const HANG_MS = 10_000;

// The tools are the MCP half's tests: listed when the file is collected, from the lab under test.
const lab = await startLab({ approvalTtlMs: 60_000 });
const token: string = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'fuzz-agent', scope: 'mcp' }).expect(201)).body.token;
await lab.admin.post('/app/workflows').set('Accept', J).send(REACTOR).expect(201);
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);

beforeAll(() => void process.on('unhandledRejection', onUnhandled));
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await lab.close();
});

type Rng = () => number;
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

/** Values no schema asks for: hostile numbers, long and strange text, deep nesting, prototype names. */
function junk(rng: Rng, depth = 0): unknown {
  const deep = () => {
    let v: unknown = 1;
    for (let i = 0; i < 200; i++) v = [v];
    return v;
  };
  const all: (() => unknown)[] = [
    () => null,
    () => -0,
    () => 2 ** 53 + 1,
    () => -1,
    () => 2 ** 31,
    () => 1e308,
    () => 'x'.repeat(100_000),
    () => '\u0000',
    () => '../../etc/passwd',
    () => '<script>alert(1)</script>',
    () => 'é\u202e\ud83d\ude00',
    () => '',
    () => true,
    () => [],
    () => ({}),
    () => ({ __proto__: { polluted: 1 }, constructor: { prototype: 1 } }),
    () => deep(),
    () => (depth < 2 ? [junk(rng, depth + 1), junk(rng, depth + 1)] : 'leaf'),
  ];
  return pick(rng, all)();
}

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  minimum?: number;
  maximum?: number;
  default?: unknown;
};

/** A value of `s`, from the real names where it helps (`names`), or (one time in four) junk. */
function valueOf(s: Schema | undefined, rng: Rng, names: string[], depth = 0): unknown {
  if (!s || depth > 4 || rng() < 0.25) return junk(rng);
  if (s.const !== undefined) return s.const;
  if (s.enum) return pick(rng, s.enum);
  const alt = s.anyOf ?? s.oneOf;
  if (alt?.length) return valueOf(pick(rng, alt), rng, names, depth + 1);
  const type = Array.isArray(s.type) ? pick(rng, s.type) : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) if (s.required?.includes(k) || rng() < 0.6) out[k] = valueOf(v, rng, names, depth + 1);
      if (rng() < 0.15) out[pick(rng, ['__proto__', 'constructor', 'unknown_field'])] = junk(rng);
      return out;
    }
    case 'array':
      return Array.from({ length: Math.floor(rng() * 3) }, () => valueOf(s.items, rng, names, depth + 1));
    case 'integer':
      return Math.floor((s.minimum ?? 0) + rng() * Math.min(10, (s.maximum ?? 10) - (s.minimum ?? 0)));
    case 'number':
      return (s.minimum ?? 0) + rng() * 10;
    case 'boolean':
      return rng() < 0.5;
    case 'string':
      return rng() < 0.5 && names.length ? pick(rng, names) : pick(rng, ['a', '1', 'None', 'true', '2024-01-01', 'x y']);
    default:
      return junk(rng);
  }
}

const excerpt = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v))).slice(0, 300);

/** POST one MCP message; throws (naming it) on an answer of 500 or more, or none within HANG_MS. */
const mcp = async (what: string, body: string, headers: Record<string, string> = {}) => {
  const res = await request(lab.app)
    .post('/app/mcp')
    .set({ Authorization: `Bearer ${token}`, Accept: 'application/json, text/event-stream', 'Content-Type': J, ...headers })
    .send(body)
    .timeout(HANG_MS)
    .catch((e: { timeout?: number }) => {
      if (!e.timeout) throw e;
      throw new Error(`${what}: no answer within ${HANG_MS / 1000} s`);
    });
  if (res.status >= 500) throw new Error(`${what}: ${res.status} ${excerpt(res.text)}`);
  return res;
};
const rpc = (method: string, params: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const tools = ((await mcp('tools/list', rpc('tools/list', {}))).body.result?.tools ?? []) as { name: string; inputSchema: Schema }[];
const toolNames = [...tools.map((t) => t.name), 'react', 'pump', 'dose', '1'];

describe('fuzzing the MCP door: each tool, called with arguments from its input schema', () => {
  it('lists the tools', () => expect(tools.length).toBeGreaterThan(10));

  it.each(tools.map((t, n) => [t.name, t, n] as const))(
    '%s answers every generated call below 500',
    async (name, tool, n) => {
      await mcp(`tools/call ${name} {}`, rpc('tools/call', { name, arguments: {} }, 0));
      // the other calls' arguments drawn by fast-check from tapes: a failure is shrunk, and reported with its seed
      await onTapes(
        async (rng) => {
          const args = valueOf(tool.inputSchema, () => rng.float(), toolNames);
          await mcp(`tools/call ${name} ${excerpt(args)}`, rpc('tools/call', { name, arguments: args }, n));
        },
        { numRuns: CASES_PER_TOOL - 1, seed: SEED + 1000 + n, maxLength: 48 },
      );
    },
    60_000,
  );
});

describe('fuzzing the MCP door: malformed envelopes', () => {
  it('answers every malformed JSON-RPC message below 500, and keeps serving', async () => {
    const envelopes: [string, string, Record<string, string>?][] = [
      ['not JSON', '{"jsonrpc": "2.0", "id": 1, "method": '],
      ['empty', ''],
      ['null', 'null'],
      ['a number', '42'],
      ['an empty batch', '[]'],
      ['a batch', `[${rpc('tools/list', {})}, ${rpc('ping', {}, 2)}, 7]`],
      ['no jsonrpc', JSON.stringify({ id: 1, method: 'tools/list' })],
      ['jsonrpc 1.0', JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tools/list' })],
      ['an unknown method', rpc('lab/explode', {})],
      ['a notification', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })],
      ['initialize with junk', rpc('initialize', { protocolVersion: 12, capabilities: 'all', clientInfo: null })],
      ['an unknown tool', rpc('tools/call', { name: 'no_such_tool', arguments: {} })],
      ['a tool name 100 kB long', rpc('tools/call', { name: 'x'.repeat(100_000), arguments: {} })],
      ['arguments not an object', rpc('tools/call', { name: 'lab_status', arguments: [1, 2] })],
      ['params a string', rpc('tools/call', 'lab_status')],
      ['a NUL in a name', rpc('tools/call', { name: 'lab_\u0000status', arguments: {} })],
      ['a result instead of a request', JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} })],
      ['an error instead of a request', JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'x' } })],
      ['form-encoded', 'jsonrpc=2.0&id=1&method=tools/list', { 'Content-Type': 'application/x-www-form-urlencoded' }],
      ['text/plain', rpc('tools/list', {}), { 'Content-Type': 'text/plain' }],
      ['no event-stream in Accept', rpc('tools/list', {}), { Accept: J }],
    ];
    for (const id of [null, 'x', -1, 2 ** 53 + 1, 1.5, {}, [], true]) envelopes.push([`id ${excerpt(id)}`, rpc('tools/list', {}, id)]);
    for (const [what, body, headers] of envelopes) await mcp(what, body, headers);
    // junk params of each method, drawn from tapes (shrunk on a failure)
    let i = 0;
    await onTapes(
      async (rng) => {
        const next = () => rng.float();
        const method = pick(next, ['tools/call', 'tools/list', 'initialize', 'ping', 'resources/list']);
        const params = junk(next);
        await mcp(`junk params of ${method}: ${excerpt(params)}`, rpc(method, params, i++));
      },
      { numRuns: 20, seed: SEED, maxLength: 16 },
    );
    // GET and DELETE of a stateless server
    for (const method of ['get', 'delete'] as const) {
      const res = await request(lab.app)
        [method]('/app/mcp')
        .set({ Authorization: `Bearer ${token}`, Accept: 'application/json, text/event-stream' });
      expect(res.status).toBeLessThan(500);
    }
    await request(lab.app).get('/app/healthz').expect(200);
    expect(unhandled).toEqual([]);
  }, 120_000);
});

describe('fuzzing the /ivoryos forms: each route, as JSON and as a form', () => {
  const instrumentRoute = (path: string) => path.startsWith('/instruments/{') || path.startsWith('/backend_control/{');
  const fine = (route: string, status: number) => status < 500 || (instrumentRoute(route) && [502, 503, 507].includes(status));
  const routes = Object.values(IVORYOS_ROUTES).filter((r) => r.path !== '/auth/logout'); // (it would end the session under test)
  let names: string[] = [];
  let segments: string[] = [];
  beforeAll(() => {
    const instruments = lab.runtime.deck.list().map((i) => i.name);
    names = [...instruments, ...instruments.map((i) => `deck.${i}`), 'react', 'reactor', '1', 'None'];
    segments = [...names, '0', '-1', '99999999999', 'abc', '%2e%2e', 'constructor', '%E0%A4%A'];
  });
  afterAll(async () => {
    await request(lab.app).get('/app/healthz').expect(200);
    expect(unhandled).toEqual([]);
  });

  it.each(routes.map((r, n) => [`${r.method} ${r.path}`, r, n] as const))(
    '%s answers every generated request below 500 (502/503/507 only from instruments)',
    async (_name, r, n) => {
      const schema = r.body ? (z.toJSONSchema(r.body.schema, { io: 'input', unrepresentable: 'any' }) as Schema) : undefined;
      await onTapes(
        async (tape) => {
          const rng = () => tape.float();
          const path = r.path.replace(/\{(\w+)\}/g, () => pick(rng, segments));
          const form = r.method !== 'GET' && rng() < 0.4;
          const body = r.method === 'GET' ? undefined : valueOf(schema, rng, names);
          let req = (r.method === 'GET' ? lab.admin.get(`/ivoryos${path}`) : lab.admin.post(`/ivoryos${path}`)).set('Accept', J);
          if (body !== undefined) {
            if (form && body && typeof body === 'object' && !Array.isArray(body)) {
              const fields = Object.entries(body as Record<string, unknown>).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`);
              req = req.type('form').send(fields.join('&'));
            } else req = req.set('Content-Type', J).send(JSON.stringify(body) ?? 'null');
          }
          const what = `${r.method} /ivoryos${path} ${form ? 'form' : 'json'} ${excerpt(body)}`;
          const res = await req.timeout(HANG_MS).catch((e: { timeout?: number }) => {
            if (!e.timeout) throw e;
            throw new Error(`${what}: no answer within ${HANG_MS / 1000} s`);
          });
          if (!fine(r.path, res.status)) throw new Error(`${what}: ${res.status} ${excerpt(res.text)}`);
        },
        // the first case is the empty tape (every choice its simplest); the seed makes the run repeatable
        { numRuns: CASES_PER_ROUTE, seed: SEED + 1 + n, simplestFirst: true, maxLength: 48 },
      );
      // a malformed body, once each kind
      if (r.method !== 'POST') return;
      const path = r.path.replace(/\{(\w+)\}/g, () => names[0] ?? 'x');
      for (const [type, text] of [
        [J, '{"a": '],
        ['application/x-www-form-urlencoded', '%E0%A4%A=1&a=%'],
        ['text/plain', 'hello'],
      ] as const) {
        const res = await lab.admin.post(`/ivoryos${path}`).set('Accept', J).set('Content-Type', type).send(text);
        if (!fine(r.path, res.status)) throw new Error(`POST /ivoryos${path} malformed ${type}: ${res.status} ${excerpt(res.text)}`);
      }
    },
    60_000,
  );
});
