/**
 * The fast path's one switch (server/fast/switch.ts, LABDECK_FAST_PATH): two labs, one with the fast path
 * on and one with it off, each behind `lab serve`'s HTTP server, answer the same requests the same (the
 * direct lane's call, its errors, a malformed JSON body, pages, API reads, a route nobody serves); the
 * switch does take the pieces out (no lane, Node's own request class); and a value it does not know is
 * refused, naming the variable, before `lab serve` starts anything.
 */
import { jest } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, Server } from 'node:http';
import { createHttpServer, LabRequest } from '../../server/fast/http-server.js';
import { FAST_PATH_ENV, parseFastPath } from '../../server/fast/switch.js';
import { serve as labServe } from '../../cli/serve.js';
import { isLabError } from '../../core/errors.js';
import { startLab, type TestLab } from './helpers.js';
import { testDbUrl } from '../helpers/db.js';

interface Served {
  lab: TestLab;
  server: Server;
  base: string;
  token: string;
  /** The class of each request the server made. */
  classes: Set<unknown>;
}

const modes: Record<'on' | 'off', Served> = {} as Record<'on' | 'off', Served>;

async function serve(fast: boolean): Promise<Served> {
  const lab = await startLab({}, { fastPath: fast });
  const server = createHttpServer(lab.app, {}, fast);
  const classes = new Set<unknown>();
  server.prependListener('request', (req: IncomingMessage) => classes.add(Object.getPrototypeOf(req)?.constructor));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const made = await lab.admin.post('/app/account/tokens').set('Accept', 'application/json').send({ name: 'fast-path' }).expect(201);
  return { lab, server, base, token: made.body.token as string, classes };
}

beforeAll(async () => {
  [modes.on, modes.off] = await Promise.all([serve(true), serve(false)]);
});
afterAll(async () => {
  for (const m of Object.values(modes)) {
    if (!m) continue;
    m.server.closeAllConnections();
    await new Promise((r) => m.server.close(r));
    await m.lab.close();
  }
});

/** What a request is answered, as far as it is the app's: status, headers (but the date), body. */
async function answer(m: Served, method: string, path: string, init: { headers?: Record<string, string>; body?: string; auth?: boolean } = {}) {
  const headers: Record<string, string> = { ...(init.auth === false ? {} : { Authorization: `Bearer ${m.token}` }), ...init.headers };
  const res = await fetch(`${m.base}${path}`, { method, headers, body: init.body, redirect: 'manual' });
  const h = Object.fromEntries([...res.headers].filter(([k]) => k !== 'date' && k !== 'keep-alive'));
  const text = await res.text();
  // a recent call's duration on a page (0 or 1 ms) is the call's own, not the path's
  const body = text.replace(/<td>\d+<\/td><\/tr>/g, '<td>(ms)</td></tr>');
  if (body !== text) delete h['content-length'];
  return { status: res.status, headers: h, body };
}

const JSON_BODY = { 'Content-Type': 'application/json', Accept: 'application/json' };

describe('LABDECK_FAST_PATH on and off answer the same', () => {
  it.each([
    ['an instrument call (the direct lane)', 'POST', '/app/instruments/noop', { headers: JSON_BODY, body: JSON.stringify({ method: 'ping', args: {} }) }],
    ['the same call under /', 'POST', '/instruments/noop', { headers: JSON_BODY, body: JSON.stringify({ method: 'ping' }) }],
    ['a call to a method there is not', 'POST', '/app/instruments/noop', { headers: JSON_BODY, body: JSON.stringify({ method: 'pong' }) }],
    ['a malformed JSON body (body-parser says what is wrong)', 'POST', '/app/instruments/noop', { headers: JSON_BODY, body: '{"method": ' }],
    ['a call without a token (the login gate)', 'POST', '/app/instruments/noop', { headers: JSON_BODY, body: JSON.stringify({ method: 'ping' }), auth: false }],
    ['a page', 'GET', '/app/instruments/noop', { headers: { Accept: 'text/html' } }],
    ['the list as JSON', 'GET', '/app/instruments/?format=json', {}],
    ["a path the lane leaves to the router (the new-device page's)", 'GET', '/app/instruments/new/?format=json', {}],
    ['a form post', 'POST', '/app/instruments/noop', { headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' }, body: 'method=ping' }],
    ['a route nobody serves', 'GET', '/app/nowhere?format=json', {}],
    ['a public route', 'GET', '/app/healthz', { auth: false }],
  ] as const)('%s', async (_name, method, path, init) => {
    const [on, off] = [await answer(modes.on, method, path, init), await answer(modes.off, method, path, init)];
    // the calls are each lab's own first, second…: the same ids, the same bodies
    expect(off).toEqual(on);
    expect(on.status).toBeLessThan(500);
  });

  it('the switch takes the pieces out: on, the lane and LabRequest; off, neither', async () => {
    const stackNames = (m: Served) => (m.lab.app as unknown as { router: { stack: { name: string }[] } }).router.stack.map((l) => l.name);
    expect(stackNames(modes.on)).toContain('lane');
    expect(stackNames(modes.off)).not.toContain('lane');
    await answer(modes.on, 'GET', '/app/healthz');
    await answer(modes.off, 'GET', '/app/healthz');
    expect([...modes.on.classes]).toEqual([LabRequest]);
    expect(modes.off.classes.has(LabRequest)).toBe(false);
  });
});

describe('the value of LABDECK_FAST_PATH', () => {
  it.each([
    [undefined, true],
    ['', true],
    ['1', true],
    ['on', true],
    ['ON', true],
    ['0', false],
    ['off', false],
    ['false', false],
    ['no', false],
  ])('%p is %p', (value, on) => {
    expect(parseFastPath(value)).toBe(on);
  });

  it.each(['yes please', '2', 'true-ish', 'disabled'])('%p is refused, naming the variable', (value) => {
    let thrown: unknown;
    try {
      parseFastPath(value);
    } catch (e) {
      thrown = e;
    }
    expect(isLabError(thrown) && thrown.code).toBe('invalid_input');
    expect((thrown as Error).message).toContain(FAST_PATH_ENV);
    expect((thrown as Error).message).toContain(JSON.stringify(value));
    expect((thrown as { details?: unknown }).details).toEqual([{ field: FAST_PATH_ENV, message: expect.any(String) }]);
  });

  it('lab serve says in one line that the fast path is off, and serves with it off', async () => {
    const before = process.env[FAST_PATH_ENV];
    process.env[FAST_PATH_ENV] = 'off';
    const dataDir = await mkdtemp(join(tmpdir(), 'labdeck-fast-off-'));
    const db = await testDbUrl();
    try {
      const lines: string[] = [];
      const s = await labServe({ host: '127.0.0.1', port: 0, dataDir, db: db.url, watch: false, pluginDirs: [] }, (l) => lines.push(l));
      try {
        expect(lines.filter((l) => l.includes('fast path'))).toEqual(['fast path off (LABDECK_FAST_PATH=off): plain Express answers every request, the same answers, slower']);
        expect(lines.findIndex((l) => l.startsWith('fast path off'))).toBeLessThan(lines.findIndex((l) => l.startsWith('labdeck ready')));
        const health = await fetch(`http://127.0.0.1:${s.port}/app/healthz`);
        expect(health.status).toBe(200);
      } finally {
        await s.close();
      }
    } finally {
      if (before === undefined) delete process.env[FAST_PATH_ENV];
      else process.env[FAST_PATH_ENV] = before;
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('lab serve stops before it starts anything when the value is not one it knows', async () => {
    const before = process.env[FAST_PATH_ENV];
    process.env[FAST_PATH_ENV] = 'maybe';
    try {
      const log = jest.fn();
      await expect(labServe({ host: '127.0.0.1', port: 0, dataDir: '/nonexistent/labdeck-fast-path', pluginDirs: [] }, log)).rejects.toThrow(/LABDECK_FAST_PATH must be .* not "maybe"/);
      expect(log).not.toHaveBeenCalled();
    } finally {
      if (before === undefined) delete process.env[FAST_PATH_ENV];
      else process.env[FAST_PATH_ENV] = before;
    }
  });
});
