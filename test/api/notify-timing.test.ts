/**
 * The run page's timing (docs/notifications.md, the watchdog): while a run goes on, the page (HTML) and
 * `GET /executions/status` show the run's ETA (P10-P90 of past completed runs of its workflow) and each
 * running call step's expected end; a step past its bound is marked overdue on the page.
 */
import { fileURLToPath } from 'node:url';
import { startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';
const DECK = fileURLToPath(new URL('../fixtures/notify/deck.ts', import.meta.url));
const SLOW = { name: 'slow-one', parameters: [{ name: 'ms', type: 'number', default: 50 }], main: [{ kind: 'call', instrument: 'slow', method: 'work', args: { ms: { param: 'ms' } } }] };

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab({ deck: DECK });
}, 30_000);
afterAll(() => lab?.close());

const status = async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;
const done = (taskId: number) => until(async () => (await lab.runtime.store.queue.get(taskId))!.status === 'done');

it('the page shows the ETA and each running step with its expected end; an overdue step is marked', async () => {
  // one record of slow.work (50 ms) and a bound of 2 × its median (min_samples 1, no floor)
  await lab.admin
    .post('/app/instruments/slow')
    .set('Accept', J)
    .send({ method: 'work', args: { ms: 50 } })
    .expect(200);
  await lab.admin
    .put('/app/notifications')
    .set('Accept', J)
    .send({ channels: [], watchdog: { factor: 2, mad_factor: 0, floor_s: 0, min_samples: 1 } })
    .expect(200);
  await lab.admin.post('/app/workflows').set('Accept', J).send(SLOW).expect(201);
  // nothing runs: no timing on the page
  expect((await lab.admin.get('/app/executions/config').expect(200)).text).toMatch(/<ul id="live-timing"[^>]*class="[^"]*d-none/);
  // a first run completes: the workflow's past for the ETA
  const first = (
    await lab.admin
      .post('/app/executions/config')
      .set('Accept', J)
      .send({ workflow: 'slow-one', config: [{ ms: 50 }] })
      .expect(200)
  ).body.task_id as number;
  await done(first);

  const second = (
    await lab.admin
      .post('/app/executions/config')
      .set('Accept', J)
      .send({ workflow: 'slow-one', config: [{ ms: 2500 }] })
      .expect(200)
  ).body.task_id as number;
  await until(async () => (await status()).timing.steps.length === 1 && (await status()).timing.runs[0]?.eta !== null);
  const s = await status();
  const run = (await lab.runtime.store.queue.get(second))!.runId!;
  expect(s.timing.runs).toEqual([{ run_id: run, eta: { earliest: expect.any(String), latest: expect.any(String), samples: 1 } }]);
  const step = s.timing.steps[0];
  expect(step).toMatchObject({ run_id: run, path: 'main[0]', instrument: 'slow', method: 'work', expected_end: expect.any(String) });
  expect(new Date(step.expected_end).getTime()).toBeGreaterThan(new Date(step.started_at).getTime());

  // past its bound (about 100 ms): the watchdog marks it, and the page says so
  await until(async () => (await status()).timing.steps[0]?.overdue === true);
  const html = (await lab.admin.get('/app/executions/config').expect(200)).text;
  const box = /<ul id="live-timing"[^>]*>([\s\S]*?)<\/ul>/.exec(html)![0];
  expect(box).not.toContain('d-none');
  expect(box).toContain(`data-status-url="/app/executions/status"`);
  expect(box).toContain(`ETA ${s.timing.runs[0].eta.earliest.slice(11, 19)} UTC–${s.timing.runs[0].eta.latest.slice(11, 19)} UTC (P10–P90 of 1 past run of this workflow)`);
  expect(box).toMatch(
    /<li[^>]*data-kind="step"[^>]*data-overdue="true"[^>]*class="text-danger[^"]*"><span class="badge text-bg-danger me-1">overdue<\/span>main\[0\] slow\.work, started \d\d:\d\d:\d\d UTC: overdue: expected to end by \d\d:\d\d:\d\d UTC<\/li>/,
  );
  // and the run's log gets the watchdog's line (its next look, within a second)
  await until(async () => (await lab.runtime.store.logs.list(run)).some((l) => l.level === 'warn' && l.message.startsWith('Overdue: Step main[0] (slow.work)')));
  await done(second);
  expect((await status()).timing).toEqual({ steps: [], runs: [] });
}, 30_000);
