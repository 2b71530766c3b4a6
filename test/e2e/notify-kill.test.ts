/**
 * kill -9 of a whole labdeck while it changes state and delivers (issue 30, docs/notifications.md "Exactly
 * once"): a real `lab serve` sends every event to a webhook and a Slack-compatible endpoint on an HTTP sink
 * on loopback. While the channels are up its events arrive; then the sink refuses everything (a channel
 * down: the events wait in the outbox) while a stream of short runs completes, each run's end and its
 * `run_completed` written together, and the server is killed with SIGKILL in the middle of that stream. It is
 * started again on the same data folder with the channels back: every event (the ones pending at the kill,
 * and those of the restart: the cut run's interruption, the held queue and their resolution by the retry)
 * arrives, and none the channel took comes twice, counted by the delivery id and, for the webhook, by event
 * id and state; each completed run has exactly one `run_completed`, none without its run.
 *
 * No delivery is in flight when the kill comes (the sink refuses, so the channel takes nothing then): the
 * one window the docs describe (a message the channel took before labdeck could mark it) is
 * test/unit/notify-delivery.test.ts's.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../core/store/index.js';
import { EVENTS } from '../../core/notify/settings.js';
import { startHttpSink, type HttpSink, type Received } from '../helpers/sinks.js';
import { labClient, spawnServer } from './server.js';
import { installedFile } from './installed.js';
import { waitFor } from '../helpers/wait.js';

const deck = installedFile('test/fixtures/runner/deck.ts');
/** A short run: two calls, one of them taking a moment, so a kill is likely to cut one mid-way. */
const SHORT = {
  name: 'short',
  main: [
    { kind: 'call', instrument: 'counter', method: 'inc', args: {} },
    { kind: 'call', instrument: 'slow', method: 'work', args: { ms: { value: 15 } } },
  ],
};

const exited = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));

const until = (cond: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> => waitFor(cond, what, ms, 25).then(() => undefined);

type Body = { event: string; state: string; id: string; run_id: number | null; events?: Body[] };
/** The events a webhook request carries (a digest carries several). */
const eventsOf = (r: Received): Body[] => {
  const b = r.json as Body;
  return b.event === 'digest' ? b.events! : [b];
};
const delivery = (r: Received) => String(r.headers['x-labdeck-delivery']);

let dataDir: string;
let sink: HttpSink;
let proc: ChildProcess | null = null;
let store: Store | null = null;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'labdeck-notify-kill-'));
  sink = await startHttpSink();
});
afterAll(async () => {
  if (proc) {
    proc.kill('SIGKILL');
    await exited(proc);
  }
  await store?.close();
  await sink?.close();
  await rm(dataDir, { recursive: true, force: true });
});

it('a labdeck killed with SIGKILL mid-stream, restarted: every pending event arrives, none twice', async () => {
  let served = await spawnServer(dataDir, ['--deck', deck, '--no-watch']);
  proc = served.proc;
  const lab = await labClient(served.url.replace(/\/app$/, ''), 'kill');
  const api = lab.api;
  const channels = [
    { name: 'hook', kind: 'webhook', url: `${sink.url}/hook`, secret: 'a-long-secret', events: EVENTS, rate_per_minute: 600 },
    { name: 'chat', kind: 'slack', url: `${sink.url}/slack`, events: EVENTS, rate_per_minute: 600 },
  ];
  expect((await api('PUT', '/notifications', { lab: 'Lab 7', channels })).status).toBe(200);
  expect((await api('POST', '/workflows', SHORT)).status).toBe(201);
  const queue = async (n: number) => {
    for (let i = 0; i < n; i++) expect((await api('POST', '/executions/config', { workflow: 'short', repeat: 1 })).status).toBe(200);
  };
  const nothingWaits = async () => (await api('GET', '/notifications')).body.health.every((h: { waiting: number }) => h.waiting === 0);

  // the channels are up: three runs' run_completed arrive, and labdeck has marked every one delivered
  await queue(3);
  await until(async () => sink.received.filter((r) => r.answered === 200).length === 6 && (await nothingWaits()), 'the first three events delivered and marked');

  // the channels go down; a stream of runs; SIGKILL in the middle of it
  sink.status = 500;
  await queue(20);
  await until(async () => (await api('GET', '/executions/queue')).body.tasks.length <= 12, 'eight of the twenty runs done');
  proc.kill('SIGKILL');
  await exited(proc);
  proc = null;

  // what the kill left: runs not yet done, and events written but not delivered (the channel refused them)
  store = await openStore({ dataDir });
  const st = store;
  expect((await st.queue.open()).length).toBeGreaterThan(0);
  const pending = (await st.outbox.unfanned(100)).length + (await st.outbox.health()).reduce((n, h) => n + h.waiting, 0);
  expect(pending).toBeGreaterThan(0);

  // the same data folder again, the channels back
  sink.status = 200;
  served = await spawnServer(dataDir, ['--deck', deck, '--no-watch']);
  proc = served.proc;
  lab.base = served.url.replace(/\/app$/, '');
  // the operator decides about the task the kill cut (if it cut one mid-run): its in-doubt step re-run
  await until(async () => {
    const s = (await api('GET', '/executions/status')).body;
    if (s.interrupted) expect((await api('POST', '/executions/retry')).status).toBe(200);
    return (await api('GET', '/executions/queue')).body.tasks.length === 0;
  }, 'the queue done');

  await until(async () => (await st.outbox.unfanned(1)).length === 0 && (await st.outbox.health()).every((h) => h.waiting === 0), 'every delivery marked');
  const rows = await st.outbox.recent(10_000);
  expect(rows.length).toBeGreaterThanOrEqual(23);

  // every event reached both channels, each exactly once (what the channel took: answered 200)
  const took = sink.received.filter((r) => r.answered === 200);
  const ids = took.map(delivery);
  expect(new Set(ids).size).toBe(ids.length);
  const expected = rows.flatMap((r) => channels.map((c) => `${r.alertId}.${r.state}.${c.name}`));
  expect([...ids].sort()).toEqual(expected.sort());
  // by event id and state at the webhook, digests included
  const byIdState = took
    .filter((r) => r.path === '/hook')
    .flatMap(eventsOf)
    .map((b) => `${b.id}.${b.state}`);
  expect(new Set(byIdState).size).toBe(byIdState.length);
  expect(byIdState.length).toBe(rows.length);

  // the kill cut nothing in two: each completed run has exactly one run_completed, none is without its run
  const completed = rows.filter((r) => r.event === 'run_completed');
  expect(completed.length).toBe(3 + 20);
  const runs = new Set(completed.map((r) => r.runId));
  expect(runs.size).toBe(23);
  for (const id of runs) expect((await st.runs.get(id!))!.status).toBe('completed');
  // whatever the kill left waiting for a person was resolved (the retry): nothing stays on the attention list
  expect((await st.outbox.open()).filter((r) => r.event !== 'run_completed')).toEqual([]);
}, 120_000);
