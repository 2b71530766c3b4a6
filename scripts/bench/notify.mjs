import { createServer } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stop, http, median, pct, line, built, tokenFor } from './common.mjs';

// Issue 30: notifications. (1) The time from a state change (a pause step starting to wait, then continued)
// to its webhook's arrival, against a real `lab serve` and a webhook sink on loopback. (2) What the outbox
// costs a step: a step that raises no event writes nothing; every call step passes the watchdog's two hooks
// and the safety guard's verdict hook (core/notify/safety.ts: a set lookup while no direct-call block is open).

const ROUNDS = 20;

/** A webhook sink on 127.0.0.1: each arrival with the time it came. */
async function sink() {
  const arrivals = [];
  const waiting = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      arrivals.push({ at: Date.now(), body: JSON.parse(body) });
      for (const w of waiting.splice(0)) w();
      res.end('ok');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    arrivals,
    next: () => new Promise((r) => waiting.push(r)),
    close: () => new Promise((r) => server.close(r)),
  };
}

async function latency() {
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-notify-'));
  const hook = await sink();
  const deck = join(dir, 'deck.mjs');
  await writeFile(deck, 'export const noop = { ping() { return 1; } };\n');
  const { proc, base } = await startServer(join(dir, 'data'), ['--deck', deck]);
  try {
    const token = await tokenFor(base);
    const h = { authorization: `Bearer ${token}`, accept: 'application/json' };
    const put = await http('PUT', `${base}/notifications`, { body: { channels: [{ name: 'hook', kind: 'webhook', url: hook.url, rate_per_minute: 600 }] }, headers: h });
    if (put.status !== 200) throw new Error(`PUT /notifications: ${put.status} ${put.text}`);
    const wf = {
      name: 'pause-bench',
      main: [
        { kind: 'call', instrument: 'noop', method: 'ping', args: {} },
        { kind: 'pause', message: 'bench' },
      ],
    };
    await http('POST', `${base}/workflows`, { body: wf, headers: h });
    const q = await http('POST', `${base}/executions/config`, { body: { workflow: wf.name, repeat: ROUNDS }, headers: h });
    if (q.status !== 200) throw new Error(`queue: ${q.status} ${q.text}`);
    for (let i = 0; i < ROUNDS; i++) {
      while (!hook.arrivals.some((a) => a.body.event === 'pause_waiting' && a.body.state === 'open' && !a.seen)) await hook.next();
      hook.arrivals.find((a) => a.body.event === 'pause_waiting' && a.body.state === 'open' && !a.seen).seen = true;
      await http('POST', `${base}/executions/continue`, { body: {}, headers: h });
    }
    while (hook.arrivals.filter((a) => a.body.event === 'pause_waiting' && a.body.state === 'resolved').length < ROUNDS) await hook.next();
    const ms = hook.arrivals.filter((a) => a.body.event === 'pause_waiting').map((a) => a.at - Date.parse(a.body.time));
    line('state change → webhook arrival, p50', `${median(ms).toFixed(0)} ms`, '≤ 1000 ms', median(ms) <= 1000);
    line('state change → webhook arrival, p90', `${pct(ms, 90).toFixed(0)} ms`, '(figure)');
  } finally {
    await stop(proc);
    await hook.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function costPerStep() {
  const { openStore } = await built('core/store/index.js');
  const { Watchdog } = await built('core/notify/watchdog.js');
  const { alerting, open } = await built('core/notify/events.js');
  const { SafetyAlerts } = await built('core/notify/safety.js');
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-notify-'));
  const store = await openStore({ dataDir: dir });
  try {
    const settings = { factor: 3, mad_factor: 5, floor_s: 10, min_samples: 5 };
    const wd = new Watchdog({ store, host: 'bench', settings: async () => settings, intervalMs: 0 });
    const guard = new SafetyAlerts(store, 'bench');
    await guard.load();
    const run = await store.runs.create({
      taskId: null,
      name: 'bench',
      workflowName: 'bench',
      workflowVersion: 1,
      workflow: {},
      parameters: [],
      status: 'running',
      userId: null,
      startedAt: new Date(),
    });
    const N = 20_000;
    await wd.stepStarted({ stepId: 0, runId: run.id, path: 'main[0]', instrument: 'noop', method: 'ping' }); // the records' stats, read once
    await wd.stepEnded(0);
    let t0 = performance.now();
    for (let i = 1; i <= N; i++) {
      await wd.stepStarted({ stepId: i, runId: run.id, path: 'main[0]', instrument: 'noop', method: 'ping' });
      guard.allowed('noop', 'ping'); // the deck's call, let through by the safety guard
      await alerting(store, [], async () => undefined); // the hook of a state change that raises nothing
      await wd.stepEnded(i);
    }
    const perStep = (performance.now() - t0) / N;
    line('outbox + watchdog + guard hooks per call step', `${(perStep * 1000).toFixed(1)} µs`, '≤ 50 µs', perStep <= 0.05);
    const M = 500;
    t0 = performance.now();
    for (let i = 0; i < M; i++) await store.logs.add(run.id, 'error', `step failed ${i}`);
    const plain = (performance.now() - t0) / M;
    t0 = performance.now();
    for (let i = 0; i < M; i++) await alerting(store, [open('step_failed', `bench:${i}`, { run_id: run.id, message: 'bench' })], (tx) => tx.logs.add(run.id, 'error', `step failed ${i}`));
    const withEvent = (performance.now() - t0) / M;
    line('a state change with its event (SQLite)', `+${(withEvent - plain).toFixed(3)} ms`, '(figure: only steps that raise one)');
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export default async function notify() {
  console.log('\n== notify (issue 30): state change → webhook, and the outbox per step ==');
  await latency();
  await costPerStep();
}
