/**
 * Notifications (DESIGN.md §17, docs/notifications.md) on a real store and runner, delivered to real
 * receivers on loopback: an HTTP sink (webhook, Slack-compatible) and an SMTP server. Every waiting state is
 * written to the outbox with the state change that causes it and resolved with the one that ends it.
 */
import { createHmac } from 'node:crypto';
import { Deliverer } from '../../core/notify/deliverer.js';
import { Notifications } from '../../core/notify/index.js';
import { etaText, overdueBound, runEta, statsOf, Watchdog } from '../../core/notify/watchdog.js';
import { SETTINGS_KEY, userKey } from '../../core/notify/settings.js';
import { hostBack, hostLost } from '../../core/notify/hosts.js';
import type { OutboxRow, QueueTaskRow, Store } from '../../core/store/types.js';
import type { WorkflowInput } from '../../core/workflow/model.js';
import { runnerLabs, until, type RunnerLab as Lab } from '../helpers/runner-lab.js';
import { startHttpSink, startSmtpSink, type HttpSink, type SmtpSink } from '../helpers/sinks.js';

const { closers, lab } = runnerLabs();

const call = (instrument: string, method: string) => ({ kind: 'call' as const, instrument, method, args: {} });
const WORKFLOWS: Record<string, WorkflowInput> = {
  flaky: { name: 'flaky', main: [call('flaky', 'poke'), call('counter', 'inc')] },
  paused: { name: 'paused', main: [call('counter', 'inc'), { kind: 'pause', message: 'Load the sample' }] },
  gated: { name: 'gated', main: [call('gate', 'pass')] },
  quick: { name: 'quick', main: [call('counter', 'inc')] },
};

async function submit(l: Lab, name: string): Promise<QueueTaskRow> {
  if (!(await l.store.workflows.get(name))) await l.store.workflows.save(name, WORKFLOWS[name], null);
  return l.runner.submit({ workflow: name, userId: null, repeat: 1 });
}

/** The outbox's rows, oldest first, as [event, state]. */
async function events(store: Store): Promise<[string, string][]> {
  return (await store.outbox.recent(1000)).reverse().map((r) => [r.event, r.state]);
}

const ended = async (l: Lab, id: number) => {
  await until(async () => ['done', 'failed', 'aborted', 'stopped'].includes((await l.store.queue.get(id))!.status), `task ${id} to end`);
  await until(() => l.runner.status().current_task?.id !== id, `task ${id} to leave the runner`);
};
/** The runner says it waits a moment before its write (with the event) has committed: wait for the row. */
const opened = (l: Lab, event: string) => until(async () => (await l.store.outbox.open()).some((r) => r.event === event), `${event} in the outbox`);

describe('the outbox gets each waiting state and its end', () => {
  it('a failed step: step_failed open, then resolved (same id) by the retry; run_completed after', async () => {
    const l = await lab();
    l.state.flakyFails = 1;
    const task = await submit(l, 'flaky');
    await opened(l, 'step_failed');
    const [open] = await l.store.outbox.open();
    expect(open).toMatchObject({
      event: 'step_failed',
      state: 'open',
      taskId: task.id,
      payload: expect.objectContaining({ step: 'main[0]', instrument: 'flaky', method: 'poke', error: 'flaky failure 1' }),
    });
    await l.runner.retry();
    await ended(l, task.id);
    const rows = (await l.store.outbox.recent(10)).reverse();
    expect(rows.map((r) => [r.event, r.state])).toEqual([
      ['step_failed', 'open'],
      ['step_failed', 'resolved'],
      ['run_completed', 'open'],
    ]);
    expect(rows[1]).toMatchObject({ alertId: open!.alertId, payload: expect.objectContaining({ resolution: 'the step was retried', step: 'main[0]' }) });
  });

  it('a failed step that is aborted is resolved by the run ending, and the held queue opens queue_held until released', async () => {
    const l = await lab();
    l.state.flakyFails = 5;
    const task = await submit(l, 'flaky');
    await opened(l, 'step_failed');
    await l.runner.abortNextTask();
    await ended(l, task.id);
    expect(await events(l.store)).toEqual([
      ['step_failed', 'open'],
      ['queue_held', 'open'],
      ['step_failed', 'resolved'],
    ]);
    await l.runner.release();
    expect((await events(l.store)).at(-1)).toEqual(['queue_held', 'resolved']);
    expect(await l.store.outbox.open()).toEqual([]);
  });

  it('a pause step: pause_waiting open, resolved when the operator continues', async () => {
    const l = await lab();
    const task = await submit(l, 'paused');
    await opened(l, 'pause_waiting');
    expect((await l.store.outbox.open()).map((r) => [r.event, r.payload.message])).toEqual([['pause_waiting', 'A pause step waits for the operator: Load the sample']]);
    await l.runner.continuePauseStep();
    await ended(l, task.id);
    expect((await events(l.store)).slice(0, 2)).toEqual([
      ['pause_waiting', 'open'],
      ['pause_waiting', 'resolved'],
    ]);
  });

  it('a run cut off by a crash: run_interrupted and queue_held open; resolved when the operator decides', async () => {
    const l = await lab();
    const task = await submit(l, 'gated');
    await l.state.gateWaiting(1);
    // the process "dies": its lease ends and a new runner on the same database recovers
    l.runner.host.halt();
    await l.store.hosts.stop(l.runner.host.id);
    const l2 = await lab(l.db);
    await until(() => l2.runner.status().interrupted !== null, 'the interrupted task');
    expect((await l.store.outbox.open()).map((r) => r.event).sort()).toEqual(['queue_held', 'run_interrupted']);
    await l2.runner.pauseResume(); // go on after the in-doubt step
    await until(async () => (await l.store.outbox.open()).length === 0, 'both resolved');
    await ended(l2, task.id);
  });
});

describe('host_lost', () => {
  it('a host found gone with a run in flight: stopped and alerted in one write, by one host; resolved when it is back', async () => {
    const l = await lab();
    await submit(l, 'gated');
    await l.state.gateWaiting(1);
    l.runner.host.halt();
    const row = (await l.store.hosts.get(l.runner.host.id))!;
    expect(await hostLost(l.store, row, 'another labdeck')).toBe(true);
    expect(await hostLost(l.store, row, 'a third labdeck')).toBe(false); // one host does it
    const open = (await l.store.outbox.open()).filter((r) => r.event === 'host_lost');
    expect(open).toEqual([
      expect.objectContaining({ key: `host_lost:${row.machine}:${row.kind}`, payload: expect.objectContaining({ host: row.name, message: expect.stringContaining('seen by another labdeck') }) }),
    ]);
    await hostBack(l.store, { id: 'new-host', name: 'lab serve again', kind: row.kind, machine: row.machine, pid: 1 });
    expect((await l.store.outbox.open()).some((r) => r.event === 'host_lost')).toBe(false);
  });

  it('a host found gone gives back the deliveries its deliverer had claimed: due now, not when the claims run out', async () => {
    const l = await lab();
    await l.store.settings.set(SETTINGS_KEY, { channels: [{ name: 'hook', kind: 'webhook', url: 'http://127.0.0.1:9/hook' }] });
    await l.store.outbox.write([{ op: 'open', event: 'step_failed', key: 'claimed:1', payload: { message: 'x' } }]);
    const [ev] = await l.store.outbox.unfanned(1);
    expect(await l.store.outbox.fanOut(ev!.id, ['hook'], new Date())).toBe(true);
    // the gone host claimed it for a minute, and died before it could mark it
    const now = new Date();
    expect(await l.store.outbox.claim(l.runner.host.id, now, new Date(now.getTime() + 60_000), 10)).toHaveLength(1);
    expect(await l.store.outbox.claim('other', now, new Date(now.getTime() + 60_000), 10)).toHaveLength(0);
    l.runner.host.halt();
    expect(await hostLost(l.store, (await l.store.hosts.get(l.runner.host.id))!, 'another labdeck')).toBe(true);
    expect(await l.store.outbox.claim('other', new Date(), new Date(Date.now() + 60_000), 10)).toHaveLength(1);
  });
});

describe('delivery to real receivers', () => {
  let sink: HttpSink;
  let smtp: SmtpSink;
  beforeEach(async () => {
    sink = await startHttpSink();
    smtp = await startSmtpSink();
    closers.push(
      () => sink.close(),
      () => smtp.close(),
    );
  });

  const settings = (extra: object = {}) => ({
    lab: 'Lab 7',
    base_url: 'http://lab.example:8000',
    channels: [
      { name: 'hook', kind: 'webhook', url: `${sink.url}/hook`, secret: 's3cret-key' },
      { name: 'chat', kind: 'slack', url: `${sink.url}/slack` },
      { name: 'mail', kind: 'email', host: '127.0.0.1', port: smtp.port, secure: false, from: 'lab@example.org', to: ['night@example.org'] },
    ],
    ...extra,
  });

  async function withDeliverer(store: Store, opts: Partial<ConstructorParameters<typeof Deliverer>[0]> = {}) {
    const d = new Deliverer({ store, hostId: 'test-host', intervalMs: 20, backoffMs: { first: 30, max: 100 }, ...opts });
    d.start();
    closers.push(() => d.stop());
    return d;
  }

  it('a failed step and its resolution reach a signed webhook, a Slack-compatible endpoint and an SMTP inbox, with the link', async () => {
    const l = await lab();
    await l.store.settings.set(SETTINGS_KEY, settings());
    await withDeliverer(l.store);
    l.state.flakyFails = 1;
    const task = await submit(l, 'flaky');
    await until(() => l.runner.status().state === 'failed', 'the failed step');
    await sink.arrived(2);
    await smtp.arrived(1);
    const hook = sink.received.find((r) => r.path === '/hook')!;
    const body = hook.json as Record<string, unknown>;
    const runId = l.runner.status().current_task!.run_id!;
    expect(body).toMatchObject({ event: 'step_failed', state: 'open', lab: 'Lab 7', task_id: task.id, run_id: runId, step: 'main[0]', url: `http://lab.example:8000/app/executions/records/${runId}` });
    expect(typeof body.id).toBe('string');
    expect(typeof body.host).toBe('string');
    expect(new Date(body.time as string).getTime()).not.toBeNaN();
    expect(hook.headers['x-labdeck-signature']).toBe(`sha256=${createHmac('sha256', 's3cret-key').update(hook.body).digest('hex')}`);
    const slack = sink.received.find((r) => r.path === '/slack')!.json as { text: string };
    expect(slack.text).toContain('step_failed');
    expect(slack.text).toContain(`http://lab.example:8000/app/executions/records/${runId}`);
    expect(smtp.mails[0]).toMatchObject({ from: 'lab@example.org', to: ['night@example.org'] });
    expect(smtp.mails[0]!.subject).toContain('A step failed');
    expect(smtp.mails[0]!.raw).toContain(`/app/executions/records/${runId}`);

    await l.runner.retry();
    await ended(l, task.id);
    await sink.arrived(4);
    await smtp.arrived(2);
    const resolved = sink.received.filter((r) => r.path === '/hook').map((r) => r.json as Record<string, unknown>);
    expect(resolved.map((b) => [b.event, b.state])).toEqual([
      ['step_failed', 'open'],
      ['step_failed', 'resolved'],
    ]);
    expect(resolved[1]!.id).toBe(body.id);
    expect(smtp.mails[1]!.subject).toContain('Resolved');
    // run_completed is off by default: nobody was sent it
    expect(sink.received.some((r) => (r.json as { event?: string }).event === 'run_completed')).toBe(false);
  });

  it('a channel that is down keeps its events, is shown dead, and gets every one once it is back', async () => {
    const l = await lab();
    await l.store.settings.set(SETTINGS_KEY, { channels: [{ name: 'hook', kind: 'webhook', url: `${sink.url}/hook` }] });
    const n = new Notifications(l.store, 'test-host', { intervalMs: 20, backoffMs: { first: 20, max: 50 } });
    sink.status = 503;
    n.start();
    closers.push(() => n.close());
    l.state.flakyFails = 1;
    await submit(l, 'flaky');
    await until(() => l.runner.status().state === 'failed', 'the failed step');
    await until(async () => (await n.health()).some((h) => h.channel === 'hook' && h.dead), 'the channel shown dead');
    expect((await n.health())[0]).toMatchObject({ channel: 'hook', waiting: 1, dead: true, lastError: expect.stringContaining('503') });
    await l.runner.retry();
    await until(async () => (await l.store.outbox.open()).every((r) => r.event === 'run_completed'), 'resolved');
    const tried = sink.received.length;
    sink.status = 200;
    await until(async () => (await n.health())[0]!.waiting === 0, 'everything delivered');
    const delivered = sink.received.slice(tried).map((r) => r.headers['x-labdeck-delivery']);
    // each event arrived once after the channel came back
    expect(new Set(delivered).size).toBe(delivered.length);
    const ok = sink.received.slice(tried).flatMap((r) => {
      const b = r.json as { event: string; state?: string; events?: { event: string; state: string }[] };
      return b.events ? b.events.map((e) => `${e.event}:${e.state}`) : [`${b.event}:${b.state}`];
    });
    expect(ok.sort()).toEqual(['step_failed:open', 'step_failed:resolved']);
    expect((await n.health())[0]!.dead).toBe(false);
  });

  it('closing sends what is pending first (a short lab run tells before it exits)', async () => {
    const l = await lab();
    await l.store.settings.set(SETTINGS_KEY, { channels: [{ name: 'hook', kind: 'webhook', url: `${sink.url}/hook` }] });
    const n = new Notifications(l.store, 'short-lived', { intervalMs: 600_000 });
    n.start();
    await n.deliverer.idle();
    await l.store.outbox.write([{ op: 'open', event: 'step_failed', key: 'flush', payload: { message: 'failed just before the end' } }]);
    expect(sink.received).toHaveLength(0);
    await n.close();
    expect(sink.received.map((r) => (r.json as { message: string }).message)).toEqual(['failed just before the end']);
  });

  it('a flood beyond the rate limit arrives as one digest that says so', async () => {
    const l = await lab();
    await l.store.settings.set(SETTINGS_KEY, { channels: [{ name: 'hook', kind: 'webhook', url: `${sink.url}/hook`, rate_per_minute: 2 }] });
    const ops = Array.from({ length: 40 }, (_, i) => ({ op: 'open' as const, event: 'host_lost', key: `flood:${i}`, payload: { message: `lost ${i}` } }));
    await l.store.outbox.write(ops);
    await withDeliverer(l.store);
    await until(async () => (await l.store.outbox.health())[0]?.waiting === 0, 'the flood delivered');
    const bodies = sink.received.map((r) => r.json as { event: string; count?: number; note?: string; events?: unknown[] });
    expect(bodies.length).toBeLessThanOrEqual(2);
    const digest = bodies.find((b) => b.event === 'digest')!;
    expect(digest.note).toMatch(/rate limit/);
    expect(bodies.reduce((n, b) => n + (b.events?.length ?? 1), 0)).toBe(40);
  });

  it("a user's subscription mails them about their own runs through the lab's SMTP server", async () => {
    const l = await lab();
    const u = await l.store.users.create({ username: 'ada', passwordHash: 'x', role: 'operator' });
    await l.store.settings.set(SETTINGS_KEY, {
      channels: [{ name: 'mail', kind: 'email', host: '127.0.0.1', port: smtp.port, from: 'lab@example.org', to: ['night@example.org'], events: ['queue_held'] }],
    });
    await l.store.settings.set(userKey(u.id), { email: 'ada@example.org', events: ['step_failed'] });
    await withDeliverer(l.store);
    l.state.flakyFails = 1;
    if (!(await l.store.workflows.get('flaky'))) await l.store.workflows.save('flaky', WORKFLOWS.flaky, null);
    await l.runner.submit({ workflow: 'flaky', userId: u.id, repeat: 1 });
    await until(() => l.runner.status().state === 'failed', 'the failed step');
    await smtp.arrived(1);
    expect(smtp.mails[0]).toMatchObject({ to: ['ada@example.org'] });
    expect(smtp.mails[0]!.subject).toContain('A step failed');
  });
});

describe('the watchdog', () => {
  const W = { factor: 3, mad_factor: 5, floor_s: 10, min_samples: 5 };
  it('bounds a call at max(factor × median, median + mad_factor × MAD, floor_s) once min_samples exist', () => {
    expect(overdueBound(statsOf([1000, 1000, 1000, 1000]), W)).toBeNull();
    expect(overdueBound(statsOf([1000, 1000, 1000, 1000, 1000]), W)).toBe(10_000); // the floor
    expect(overdueBound(statsOf([20_000, 20_000, 20_000, 20_000, 20_000]), W)).toBe(60_000); // 3 × median
    // median 20 s, MAD 10 s: 20 + 5 × 10 = 70 s > 60 s
    expect(overdueBound(statsOf([10_000, 10_000, 20_000, 30_000, 30_000]), W)).toBe(70_000);
  });

  it('an overdue call raises one alert and a line on its run page; it is resolved when the call ends (a test clock)', async () => {
    const l = await lab();
    let clock = 1_000_000;
    const wd = new Watchdog({ store: l.store, host: 'here', settings: async () => W, now: () => clock, intervalMs: 0 });
    for (let i = 0; i < 5; i++)
      await l.store.steps.insert({
        runId: null,
        phase: null,
        iteration: null,
        stepIndex: null,
        instrument: 'gate',
        method: 'pass',
        args: {},
        output: null,
        status: 'ok',
        error: null,
        userId: null,
        startedAt: new Date(0),
        endedAt: new Date(2000),
      });
    const task = await submit(l, 'gated');
    await l.state.gateWaiting(1);
    const runId = l.runner.status().current_task!.run_id!;
    await wd.runStarted(runId);
    await wd.stepStarted({ stepId: 999, runId, taskId: task.id, path: 'main[0]', instrument: 'gate', method: 'pass' });
    expect(wd.running()[0]).toMatchObject({ step_id: 999, expected_end: new Date(clock + 10_000).toISOString(), overdue: false });
    clock += 9_000;
    expect(await wd.check()).toBe(0);
    clock += 2_000;
    expect(await wd.check()).toBe(1);
    expect(await wd.check()).toBe(0); // one alert, not one a check
    const open = (await l.store.outbox.open()).find((r: OutboxRow) => r.event === 'step_overdue')!;
    expect(open).toMatchObject({ runId, payload: expect.objectContaining({ step: 'main[0]', bound_s: 10 }) });
    expect((await l.store.logs.list(runId)).some((x) => x.level === 'warn' && x.message.startsWith('Overdue: Step main[0] (gate.pass) has run 11 s'))).toBe(true);
    expect(wd.running()[0]!.overdue).toBe(true);
    await wd.stepEnded(999);
    expect((await l.store.outbox.open()).some((r) => r.event === 'step_overdue')).toBe(false);
    l.state.release();
    await ended(l, task.id);
  });

  it('gives a run an ETA from the past completed runs of its workflow (P10-P90), none before there is one', async () => {
    const l = await lab();
    const first = await submit(l, 'quick');
    await ended(l, first.id);
    const firstRun = (await l.store.queue.get(first.id))!.runId!;
    expect(await runEta(l.store, firstRun)).toBeNull();
    const second = await submit(l, 'quick');
    await ended(l, second.id);
    const run = (await l.store.runs.get((await l.store.queue.get(second.id))!.runId!))!;
    const eta = (await runEta(l.store, run.id))!;
    const prev = (await l.store.runs.get(firstRun))!;
    const took = prev.endedAt!.getTime() - prev.startedAt.getTime();
    expect(eta).toEqual({ earliest: new Date(run.startedAt.getTime() + took).toISOString(), latest: new Date(run.startedAt.getTime() + took).toISOString(), samples: 1 });
    expect(etaText(eta)).toMatch(/^ETA .+ \(P10-P90 of 1 past run of this workflow\)$/);
  });
});
