/**
 * The outbox's delivery guarantees (docs/notifications.md), with real processes and databases: several
 * labdecks on one PostgreSQL deliver each event once, and a deliverer killed with SIGKILL in the middle of a
 * delivery leaves nothing undelivered and nothing it had finished sent again after a restart; the one message
 * that was in flight comes again under the same X-Labdeck-Delivery id (the window the docs describe).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Deliverer } from '../../core/notify/deliverer.js';
import { SETTINGS_KEY } from '../../core/notify/settings.js';
import { openStore } from '../../core/store/index.js';
import type { AlertOp, Store } from '../../core/store/types.js';
import { postgresTestDb } from '../helpers/db.js';
import { startHttpSink, type HttpSink } from '../helpers/sinks.js';
import { waitFor } from '../helpers/wait.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const until = (cond: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> => waitFor(cond, what, ms, 20).then(() => undefined);

const events = (n: number, tag: string): AlertOp[] => Array.from({ length: n }, (_, i) => ({ op: 'open', event: 'step_failed', key: `${tag}:${i}`, payload: { message: `event ${i}` } }));
const deliveryIds = (sink: HttpSink) => sink.received.map((r) => String(r.headers['x-labdeck-delivery']));
const allDelivered = async (store: Store) => (await store.outbox.health()).every((h) => h.waiting === 0) && (await store.outbox.unfanned(1)).length === 0;

it('two labdecks on one PostgreSQL deliver each event once', async () => {
  const db = await postgresTestDb();
  const dirs = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-notify-')));
  const [a, b] = [await openStore({ dataDir: dirs[0]!, url: db.url }), await openStore({ dataDir: dirs[1]!, url: db.url })];
  const sink = await startHttpSink();
  closers.push(async () => {
    await a.close();
    await b.close();
    await db.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    await sink.close();
  });
  await a.settings.set(SETTINGS_KEY, {
    channels: [
      { name: 'hook', kind: 'webhook', url: `${sink.url}/hook`, rate_per_minute: 600 },
      { name: 'chat', kind: 'slack', url: `${sink.url}/chat`, rate_per_minute: 600 },
    ],
  });
  await a.outbox.write(events(30, 'pg'));
  const ds = [new Deliverer({ store: a, hostId: 'host-a', intervalMs: 5 }), new Deliverer({ store: b, hostId: 'host-b', intervalMs: 5 })];
  for (const d of ds) d.start();
  closers.push(() => Promise.all(ds.map((d) => d.stop())));
  await until(() => allDelivered(a), 'every delivery marked');
  const ids = deliveryIds(sink);
  expect(ids.length).toBe(60); // 30 events × 2 channels
  expect(new Set(ids).size).toBe(60);
  const rows = await a.outbox.recent(100);
  expect(rows.length).toBe(30);
}, 60_000);

it('a deliverer killed mid-delivery: after a restart every event arrives, none it had finished comes twice', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'labdeck-notify-'));
  const store = await openStore({ dataDir });
  const sink = await startHttpSink();
  let child: ChildProcess | null = null;
  closers.push(async () => {
    child?.kill('SIGKILL');
    await store.close();
    sink.release();
    await sink.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  await store.settings.set(SETTINGS_KEY, { channels: [{ name: 'hook', kind: 'webhook', url: `${sink.url}/hook` }] });
  await store.outbox.write(events(4, 'kill'));
  // the sink answers the first two; the third it receives and never answers: the child is killed then
  sink.holdFrom = 3;
  const jiti = path.resolve('node_modules/jiti/lib/jiti-cli.mjs');
  child = spawn(process.execPath, [jiti, path.resolve('test/fixtures/notify/deliver-child.ts'), dataDir], {
    env: { ...process.env, LABDECK_NOTIFY_CLAIM_MS: '1500' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await sink.arrived(3);
  child.kill('SIGKILL');
  await new Promise((r) => child!.once('exit', r));
  child = null;
  const before = deliveryIds(sink);
  expect(before.length).toBe(3);

  // the restart: a new deliverer (a new host id) on the same database; the sink answers everything now
  sink.holdFrom = Infinity;
  sink.release();
  const d = new Deliverer({ store, hostId: 'restarted', intervalMs: 20, claimMs: 1500 });
  d.start();
  closers.push(() => d.stop());
  await until(() => allDelivered(store), 'every delivery marked');
  const after = deliveryIds(sink).slice(3);
  const all = deliveryIds(sink);
  // every event arrived
  expect(new Set(all).size).toBe(4);
  // the two answered before the kill never came again
  for (const id of before.slice(0, 2)) expect(all.filter((x) => x === id)).toHaveLength(1);
  // the one in flight at the kill came again once, under the same delivery id; the fourth once
  expect(after.sort()).toEqual([before[2]!, ...all.filter((x) => !before.includes(x))].sort());
  expect(all.filter((x) => x === before[2])).toHaveLength(2);
}, 60_000);
