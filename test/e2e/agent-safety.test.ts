/**
 * The safety guard with `lab agent` as a real process (issue 28): a real `lab serve --safety FILE` ships the
 * lab's file to the agent, which prints what it enforces; a call past a limit to the agent's instrument is
 * refused (409) and the counting driver on the agent's PC is untouched; one within the limit reaches it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServer } from './server.js';
import { LAB_BIN, installedFile } from './installed.js';

const deck = installedFile('test/fixtures/safety/deck.ts');
const exited = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));

describe('lab agent enforces the lab safety file, a real process', () => {
  let dir: string;
  const procs: ChildProcess[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'labdeck-agent-safety-'));
  });
  afterAll(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map(exited));
    await rm(dir, { recursive: true, force: true });
  });

  it('gets the file from the server; a call past a limit is refused with its driver untouched', async () => {
    const file = join(dir, 'lab-safety.json');
    await writeFile(file, JSON.stringify({ format: 'ivoryos-safety/1', limits: [{ target: 'heater', method: 'set_temperature', param: 'setpoint_c', max: 120 }] }));
    // the server drives only a clock (its demo deck has a pump too): the agent's PC drives the rest
    const empty = join(dir, 'clock-deck.ts');
    await writeFile(empty, 'export const clock = { now() { return Date.now(); } };\n');
    const { url: base, proc } = await spawnServer(join(dir, 'server'), ['--no-watch', '--safety', file, '--deck', empty]);
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
    const api = async (path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${user}`, Accept: 'application/json', 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const agent = spawn(process.execPath, [LAB_BIN, 'agent', '--deck', deck, '--server', base, '--token', agentToken, '--name', 'pc-safe'], { stdio: ['ignore', 'pipe', 'pipe'] });
    procs.push(agent);
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`agent did not take the safety file:\n${out}`)), 20_000);
      const on = (b: Buffer) => {
        out += b.toString();
        if (/agent pc-safe: serving/.test(out) && /agent pc-safe: enforcing the lab's safety file .*: 1 limit\(s\)/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      agent.stdout!.on('data', on);
      agent.stderr!.on('data', on);
    });
    const counts = async () => ((await api('/instruments/door', { method: 'counts', args: {} })).body.output as Record<string, number>)['heater.set_temperature'] ?? 0;
    const refused = await api('/instruments/heater', { method: 'set_temperature', args: { setpoint_c: 150 } });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'safety', details: [{ field: 'setpoint_c', value: 150 }] });
    expect(await counts()).toBe(0);
    expect((await api('/instruments/heater', { method: 'set_temperature', args: { setpoint_c: 100 } })).status).toBe(200);
    expect(await counts()).toBe(1);
  });
});
