import { request } from 'node:http';
import { connect } from 'node:net';
import { mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stop, line, median } from './common.mjs';

// A flood of idle and slow sockets from one client (issue 26 item 5): how many the server holds, and whether
// another client is still answered meanwhile. Loopback only, bounded, and it stops by itself.

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** How many sockets process `pid` has open (its file descriptors that are sockets; Linux). */
async function socketsOf(pid) {
  let n = 0;
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')).startsWith('socket:')) n++;
  return n;
}

/** One GET of `url` from `from` on a fresh connection: its status (0: refused or reset) and time. */
function probe(url, from) {
  const u = new URL(url);
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, localAddress: from, agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t0 }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t0 }));
    req.end();
  });
}

/**
 * Open `sockets` connections to `base`'s server from 127.0.0.1 (half idle, half sending headers a byte at a
 * time), then ask `asks` health checks from 127.0.0.2; print what was held and what was answered.
 */
export async function flood(base, { sockets = 2000, asks = 40, pid } = {}) {
  const u = new URL(base);
  if (!LOOPBACK.has(u.hostname)) throw new Error(`the flood goes to this PC only (127.0.0.1), not ${u.hostname}`);
  const n = Math.min(sockets, 5000);
  const before = pid ? await socketsOf(pid) : 0;
  const open = new Set();
  let closedEarly = 0;
  let failed = 0;
  const opened = await Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise((resolve) => {
          const s = connect({ host: '127.0.0.1', port: Number(u.port), localAddress: '127.0.0.1' });
          s.on('error', () => undefined);
          s.once('connect', () => {
            open.add(s);
            if (i % 2) s.write('GET /app/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '); // never finished
            resolve(true);
          });
          s.once('close', () => {
            if (open.delete(s)) closedEarly++;
            else failed++;
            resolve(false);
          });
        }),
    ),
  );
  const connected = opened.filter(Boolean).length;
  const answers = [];
  for (let i = 0; i < asks; i++) answers.push(await probe(`${u.origin}/app/healthz`, '127.0.0.2'));
  // the server closes what is over its caps as it accepts them (those still in the kernel's queue look open
  // here): settled when no more closes come for a second (at most 20 s)
  for (let last = -1, t = 0; open.size !== last && t < 20; t++) {
    last = open.size;
    await new Promise((r) => setTimeout(r, 1000));
  }
  // what the server holds: its own sockets (those still in the kernel's accept queue look open to the client)
  const held = pid ? (await socketsOf(pid)) - before : open.size;
  const ok = answers.filter((a) => a.status === 200);
  line(`flood: ${n} idle/slow sockets from one address`, `${held} held`, 'bounded by the per-address cap (100)', held <= 100);
  console.log(`  (${connected} connected, ${closedEarly} closed by the server at once, ${open.size} still open here, ${failed} not connected${pid ? '' : '; held counted on this side'})`);
  line('  another client meanwhile: answers given', `${ok.length} of ${asks}`, 'all', ok.length === asks);
  if (ok.length) line('  its median / slowest answer', `${median(ok.map((a) => a.ms)).toFixed(1)}/${Math.max(...ok.map((a) => a.ms)).toFixed(0)} ms`, '(reported)');
  for (const s of open) s.destroy();
  return { held, asked: asks, answered: ok.length };
}

/** `npm run bench flood`: a `lab serve` of its own, flooded. */
export default async function floodSection() {
  console.log('\n== flood (issue 26 item 5): one client holding sockets; lab serve on SQLite ==');
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-'));
  const s = await startServer(dir);
  try {
    await flood(s.base, { pid: s.proc.pid });
  } finally {
    await stop(s.proc);
    await rm(dir, { recursive: true, force: true });
  }
}
