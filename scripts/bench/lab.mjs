import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { startServer, stop, median, pct, line, built } from './common.mjs';

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
    line('an instrument call on an agent, over a local one', 'not yet', '< 2 ms p50');
    console.log('  (lab agent is the next step of issue 13)');
  } finally {
    await store?.close();
    for (const s of servers) await stop(s.proc);
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await rm(dir, { recursive: true, force: true });
  }
}
