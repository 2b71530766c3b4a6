/**
 * A schema-driven fuzzer over the whole HTTP API. The OpenAPI document the app serves (GET /app/openapi.json)
 * lists every operation with its path parameters, query parameters and request bodies (JSON Schema); from it
 * and a seeded PRNG this file builds, for every operation, a bounded, deterministic set of requests:
 *
 * - an identity sweep: anonymous (JSON and page), an operator, the admin and an admin API token, each with a
 *   valid-looking request, checking the rules of docs/security.md (not logged in: 401 for JSON, 302 to the
 *   login form for pages; an operator on an admin-only route: 403);
 * - fuzz cases: valid-looking bodies generated from the request-body schema (with real names and ids from the
 *   lab where a field is one: instruments, methods, workflows, uploads, queued tasks; and, for the routes whose
 *   validation a schema-only body rarely passes, bodies the lab accepts), and invalid ones: wrong
 *   types, missing required fields, unknown fields (`__proto__`, `constructor`), 100 kB strings, 200-level
 *   nesting, hostile numbers (1e999, -0, 2^53+1), path traversal, markup, unicode and NUL; malformed JSON,
 *   bodies of the wrong kind; form-encoded bodies where the operation takes them (with repeated keys); multipart
 *   uploads (hostile CSV files, a logo) and malformed multipart for the upload routes; path parameters from real
 *   names and ids and junk (`0`, `-1`, `99999999999`, `abc`, `%2e%2e`, `constructor`, malformed %-escapes);
 *   query parameters from their schemas and junk (repeated keys too);
 * - sweeps: every path parameter with each junk segment once, every query parameter with a NUL and integers
 *   past 2^31, every JSON body with a NUL in each string and 2^31 for each integer.
 *
 * Every response must be below 500 (502, 503 and 507 are legitimate answers of instrument calls only: the
 * instrument raised, is offline, or its record could not be stored) and come within 5 s. Failures are
 * collected and reported once at the end, with the request, the identity, a body excerpt, the status, the
 * error message and what the server logged. Requests go to the in-process app only (supertest).
 *
 * Operations with state the fuzzer must not destroy are fuzzed in a bounded way, said where it happens: log
 * out and password changes use spare accounts (the identities under test stay logged in), the bearer token
 * used by the fuzzer is never revoked, an admin's actions on accounts (role, password, disable, delete) name
 * only disposable accounts by their real ids (junk ids never hit a real account), and the live event stream
 * (an endless response) is read up to its first event and then dropped (and HEAD is sent).
 *
 * The requests are fixed by the seeds; the real ids they draw on come from the lab's state, which the runner
 * (working through what the fuzzer queued) also changes. FUZZ_DEBUG=1 prints the time and statuses of each
 * operation; FUZZ_TRACE=<part of an operation> prints each of its requests with the answer.
 */
import { mulberry32 } from '../../plugins/sim/bench.js';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import type { Response, Test } from 'supertest';
import { validateWorkflow } from '../../core/workflow/validate.js';
import { signupAndLogin, startLab, PASSWORD, type TestLab } from '../api/helpers.js';
import { waitFor } from '../helpers/wait.js';

// ---------------------------------------------------------------------------------------------------------
// Knobs

/** `npm run bench` runs a longer fuzz: FUZZ_SCALE times the cases, from FUZZ_SEED (the suite: 1, the default). */
const knob = (name: string, fallback: number) => {
  const v = process.env[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive whole number, got ${JSON.stringify(v)}`);
  return n;
};
const SEED = knob('FUZZ_SEED', 0x1ab_dec);
const SCALE = knob('FUZZ_SCALE', 1);
/** Fuzz cases per operation (besides the identity sweep); operations with a body get the larger number. */
const CASES_WITH_BODY = 18 * SCALE;
const CASES_WITHOUT_BODY = 8 * SCALE;
/** The API document and page are built whole for every request (~200 ms): a few cases suffice. */
const FEW_CASES = new Set(['GET /app/api', 'GET /app/openapi.json']);
/** Every answer must come within this. */
const SLOW_MS = 5000;
/** A request that has not answered by then is reported as hanging (and the test goes on). */
const HANG_MS = 10_000;
const J = 'application/json';
/**
 * What only an admin may do (docs/security.md): the console, imports, connecting devices, the logo, sign-up,
 * managing accounts.
 */
const ADMIN_ONLY = new Set([
  'POST /app/instruments/console/execute',
  'POST /app/instruments/new/module',
  'POST /app/instruments/new/deck-python',
  'POST /app/instruments/new/{instrument}',
  'POST /app/customize-logo',
  'POST /app/account/signup',
  'GET /app/account/users',
  'POST /app/account/users/{user_id}/role',
  'POST /app/account/users/{user_id}/password',
  'POST /app/account/users/{user_id}/disable',
  'POST /app/account/users/{user_id}/enable',
  'POST /app/account/users/{user_id}/delete',
  'POST /app/approvals/policy',
  'GET /app/notifications',
  'PUT /app/notifications',
  'POST /app/notifications',
  'POST /app/notifications/test',
  'PUT /app/safety',
  'POST /app/safety/file',
]);

// ---------------------------------------------------------------------------------------------------------
// The seeded PRNG the simulated instruments use (mulberry32), and helpers

/** FNV-1a: a per-operation seed, so adding an operation does not change the requests of the others. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

class Rng {
  private next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float() {
    return this.next();
  }
  int(lo: number, hi: number) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number) {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
  word(n = this.int(3, 8)) {
    const a = 'abcdefghijklmnopqrstuvwxyz';
    let s = '';
    for (let i = 0; i < n; i++) s += a[this.int(0, 25)];
    return s;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Hostile values

const HUGE = 'A'.repeat(100 * 1024);
const HUGE_UNICODE = 'ü🧪'.repeat((100 * 1024) / 6);
const SPECIAL_STRINGS = [
  '../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  'ünïcødé 🧪 ‮drowssap',
  'null\u0000byte',
  '',
  ' ',
  '\t\n',
  "' OR 1=1 --",
  '${7*7}{{7*7}}',
  '%2e%2e%2f',
  'NaN',
  '-1',
  '1e999',
  'x'.repeat(1000),
  '\ud800', // a lone surrogate
];
/** Number literals written into the JSON text as they are (1e999 parses as Infinity, -0 as minus zero). */
const RAW_NUMBERS = ['-1', '0', '-0', '1e999', '-1e999', '9007199254740993', '1.7976931348623157e308', '0.5', '123456789012345678901234567890', '-99999999999', '99999999999', '2147483648'];
/** Every path parameter gets each of these once (the other junk is drawn at random). */
const SWEEP_SEGMENTS = ['0', '-1', '99999999999', '2147483648', 'abc', '%2e%2e', '%00', 'a%00b', '%ZZ', 'constructor', '__proto__', '1.5', 'a'.repeat(2000)];
const JUNK_SEGMENTS = [
  '0',
  '-1',
  '99999999999',
  '9223372036854775808',
  'abc',
  '%2e%2e',
  '..%2f..%2fsession-secret',
  'constructor',
  '__proto__',
  'toString',
  '%00',
  '%ZZ',
  '1.5',
  '1e3',
  '%F0%9F%A7%AA',
  'new',
  'a'.repeat(2000),
  '%3Cscript%3E',
];

/** A number written into JSON text verbatim. */
class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of `depth` levels of nesting, arrays and objects alternating (built flat: no recursion). */
function nested(depth: number, leaf = '1'): RawJson {
  let open = '';
  const closers: string[] = [];
  for (let i = 0; i < depth; i++) {
    open += i % 2 ? '{"a":' : '[';
    closers.push(i % 2 ? '}' : ']');
  }
  return new RawJson(open + leaf + closers.reverse().join(''));
}

/** JSON text of a value: own keys only (so a `__proto__` key is sent as a key), RawJson as written. */
function jsonText(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  return `{${Object.keys(v)
    .map((k) => `${JSON.stringify(k)}:${jsonText((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/** An object with a real own `__proto__` key (a literal would set the prototype instead). */
function withKey(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  return obj;
}

/** A lookup by name with no prototype: a device may well be called `constructor`. */
const byName = <T>(entries: [string, T][]): Record<string, T> => Object.assign(Object.create(null) as Record<string, T>, Object.fromEntries(entries));

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawJson);

// ---------------------------------------------------------------------------------------------------------
// The OpenAPI document, as far as the fuzzer reads it

type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  contentMediaType?: string;
};
interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  schema: Schema;
}
interface Operation {
  operationId: string;
  parameters?: Param[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
  'x-labdeck-admin'?: boolean;
  'x-labdeck-live'?: boolean;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

function pointer(doc: unknown, ref: string): unknown {
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node;
}

// ---------------------------------------------------------------------------------------------------------
// What the lab has: real names and ids, refreshed before each operation

interface Pools {
  instruments: string[];
  methods: Record<string, string[]>;
  drivers: string[];
  workflows: string[];
  stepIds: number[];
  queueIds: number[];
  runIds: number[];
  configFiles: string[];
  historyFiles: string[];
  tokenIds: number[];
  /** Accounts the fuzzer may promote, demote, disable, delete: never the identities under test. */
  userIds: number[];
  staticFiles: string[];
}

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const FILEPATHS = [
  here('../fixtures/api/thermostat.ts'),
  here('../fixtures/api/broken-module.ts'),
  here('../fixtures/api/extra-deck.ts'),
  here('../fixtures/api/reserved-deck.ts'),
  here('../../examples/python/instruments.py'),
  here('../../examples/python/deck.py'),
  here('../../server/static/app.css'),
  'no/such/module.ts',
  'no-such.py',
  '../../etc/passwd',
  '/etc/passwd',
  '/etc',
  'constructor',
];

// ---------------------------------------------------------------------------------------------------------
// Requests

type Identity = 'anonymous' | 'operator' | 'admin' | 'token' | 'bad-token' | 'spare';
type Body =
  | { kind: 'none' }
  | { kind: 'json'; text: string; wellFormed: boolean }
  | { kind: 'form'; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'raw'; contentType: string; text: string }
  | { kind: 'multipart'; fields: [string, string][]; files: { field: string; name: string; data: Buffer }[] };

interface Case {
  identity: Identity;
  method: string;
  url: string;
  accept?: string;
  headers: Record<string, string>;
  body: Body;
  /** What the fuzzer meant (for the report). */
  note: string;
  /** Check the login/admin rules on this request (the body is well formed and under the size limit). */
  checkAuth: boolean;
}

interface Failure {
  op: string;
  identity: Identity;
  request: string;
  body: string;
  status: number | string;
  ms: number;
  message: string;
  problem: string;
  logged?: string;
}

const excerpt = (s: string, n = 160) => {
  const flat = s.replace(/\s+/g, ' ');
  return flat.length > n ? `${flat.slice(0, n)}… (${s.length} chars)` : flat;
};

function bodyExcerpt(b: Body): string {
  switch (b.kind) {
    case 'none':
      return '(no body)';
    case 'json':
      return `json ${excerpt(b.text)}`;
    case 'form':
      return `form ${excerpt(b.text)}`;
    case 'text':
      return `text ${excerpt(b.text)}`;
    case 'raw':
      return `${b.contentType} ${excerpt(b.text)}`;
    case 'multipart':
      return `multipart fields=${excerpt(JSON.stringify(b.fields), 100)} files=${JSON.stringify(b.files.map((f) => ({ field: f.field, name: excerpt(f.name, 40), bytes: f.data.length, head: excerpt(f.data.subarray(0, 60).toString('latin1'), 60) })))}`;
  }
}

/** The error message of an answer: the JSON error, or the alert of an error page, or the start of the text. */
function messageOf(res: Response | undefined): string {
  if (!res) return '';
  const body = res.body as { error?: { message?: string } } | undefined;
  if (body?.error?.message) return body.error.message;
  const text = typeof res.text === 'string' ? res.text : '';
  const alert = /class="alert[^"]*"[^>]*>([\s\S]*?)<\/div>/.exec(text)?.[1];
  if (alert) return excerpt(alert.replace(/<[^>]+>/g, ' '), 200);
  return excerpt(text, 200);
}

// ---------------------------------------------------------------------------------------------------------

describe('fuzzing every operation of the OpenAPI document', () => {
  let lab: TestLab;
  let operator: ReturnType<typeof request.agent>;
  let token = '';
  let tokenId = 0;
  let doc: Doc;

  beforeAll(async () => {
    lab = await startLab();
    operator = await signupAndLogin(lab.app, 'olga');
    const made = await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'fuzzer' }).expect(201);
    token = made.body.token;
    tokenId = made.body.id;
    doc = (await lab.admin.get('/app/openapi.json').expect(200)).body;
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
  });

  it(
    'answers every generated request below 500 (502/503/507 only from instruments), within 5 s, and keeps the identity rules',
    async () => {
      const t0 = Date.now();
      const { runtime } = lab;
      const failures: Failure[] = [];
      const stats = { requests: 0, byStatus: new Map<number, number>(), slowest: { ms: 0, what: '' }, ops: 0 };

      // What the server logs (the error handler logs every 500 with its stack) goes with the failing request.
      const logged: string[] = [];
      const origError = console.error;
      const origWarn = console.warn;
      console.error = (...a: unknown[]) => void logged.push(a.map((x) => (x instanceof Error ? (x.stack ?? x.message) : typeof x === 'string' ? x : JSON.stringify(x))).join(' '));
      console.warn = console.error;
      const unhandled: unknown[] = [];
      const onUnhandled = (e: unknown) => unhandled.push(e);
      process.on('unhandledRejection', onUnhandled);

      try {
        // ---- the lab's state: seeds the fuzzer draws real names and ids from ------------------------------
        const adminUser = (await runtime.store.users.byName('ada'))!;
        const olgaUser = (await runtime.store.users.byName('olga'))!;
        const SEED_WORKFLOWS: Record<string, { def: unknown; by: number }> = {
          fz_ping: {
            by: adminUser.id,
            def: { name: 'fz_ping', parameters: [{ name: 'x', type: 'number', default: 0.5 }], outputs: ['out'], main: [{ kind: 'call', instrument: 'noop', method: 'ping', save_as: 'out' }] },
          },
          fz_camp: {
            by: adminUser.id,
            def: {
              name: 'fz_camp',
              parameters: [{ name: 'x', type: 'number', default: 100 }],
              outputs: ['y'],
              main: [{ kind: 'call', instrument: 'stirrer', method: 'set_speed', args: { rpm: { param: 'x' } }, save_as: 'y' }],
            },
          },
          fz_hold: { by: olgaUser.id, def: { name: 'fz_hold', main: [{ kind: 'pause', message: 'held by the fuzzer' }] } },
          fz_olga: {
            by: olgaUser.id,
            def: { name: 'fz_olga', main: [{ kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' }], outputs: ['mass'] },
          },
        };
        const reseedWorkflows = async () => {
          for (const [name, { def, by }] of Object.entries(SEED_WORKFLOWS)) {
            if (!(await runtime.store.workflows.get(name))) await runtime.store.workflows.save(name, validateWorkflow(def, runtime.deck), by);
          }
        };
        await reseedWorkflows();
        const seedRecord = async (userId: number) => {
          const run = await runtime.store.runs.create({
            taskId: null,
            name: 'fz-record',
            workflowName: 'fz_ping',
            workflowVersion: 1,
            workflow: { name: 'fz_ping', outputs: ['out'] },
            parameters: [{ x: 1 }],
            status: 'completed',
            userId,
            startedAt: new Date(),
          });
          await runtime.store.logs.add(run.id, 'info', 'seeded by the fuzzer');
          return run.id;
        };
        const seedUploads = async () => {
          const cfg = await lab.admin.post('/app/files/batch-configs').set('Accept', J).field('workflow', 'fz_ping').attach('file', Buffer.from('x\n0.1\n0.2\n'), 'cfg.csv');
          const hist = await lab.admin.post('/app/files/execution-data').set('Accept', J).attach('file', Buffer.from('x,y\n0.1,1\n0.2,2\n'), 'hist.csv');
          if (cfg.status !== 201 || hist.status !== 201) throw new Error(`seeding uploads failed: ${cfg.status} ${hist.status}`);
        };
        await seedUploads();
        // one real run (steps, phases, log), and a direct call (a step record)
        const run = await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'fz_ping', repeat: 2 }).expect(200);
        // the run may not have started yet (PostgreSQL is slower): wait for its task to end, not for an idle moment
        await waitFor(async () => (await runtime.store.queue.get(run.body.task_id))?.status === 'done', 'the seeded run to be done');
        await lab.admin.post('/app/instruments/noop').set('Accept', J).send({ method: 'ping' }).expect(200);
        expect(run.body.task_id).toBeGreaterThan(0);
        // disposable API tokens (the fuzzer may revoke these; never the one it uses)
        for (const n of ['spare-1', 'spare-2']) await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: n }).expect(201);
        // spare accounts, made now (the fuzzer may close sign-up): log-out and password changes use them
        const SPARE_USER = 'fz_spare';
        let sparePassword = PASSWORD;
        await request(lab.app).post('/app/auth/signup').type('form').send({ username: SPARE_USER, password: PASSWORD }).expect(302);
        const spareUser = (await runtime.store.users.byName(SPARE_USER))!;
        let madeUsers = 0;
        const spareAgent = async () => {
          const a = request.agent(lab.app);
          await a.post('/app/auth/login').type('form').send({ username: SPARE_USER, password: sparePassword });
          return a;
        };

        const instrumentList = (await lab.admin.get('/app/instruments/').set('Accept', J).expect(200)).body.instruments as { name: string; methods: string[] }[];
        const driverList = (await lab.admin.get('/app/instruments/new/').set('Accept', J).expect(200)).body.drivers as { name: string; options: Schema }[];
        const pools: Pools = {
          instruments: instrumentList.map((i) => i.name),
          methods: byName(instrumentList.map((i) => [i.name, i.methods])),
          drivers: driverList.map((d) => d.name),
          workflows: [],
          stepIds: [],
          queueIds: [],
          runIds: [],
          configFiles: [],
          historyFiles: [],
          tokenIds: [],
          userIds: [],
          staticFiles: readdirSync(here('../../server/static')),
        };
        const driverOptions = byName(driverList.map((d) => [d.name, d.options]));

        /** Ids the answers handed out: call records, queued tasks. */
        const seenSteps: number[] = [];
        const seenTasks: number[] = [];
        const refresh = async (opKey: string) => {
          await reseedWorkflows();
          // the queue routes need queued tasks: one that waits at a pause step, and two behind it (one olga's)
          if (opKey.startsWith('POST /app/executions/queue/') && (await runtime.store.queue.open()).filter((t) => t.status === 'pending').length < 2) {
            for (const [wf, by] of [
              ['fz_hold', adminUser.id],
              ['fz_ping', adminUser.id],
              ['fz_ping', olgaUser.id],
            ] as const) {
              seenTasks.push((await runtime.runner.submit({ workflow: wf, repeat: 1, userId: by })).id);
            }
          }
          const runs = (await runtime.store.runs.list({ page: 1, perPage: 20 })).rows;
          if (runs.length < 3) {
            await seedRecord(adminUser.id);
            await seedRecord(olgaUser.id);
          }
          pools.workflows = (await runtime.store.workflows.list()).map((w) => w.name).slice(0, 20);
          pools.runIds = (await runtime.store.runs.list({ page: 1, perPage: 20 })).rows.map((r) => r.id);
          pools.queueIds = [...new Set([...(await runtime.store.queue.open()).map((t) => t.id), ...seenTasks.slice(-10)])];
          pools.configFiles = (await runtime.store.files.list('config')).map((f) => f.storedName).slice(-10);
          pools.historyFiles = (await runtime.store.files.list('history')).map((f) => f.storedName).slice(-10);
          if (!pools.configFiles.length || !pools.historyFiles.length) await seedUploads();
          pools.tokenIds = (await runtime.store.tokens.list(adminUser.id)).map((t) => t.id).filter((id) => id !== tokenId);
          // disposable accounts for the users routes (the fuzzer deletes some): three at all times
          const kept = new Set([adminUser.id, olgaUser.id, spareUser.id]);
          let users = (await runtime.store.users.list()).filter((u) => !kept.has(u.id) && u.username.startsWith('fz_user_'));
          for (let i = users.length; i < 3; i++) await runtime.accounts.signup(`fz_user_${++madeUsers}`, PASSWORD, { bypassClosed: true });
          users = (await runtime.store.users.list()).filter((u) => !kept.has(u.id) && u.username.startsWith('fz_user_'));
          pools.userIds = users.map((u) => u.id);
          const inst = runtime.deck.list();
          pools.instruments = inst.map((i) => i.name);
          pools.methods = byName(inst.map((i) => [i.name, i.methods.map((m) => m.name)]));
          pools.stepIds = seenSteps.length ? seenSteps.slice(-10) : [1];
        };
        await refresh('');

        // ---- the generator ---------------------------------------------------------------------------
        const deref = (s: Schema | undefined): Schema => {
          let x: Schema | undefined = s;
          for (let i = 0; x?.$ref && i < 32; i++) x = pointer(doc, x.$ref) as Schema | undefined;
          return x ?? {};
        };
        const MAX_DEPTH = 5;

        /** Real values for fields whose name says what they are. */
        const hintFor = (rng: Rng, key: string | undefined, ctx: { instrument?: string }): unknown => {
          switch (key) {
            case 'instrument':
              return rng.pick(pools.instruments);
            case 'method': {
              const inst = ctx.instrument && pools.methods[ctx.instrument] ? ctx.instrument : rng.pick(pools.instruments);
              return rng.pick(pools.methods[inst]?.length ? pools.methods[inst] : ['ping']);
            }
            case 'workflow':
              return rng.pick(pools.workflows.length ? pools.workflows : ['fz_ping']);
            case 'optimizer_type':
              return rng.pick(['random', 'sobol', 'gp', 'random', 'nope']);
            case 'config_file':
              return rng.pick(pools.configFiles.length ? pools.configFiles : ['cfg-none.csv']);
            case 'existing_data':
              return rng.pick(pools.historyFiles.length ? pools.historyFiles : ['hist-none.csv']);
            case 'id':
              return rng.pick(pools.queueIds.length ? pools.queueIds : [1]);
            case 'filepath':
              return rng.pick(FILEPATHS);
            case 'device_name':
              return rng.pick(['fz_dev_' + rng.word(4), 'constructor', '__proto__', 'toString', 'new', 'proxy', 'pump', 'a'.repeat(300)]);
            case 'parameters':
              return rng.pick(['x: 0..1', 'x: 0..1, n: int 1..10', 'x: 1..0', 'x: 0..1e309', 'x: a|b|c', 'x:', '..', 'x: 0..1, x: 0..1']);
            case 'objectives':
              return rng.pick(['y:max', 'out:min', 'y:max, y:min', 'nope:max', ':max', 'y:sideways']);
            case 'repeat':
              return rng.pick([1, 2, '1', '2', 3]);
            case 'code':
              return rng.pick([
                '1 + 1',
                'await deck.noop.ping()',
                'console.log("hi"); 42',
                'const x: number = 3; x * 2',
                'throw new Error("boom")',
                '<script>',
                'deck.nope.nothing()',
                'process.exit(3)',
              ]);
            case 'username':
              return rng.pick(['ada', 'olga', 'nobody_' + rng.word(3), 'x'.repeat(65), 'bad name!', '']);
            case 'password':
            case 'old_password':
              return rng.pick(['wrong password', 'short', '', 'x'.repeat(2000)]);
            case 'new_password':
              return rng.pick(['a new long password', 'short', 'x'.repeat(1025)]);
            case 'mode':
              return rng.pick(['light', 'dark', 'neon']);
            case 'order': {
              const ms = pools.methods[ctx.instrument ?? ''] ?? Object.values(pools.methods).flat();
              return ms.filter(() => rng.chance(0.5));
            }
            case 'direction':
              return rng.pick(['up', 'down', 'top', 'bottom', 'sideways']);
            default:
              return undefined;
          }
        };

        function valid(rng: Rng, s0: Schema | undefined, depth: number, key?: string, ctx: { instrument?: string } = {}): unknown {
          const s = deref(s0);
          if ('const' in s) return s.const;
          if (s.enum) return rng.pick(s.enum);
          if (key && rng.chance(0.75)) {
            const h = hintFor(rng, key, ctx);
            if (h !== undefined) return h;
          }
          const alts = s.oneOf ?? s.anyOf;
          if (alts) return valid(rng, rng.pick(alts), depth, key, ctx);
          if (s.allOf) {
            const parts = s.allOf.map((p) => valid(rng, p, depth, key, ctx));
            return parts.every(isPlainObject) ? Object.assign({}, ...parts) : parts[parts.length - 1];
          }
          let type = s.type;
          if (Array.isArray(type)) type = rng.pick(type);
          if (!type) type = s.properties ? 'object' : s.items ? 'array' : rng.pick(['string', 'integer', 'boolean', 'array', 'object']);
          switch (type) {
            case 'object': {
              const out: Record<string, unknown> = {};
              const req = new Set(s.required ?? []);
              const props = Object.entries(s.properties ?? {});
              // a call body names its instrument first, so its method and args can follow it
              props.sort(([a], [b]) => Number(b === 'instrument') - Number(a === 'instrument'));
              const inner = { ...ctx };
              for (const [k, ps] of props) {
                if (k === 'instrument' && typeof out.instrument === 'string') continue;
                if (req.has(k) || (depth < MAX_DEPTH && rng.chance(0.5))) {
                  out[k] = valid(rng, ps, depth + 1, k, inner);
                  if (k === 'instrument' && typeof out[k] === 'string') inner.instrument = out[k] as string;
                }
              }
              const extra = s.additionalProperties;
              if (extra && typeof extra === 'object' && depth < MAX_DEPTH && rng.chance(0.3)) out[rng.word(4)] = valid(rng, extra, depth + 1);
              return out;
            }
            case 'array': {
              const n = depth >= MAX_DEPTH ? (s.minItems ?? 0) : rng.int(s.minItems ?? 0, Math.min(s.maxItems ?? 3, 3));
              return Array.from({ length: n }, () => valid(rng, s.items, depth + 1));
            }
            case 'integer':
            case 'number': {
              const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (type === 'integer' ? 1 : 0.001) : undefined);
              const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (type === 'integer' ? 1 : 0.001) : undefined);
              let v: number;
              if (lo !== undefined && hi !== undefined && hi - lo <= 1000) v = lo + rng.float() * (hi - lo);
              else if (lo !== undefined) v = lo + rng.float() * 10;
              else if (hi !== undefined) v = hi - rng.float() * 10;
              else v = rng.pick([0, 1, 2.5, 10, -3, 100]);
              return type === 'integer' ? Math.round(v) : Math.round(v * 1000) / 1000;
            }
            case 'boolean':
              return rng.chance(0.5);
            case 'null':
              return null;
            default: {
              if (s.pattern === '^[A-Za-z_][A-Za-z0-9_-]*$' || key === 'name' || key === 'save_as') return `fz_${rng.word(5)}`;
              let v = rng.pick(['alpha', 'x', 'y', 'mass', 'out', rng.word(), `${rng.word()} ${rng.word()}`]);
              if (s.minLength && v.length < s.minLength) v = v.padEnd(s.minLength, 'x');
              if (s.maxLength !== undefined) v = v.slice(0, s.maxLength);
              return v;
            }
          }
        }

        /**
         * Bodies the lab accepts, for operations where a schema-only body rarely gets past validation (a run needs
         * a saved workflow, a campaign a search space over its parameters): half of the valid-looking bodies, and
         * the starting point of half of the broken ones, so the fuzz reaches the code behind the validation.
         */
        const template = (rng: Rng, opKey: string, url: string): unknown => {
          const inst = pathInstrument(url) ?? '';
          const methods = pools.methods[inst] ?? [];
          const wfDoc = (name?: string) => ({
            ...(name ? { name } : {}),
            description: rng.pick(['', 'fuzzed', '<b>bold</b>']),
            parameters: [{ name: 'x', type: 'number', default: 1 }],
            outputs: ['out'],
            main: [
              { kind: 'call', instrument: 'noop', method: 'ping', save_as: 'out' },
              ...(rng.chance(0.5) ? [{ kind: 'repeat', times: rng.int(0, 2), steps: [{ kind: 'call', instrument: 'stirrer', method: 'set_speed', args: { rpm: { param: 'x' } } }] }] : []),
            ],
          });
          switch (opKey) {
            case 'POST /app/executions/config':
              return rng.pick([
                { workflow: 'fz_ping', repeat: rng.int(1, 3) },
                { workflow: 'fz_ping', config: [{ x: 0.1 }, { x: 2 }], name: `fz run ${rng.word(3)}` },
                { workflow: 'fz_ping', config_file: rng.pick(pools.configFiles.length ? pools.configFiles : ['none.csv']) },
                { workflow: 'fz_olga', repeat: 1 },
              ]);
            case 'POST /app/executions/campaign':
              return {
                workflow: 'fz_camp',
                repeat: rng.int(1, 3),
                optimizer_type: rng.pick(['random', 'sobol', 'gp']),
                parameters: rng.pick(['x: 0..1', [{ name: 'x', type: 'range', bounds: [0, 1] }]]),
                objectives: rng.pick(['y:max', [{ name: 'y', minimize: true }]]),
                ...(rng.chance(0.3) ? { existing_data: rng.pick(pools.historyFiles.length ? pools.historyFiles : ['none.csv']) } : {}),
                ...(rng.chance(0.3) ? { batch_size: rng.int(1, 2), seed: rng.int(0, 9) } : {}),
              };
            case 'POST /app/executions/optimizer_schema':
              return rng.pick([{}, { optimizer_type: rng.pick(['random', 'sobol', 'gp']) }]);
            case 'POST /app/workflows':
              return wfDoc(`fz_wf_${rng.word(5)}`);
            case 'PUT /app/workflows/{name}': {
              const name = decode(/\/workflows\/([^/?]+)/.exec(url)?.[1] ?? '');
              return wfDoc(rng.chance(0.5) ? name : undefined);
            }
            case 'POST /app/instruments/{instrument}/actions/order': {
              const order = [...methods];
              for (let i = order.length - 1; i > 0; i--) {
                const j = rng.int(0, i);
                [order[i], order[j]] = [order[j], order[i]];
              }
              return { order: order.slice(0, rng.int(0, order.length)) };
            }
            // each takes its own fields only (another is refused by name)
            case 'POST /app/executions/queue/delete':
              return { id: rng.pick(pools.queueIds.length ? pools.queueIds : [1]) };
            case 'POST /app/executions/queue/reorder':
              return { id: rng.pick(pools.queueIds.length ? pools.queueIds : [1]), direction: rng.pick(['up', 'down', 'top', 'bottom']) };
            case 'POST /app/executions/queue/task/rename':
              return { id: rng.pick(pools.queueIds.length ? pools.queueIds : [1]), new_name: `renamed ${rng.word(4)}` };
            case 'POST /app/auth/signup':
              return { username: `fz_${rng.word(6)}`, password: 'a long enough password' };
            case 'POST /app/instruments/new/{instrument}':
              return { device_name: `fz_dev_${rng.word(5)}`, kwargs: valid(rng, driverOptions[inst] ?? { type: 'object' }, 1) };
            default:
              return undefined;
          }
        };

        /** Every path into a value (objects and arrays), to pick a place to break. */
        const pathsOf = (v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] => {
          if (at.length > 6) return out;
          const children: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : isPlainObject(v) ? Object.entries(v) : [];
          for (const [k, x] of children) {
            out.push([...at, k]);
            pathsOf(x, [...at, k], out);
          }
          return out;
        };
        const setAt = (root: unknown, path: (string | number)[], value: unknown): unknown => {
          if (!path.length) return value;
          let node = root as Record<string | number, unknown>;
          for (const p of path.slice(0, -1)) node = node[p] as Record<string | number, unknown>;
          const last = path[path.length - 1];
          if (isPlainObject(node)) withKey(node, String(last), value);
          else (node as unknown as unknown[])[last as number] = value;
          return root;
        };
        const wrongValue = (rng: Rng, old: unknown): unknown => {
          const choices: unknown[] = [null, true, 0, -1, 'text', [], {}, [1, 'a'], { nested: { deeper: 1 } }, new RawJson(rng.pick(RAW_NUMBERS)), rng.pick(SPECIAL_STRINGS)];
          return rng.pick(choices.filter((c) => typeof c !== typeof old || Array.isArray(c) !== Array.isArray(old)));
        };

        type Mutation = 'wrong-type' | 'drop-required' | 'extra-field' | 'huge-string' | 'deep-nesting' | 'bad-number' | 'special-string';
        const MUTATIONS: Mutation[] = ['wrong-type', 'drop-required', 'extra-field', 'huge-string', 'deep-nesting', 'bad-number', 'special-string'];

        /** A valid-looking value broken one way; returns the value and what was done. */
        function mutate(rng: Rng, value: unknown, schema: Schema): [unknown, string] {
          const s = deref(schema);
          const m = rng.pick(MUTATIONS);
          const v = isPlainObject(value) || Array.isArray(value) ? value : {};
          const paths = pathsOf(v);
          // fields the schema knows but the value lacks are places to break too
          for (const k of Object.keys(s.properties ?? {})) if (!paths.some((p) => p.length === 1 && p[0] === k)) paths.push([k]);
          const at = paths.length ? rng.pick(paths) : ['field'];
          const where = at.join('.');
          const old = paths.length ? at.reduce<unknown>((n, p) => (n as Record<string | number, unknown> | undefined)?.[p], v) : undefined;
          switch (m) {
            case 'wrong-type':
              return [setAt(v, at, wrongValue(rng, old)), `wrong type at ${where}`];
            case 'drop-required': {
              const req = s.required ?? [];
              if (isPlainObject(v) && req.length) {
                const drop = rng.chance(0.5) ? req : [rng.pick(req)];
                for (const k of drop) delete v[k];
                return [v, `missing ${drop.join(', ')}`];
              }
              return [{}, 'empty object'];
            }
            case 'extra-field': {
              const key = rng.pick(['__proto__', 'constructor', 'prototype', 'unknown_field', '$where', 'toString', 'a'.repeat(300)]);
              const val = rng.pick<unknown>([{ polluted: true, isAdmin: true }, 'x', 1, null, [1]]);
              if (isPlainObject(v)) return [withKey(v, key, val), `extra field ${key.slice(0, 20)}`];
              return [withKey({}, key, val), `object with only ${key.slice(0, 20)}`];
            }
            case 'huge-string':
              return [setAt(v, at, rng.chance(0.7) ? HUGE : HUGE_UNICODE), `100 kB string at ${where}`];
            case 'deep-nesting':
              return [setAt(v, at, nested(200, rng.pick(['1', '"x"', 'null', '{}']))), `200 levels of nesting at ${where}`];
            case 'bad-number':
              return [setAt(v, at, rng.chance(0.7) ? new RawJson(rng.pick(RAW_NUMBERS)) : rng.pick(['NaN', 'Infinity', '-Infinity', '1e3', '0x10', ' 1 ', '1_000'])), `hostile number at ${where}`];
            case 'special-string':
              return [setAt(v, at, rng.pick(SPECIAL_STRINGS)), `hostile string at ${where}`];
          }
        }

        /** A whole body that is not the right kind of thing at all. */
        const WHOLE_BODIES: [string, string, boolean][] = [
          // express.json is strict: a bare null, string, number or boolean is a malformed body (400 before login)
          ['null', 'null body', false],
          ['[]', 'array body', true],
          ['[1,"a",{}]', 'mixed array body', true],
          ['"just a string"', 'string body', false],
          ['42', 'number body', false],
          ['true', 'boolean body', false],
          ['{}', 'empty object', true],
          ['{', 'truncated JSON', false],
          ['{"a":1,}', 'trailing comma', false],
          ['', 'empty JSON body', false],
          ['{"a": NaN}', 'NaN literal', false],
          [nested(200).text, '200 levels at the root', true],
          [nested(3000).text, '3000 levels at the root', true],
          ['{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"polluted":1}}}', 'prototype keys', true],
        ];

        /** Form fields of a value: strings as they are, arrays as repeated keys, objects as JSON text. */
        const formPairs = (v: unknown): [string, string][] => {
          if (!isPlainObject(v)) return [['value', typeof v === 'string' ? v : jsonText(v)]];
          const out: [string, string][] = [];
          for (const [k, x] of Object.entries(v)) {
            if (Array.isArray(x)) for (const e of x) out.push([k, typeof e === 'string' ? e : jsonText(e)]);
            else if (x === undefined) continue;
            else out.push([k, typeof x === 'string' ? x : x instanceof RawJson ? x.text : isPlainObject(x) ? jsonText(x) : String(x)]);
          }
          return out;
        };
        const formText = (pairs: [string, string][]) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?'))}`).join('&');

        /** A call body as a form: method + one text field per parameter (the page's form). */
        const callForm = (rng: Rng, instrument: string | undefined, withInstrument: boolean): [string, string][] => {
          const inst = instrument && pools.methods[instrument] ? instrument : rng.pick(pools.instruments);
          const method = rng.pick(pools.methods[inst]?.length ? pools.methods[inst] : ['ping']);
          const args = valid(rng, doc.components.schemas[`Args.${inst}.${method}`] ?? { type: 'object' }, 1);
          return [...(withInstrument ? [['instrument', inst] as [string, string]] : []), ['method', method], ...formPairs(args)];
        };

        // ---- path and query parameters ---------------------------------------------------------------
        const pathValue = (rng: Rng, name: string, path: string, preferReal = false): string => {
          const real = (): (string | number)[] => {
            switch (name) {
              case 'instrument':
                return path.includes('/instruments/new/') ? pools.drivers : pools.instruments;
              case 'function':
                return Object.values(pools.methods).flat();
              case 'task_id':
                return path.includes('/executions/') ? pools.queueIds : pools.stepIds;
              case 'id':
                return pools.tokenIds;
              case 'user_id':
                return pools.userIds;
              case 'name':
                return pools.workflows;
              case 'workflow_id':
                return pools.runIds;
              case 'filename':
                return [...pools.configFiles, ...pools.historyFiles, ...pools.runIds.map((i) => `run-${i}.csv`)];
              case 'file':
                return path.includes('/vendor/') ? ['bootstrap.min.css', 'htmx.min.js', 'Sortable.min.js', 'uPlot.min.css'] : pools.staticFiles;
              default:
                return [];
            }
          };
          const r = real();
          if (r.length && (preferReal || rng.chance(0.6))) return encodeURIComponent(String(rng.pick(r)));
          const junk = [...JUNK_SEGMENTS];
          if (name === 'filename') junk.push('run-0.csv', 'run-99999999999.csv', 'run-1e3.csv', 'cfg-.csv', '.csv', 'run-99999999999999999999.csv');
          return rng.pick(junk);
        };

        /**
         * A path with its parameters filled in: real names and ids or junk; a method of the instrument the path
         * names; `junk` forces one parameter to a value. The fuzzer's own API token is never revoked (its
         * requests would all become 401).
         */
        function fillPath(rng: Rng, path: string, preferReal: boolean, junk?: { name: string; value: string }): string {
          const chosen: Record<string, string> = {};
          return path.replace(/\{(\w+)\}/g, (_, name: string) => {
            let v: string;
            if (junk?.name === name) v = junk.value;
            else if (name === 'function' && pools.methods[decode(chosen.instrument ?? '')]?.length && (preferReal || rng.chance(0.7)))
              v = encodeURIComponent(rng.pick(pools.methods[decode(chosen.instrument ?? '')]));
            else if (name === 'id' && path.includes('/account/tokens/')) {
              v = preferReal && pools.tokenIds.length ? String(rng.pick(pools.tokenIds)) : pathValue(rng, name, path);
              if (v === String(tokenId)) v = '99999999999';
            } else v = pathValue(rng, name, path, preferReal);
            chosen[name] = v;
            return v;
          });
        }

        const QUERY_HINTS: Record<string, string[]> = {
          format: ['json', 'html', 'svg', 'xml'],
          next: ['/app/instruments/', '//evil.example', 'http://evil.example/', '/\\evil.example', '/app/../../etc'],
          signed_up: ['1', ''],
          version: ['1', '2', '0', '-1', 'abc', '99999999999', '1.5'],
          keyword: ['fz', '%', '_', "'", '\\', '%%', 'a'.repeat(5000)],
          page: ['1', '2', '0', '-1', 'abc', '99999999999', '1e3', '9007199254740993'],
          per_page: ['1', '20', '200', '201', '0', '-5', 'abc', '99999999999'],
          lang: ['python', 'typescript', 'rust', ''],
        };
        const queryString = (rng: Rng, params: Param[]): string => {
          const parts: string[] = [];
          for (const p of params.filter((x) => x.in === 'query')) {
            if (!rng.chance(0.45)) continue;
            let v: string;
            if (p.name === 'workflow') v = rng.chance(0.7) ? rng.pick(pools.workflows) : rng.pick(SPECIAL_STRINGS);
            else if (QUERY_HINTS[p.name] && rng.chance(0.75)) v = rng.pick(QUERY_HINTS[p.name]);
            else if (p.schema?.enum && rng.chance(0.5)) v = String(rng.pick(p.schema.enum));
            else v = rng.pick(SPECIAL_STRINGS);
            const enc = encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?'));
            parts.push(`${p.name}=${enc}`);
            if (rng.chance(0.12)) parts.push(`${p.name}=${enc}x`); // a repeated key: an array
          }
          if (rng.chance(0.05)) parts.push(`${rng.pick(['format', 'page', 'workflow'])}=%ZZ`);
          return parts.length ? `?${parts.join('&')}` : '';
        };

        // ---- multipart uploads -----------------------------------------------------------------------
        const CSV_FILES = (rng: Rng): [string, Buffer][] => [
          ['config', Buffer.from('x\n0.1\n0.2\n')],
          ['history', Buffer.from('x,y\n0.1,1\n0.2,2\n')],
          ['type row', Buffer.from('x,out\nnumber,number\n1,2\n')],
          ['empty', Buffer.alloc(0)],
          ['BOM only', Buffer.from('\ufeff')],
          ['binary', Buffer.from(Array.from({ length: 4096 }, () => rng.int(0, 255)))],
          ['formula', Buffer.from('x,y\n=cmd|"/c calc"!A1,+1\n@SUM(1),-2\n')],
          ['broken quote', Buffer.from('x,"y\n1,2\n')],
          ['2000 columns', Buffer.from(`${Array.from({ length: 2000 }, (_, i) => `c${i}`).join(',')}\n${Array.from({ length: 2000 }, () => '1').join(',')}\n`)],
          ['20000 rows', Buffer.from(`x,y\n${Array.from({ length: 20000 }, (_, i) => `${i},${i * 2}`).join('\n')}\n`)],
          ['prototype headers', Buffer.from('__proto__,constructor,toString\n1,2,3\n')],
          ['duplicate headers', Buffer.from('x,x\n1,2\n')],
          ['NUL bytes', Buffer.from('x,y\n1\u0000,2\n')],
          ['unicode', Buffer.from('ünï,🧪\n‮1,2\n')],
          ['ragged', Buffer.from('x,y\n1\n1,2,3\n')],
          ['huge cell', Buffer.from(`x\n${HUGE}\n`)],
          ['CR only', Buffer.from('x,y\r1,2\r')],
        ];
        const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex');
        const LOGOS: [string, Buffer][] = [
          ['png', PNG],
          ['gif header', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1')],
          ['svg with script', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')],
          ['junk', Buffer.from('not an image at all')],
          ['empty', Buffer.alloc(0)],
          ['png header then junk', Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(64, 0xff)])],
        ];
        const FILE_NAMES = ['c.csv', '../../etc/passwd', '<script>.csv', 'ünï 🧪.csv', '', 'a'.repeat(1000) + '.csv', 'con.csv', '.csv', 'x.exe'];

        const multipartBody = (rng: Rng, path: string, wantValid: boolean): [Body, string, boolean] => {
          const logo = path.endsWith('/customize-logo');
          const fields: [string, string][] = [];
          const files: { field: string; name: string; data: Buffer }[] = [];
          const notes: string[] = [];
          if (logo) {
            if (rng.chance(0.7)) {
              const [what, data] = rng.pick(LOGOS);
              files.push({ field: rng.chance(0.85) ? 'logo' : 'file', name: rng.pick(['logo.png', '../../logo.png', '']), data });
              notes.push(`logo ${what}`);
            }
            if (rng.chance(0.6)) fields.push(['mode', String(hintFor(rng, 'mode', {}))]);
          } else if (wantValid) {
            // a file the route takes: a config for fz_ping, or a history (parameter x, output out)
            const config = path.endsWith('/batch-configs');
            files.push({ field: 'file', name: rng.pick(FILE_NAMES), data: Buffer.from(config ? 'x\n0.1\n0.2\n' : 'x,out\n0.1,1\n0.2,2\n') });
            if (rng.chance(0.5)) fields.push(['workflow', 'fz_ping']);
            return [{ kind: 'multipart', fields, files }, `a valid ${config ? 'config' : 'history'} CSV`, true];
          } else {
            if (rng.chance(0.85)) {
              const [what, data] = rng.pick(CSV_FILES(rng));
              files.push({ field: rng.chance(0.85) ? 'file' : rng.pick(['files', 'upload', 'file[]']), name: rng.pick(FILE_NAMES), data });
              notes.push(`csv ${what}`);
            }
            if (rng.chance(0.5)) fields.push(['workflow', rng.chance(0.7) ? rng.pick(pools.workflows) : rng.pick(SPECIAL_STRINGS)]);
            if (rng.chance(0.1)) {
              files.push({ field: 'file', name: 'second.csv', data: Buffer.from('x\n1\n') });
              notes.push('two files');
            }
          }
          if (rng.chance(0.1)) {
            for (let i = 0; i < 12; i++) fields.push([`f${i}`, 'x']);
            notes.push('12 fields');
          }
          if (rng.chance(0.1)) {
            fields.push([rng.pick(['__proto__', 'constructor', 'workflow']), rng.chance(0.5) ? 'x'.repeat(5000) : 'x']);
            notes.push('odd field');
          }
          return [{ kind: 'multipart', fields, files }, notes.join(', ') || 'empty multipart', true];
        };
        const MALFORMED_MULTIPART: [string, string][] = [
          ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nx\n1\n'],
          ['multipart/form-data', 'no boundary at all'],
          ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: garbage\r\n\r\nx\r\n--XyZ--\r\n'],
          ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\nx\n1\n\r\n--WRONG--\r\n'],
          ['multipart/form-data; boundary=' + 'b'.repeat(300), `--${'b'.repeat(300)}--\r\n`],
        ];

        // ---- bodies per operation ----------------------------------------------------------------------
        const contentOf = (op: Operation) => op.requestBody?.content ?? {};
        const opKeys = new Map<Operation, string>();
        const opKeyOf = (op: Operation) => opKeys.get(op) ?? '';
        const decode = (x: string) => {
          try {
            return decodeURIComponent(x);
          } catch {
            return x;
          }
        };
        /** The instrument (or, under /instruments/new/, the driver) a URL names. */
        const pathInstrument = (url: string) => {
          const m = /\/instruments\/(?:new\/)?([^/?]+)/.exec(url)?.[1];
          return m === undefined ? undefined : decode(m);
        };

        /** A body for the operation: valid-looking or broken, of one of the kinds it takes (or not). */
        function makeBody(rng: Rng, op: Operation, path: string, url: string, wantValid: boolean): [Body, string, boolean] {
          const content = contentOf(op);
          const kinds = Object.keys(content);
          if (!kinds.length) {
            // no body documented: mostly none, sometimes junk anyway
            if (wantValid || rng.chance(0.6)) return [{ kind: 'none' }, 'no body', true];
            const [text, note, ok] = rng.pick(WHOLE_BODIES);
            return [{ kind: 'json', text, wellFormed: ok }, `unexpected body: ${note}`, ok];
          }
          // sometimes a kind the operation does not take
          if (!wantValid && rng.chance(0.12)) {
            const other = rng.pick(['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data', 'application/xml'].filter((k) => !kinds.includes(k)));
            if (other === 'application/json') return [{ kind: 'json', text: jsonText({ method: 'ping', x: 1 }), wellFormed: true }, 'JSON where not taken', true];
            if (other === 'application/x-www-form-urlencoded') return [{ kind: 'form', text: 'method=ping&x=1&workflow=fz_ping' }, 'form where not taken', true];
            if (other === 'text/plain') return [{ kind: 'text', text: rng.pick(['1+1', 'hello', HUGE]) }, 'text where not taken', true];
            if (other === 'multipart/form-data')
              return [{ kind: 'multipart', fields: [['x', '1']], files: [{ field: 'file', name: 'a.csv', data: Buffer.from('x\n1\n') }] }, 'multipart where not taken', true];
            return [{ kind: 'raw', contentType: other, text: '<x>1</x>' }, `${other} where not taken`, true];
          }
          const kind = rng.pick(kinds);
          const schema = content[kind].schema;
          const ctx = { instrument: pathInstrument(url) };
          if (kind === 'multipart/form-data') {
            if (!wantValid && rng.chance(0.2)) {
              const [ct, text] = rng.pick(MALFORMED_MULTIPART);
              return [{ kind: 'raw', contentType: ct, text }, 'malformed multipart', false];
            }
            return multipartBody(rng, path, wantValid);
          }
          if (kind === 'text/plain') {
            const code = wantValid ? String(hintFor(rng, 'code', {})) : rng.pick([...SPECIAL_STRINGS, HUGE]);
            return [{ kind: 'text', text: code }, 'text body', true];
          }
          if (kind === 'application/x-www-form-urlencoded') {
            let pairs: [string, string][];
            const isCall = /\/instruments\/(\{instrument\}|)$/.test(path) || op['x-labdeck-live'];
            if (isCall) pairs = callForm(rng, ctx.instrument, path.endsWith('/instruments/'));
            else if (path.endsWith('/instruments/new/{instrument}')) {
              const driver = pathInstrument(url) ?? '';
              pairs = [['device_name', String(hintFor(rng, 'device_name', {}))], ...formPairs(valid(rng, driverOptions[driver] ?? { type: 'object' }, 1))];
            } else if (path.endsWith('/executions/config')) {
              // the page's form: a repeat count, or typed rows `rows[i][param]`
              const good = wantValid || rng.chance(0.5);
              pairs = good ? [['workflow', 'fz_ping']] : formPairs(valid(rng, schema, 0, undefined, ctx)).filter(([k]) => k !== 'repeat');
              if (rng.chance(0.5)) pairs.push(['repeat', good ? String(rng.int(1, 3)) : rng.pick(['0', '-1', 'abc', '99999999999', '1e3', ' '])]);
              else
                for (let i = 0; i < rng.int(1, 3); i++)
                  pairs.push(
                    good
                      ? [`rows[${i}][x]`, String(rng.int(0, 9) / 10)]
                      : [`rows[${rng.pick([0, 1, 99999, 100000])}][${rng.pick(['x', 'y', '__proto__', 'constructor'])}]`, rng.pick(['0.5', 'abc', '', HUGE])],
                  );
            } else if (path.endsWith('/executions/campaign')) {
              // the page's form: the short text forms, or the structured fields param.<name>.* and objective.<name>
              const good = wantValid || rng.chance(0.5);
              pairs = good
                ? [
                    ['workflow', 'fz_camp'],
                    ['repeat', String(rng.int(1, 3))],
                    ['optimizer_type', rng.pick(['random', 'sobol', 'gp'])],
                    ['parameters', 'x: 0..1'],
                    ['objectives', 'y:max'],
                  ]
                : formPairs(valid(rng, schema, 0, undefined, ctx));
              if (rng.chance(0.5)) {
                pairs = pairs.filter(([k]) => k !== 'parameters' && k !== 'objectives' && k !== 'config');
                if (good) pairs.push(['param.x.use', 'on'], ['param.x.type', 'range'], ['param.x.low', '0'], ['param.x.high', '1'], ['objective.y', rng.pick(['max', 'min'])]);
                else {
                  pairs.push(
                    ['param.x.use', rng.pick(['on', 'true', 'off'])],
                    ['param.x.type', rng.pick(['range', 'int', 'choice', 'bogus'])],
                    ['param.x.low', rng.pick(['0', '-1', 'abc', ''])],
                    ['param.x.high', rng.pick(['1', '1e999', 'abc'])],
                  );
                  pairs.push([`objective.${rng.pick(['y', 'out', '__proto__', 'constructor'])}`, rng.pick(['max', 'min', 'sideways'])]);
                }
                if (rng.chance(0.5)) pairs.push([`config.${rng.pick(['seed', 'initial_points', '__proto__', 'xi'])}`, good ? '1' : rng.pick(['abc', '-5', '1e999'])]);
              }
            } else pairs = formPairs((rng.chance(0.5) ? template(rng, opKeyOf(op), url) : undefined) ?? valid(rng, schema, 0, undefined, ctx));
            let note = 'form';
            if (!wantValid) {
              const m = rng.int(0, 6);
              if (m === 0 && pairs.length) {
                const i = rng.int(0, pairs.length - 1);
                pairs.push([pairs[i][0], rng.pick(SPECIAL_STRINGS)]);
                note = `form, ${pairs[i][0]} repeated (an array)`;
              } else if (m === 1 && pairs.length) {
                pairs.splice(rng.int(0, pairs.length - 1), 1);
                note = 'form, a field missing';
              } else if (m === 2) {
                pairs.push([rng.pick(['__proto__', 'constructor', 'prototype', 'a[b]', 'toString', '__proto__[isAdmin]']), rng.pick(['1', 'true', HUGE])]);
                note = 'form, odd extra field';
              } else if (m === 3 && pairs.length) {
                const i = rng.int(0, pairs.length - 1);
                pairs[i] = [pairs[i][0], rng.chance(0.5) ? HUGE : rng.pick(SPECIAL_STRINGS)];
                note = `form, hostile ${pairs[i][0]}`;
              } else if (m === 4) {
                // over 1000 fields is refused by the body parser (400), before the login check
                const text = rng.pick(['%ZZ=%ZZ', '=&=&&', 'a', '&&&', `${'k=v&'.repeat(1200)}`]);
                return [{ kind: 'form', text }, 'form, malformed', text.length < 1000];
              } else if (m === 5) {
                pairs = [];
                note = 'form, empty';
              } else {
                pairs = pairs.map(([k, v]) => [k, rng.chance(0.5) ? rng.pick(SPECIAL_STRINGS) : v]);
                note = 'form, hostile values';
              }
            }
            return [{ kind: 'form', text: formText(pairs) }, note, true];
          }
          // JSON
          const known = rng.chance(0.5) ? template(rng, `${opKeyOf(op)}`, url) : undefined;
          let value = known ?? valid(rng, schema, 0, undefined, ctx);
          let note = 'valid-looking JSON';
          if (!wantValid) {
            if (rng.chance(0.2)) {
              const [text, what, ok] = rng.pick(WHOLE_BODIES);
              return [{ kind: 'json', text, wellFormed: ok }, what, ok];
            }
            [value, note] = mutate(rng, value, schema);
          }
          return [{ kind: 'json', text: jsonText(value), wellFormed: true }, note, true];
        }

        // ---- sending -----------------------------------------------------------------------------------
        type Sender = Pick<ReturnType<typeof request.agent>, 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head'>;
        let spare: Sender | null = null;
        const rnd = new Rng(SEED);
        const client = async (id: Identity): Promise<Sender> => {
          if (id === 'operator') return operator;
          if (id === 'admin') return lab.admin;
          if (id === 'spare') return (spare ??= await spareAgent());
          const base = request(lab.app);
          if (id === 'anonymous') return base;
          const auth = id === 'token' ? `Bearer ${token}` : rnd.pick(['Bearer not-a-token', 'Bearer', 'Basic YWRhOnB3', `Bearer ${'x'.repeat(5000)}`]);
          const wrap = (m: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head') => (url: string) => base[m](url).set('Authorization', auth);
          return { get: wrap('get'), post: wrap('post'), put: wrap('put'), patch: wrap('patch'), delete: wrap('delete'), head: wrap('head') } as unknown as Sender;
        };
        async function send(c: Case): Promise<{ res?: Response; ms: number; error?: string }> {
          const agent = await client(c.identity);
          let t: Test = (agent as unknown as Record<string, (u: string) => Test>)[c.method.toLowerCase()](c.url);
          if (c.accept) t = t.set('Accept', c.accept);
          for (const [k, v] of Object.entries(c.headers)) t = t.set(k, v);
          const b = c.body;
          if (b.kind === 'json') t = t.set('Content-Type', J).send(b.text);
          else if (b.kind === 'form') t = t.set('Content-Type', 'application/x-www-form-urlencoded').send(b.text);
          else if (b.kind === 'text') t = t.set('Content-Type', 'text/plain').send(b.text);
          else if (b.kind === 'raw') t = t.set('Content-Type', b.contentType).send(b.text);
          else if (b.kind === 'multipart') {
            for (const [k, v] of b.fields) t = t.field(k, v);
            for (const f of b.files) t = t.attach(f.field, f.data, f.name || 'blob');
          }
          t = t.timeout({ response: HANG_MS, deadline: HANG_MS + 2000 });
          const started = Date.now();
          try {
            const res = await t;
            return { res, ms: Date.now() - started };
          } catch (e) {
            const err = e as Error & { response?: Response; timeout?: number; code?: string };
            if (err.response) return { res: err.response, ms: Date.now() - started };
            return { ms: Date.now() - started, error: `${err.code ?? ''} ${err.message}`.trim() };
          }
        }

        const INSTRUMENT_OK = new Set([502, 503, 507]);
        const isInstrumentCall = (method: string, path: string, op: Operation) =>
          method === 'POST' && /^\/app\/instruments\//.test(path) && (op.responses['502'] !== undefined || op.responses['503'] !== undefined);
        const isPublic = (op: Operation) => !op.security?.length || op.security.some((s) => Object.keys(s).length === 0);
        /** A path with a malformed %-escape is refused (400) by the router before any route looks at who asks. */
        const badEscape = (url: string) => {
          try {
            decodeURIComponent(url.split('?')[0]);
            return false;
          } catch {
            return true;
          }
        };
        /** A logged error: its first line and where in labdeck's own code it was (not in libraries). */
        const repoRoot = here('../../');
        const compactLog = (text: string) => {
          const [head, ...rest] = text.split('\n');
          // (a library's source map may put its own files under the repository: src/… is TypeORM's)
          const ours = (l: string) => l.startsWith('at ') && l.includes(repoRoot) && !l.includes('node_modules') && !l.includes(`${repoRoot}src/`) && !l.includes('core/store/sql.ts');
          const frames = rest
            .map((l) => l.trim())
            .filter(ours)
            .slice(0, 4);
          return excerpt([head, ...frames.map((f) => f.replace(repoRoot, ''))].join(' '), 600);
        };
        const LOGIN = /^(\/app)?\/auth\/login(\?|$)/;
        /** Whether the app will answer JSON (true), a page (false), or the fuzzer does not say (undefined). */
        const asksForJson = (c: Case): boolean | undefined => {
          const format = new URLSearchParams(c.url.split('?')[1] ?? '').getAll('format');
          if (format.length === 1 && format[0] === 'json') return true;
          if (format.length === 1 && format[0] === 'html') return false;
          return c.accept === J ? true : c.accept === 'text/html' ? false : undefined;
        };

        async function check(opKey: string, op: Operation, path: string, c: Case) {
          const logFrom = logged.length;
          const { res, ms, error } = await send(c);
          stats.requests++;
          const status = res?.status ?? 0;
          stats.byStatus.set(status, (stats.byStatus.get(status) ?? 0) + 1);
          if (process.env.FUZZ_TRACE && opKey.includes(process.env.FUZZ_TRACE))
            origWarn.call(console, `${status} ${c.identity} ${c.method} ${excerpt(c.url, 100)} ${c.note}: ${bodyExcerpt(c.body).slice(0, 300)} → ${messageOf(res).slice(0, 200)}`);
          if (ms > stats.slowest.ms) stats.slowest = { ms, what: `${c.method} ${excerpt(c.url, 80)} (${c.identity}, ${c.note})` };
          const fail = (problem: string) =>
            failures.push({
              op: opKey,
              identity: c.identity,
              request: `${c.method} ${excerpt(c.url, 200)}${c.accept ? ` [Accept: ${c.accept}]` : ''}${Object.keys(c.headers).length ? ` ${JSON.stringify(c.headers)}` : ''}`,
              body: `${c.note}: ${bodyExcerpt(c.body)}`,
              status: res ? status : (error ?? 'no answer'),
              ms,
              message: messageOf(res),
              problem,
              logged: logged.slice(logFrom).map(compactLog).join(' | ') || undefined,
            });
          if (!res) return fail(/HPE_/.test(error ?? '') ? `the answer is not readable HTTP (${error})` : `no answer within ${HANG_MS} ms (${error})`);
          const answer = res.body as { task_id?: unknown; tasks?: { id?: unknown }[] } | undefined;
          if (typeof answer?.task_id === 'number') (path.startsWith('/app/instruments') ? seenSteps : seenTasks).push(answer.task_id);
          if (Array.isArray(answer?.tasks)) for (const t of answer.tasks) if (typeof t?.id === 'number') seenTasks.push(t.id);
          if (status >= 500 && !(INSTRUMENT_OK.has(status) && isInstrumentCall(c.method, path, op))) fail(`status ${status}`);
          if (ms > SLOW_MS) fail(`took ${ms} ms (limit ${SLOW_MS})`);
          if (!c.checkAuth) return;
          const loc = String(res.headers.location ?? '');
          if (c.identity === 'anonymous' && !isPublic(op)) {
            const ok = status === 401 || (status === 302 && LOGIN.test(loc));
            const json = asksForJson(c);
            if (!ok) fail(`anonymous request to a route that needs a login: want 401 or 302 to the login form, got ${status}${loc ? ` → ${loc}` : ''}`);
            else if (json === true && status !== 401) fail(`anonymous JSON request: want 401, got ${status} → ${loc}`);
            else if (json === false && status !== 302) fail(`anonymous page request: want 302 to the login form, got ${status}`);
          }
          // a bad token is refused wherever the document says 401 (bare routes, served before authentication, do not look)
          if (c.identity === 'bad-token' && op.responses['401'] && status !== 401) fail(`a malformed or unknown bearer token: want 401, got ${status}`);
          const adminOnly = op['x-labdeck-admin'] || ADMIN_ONLY.has(opKey);
          if (c.identity === 'operator' && adminOnly && status !== 403 && !badEscape(c.url)) fail(`operator on an admin-only route: want 403, got ${status}`);
          if ((c.identity === 'admin' || c.identity === 'token') && adminOnly && (status === 401 || status === 403)) {
            fail(`admin refused on an admin-only route: ${status}`);
          }
        }

        // ---- the operations ----------------------------------------------------------------------------
        const ops: [string, string, Operation][] = [];
        for (const [path, item] of Object.entries(doc.paths)) {
          for (const [m, op] of Object.entries(item)) {
            ops.push([m.toUpperCase(), path, op]);
            opKeys.set(op, `${m.toUpperCase()} ${path}`);
          }
        }
        expect(ops.length).toBeGreaterThan(60);
        // the document marks as admin-only exactly what docs/security.md says
        const marked = ops.filter(([, , op]) => op['x-labdeck-admin']).map(([m, p]) => `${m} ${p}`);
        if (marked.length !== ADMIN_ONLY.size || marked.some((k) => !ADMIN_ONLY.has(k))) {
          failures.push({
            op: '(document)',
            identity: 'admin',
            request: 'GET /app/openapi.json',
            body: '',
            status: 200,
            ms: 0,
            message: `x-labdeck-admin on: ${marked.join(', ')}`,
            problem: `the admin-only operations differ from docs/security.md (${[...ADMIN_ONLY].join(', ')})`,
          });
        }

        /** Operations whose identities are swapped for a spare account: they would end the session under test. */
        const SESSION_ENDING = new Set(['POST /app/auth/logout', 'GET /app/auth/logout', 'POST /app/auth/login']);

        const perOp: [string, number, string][] = [];
        for (const [method, path, op] of ops) {
          const opKey = `${method} ${path}`;
          const opStart = Date.now();
          const statusFrom = new Map(stats.byStatus);
          stats.ops++;
          await refresh(opKey);
          const rng = new Rng(SEED ^ hash(opKey));
          const params = op.parameters ?? [];
          const hasBody = Object.keys(contentOf(op)).length > 0;

          // The live event stream never ends: HEAD (answered at once), and GETs read up to the first event and
          // dropped. Anonymous and bad-token requests are answered with 401 at once and go through the normal path.
          if (path === '/app/executions/events') {
            for (const id of ['operator', 'admin', 'token'] as Identity[]) {
              for (const how of ['HEAD', 'GET'] as const) {
                const agent = await client(id);
                const url = path + (how === 'GET' && rng.chance(0.5) ? '?format=json&x=%ZZ' : '');
                const started = Date.now();
                let status = 0;
                let first = '';
                let error = '';
                try {
                  const t =
                    how === 'HEAD'
                      ? agent.head(url)
                      : agent
                          .get(url)
                          .buffer(false)
                          .parse((res, done) => {
                            res.once('data', (chunk: Buffer) => {
                              first = chunk.toString();
                              done(null, first);
                              (res as unknown as { destroy(): void }).destroy();
                            });
                            res.once('end', () => done(null, first));
                          });
                  const res = await t.timeout({ response: HANG_MS, deadline: HANG_MS });
                  status = res.status;
                } catch (e) {
                  error = (e as Error).message;
                  status = (e as { response?: Response }).response?.status ?? 0;
                }
                const ms = Date.now() - started;
                stats.requests++;
                stats.byStatus.set(status, (stats.byStatus.get(status) ?? 0) + 1);
                const problem =
                  status !== 200
                    ? `event stream: want 200, got ${status || error}`
                    : how === 'GET' && !first.includes('event: hello')
                      ? `event stream: first event is not hello: ${excerpt(first)}`
                      : ms > SLOW_MS
                        ? `took ${ms} ms`
                        : '';
                if (problem) failures.push({ op: opKey, identity: id, request: `${how} ${url}`, body: '(no body)', status: status || error, ms, message: excerpt(first), problem });
              }
            }
            for (const id of ['anonymous', 'bad-token'] as Identity[]) {
              for (const accept of [J, 'text/html']) {
                await check(opKey, op, path, { identity: id, method, url: path, accept, headers: {}, body: { kind: 'none' }, note: 'identity sweep', checkAuth: true });
              }
            }
            continue;
          }

          // 1. the identity sweep: valid-looking requests from everyone
          const sweep: [Identity, string | undefined][] = [
            ['anonymous', J],
            ['anonymous', 'text/html'],
            ['bad-token', J],
            ['operator', J],
            ['admin', J],
            ['token', rng.pick([J, 'text/html', undefined])],
          ];
          for (const [identity0, accept] of sweep) {
            // log-out and log-in would end (or replace) the session under test: spare accounts stand in
            const identity: Identity = SESSION_ENDING.has(opKey) && (identity0 === 'operator' || identity0 === 'admin') ? 'spare' : identity0;
            const url = fillPath(rng, path, true);
            const [body, note] = makeBody(rng, op, path, url, true);
            await check(opKey, op, path, { identity, method, url, accept, headers: {}, body, note: `identity sweep, ${note}`, checkAuth: true });
            if (identity === 'spare' && SESSION_ENDING.has(opKey)) spare = null; // logged out (or maybe someone else): next time, a fresh one
          }

          // 2. fuzz cases
          const n = FEW_CASES.has(opKey) ? 3 : hasBody ? CASES_WITH_BODY : params.length ? CASES_WITHOUT_BODY : Math.ceil(CASES_WITHOUT_BODY / 2);
          for (let i = 0; i < n; i++) {
            let identity = rng.pick<Identity>(['admin', 'admin', 'operator', 'operator', 'token', 'token', 'anonymous', 'bad-token']);
            if (SESSION_ENDING.has(opKey) && (identity === 'operator' || identity === 'admin')) identity = 'spare';
            const wantValid = rng.chance(0.3);
            const mount = rng.chance(0.15) ? '' : '/app';
            const basePath = fillPath(rng, path, wantValid);
            const url = mount + basePath.slice('/app'.length) + queryString(rng, params);
            const [body, note, wellFormed] = makeBody(rng, op, path, url, wantValid);
            const accept = rng.pick([J, J, 'text/html', undefined, '*/*', 'text/html,application/json;q=0.9', 'application/xml']);
            const headers: Record<string, string> = {};
            if (params.some((p) => p.name === 'HX-Request') ? rng.chance(0.4) : rng.chance(0.05)) headers['HX-Request'] = 'true';
            if (rng.chance(0.05)) headers.Referer = rng.pick(['http://127.0.0.1/app/instruments/', 'http://evil.example/x', 'not a url', '/app/../../etc']);
            const tooBig = body.kind !== 'multipart' && body.kind !== 'none' && Buffer.byteLength((body as { text: string }).text) > 1024 * 1024;
            await check(opKey, op, path, { identity, method, url, accept, headers, body, note, checkAuth: wellFormed && !tooBig && identity !== 'spare' });
            if (identity === 'spare' && SESSION_ENDING.has(opKey)) spare = null;
          }
          // 3. sweeps: every path parameter with each junk segment, every query parameter with a NUL and a
          //    too-large integer, and a JSON body with a NUL in every string and 2^31 for every integer
          const sweepIdentity = (): Identity => (isPublic(op) || SESSION_ENDING.has(opKey) ? 'anonymous' : rng.pick<Identity>(['admin', 'token', 'operator']));
          for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
            for (const value of name === 'filename' ? [...SWEEP_SEGMENTS, 'run-2147483648.csv', 'run-99999999999999999999.csv'] : SWEEP_SEGMENTS) {
              const url = fillPath(rng, path, true, { name, value });
              const [body, note] = makeBody(rng, op, path, url, true);
              await check(opKey, op, path, {
                identity: sweepIdentity(),
                method,
                url,
                accept: rng.pick([J, 'text/html']),
                headers: {},
                body,
                note: `path sweep ${name}=${excerpt(value, 20)}, ${note}`,
                checkAuth: true,
              });
            }
          }
          for (const p of FEW_CASES.has(opKey) ? [] : params.filter((x) => x.in === 'query')) {
            for (const value of ['a%00b', '99999999999', '2147483648']) {
              const url = `${fillPath(rng, path, true)}?${p.name}=${value}`;
              await check(opKey, op, path, {
                identity: sweepIdentity(),
                method,
                url,
                accept: J,
                headers: {},
                body: makeBody(rng, op, path, url, true)[0],
                note: `query sweep ${p.name}=${value}`,
                checkAuth: true,
              });
            }
          }
          const jsonSchema = contentOf(op)[J]?.schema;
          if (jsonSchema) {
            const everywhere = (v: unknown, f: (x: unknown) => unknown): unknown =>
              Array.isArray(v) ? v.map((x) => everywhere(x, f)) : isPlainObject(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, everywhere(x, f)])) : f(v);
            for (const [what, f] of [
              ['a NUL in every string', (x: unknown) => (typeof x === 'string' ? `${x}\u0000` : x)],
              ['2^31 for every integer', (x: unknown) => (typeof x === 'number' && Number.isInteger(x) ? new RawJson('2147483648') : x)],
            ] as [string, (x: unknown) => unknown][]) {
              const url = fillPath(rng, path, true);
              const ctx = { instrument: pathInstrument(url) };
              const base = template(rng, opKey, url) ?? valid(rng, jsonSchema, 0, undefined, ctx);
              // every field the schema names, optional ones too
              const props = deref(jsonSchema).properties ?? {};
              if (isPlainObject(base)) for (const [k, ps] of Object.entries(props)) if (!(k in base)) base[k] = valid(rng, ps, 1, k, ctx);
              const value = everywhere(base, f);
              await check(opKey, op, path, {
                identity: sweepIdentity(),
                method,
                url,
                accept: J,
                headers: {},
                body: { kind: 'json', text: jsonText(value), wellFormed: true },
                note: `body sweep, ${what}`,
                checkAuth: true,
              });
            }
          }

          // let a run or campaign the fuzzer started go on in the background, but not pile up without end: the
          // runner has looked at what was queued before the next operation
          if (path.startsWith('/app/executions/')) await runtime.runner.settled();
          perOp.push([opKey, Date.now() - opStart, JSON.stringify(Object.fromEntries([...stats.byStatus].map(([k, v]) => [k, v - (statusFrom.get(k) ?? 0)]).filter(([, v]) => v)))]);
        }
        if (process.env.FUZZ_DEBUG) origWarn.call(console, perOp.map((x) => x.join('  ')).join('\n'));

        // a password change that works, on the spare account (the identities under test keep theirs)
        {
          const agent = await spareAgent();
          const newPassword = 'another long password';
          const res = await agent.post('/app/auth/change-password').set('Accept', J).send({ old_password: sparePassword, new_password: newPassword });
          stats.requests++;
          if (res.status >= 500)
            failures.push({
              op: 'POST /app/auth/change-password',
              identity: 'spare',
              request: 'POST /app/auth/change-password',
              body: 'a valid change',
              status: res.status,
              ms: 0,
              message: messageOf(res),
              problem: `status ${res.status}`,
            });
          if (res.status === 302) sparePassword = newPassword;
        }

        // the identities under test are still who they were
        for (const [id, want] of [
          ['operator', 'olga'],
          ['admin', 'ada'],
          ['token', 'ada'],
        ] as [Identity, string][]) {
          const res = await (await client(id)).get('/app/account').set('Accept', J);
          stats.requests++;
          if (res.body?.user?.username !== want) {
            failures.push({
              op: 'GET /app/account',
              identity: id,
              request: 'GET /app/account',
              body: '(no body)',
              status: res.status,
              ms: 0,
              message: messageOf(res),
              problem: `after fuzzing, ${id} is no longer ${want} (the harness lost its identity; results after that point are suspect)`,
            });
          }
        }
        for (const e of unhandled)
          failures.push({
            op: '(process)',
            identity: 'anonymous',
            request: '',
            body: '',
            status: 'unhandledRejection',
            ms: 0,
            message: excerpt(String((e as Error)?.stack ?? e), 600),
            problem: 'an unhandled promise rejection (it would end a real server)',
          });

        const seconds = ((Date.now() - t0) / 1000).toFixed(1);
        const summary = `${stats.requests} requests over ${stats.ops} operations in ${seconds} s (${runtime.store.dialect}); statuses ${JSON.stringify(Object.fromEntries([...stats.byStatus].sort(([a], [b]) => a - b)))}; slowest ${stats.slowest.ms} ms: ${stats.slowest.what}`;
        origWarn.call(console, `fuzz: ${summary}`);
        if (failures.length) {
          // the same problem of the same operation (same status, same first line logged, numbers aside) is
          // listed once, under its cause: the first line the server logged, or the problem
          const numbersAside = (x: string) => x.replace(/"\d+"|\b\d{4,}\b/g, 'N');
          const causeOf = (f: Failure) => numbersAside(f.logged ? f.logged.split(' at ')[0] : f.problem);
          const groups = new Map<string, { first: Failure; count: number }>();
          for (const f of failures) {
            const key = [causeOf(f), f.op, numbersAside(f.problem), String(f.status)].join('|');
            const g = groups.get(key);
            if (g) g.count++;
            else groups.set(key, { first: f, count: 1 });
          }
          const causes = new Map<string, Set<string>>();
          for (const { first } of groups.values()) {
            const c = causeOf(first);
            if (!causes.has(c)) causes.set(c, new Set());
            causes.get(c)!.add(first.op);
          }
          const overview = [...causes].map(([c, opsOf]) => `- ${excerpt(c, 200)}\n  in ${opsOf.size} operation(s): ${[...opsOf].join(', ')}`);
          const lines = [...groups.values()].map(
            ({ first: f, count }, i) =>
              `${i + 1}. [${f.op}] ${f.problem}${count > 1 ? ` (×${count}; the first:)` : ''}\n   ${f.identity}: ${f.request}\n   body: ${f.body}\n   → ${f.status} in ${f.ms} ms: ${f.message}${f.logged ? `\n   server log: ${f.logged}` : ''}`,
          );
          throw new Error(`${failures.length} failing request(s), ${groups.size} distinct problem(s), in ${summary}\n\nBy cause:\n${overview.join('\n')}\n\nEach problem:\n${lines.join('\n\n')}`);
        }
        expect(stats.requests).toBeGreaterThan(1000);
      } finally {
        process.off('unhandledRejection', onUnhandled);
        console.error = origError;
        console.warn = origWarn;
        // stop whatever the fuzzer queued before the lab closes
        await runtime.runner.abortNextTask().catch(() => undefined);
      }
    },
    120_000 * SCALE,
  );
});
