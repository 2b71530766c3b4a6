/**
 * Several labdeck processes on one PostgreSQL database (issue 13, DESIGN.md §12), as real processes: two
 * `lab serve` and a `lab run`. Restarting one server never touches the other's live run nor holds the queue;
 * `lab run` refuses an instrument a server drives, naming it; a server killed with SIGKILL mid-call is found
 * gone by the other one, which interrupts its run once (in-doubt step, the task holding the queue).
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openStore, type Store } from '../../core/store/index.js';
import { postgresTestDb } from '../helpers/db.js';
import { spawnServer } from './server.js';
import { LAB_BIN, installedFile } from './installed.js';
import { waitForValue } from '../helpers/wait.js';

const deck = installedFile('test/fixtures/runner/deck.ts');
const bin = LAB_BIN;
const LEASE_MS = 1500;
process.env.LABDECK_LEASE_MS = String(LEASE_MS); // the servers and lab run inherit it

const LONG = {
  name: 'long',
  parameters: [{ name: 'ms', type: 'number', default: 10 }],
  main: [
    { kind: 'call', instrument: 'counter', method: 'inc' },
    { kind: 'call', instrument: 'slow', method: 'work', args: { ms: { param: 'ms' } } },
  ],
};
const QUICK = { name: 'quick', main: [{ kind: 'call', instrument: 'counter', method: 'read' }] };

const exited = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));

const until = <T>(get: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 15_000): Promise<T> => waitForValue(get, ok, what, ms, 50);

describe('two lab serve and a lab run on one PostgreSQL', () => {
  let db: { url: string; drop(): Promise<void> };
  let dir: string;
  let store: Store;
  const procs: ChildProcess[] = [];
  let auth: Record<string, string>;

  const serve = async (name: string, args: string[]) => {
    const { url, proc } = await spawnServer(join(dir, name), ['--db', db.url, '--no-watch', ...args]);
    procs.push(proc);
    return { base: url, proc };
  };
  const api = async (base: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...auth, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };

  beforeAll(async () => {
    db = await postgresTestDb();
    dir = await mkdtemp(join(tmpdir(), 'labdeck-hosts-'));
    store = await openStore({ dataDir: dir, url: db.url });
  });
  afterAll(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map(exited));
    await store?.close();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps each host to its own runs and instruments', async () => {
    const a = await serve('a', ['--deck', deck]);
    let b = await serve('b', []); // the demo deck: other instruments
    const form = (path: string, body: Record<string, string>) =>
      fetch(`${a.base}/auth/${path}`, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
    expect((await form('signup', { username: 'ada', password: 'correct horse' })).status).toBe(302);
    const cookie = (await form('login', { username: 'ada', password: 'correct horse' })).headers
      .getSetCookie()
      .find((c) => c.startsWith('labdeck.sid='))!
      .split(';')[0];
    const token = await fetch(`${a.base}/account/tokens`, {
      method: 'POST',
      headers: { Cookie: cookie, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ name: 'hosts' }),
    });
    auth = { Authorization: `Bearer ${(await token.json()).token}` };
    for (const wf of [LONG, QUICK]) expect((await api(a.base, 'POST', '/workflows', wf)).status).toBe(201);

    // lab run beside the server that drives `counter`: refused, naming that server
    const run = await promisify(execFile)(process.execPath, [bin, 'run', 'quick', '--deck', deck, '--db', db.url, '--data-dir', join(dir, 'r'), '--plugins', join(dir, 'r', 'plugins')]).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/counter is driven by lab serve on \S+ \(pid \d+\), another labdeck on this database/);
    expect(run.stderr).toContain(`(pid ${a.proc.pid})`);

    // A runs a long task; B restarts meanwhile: A's run goes on untouched, nothing holds the queue
    const long = await api(a.base, 'POST', '/executions/config', { workflow: 'long', config: [{ ms: 3000 }] });
    expect(long.status).toBe(200);
    const taskId: number = long.body.task_id;
    await until(
      () => api(a.base, 'GET', '/executions/status'),
      (r) => r.body.current_task?.id === taskId,
      'A running the task',
    );
    b.proc.kill('SIGTERM');
    await exited(b.proc);
    b = await serve('b', []);
    const onB = (await api(b.base, 'GET', '/executions/status')).body;
    expect(onB).toMatchObject({ queue_held: false, interrupted: null });
    const task = await until(
      () => store.queue.get(taskId),
      (t) => t?.status === 'done',
      'A completes its run',
    );
    expect((await store.runs.get(task!.runId!))!.status).toBe('completed');
    expect((await store.logs.list(task!.runId!)).some((l) => l.message.startsWith('Interrupted'))).toBe(false);
    expect(await store.queue.holding()).toEqual([]);

    // A is killed mid-call: B finds its lease expired, interrupts the run once, and the task holds the queue
    const cut = await api(a.base, 'POST', '/executions/config', { workflow: 'long', config: [{ ms: 20_000 }] });
    const cutId: number = cut.body.task_id;
    await until(
      () => store.queue.get(cutId),
      (t) => t?.runId != null && t.status === 'running',
      'A running the second task',
    );
    await until(
      async () => (await store.runSteps.list((await store.queue.get(cutId))!.runId!)).some((s) => s.method === 'work'),
      (x) => x,
      'the slow call in flight',
    );
    a.proc.kill('SIGKILL');
    await exited(a.proc);
    const status = await until(
      () => api(b.base, 'GET', '/executions/status'),
      (r) => r.body.interrupted?.task_id === cutId,
      "B recovering A's run",
      20_000,
    );
    expect(status.body).toMatchObject({ queue_held: true, interrupted: { task_id: cutId, step: { method: 'work' } } });
    const runId = (await store.queue.get(cutId))!.runId!;
    expect((await store.runs.get(runId))!.status).toBe('interrupted');
    expect((await store.runSteps.list(runId)).find((s) => s.method === 'work')!.status).toBe('in-doubt');
    const lines = (await store.logs.list(runId)).filter((l) => l.message.startsWith('Interrupted'));
    expect(lines).toHaveLength(1);
    expect(lines[0].message).toContain(`(pid ${a.proc.pid})`);
    // B cannot drive counter and slow: it cannot resume the run, and says so
    const retry = await api(b.base, 'POST', '/executions/retry', {});
    expect(retry.status).toBe(409);
    expect(retry.body.error.message).toMatch(/needs counter, slow, which this labdeck does not drive/);
  });
});
