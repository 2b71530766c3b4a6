import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { PASSWORD, startServer, stop, http, tokenFor, median, pct, line } from './common.mjs';

export default async function foundation() {
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
    // the same with a browser's session cookie instead of a token (issue 16: no database write per request)
    const form = new URLSearchParams({ username: 'bench', password: PASSWORD }).toString();
    const login = await http('POST', `${s.base}/auth/login`, { body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const cookie = login.headers['set-cookie'].find((c) => c.startsWith('labdeck.sid=')).split(';')[0];
    const byCookie = await autocannon({ url, method: 'POST', headers: { cookie, origin: s.base.replace(/\/app$/, ''), accept: 'application/json', 'content-type': 'application/json' }, body, connections: 32, duration: 8 });
    const ratio = byCookie.requests.average / rps;
    line('  with a session cookie instead of a token', `${byCookie.requests.average.toFixed(0)} calls/s (${ratio.toFixed(2)})`, '>= 0.9 of the token figure', ratio >= 0.9 && byCookie.non2xx + byCookie.errors === 0);
    console.log(`  (for scale: the tool labs use today starts in ~0.9 s at 120 MB and serves ~115 calls/s to one client: ${(rps / 115).toFixed(0)}x that)`);
  } finally {
    await stop(s.proc);
    await rm(dir, { recursive: true, force: true });
  }
}

/** A module of the build (`npm run build` first): the bench drives the same code `lab serve` runs. */
