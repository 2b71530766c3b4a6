// `npm run bench`: the figures the issues ask for, measured on this machine against a real `lab serve`.
// Each figure is printed with its target; nothing here is a test (no pass/fail exit code).
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import autocannon from 'autocannon';

const bin = new URL('../bin/lab', import.meta.url).pathname;
const PASSWORD = 'bench-password';

function startServer(dataDir) {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [bin, 'serve', '--port', '0', '--no-watch', '--data-dir', dataDir, '--plugins', join(dataDir, 'plugins')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (b) => {
      out += b;
      const m = /ready in \d+ ms: (http:\/\/\S+)/.exec(out);
      if (m) resolve({ proc, base: m[1], readyMs: performance.now() - t0 });
    });
    proc.once('exit', (c) => reject(new Error(`server exited ${c}: ${out}`)));
  });
}

const stop = (proc) => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); });

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
function http(method, url, { body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = request(url, { method, agent, headers: { ...(data && typeof body !== 'string' ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    if (data) req.write(data);
    req.end();
  });
}

async function tokenFor(base) {
  const form = (o) => new URLSearchParams(o).toString();
  const fh = { 'content-type': 'application/x-www-form-urlencoded' };
  await http('POST', `${base}/auth/signup`, { body: form({ username: 'bench', password: PASSWORD }), headers: fh });
  const login = await http('POST', `${base}/auth/login`, { body: form({ username: 'bench', password: PASSWORD }), headers: fh });
  const cookie = login.headers['set-cookie'][0].split(';')[0];
  const t = await http('POST', `${base}/account/tokens`, { body: { name: 'bench' }, headers: { cookie, accept: 'application/json' } });
  return JSON.parse(t.text).token;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const line = (name, value, target, ok) => console.log(`${name.padEnd(44)} ${value.padStart(14)}   target ${target}${ok === undefined ? '' : ok ? '  ok' : '  MISSED'}`);

async function foundation() {
  console.log('\n== direct control (issue 2): no-op instrument method, SQLite, this machine ==');
  // start-up: median of 5 fresh starts (fresh data folder each time, so migrations run)
  const starts = [];
  for (let i = 0; i < 5; i++) {
    const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-'));
    const s = await startServer(dir);
    starts.push(s.readyMs);
    await stop(s.proc);
    await rm(dir, { recursive: true, force: true });
  }
  const startup = median(starts);
  line('server start-up to ready (median of 5)', `${(startup / 1000).toFixed(3)} s`, '< 0.8 s', startup < 800);

  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-'));
  const s = await startServer(dir);
  try {
    await new Promise((r) => setTimeout(r, 1500));
    const status = await readFile(`/proc/${s.proc.pid}/status`, 'utf8');
    const rssMb = Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
    line('idle resident memory', `${rssMb.toFixed(0)} MB`, '< 110 MB', rssMb < 110);

    const token = await tokenFor(s.base);
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' };
    const body = JSON.stringify({ method: 'ping', args: {} });
    const url = `${s.base}/instruments/noop`;
    for (let i = 0; i < 300; i++) await http('POST', url, { body, headers }); // warm-up
    const lat = [];
    for (let i = 0; i < 3000; i++) {
      const t = performance.now();
      const r = await http('POST', url, { body, headers });
      lat.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`call failed: ${r.status} ${r.text}`);
    }
    line('direct-call latency p50 (1 client)', `${median(lat).toFixed(2)} ms`, '< 2 ms', median(lat) < 2);
    line('direct-call latency p99 (1 client)', `${pct(lat, 99).toFixed(2)} ms`, '(reported)');

    const result = await autocannon({ url, method: 'POST', headers, body, connections: 32, duration: 8 });
    const rps = result.requests.average;
    const non2xx = result.non2xx + result.errors;
    line('throughput, 32 concurrent clients', `${rps.toFixed(0)} calls/s`, '>= 3000 calls/s', rps >= 3000);
    line('  refused or failed calls', `${non2xx}`, '0', non2xx === 0);
    console.log(`  (for scale: the tool labs use today starts in ~0.9 s at 120 MB and serves ~115 calls/s to one client: ${(rps / 115).toFixed(0)}x that)`);
  } finally {
    await stop(s.proc);
    await rm(dir, { recursive: true, force: true });
  }
}

const sections = { foundation };
const only = process.argv.slice(2);
for (const [name, run] of Object.entries(sections)) {
  if (only.length && !only.includes(name)) continue;
  await run();
}
agent.destroy();
