import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
// What every bench section shares: a real `lab serve`, HTTP with keep-alive, a token, figures printed with targets.

export const bin = new URL('../../bin/lab', import.meta.url).pathname;
const root = new URL('../..', import.meta.url).pathname;
export const PASSWORD = 'bench-password';

/** `lab serve` on a free port; `extra` are more of its options (e.g. `['--deck', file]`). */
export function startServer(dataDir, extra = []) {
  const t0 = performance.now();
  const proc = spawn(bin, ['serve', '--port', '0', '--no-watch', '--data-dir', dataDir, '--plugins', join(dataDir, 'plugins'), ...extra], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return ready(proc, t0, 'server');
}

/** Resolves when `proc` prints its "ready in N ms: URL" line: the process, its base URL, the time since `t0`. */
function ready(proc, t0, what) {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (b) => {
      out += b;
      const m = /ready in \d+ ms: (http:\/\/\S+)/.exec(out);
      if (m) {
        const readyMs = performance.now() - t0;
        cpuOf(proc.pid).then(
          (cpuMs) => resolve({ proc, base: m[1], readyMs, cpuMs }),
          () => resolve({ proc, base: m[1], readyMs, cpuMs: NaN }),
        );
      }
    });
    proc.once('exit', (c) => reject(new Error(`${what} exited ${c}: ${out}`)));
  });
}

export const stop = (proc) =>
  new Promise((r) => {
    proc.once('exit', r);
    proc.kill('SIGTERM');
  });

export const agent = new Agent({ keepAlive: true, maxSockets: 64 });
export function http(method, url, { body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const raw = typeof body === 'string' || Buffer.isBuffer(body);
    const data = body === undefined ? undefined : raw ? body : JSON.stringify(body);
    const req = request(url, { method, agent, headers: { ...(data && !raw ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

export async function tokenFor(base) {
  const form = (o) => new URLSearchParams(o).toString();
  const fh = { 'content-type': 'application/x-www-form-urlencoded' };
  await http('POST', `${base}/auth/signup`, { body: form({ username: 'bench', password: PASSWORD }), headers: fh });
  const login = await http('POST', `${base}/auth/login`, { body: form({ username: 'bench', password: PASSWORD }), headers: fh });
  const cookie = login.headers['set-cookie'].find((c) => c.startsWith('labdeck.sid=')).split(';')[0];
  const t = await http('POST', `${base}/account/tokens`, { body: { name: 'bench' }, headers: { cookie, accept: 'application/json' } });
  return JSON.parse(t.text).token;
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
export const line = (name, value, target, ok) => console.log(`${name.padEnd(44)} ${value.padStart(14)}   target ${target}${ok === undefined ? '' : ok ? '  ok' : '  MISSED'}`);

export async function built(rel) {
  const url = new URL(`../../dist/${rel}`, import.meta.url);
  try {
    return await import(url.href);
  } catch (e) {
    throw new Error(`dist/${rel} is missing or broken: run \`npm run build\` first (${e.message})`);
  }
}

/** CPU time a process has used so far (user + system), ms: what a figure costs, whatever else the machine runs. */
export const cpuOf = async (pid) => {
  const f = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // clock ticks of 10 ms (USER_HZ 100)
};

export const rssOf = async (pid) => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** Wait for the runner's `run` event that ends `taskId`'s run; its run id. */
export function runEnd(runner, taskId) {
  return new Promise((resolve, reject) => {
    const on = (e) => {
      if (e.type === 'run' && e.task_id === taskId && e.status !== 'running') {
        runner.off('event', on);
        if (e.status === 'completed') resolve(e.run_id);
        else reject(new Error(`the bench run ended ${e.status}`));
      }
    };
    runner.on('event', on);
  });
}

export function pythonVersion() {
  return new Promise((resolve) => {
    const p = spawn(process.env.LABDECK_PYTHON || 'python3', ['--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (b) => (out += b));
    p.stderr.on('data', (b) => (out += b));
    p.on('error', () => resolve('Python ?'));
    p.on('close', () => resolve(out.trim()));
  });
}

/** A multipart body of one file field (`file`, or `field`): what a browser's upload form sends. */
export function multipart(name, data, field = 'file') {
  const boundary = `bench${Date.now()}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: text/csv\r\n\r\n`);
  return { body: Buffer.concat([head, data, Buffer.from(`\r\n--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

/** Sample a process's resident memory every 200 ms until `stop()`: its peak and the last value. */
export function memoryWatch(pid) {
  let peak = 0;
  let last = 0;
  const timer = setInterval(async () => {
    last = await rssOf(pid).catch(() => last);
    peak = Math.max(peak, last);
  }, 200);
  return { stop: () => (clearInterval(timer), { peak, last }) };
}

/** Issue 10's figures: a CSV bomb, 32 clients for 60 s with and without a run, and a long fuzz. */

/**
 * A bare Express 5 server with one JSON endpoint (`POST /call` answers `{ ok: true }`), started the way
 * `lab serve` is (same node flags): the framework's own limit, for the figures given as a ratio to it.
 */
export function startBareExpress() {
  const code = `import express from 'express';
const app = express();
app.post('/call', express.json(), (req, res) => res.json({ ok: true, method: req.body.method }));
const s = app.listen(0, '127.0.0.1', () => console.log('ready in 0 ms: http://127.0.0.1:' + s.address().port));`;
  const t0 = performance.now();
  const proc = spawn(process.execPath, ['--max-semi-space-size=4', '--input-type=module', '-e', code], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return ready(proc, t0, 'bare Express');
}

/** A browser's session cookie for the bench user (tokenFor made the account). */
export async function cookieFor(base) {
  const form = new URLSearchParams({ username: 'bench', password: PASSWORD }).toString();
  const login = await http('POST', `${base}/auth/login`, { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  return login.headers['set-cookie'].find((c) => c.startsWith('labdeck.sid=')).split(';')[0];
}

/**
 * Median milliseconds of GET `paths` (each `rounds` times, taken in turn so that a busy machine weighs on
 * all alike); the first `warm` rounds are not counted. `check(path, response)` sees each path's first answer.
 */
export async function timePaths(base, paths, headers, { rounds = 200, warm = 20, check } = {}) {
  const times = paths.map(() => []);
  for (let i = 0; i < rounds + warm; i++) {
    for (const [k, p] of paths.entries()) {
      const t = performance.now();
      const r = await http('GET', `${base}${p}`, { headers });
      const ms = performance.now() - t;
      if (r.status !== 200) throw new Error(`${p}: ${r.status} ${r.text.slice(0, 200)}`);
      if (i === 0) check?.(p, r);
      if (i >= warm) times[k].push(ms);
    }
  }
  return times.map(median);
}
