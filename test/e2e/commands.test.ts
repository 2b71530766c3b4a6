/**
 * Each `lab` command, run from the installed bundle as a lab runs it (issue 25: two bundle-only bugs broke
 * commands while every test of the sources passed). The commands are read from `lab --help`, so a new one
 * without a smoke run here fails this test. `lab serve`, `lab agent` and `lab mcp` are exercised at length by
 * the other end-to-end tests; here each one starts, and each other command does its job once.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LAB_BIN } from './installed.js';

const exec = promisify(execFile);

/** Run `lab ARGS` in `cwd`; its exit code and what it printed (never throws for a non-zero exit). */
async function lab(cwd: string, args: string[], stdin?: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [LAB_BIN, ...args], { cwd, env: { ...process.env, CI: 'true' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (b: Buffer) => (out += b.toString()));
    p.stderr.on('data', (b: Buffer) => (out += b.toString()));
    p.stdin.end(stdin ?? '');
    p.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

/** The names of the commands a `--help` lists (its "Commands:" section), `help` left out. */
const commandsOf = (help: string) => [...(help.split('Commands:')[1] ?? '').matchAll(/^ {2}(\w[\w-]*)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');

describe('the lab commands of the installed bundle', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'labdeck-commands-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** A smoke run of each command and subcommand: what it must print, and its exit code. */
  const SMOKE: Record<string, () => Promise<void>> = {
    async serve() {
      const p = spawn(process.execPath, [LAB_BIN, 'serve', '--port', '0', '--data-dir', join(dir, 'serve-data'), '--plugins', join(dir, 'plugins')], { cwd: dir });
      let out = '';
      const url = await new Promise<string>((resolve, reject) => {
        p.stdout.on('data', (b: Buffer) => {
          out += b.toString();
          const m = /ready in \d+ ms: (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        p.on('exit', (code) => reject(new Error(`lab serve exited with ${code}: ${out}`)));
      });
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
    },
    async run() {
      const wf = { name: 'smoke', parameters: [], outputs: ['mass'], prep: [], main: [{ kind: 'call', instrument: 'balance', method: 'weigh', args: {}, save_as: 'mass' }], cleanup: [] };
      await writeFile(join(dir, 'smoke.json'), JSON.stringify(wf));
      const r = await lab(dir, ['run', 'smoke.json', '--repeat', '2', '--json', '--data-dir', join(dir, 'run-data')]);
      expect(r).toMatchObject({ code: 0 });
      const events = r.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; status?: string });
      expect(events.filter((e) => e.type === 'iteration')).toHaveLength(2);
      expect(events.at(-1)).toMatchObject({ status: 'completed' });
    },
    async agent() {
      const r = await lab(dir, ['agent', '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/--server/);
    },
    async mcp() {
      const r = await lab(dir, ['mcp', '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/--token|token/i);
    },
    async 'user add'() {
      const data = join(dir, 'users');
      expect(await lab(dir, ['user', 'add', 'ada', '--password-stdin', '--data-dir', data], 'correct horse\n')).toMatchObject({ code: 0 });
      expect(await lab(dir, ['user', 'add', 'bea', '--password-stdin', '--data-dir', data], 'another horse\n')).toMatchObject({ code: 0 });
      expect(await lab(dir, ['user', 'add', 'ada', '--password-stdin', '--data-dir', data], 'correct horse\n')).toMatchObject({ code: 2 }); // taken
    },
    async 'user list'() {
      const r = await lab(dir, ['user', 'list', '--data-dir', join(dir, 'users')]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/ada\s+admin/);
      expect(r.out).toMatch(/bea\s+operator/);
    },
    async 'user passwd'() {
      expect(await lab(dir, ['user', 'passwd', 'bea', '--password-stdin', '--data-dir', join(dir, 'users')], 'a new horse!\n')).toMatchObject({ code: 0 });
    },
    async 'init plugin'() {
      const r = await lab(dir, ['init', 'plugin', 'smoke-pump', '--dir', join(dir, 'plugins')]);
      expect(r.code).toBe(0);
    },
    async 'plugins check'() {
      const r = await lab(dir, ['plugins', 'check', join(dir, 'plugins')]);
      expect(r).toMatchObject({ code: 0 });
      expect(r.out).toMatch(/smoke-pump/);
    },
    async 'plugins list'() {
      const r = await lab(dir, ['plugins', 'list', '--plugins', join(dir, 'plugins')]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/sim-pump/);
      expect(r.out).toMatch(/smoke-pump/);
    },
    async 'plugins test'() {
      const r = await lab(dir, ['plugins', 'test', join(dir, 'plugins')]);
      expect(r.out).toMatch(/pass/);
      expect(r.code).toBe(0);
    },
  };

  it('lists no command without a smoke run here, and each answers --help', async () => {
    const top = (await exec(process.execPath, [LAB_BIN, '--help'])).stdout;
    const all: string[] = [];
    for (const c of commandsOf(top)) {
      const help = (await exec(process.execPath, [LAB_BIN, c, '--help'])).stdout;
      expect(help).toMatch(/^Usage: lab /);
      const subs = commandsOf(help);
      all.push(...(subs.length ? subs.map((s) => `${c} ${s}`) : [c]));
    }
    expect(all.filter((c) => !SMOKE[c])).toEqual([]);
    expect(Object.keys(SMOKE).filter((c) => !all.includes(c))).toEqual([]);
  });

  // in this order: the accounts and the plugin folder are made by the earlier ones
  for (const name of Object.keys(SMOKE)) it(`lab ${name}`, () => SMOKE[name]!(), 60_000);
});
