/**
 * `lab agent` as a real process (issue 13 item 3): it connects out to a real `lab serve`, its instruments
 * are called through the server; killed with SIGKILL mid-call, the call answers 503 in-doubt and its
 * instruments go offline; started again, they are back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServer } from './server.js';
import { LAB_BIN, installedFile } from './installed.js';
import { waitFor } from '../helpers/wait.js';

const deck = installedFile('test/fixtures/runner/deck.ts');
const bin = LAB_BIN;
const exited = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));

describe('lab agent, a real process', () => {
  let dir: string;
  const procs: ChildProcess[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'labdeck-agent-'));
  });
  afterAll(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map(exited));
    await rm(dir, { recursive: true, force: true });
  });

  it('serves its deck to the server; killed mid-call: 503 in-doubt, offline; back when started again', async () => {
    const { url: base, proc } = await spawnServer(join(dir, 'server'), ['--no-watch']);
    procs.push(proc);
    const form = (path: string, body: Record<string, string>) =>
      fetch(`${base}/auth/${path}`, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
    await form('signup', { username: 'ada', password: 'correct horse' });
    const cookie = (await form('login', { username: 'ada', password: 'correct horse' })).headers
      .getSetCookie()
      .find((c) => c.startsWith('labdeck.sid='))!
      .split(';')[0];
    const token = async (scope: string) =>
      (
        await (
          await fetch(`${base}/account/tokens`, {
            method: 'POST',
            headers: { Cookie: cookie, 'Content-Type': 'application/json', Accept: 'application/json' },
            body: JSON.stringify({ name: scope, scope }),
          })
        ).json()
      ).token as string;
    const user = await token('user');
    const agentToken = await token('agent');
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${user}`, Accept: 'application/json', 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    let out = ''; // the running agent's output
    const startAgent = async () => {
      const p = spawn(process.execPath, [bin, 'agent', '--deck', deck, '--server', base, '--token', agentToken, '--name', 'bench-pc'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LABDECK_FIXTURE_TRACE: '1' },
      });
      procs.push(p);
      out = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`agent did not connect:\n${out}`)), 20_000);
        const on = (b: Buffer) => {
          out += b.toString();
          if (/agent bench-pc: serving counter, slow/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        };
        p.stdout!.on('data', on);
        p.stderr!.on('data', on);
      });
      return p;
    };

    let agent = await startAgent();
    expect((await api('POST', '/instruments/counter', { method: 'inc', args: { by: 5 } })).body.output).toBe(5);
    const slow = api('POST', '/instruments/slow', { method: 'work', args: { ms: 5000 } });
    await waitFor(() => out.includes('slow.work(5000) started'), "the call to reach the agent's instrument", 20_000);
    agent.kill('SIGKILL');
    await exited(agent);
    const cut = await slow;
    expect(cut.status).toBe(503);
    expect(cut.body).toMatchObject({ in_doubt: true });
    const list = (await api('GET', '/instruments')).body.instruments as { name: string; offline?: string; host?: string }[];
    expect(list.find((i) => i.name === 'counter')).toMatchObject({ host: 'bench-pc', offline: expect.stringMatching(/the agent bench-pc is not connected/) });

    agent = await startAgent();
    const back = await api('POST', '/instruments/counter', { method: 'inc', args: {} });
    expect(back.status).toBe(200);
  });
});
