/**
 * The lab the OpenAPI fuzzer (test/full/fuzz.test.ts) works on, and how it sends a request and checks the
 * answer: the state it seeds and draws real names and ids from (refreshed before each operation), the
 * identities it sends as, and the rules every answer must keep (below 500; 502/503/507 from instrument calls
 * only; the login and admin rules of docs/security.md). A broken rule throws, with the request, the answer and
 * what the server logged meanwhile (the error handler logs every 500 with its stack).
 */
import request from 'supertest';
import type { Response, Test } from 'supertest';
import { readdirSync } from 'node:fs';
import { validateWorkflow } from '../../core/workflow/validate.js';
import { PASSWORD, type TestLab } from '../api/helpers.js';
import type { Rng } from './fuzz-tape.js';
import { requestValues } from './fuzz-requests.js';
import type { Pools } from './fuzz-schema.js';
import { ADMIN_ONLY, J, bodyExcerpt, byName, excerpt, here, messageOf, type Case, type Doc, type Identity, type Operation, type Schema } from './fuzz-values.js';
import { waitFor } from './wait.js';

/** A request that has not answered by then is reported as hanging (and the fuzz goes on). */
export const HANG_MS = 10_000;
/** Operations whose identities are swapped for a spare account: they would end the session under test. */
export const SESSION_ENDING = new Set(['POST /app/auth/logout', 'GET /app/auth/logout', 'POST /app/auth/login']);
export const isPublic = (op: Operation) => !op.security?.length || op.security.some((s) => Object.keys(s).length === 0);
const BAD_TOKENS = ['Bearer not-a-token', 'Bearer', 'Basic YWRhOnB3', `Bearer ${'x'.repeat(5000)}`];
type Sender = Pick<ReturnType<typeof request.agent>, 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head'>;

export interface FuzzIdentities {
  operator: ReturnType<typeof request.agent>;
  /** The admin's API token the fuzzer uses, and its id (never revoked). */
  token: string;
  tokenId: number;
}

/** Seed the lab, and make the fuzzer's sender and checker over `doc`. Call `restore()` when done. */
export async function fuzzLab(lab: TestLab, doc: Doc, { operator, token, tokenId }: FuzzIdentities) {
  const { runtime } = lab;
  const stats = { requests: 0, byStatus: new Map<number, number>(), slowest: { ms: 0, what: '' }, ops: 0 };
  // What the server logs goes with the failing request.
  const logged: string[] = [];
  const origError = console.error;
  const origWarn = console.warn;
  console.error = (...a: unknown[]) => void logged.push(a.map((x) => (x instanceof Error ? (x.stack ?? x.message) : typeof x === 'string' ? x : JSON.stringify(x))).join(' '));
  console.warn = console.error;
  const restore = () => {
    console.error = origError;
    console.warn = origWarn;
  };
  /** Print past the captured console. */
  const print = (text: string) => origWarn.call(console, text);

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

  const gen = requestValues(doc, pools, driverOptions, tokenId);

  let spare: Sender | null = null;
  /** Who sends as `id` (a bad token is one of a few, drawn from `rng`). */
  const client = async (id: Identity, rng?: Rng): Promise<Sender> => {
    if (id === 'operator') return operator;
    if (id === 'admin') return lab.admin;
    if (id === 'spare') return (spare ??= await spareAgent());
    const base = request(lab.app);
    if (id === 'anonymous') return base;
    const auth = id === 'token' ? `Bearer ${token}` : (rng?.pick(BAD_TOKENS) ?? BAD_TOKENS[0]!);
    const wrap = (m: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head') => (url: string) => base[m](url).set('Authorization', auth);
    return { get: wrap('get'), post: wrap('post'), put: wrap('put'), patch: wrap('patch'), delete: wrap('delete'), head: wrap('head') } as unknown as Sender;
  };
  async function send(c: Case, rng: Rng): Promise<{ res?: Response; ms: number; error?: string }> {
    const agent = await client(c.identity, rng);
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

  /**
   * Send `c` (a request of the operation `opKey` of `path`) and check its answer; throws naming each rule it
   * broke, the request, the answer and what the server logged meanwhile.
   */
  async function check(opKey: string, op: Operation, path: string, c: Case, rng: Rng) {
    const logFrom = logged.length;
    const { res, ms, error } = await send(c, rng);
    // log-out and log-in end (or replace) the spare's session: next time, a fresh one
    if (c.identity === 'spare' && SESSION_ENDING.has(opKey)) spare = null;
    stats.requests++;
    const status = res?.status ?? 0;
    stats.byStatus.set(status, (stats.byStatus.get(status) ?? 0) + 1);
    if (process.env.FUZZ_TRACE && opKey.includes(process.env.FUZZ_TRACE))
      print(`${status} ${c.identity} ${c.method} ${excerpt(c.url, 100)} ${c.note}: ${bodyExcerpt(c.body).slice(0, 300)} → ${messageOf(res).slice(0, 200)}`);
    if (ms > stats.slowest.ms) stats.slowest = { ms, what: `${c.method} ${excerpt(c.url, 80)} (${c.identity}, ${c.note})` };
    const problems: string[] = [];
    const fail = (problem: string) => void problems.push(problem);
    const report = () => {
      if (!problems.length) return;
      const log = logged.slice(logFrom).map(compactLog).join(' | ');
      throw new Error(
        [
          `[${opKey}] ${problems.join('; ')}`,
          `   ${c.identity}: ${c.method} ${excerpt(c.url, 200)}${c.accept ? ` [Accept: ${c.accept}]` : ''}${Object.keys(c.headers).length ? ` ${JSON.stringify(c.headers)}` : ''}`,
          `   body: ${c.note}: ${bodyExcerpt(c.body)}`,
          `   → ${res ? status : (error ?? 'no answer')} in ${ms} ms: ${messageOf(res)}`,
          ...(log ? [`   server log: ${log}`] : []),
        ].join('\n'),
      );
    };
    if (!res) {
      fail(/HPE_/.test(error ?? '') ? `the answer is not readable HTTP (${error})` : `no answer within ${HANG_MS} ms (${error})`);
      return report();
    }
    const answer = res.body as { task_id?: unknown; tasks?: { id?: unknown }[] } | undefined;
    if (typeof answer?.task_id === 'number') (path.startsWith('/app/instruments') ? seenSteps : seenTasks).push(answer.task_id);
    if (Array.isArray(answer?.tasks)) for (const t of answer.tasks) if (typeof t?.id === 'number') seenTasks.push(t.id);
    if (status >= 500 && !(INSTRUMENT_OK.has(status) && isInstrumentCall(c.method, path, op))) fail(`status ${status}`);
    if (!c.checkAuth) return report();
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
    report();
  }

  /**
   * The live event stream never ends: HEAD (answered at once), or a GET read up to its first event and dropped;
   * throws unless it answers 200 and (GET) starts with the hello event.
   */
  async function checkStream(opKey: string, id: Identity, how: 'HEAD' | 'GET', url: string) {
    const agent = await client(id);
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
    stats.requests++;
    stats.byStatus.set(status, (stats.byStatus.get(status) ?? 0) + 1);
    const problem =
      status !== 200 ? `event stream: want 200, got ${status || error}` : how === 'GET' && !first.includes('event: hello') ? `event stream: first event is not hello: ${excerpt(first)}` : '';
    if (problem) throw new Error(`[${opKey}] ${problem}\n   ${id}: ${how} ${url}\n   → ${status || error} in ${Date.now() - started} ms: ${excerpt(first)}`);
  }

  /** After the fuzz: a password change that works (on the spare account), and the identities under test are still who they were. */
  async function afterwards(): Promise<string[]> {
    const problems: string[] = [];
    const agent = await spareAgent();
    const newPassword = 'another long password';
    const res = await agent.post('/app/auth/change-password').set('Accept', J).send({ old_password: sparePassword, new_password: newPassword });
    stats.requests++;
    if (res.status >= 500) problems.push(`POST /app/auth/change-password (spare, a valid change): status ${res.status}: ${messageOf(res)}`);
    if (res.status === 302) sparePassword = newPassword;
    for (const [id, want] of [
      ['operator', 'olga'],
      ['admin', 'ada'],
      ['token', 'ada'],
    ] as [Identity, string][]) {
      const me = await (await client(id)).get('/app/account').set('Accept', J);
      stats.requests++;
      if (me.body?.user?.username !== want)
        problems.push(`after fuzzing, ${id} is no longer ${want} (${me.status}: ${messageOf(me)}): the harness lost its identity; results after that point are suspect`);
    }
    return problems;
  }

  return { stats, print, restore, pools, refresh, gen, client, check, checkStream, afterwards };
}
export type FuzzLab = Awaited<ReturnType<typeof fuzzLab>>;
