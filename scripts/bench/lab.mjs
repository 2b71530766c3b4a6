import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { spawn } from 'node:child_process';
import { bin, startServer, stop, http, median, pct, line, built, PASSWORD } from './common.mjs';

const ADMIN_URL = process.env.LABDECK_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(sql) {
  const ds = new DataSource({ type: 'postgres', url: ADMIN_URL, poolSize: 1 });
  await ds.initialize();
  try {
    await ds.query(sql);
  } finally {
    await ds.destroy();
  }
}

/**
 * Issue 13: two real `lab serve` on one PostgreSQL database, each driving its own instrument (a deck of one
 * no-op object). Tasks are queued the way a host queues them (a row, then NOTIFY), from this process.
 */
export default async function lab() {
  await agentCall();
  console.log('\n== lab (issue 13): two lab serve on one PostgreSQL, each driving its own instrument ==');
  const { openStore } = await built('core/store/index.js');
  const { Workflow } = await built('core/workflow/model.js');
  const name = `labdeck_bench_${process.pid}`;
  await admin(`CREATE DATABASE "${name}"`);
  const url = Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-lab-'));
  const servers = [];
  let store;
  try {
    for (const h of ['a', 'b']) {
      const deck = join(dir, `deck-${h}.mjs`);
      await writeFile(deck, `export const noop_${h} = { ping() { return 1; } };\n`);
      servers.push(await startServer(join(dir, h), ['--db', url, '--deck', deck]));
    }
    store = await openStore({ dataDir: join(dir, 'bench'), url });
    const payload = {};
    for (const h of ['a', 'b']) {
      const wf = { name: `ping-${h}`, main: [{ kind: 'call', instrument: `noop_${h}`, method: 'ping' }] };
      const saved = await store.workflows.save(wf.name, wf, null);
      payload[h] = { workflow: wf.name, version: saved.version, definition: Workflow.parse(wf), rows: [{}] };
    }
    const queue = async (h) => {
      const t = await store.queue.add({ name: `bench ${h}`, kind: 'workflow', payload: payload[h], createdBy: null });
      await store.signals.queueChanged();
      return t;
    };
    const settle = async (ids) => {
      for (;;) {
        const open = (await store.queue.open()).filter((t) => ids.has(t.id));
        if (!open.length) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    };

    // from queueing a task to its start on the other host: startedAt (written by B) − the moment it was queued
    const waits = [];
    for (let i = 0; i < 60; i++) {
      const t0 = Date.now();
      const t = await queue('b');
      await settle(new Set([t.id]));
      const row = await store.queue.get(t.id);
      if (i >= 10) waits.push(row.startedAt.getTime() - t0);
    }
    line('queued → started on another host, p50', `${median(waits)} ms`, '< 100 ms', median(waits) < 100);
    console.log(`  (p95 ${pct(waits, 95)} ms over ${waits.length} tasks; a row and NOTIFY, heard on B's LISTEN connection, claimed with SKIP LOCKED)`);

    // two hosts draining 1,000 short tasks together
    const ids = new Set();
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) ids.add((await queue(i % 2 ? 'a' : 'b')).id);
    await settle(ids);
    const secs = (performance.now() - t0) / 1000;
    const rows = await Promise.all([...ids].map((id) => store.queue.get(id)));
    const byHost = new Map();
    for (const r of rows) byHost.set(r.hostId, (byHost.get(r.hostId) ?? 0) + 1);
    let twice = 0;
    let steps = 0;
    for (const r of rows) {
      const s = (await store.runSteps.list(r.runId)).length;
      steps += s;
      if (s !== 1 || r.status !== 'done') twice++;
    }
    line('two hosts draining 1,000 one-step tasks', `${(1000 / secs).toFixed(0)} tasks/s`, 'none run twice', twice === 0);
    console.log(`  (${secs.toFixed(1)} s, queued one by one from here; ${[...byHost.values()].join(' + ')} per host; ${steps} step records for 1,000 tasks, ${twice} not run exactly once)`);
  } finally {
    await store?.close();
    for (const s of servers) await stop(s.proc);
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await rm(dir, { recursive: true, force: true });
  }
}

/** A user token and an agent token on a fresh server (its first account, so an admin). */
async function tokens(base) {
  const form = (o) => new URLSearchParams(o).toString();
  const fh = { 'content-type': 'application/x-www-form-urlencoded' };
  await http('POST', `${base}/auth/signup`, { body: form({ username: 'bench', password: PASSWORD }), headers: fh });
  const login = await http('POST', `${base}/auth/login`, { body: form({ username: 'bench', password: PASSWORD }), headers: fh });
  const cookie = login.headers['set-cookie'].find((c) => c.startsWith('labdeck.sid=')).split(';')[0];
  const make = async (scope) => JSON.parse((await http('POST', `${base}/account/tokens`, { body: { name: scope, scope }, headers: { cookie, accept: 'application/json' } })).text).token;
  return { user: await make('user'), agent: await make('agent') };
}

/** Issue 13: what a call to an instrument on a `lab agent` (another process, over a WebSocket) adds over a local one. */
async function agentCall() {
  console.log('\n== lab (issue 13): a no-op call to an instrument on a lab agent against one in the server, loopback, SQLite ==');
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-agent-'));
  await writeFile(join(dir, 'local.mjs'), 'export const local_noop = { ping() { return 1; } };\n');
  await writeFile(join(dir, 'remote.mjs'), 'export const remote_noop = { ping() { return 1; } };\n');
  const s = await startServer(join(dir, 'server'), ['--deck', join(dir, 'local.mjs')]);
  let agent;
  try {
    const t = await tokens(s.base);
    agent = spawn(bin, ['agent', '--deck', join(dir, 'remote.mjs'), '--server', s.base, '--token', t.agent, '--name', 'bench-agent'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((resolve, reject) => {
      let out = '';
      agent.stdout.on('data', (b) => {
        out += b;
        if (out.includes('serving remote_noop')) resolve();
      });
      agent.once('exit', (c) => reject(new Error(`lab agent exited ${c}: ${out}`)));
    });
    const headers = { authorization: `Bearer ${t.user}`, accept: 'application/json', 'content-type': 'application/json' };
    const body = JSON.stringify({ method: 'ping', args: {} });
    const time = async (name) => {
      const t0 = performance.now();
      const r = await http('POST', `${s.base}/instruments/${name}`, { body, headers });
      if (r.status !== 200) throw new Error(`${name}.ping: ${r.status} ${r.text}`);
      return performance.now() - t0;
    };
    const local = [];
    const remote = [];
    for (let i = 0; i < 300; i++) await time(i % 2 ? 'local_noop' : 'remote_noop'); // warm-up
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 200; i++) local.push(await time('local_noop'));
      for (let i = 0; i < 200; i++) remote.push(await time('remote_noop'));
    }
    const added = median(remote) - median(local);
    line('agent call adds over a local call, p50', `${added.toFixed(2)} ms`, '< 2 ms', added < 2);
    console.log(
      `  (p50 ${median(local).toFixed(2)} ms local, ${median(remote).toFixed(2)} ms on the agent; p99 ${pct(local, 99).toFixed(2)} / ${pct(remote, 99).toFixed(2)} ms; 2,000 calls each, recorded)`,
    );
  } finally {
    agent?.kill('SIGTERM');
    await stop(s.proc);
    await rm(dir, { recursive: true, force: true });
  }
}
