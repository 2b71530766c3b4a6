/**
 * A schema-driven fuzzer over the whole HTTP API. The OpenAPI document the app serves (GET /app/openapi.json)
 * lists every operation with its path parameters, query parameters and request bodies (JSON Schema); each
 * operation is one test, its requests drawn by fast-check from shrinkable tapes (test/helpers/fuzz-tape.ts), so
 * a failing request is shrunk to the simplest one that still fails and reported with its seed (issue 27 item 6):
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
 *   query parameters from their schemas and junk (repeated keys too) (test/helpers/fuzz-requests.ts);
 * - sweeps: every path parameter with each junk segment once, every query parameter with a NUL and integers
 *   past 2^31, every JSON body with a NUL in each string and 2^31 for each integer.
 *
 * Every response must be below 500 (502, 503 and 507 are legitimate answers of instrument calls only: the
 * instrument raised, is offline, or its record could not be stored) and must come (a request unanswered after
 * 10 s is reported as hanging). A failure names the request, the identity, a body excerpt, the status, the
 * error message and what the server logged (test/helpers/fuzz-lab.ts). Requests go to the in-process app only.
 *
 * Operations with state the fuzzer must not destroy are fuzzed in a bounded way: log out and password changes
 * use spare accounts (the identities under test stay logged in), the bearer token used by the fuzzer is never
 * revoked, an admin's actions on accounts (role, password, disable, delete) name only disposable accounts by
 * their real ids (junk ids never hit a real account), and the live event stream (an endless response) is read
 * up to its first event and then dropped (and HEAD is sent).
 *
 * The requests are fixed by the seeds; the real ids they draw on come from the lab's state, which the runner
 * (working through what the fuzzer queued) also changes. FUZZ_DEBUG=1 prints the time and statuses of each
 * operation; FUZZ_TRACE=<part of an operation> prints each of its requests with the answer. `npm run bench`
 * runs FUZZ_SCALE times the cases from FUZZ_SEED.
 */
import { signupAndLogin, startLab } from '../api/helpers.js';
import { fuzzLab, SESSION_ENDING, isPublic, type FuzzLab } from '../helpers/fuzz-lab.js';
import { contentOf } from '../helpers/fuzz-requests.js';
import { pathInstrument } from '../helpers/fuzz-schema.js';
import { hash, knob, onTapes, type Rng } from '../helpers/fuzz-tape.js';
import { ADMIN_ONLY, J, RawJson, SWEEP_SEGMENTS, excerpt, isPlainObject, jsonText, type Case, type Doc, type Identity, type Operation } from '../helpers/fuzz-values.js';

const SEED = knob('FUZZ_SEED', 0x1ab_dec);
const SCALE = knob('FUZZ_SCALE', 1);
/** Fuzz cases per operation (besides the identity sweep); operations with a body get the larger number. */
const CASES_WITH_BODY = 18 * SCALE;
const CASES_WITHOUT_BODY = 8 * SCALE;
/** The API document and page are built whole for every request (~200 ms): a few cases suffice. */
const FEW_CASES = new Set(['GET /app/api', 'GET /app/openapi.json']);

// The operations are the tests: the document is read when the file is collected, from the lab under test.
const lab = await startLab();
const doc = (await lab.admin.get('/app/openapi.json').set('Accept', J)).body as Doc;
const ops = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
  Object.entries(item).map(([m, op]) => [`${m.toUpperCase()} ${path}`, m.toUpperCase(), path, op] as [string, string, string, Operation]),
);

describe('fuzzing every operation of the OpenAPI document', () => {
  let fz: FuzzLab;
  const t0 = Date.now();
  const failedOps: string[] = [];
  const perOp: string[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    const operator = await signupAndLogin(lab.app, 'olga');
    const made = await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'fuzzer' }).expect(201);
    fz = await fuzzLab(lab, doc, { operator, token: made.body.token, tokenId: made.body.id });
  }, 60_000);
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    fz?.restore();
    // stop whatever the fuzzer queued before the lab closes
    await lab.runtime.runner.abortNextTask().catch(() => undefined);
    await lab.close();
  });

  it('documents every operation, and marks as admin-only exactly what docs/security.md says', () => {
    expect(ops.length).toBeGreaterThan(60);
    expect(
      ops
        .filter(([, , , op]) => op['x-labdeck-admin'])
        .map(([key]) => key)
        .sort(),
    ).toEqual([...ADMIN_ONLY].sort());
  });

  it.each(ops)(
    '%s answers every generated request below 500 (502/503/507 only from instruments) and keeps the identity rules',
    async (opKey, method, path, op) => {
      const opStart = Date.now();
      const statusFrom = new Map(fz.stats.byStatus);
      fz.stats.ops++;
      await fz.refresh(opKey);
      const { fillPath, makeBody, queryString, template, valid, deref } = fz.gen;
      const params = op.parameters ?? [];
      const hasBody = Object.keys(contentOf(op)).length > 0;
      const seed = SEED ^ hash(opKey);
      const errors: string[] = [];
      let group = 0;
      /** `numRuns` requests built by `build`, each from its own tape; a failure is shrunk and kept for the report. */
      const cases = (numRuns: number, build: (rng: Rng) => Case, simplestFirst = false) =>
        onTapes(async (rng) => fz.check(opKey, op, path, build(rng), rng), { numRuns, seed: seed + group++, simplestFirst, maxLength: 128 }).catch((e: Error) => void errors.push(e.message));

      if (path === '/app/executions/events') {
        // The live event stream never ends: HEAD, and GETs read up to the first event. Anonymous and bad-token
        // requests are answered with 401 at once and go the normal way.
        for (const id of ['operator', 'admin', 'token'] as Identity[])
          for (const how of ['HEAD', 'GET'] as const)
            await onTapes((rng) => fz.checkStream(opKey, id, how, path + (how === 'GET' && rng.chance(0.5) ? '?format=json&x=%ZZ' : '')), { numRuns: 1, seed: seed + group++ }).catch(
              (e: Error) => void errors.push(e.message),
            );
        for (const identity of ['anonymous', 'bad-token'] as Identity[])
          for (const accept of [J, 'text/html']) await cases(1, () => ({ identity, method, url: path, accept, headers: {}, body: { kind: 'none' }, note: 'identity sweep', checkAuth: true }));
      } else {
        // 1. the identity sweep: valid-looking requests from everyone (log-out and log-in would end or replace
        //    the session under test: a spare account stands in)
        const standIn = (id: Identity): Identity => (SESSION_ENDING.has(opKey) && (id === 'operator' || id === 'admin') ? 'spare' : id);
        for (const [id, accept] of [
          ['anonymous', J],
          ['anonymous', 'text/html'],
          ['bad-token', J],
          ['operator', J],
          ['admin', J],
          ['token', 'drawn'],
        ] as [Identity, string][]) {
          await cases(1, (rng) => {
            const url = fillPath(rng, path, true);
            const [body, note] = makeBody(rng, opKey, op, path, url, true);
            return {
              identity: standIn(id),
              method,
              url,
              accept: accept === 'drawn' ? rng.pick([J, 'text/html', undefined]) : accept,
              headers: {},
              body,
              note: `identity sweep, ${note}`,
              checkAuth: true,
            };
          });
        }

        // 2. fuzz cases
        const n = FEW_CASES.has(opKey) ? 3 : hasBody ? CASES_WITH_BODY : params.length ? CASES_WITHOUT_BODY : Math.ceil(CASES_WITHOUT_BODY / 2);
        await cases(
          n,
          (rng) => {
            const identity = standIn(rng.pick<Identity>(['admin', 'admin', 'operator', 'operator', 'token', 'token', 'anonymous', 'bad-token']));
            const wantValid = rng.chance(0.3);
            const mount = rng.chance(0.15) ? '' : '/app';
            const url = mount + fillPath(rng, path, wantValid).slice('/app'.length) + queryString(rng, params);
            const [body, note, wellFormed] = makeBody(rng, opKey, op, path, url, wantValid);
            const accept = rng.pick([J, J, 'text/html', undefined, '*/*', 'text/html,application/json;q=0.9', 'application/xml']);
            const headers: Record<string, string> = {};
            if (params.some((p) => p.name === 'HX-Request') ? rng.chance(0.4) : rng.chance(0.05)) headers['HX-Request'] = 'true';
            if (rng.chance(0.05)) headers.Referer = rng.pick(['http://127.0.0.1/app/instruments/', 'http://evil.example/x', 'not a url', '/app/../../etc']);
            const tooBig = body.kind !== 'multipart' && body.kind !== 'none' && Buffer.byteLength(body.text) > 1024 * 1024;
            return { identity, method, url, accept, headers, body, note, checkAuth: wellFormed && !tooBig && identity !== 'spare' };
          },
          true,
        );

        // 3. sweeps: every path parameter with each junk segment, every query parameter with a NUL and a
        //    too-large integer, and a JSON body with a NUL in every string and 2^31 for every integer
        const sweepIdentity = (rng: Rng): Identity => (isPublic(op) || SESSION_ENDING.has(opKey) ? 'anonymous' : rng.pick<Identity>(['admin', 'token', 'operator']));
        for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)) {
          for (const value of name === 'filename' ? [...SWEEP_SEGMENTS, 'run-2147483648.csv', 'run-99999999999999999999.csv'] : SWEEP_SEGMENTS) {
            await cases(1, (rng) => {
              const url = fillPath(rng, path, true, { name, value });
              const [body, note] = makeBody(rng, opKey, op, path, url, true);
              return { identity: sweepIdentity(rng), method, url, accept: rng.pick([J, 'text/html']), headers: {}, body, note: `path sweep ${name}=${excerpt(value, 20)}, ${note}`, checkAuth: true };
            });
          }
        }
        for (const p of FEW_CASES.has(opKey) ? [] : params.filter((x) => x.in === 'query')) {
          for (const value of ['a%00b', '99999999999', '2147483648']) {
            await cases(1, (rng) => {
              const url = `${fillPath(rng, path, true)}?${p.name}=${value}`;
              return { identity: sweepIdentity(rng), method, url, accept: J, headers: {}, body: makeBody(rng, opKey, op, path, url, true)[0], note: `query sweep ${p.name}=${value}`, checkAuth: true };
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
            await cases(1, (rng) => {
              const url = fillPath(rng, path, true);
              const ctx = { instrument: pathInstrument(url) };
              const base = template(rng, opKey, url) ?? valid(rng, jsonSchema, 0, undefined, ctx);
              // every field the schema names, optional ones too
              if (isPlainObject(base)) for (const [k, ps] of Object.entries(deref(jsonSchema).properties ?? {})) if (!(k in base)) base[k] = valid(rng, ps, 1, k, ctx);
              return {
                identity: sweepIdentity(rng),
                method,
                url,
                accept: J,
                headers: {},
                body: { kind: 'json', text: jsonText(everywhere(base, f)), wellFormed: true },
                note: `body sweep, ${what}`,
                checkAuth: true,
              };
            });
          }
        }
      }

      // let a run or campaign the fuzzer started go on in the background, but not pile up without end: the
      // runner has looked at what was queued before the next operation
      if (path.startsWith('/app/executions/')) await lab.runtime.runner.settled();
      const statuses = [...fz.stats.byStatus].map(([k, v]) => [k, v - (statusFrom.get(k) ?? 0)]).filter(([, v]) => v);
      perOp.push(`${opKey}  ${Date.now() - opStart}  ${JSON.stringify(Object.fromEntries(statuses))}`);
      if (errors.length) {
        failedOps.push(opKey);
        throw new Error(`${errors.length} failing request(s) of ${opKey}, each the simplest that still fails:\n\n${errors.join('\n\n')}`);
      }
    },
    60_000 * SCALE,
  );

  it('keeps the identities under test, leaves no promise rejected, and sends the whole fuzz', async () => {
    const problems = await fz.afterwards();
    if (process.env.FUZZ_DEBUG) fz.print(perOp.join('\n'));
    const { stats } = fz;
    const statuses = JSON.stringify(Object.fromEntries([...stats.byStatus].sort(([a], [b]) => a - b)));
    const summary = `${stats.requests} requests over ${stats.ops} operations in ${((Date.now() - t0) / 1000).toFixed(1)} s (${lab.runtime.store.dialect}); statuses ${statuses}; slowest ${stats.slowest.ms} ms: ${stats.slowest.what}`;
    // (npm run bench reads this line)
    fz.print(`fuzz: ${summary}; ${failedOps.length} failing request(s)${failedOps.length ? ` (the simplest of each of ${failedOps.join(', ')})` : ''}`);
    expect(problems).toEqual([]);
    expect(unhandled.map((e) => excerpt(String((e as Error)?.stack ?? e), 600))).toEqual([]);
    expect(stats.requests).toBeGreaterThan(1000);
  });
});
