import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startServer, stop, http, tokenFor, median, pct, line, rssOf, pythonVersion } from './common.mjs';

const benchDeck = new URL('../bench-deck.py', import.meta.url).pathname;

/** The pid of `parent`'s child process whose command line contains `needle` (from /proc, as rssOf). */
async function childPid(parent, needle) {
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = await readFile(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]); // "pid (comm) state ppid ..."
      if (ppid === parent && (await readFile(`/proc/${d}/cmdline`, 'utf8')).includes(needle)) return Number(d);
    } catch {
      // the process ended meanwhile
    }
  }
  throw new Error(`no child of ${parent} runs ${needle}`);
}

export default async function python() {
  console.log('\n== Python instruments: a Python deck (scripts/bench-deck.py) in its host process, over HTTP, SQLite ==');
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-'));
  const s = await startServer(dir, ['--deck', benchDeck]);
  try {
    await new Promise((r) => setTimeout(r, 1500));
    const hostPid = await childPid(s.proc.pid, 'run_host.py');
    const idleMb = await rssOf(hostPid);

    const token = await tokenFor(s.base);
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json', 'content-type': 'application/json' };
    const noop = JSON.stringify({ method: 'noop', args: {} });
    const url = (name) => `${s.base}/instruments/${name}`;
    const timeNoop = async (name) => {
      const t = performance.now();
      const r = await http('POST', url(name), { body: noop, headers });
      const ms = performance.now() - t;
      if (r.status !== 200) throw new Error(`${name}.noop failed: ${r.status} ${r.text}`);
      return ms;
    };

    // 1. one client, one call after the other
    for (let i = 0; i < 300; i++) await timeNoop('i0'); // warm-up
    const lat = [];
    for (let i = 0; i < 2000; i++) lat.push(await timeNoop('i0'));
    line('Python no-op call latency p50 (1 client)', `${median(lat).toFixed(2)} ms`, '< 1.5 ms (ivoryOS 1.6.11: 8.4 ms)', median(lat) < 1.5);
    line('Python no-op call latency p99 (1 client)', `${pct(lat, 99).toFixed(2)} ms`, '(reported)');

    // 2. 32 clients, 8 on each of the 4 instruments (calls to one instrument take turns; the 4 run side by side)
    const names = ['i0', 'i1', 'i2', 'i3'];
    const t = performance.now();
    const runs = await Promise.all(names.map((n) => autocannon({ url: url(n), method: 'POST', headers, body: noop, connections: 8, duration: 10 })));
    const secs = (performance.now() - t) / 1000; // from the first run's start to the last one's end
    const total = runs.reduce((a, r) => a + r.requests.total, 0);
    const rps = total / secs;
    const failed = runs.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0);
    line('Python throughput, 32 clients on 4 instruments', `${rps.toFixed(0)} calls/s`, '>= 2,000 calls/s', rps >= 2000);
    line('  refused or failed calls', `${failed}`, `0 of ${total.toLocaleString('en')}`, failed === 0);
    console.log(
      `  (per instrument: ${runs.map((r, i) => `${names[i]} ${(r.requests.total / secs).toFixed(0)}/s`).join(', ')}; p50 ${median(runs.map((r) => r.latency.p50))} ms, p99 ${Math.max(...runs.map((r) => r.latency.p99))} ms; for scale: ivoryOS answered 82% of 8 clients "busy")`,
    );

    // 3. a 1 s call on i0: what it adds to no-op calls on i1 meanwhile
    for (let i = 0; i < 50; i++) await timeNoop('i1');
    const idle = [];
    for (let i = 0; i < 50; i++) idle.push(await timeNoop('i1'));
    const t0 = performance.now();
    const slow = http('POST', url('i0'), { body: { method: 'slow', args: { seconds: 1 } }, headers });
    await new Promise((r) => setTimeout(r, 50)); // the slow call is in the host by now
    const busy = [];
    for (let i = 0; i < 50; i++) busy.push(await timeNoop('i1'));
    const busyEnd = performance.now() - t0;
    const sr = await slow;
    const slowMs = performance.now() - t0;
    if (sr.status !== 200) throw new Error(`i0.slow failed: ${sr.status} ${sr.text}`);
    if (busyEnd >= slowMs) throw new Error(`the no-op calls on i1 took ${busyEnd.toFixed(0)} ms, longer than the 1 s call on i0`);
    const added = median(busy) - median(idle);
    line('added to an i1 call while i0 runs 1 s', `${added.toFixed(2)} ms`, '< 5 ms', added < 5);
    console.log(`  (median of 50 no-op calls on i1: ${median(idle).toFixed(2)} ms idle, ${median(busy).toFixed(2)} ms during i0.slow(1), which took ${(slowMs / 1000).toFixed(3)} s)`);

    // 4. the host process's memory
    line('Python host idle resident memory', `${idleMb.toFixed(0)} MB`, '< 30 MB', idleMb < 30);
    console.log(`  (pid ${hostPid}, ${await pythonVersion()}; after the calls above: the host ${(await rssOf(hostPid)).toFixed(0)} MB, the server ${(await rssOf(s.proc.pid)).toFixed(0)} MB)`);
  } finally {
    await stop(s.proc);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The interpreter `lab serve` runs Python decks on (its default: LABDECK_PYTHON, then python3). */
