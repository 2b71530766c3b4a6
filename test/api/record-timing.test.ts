/**
 * A record's timing list (docs/notifications.md, "The watchdog"): the record (JSON and page) shows each call
 * step's duration, the bound the watchdog had learned for it when it started, worked out again from the call
 * records, and marks a step that ran longer than it.
 */
import { fileURLToPath } from 'node:url';
import { startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';
const DECK = fileURLToPath(new URL('../fixtures/notify/deck.ts', import.meta.url));
const work = (ms: number) => ({ kind: 'call', instrument: 'slow', method: 'work', args: { ms: { value: ms } } });
const TIMED = {
  name: 'timed',
  main: [{ kind: 'call', instrument: 'flaky', method: 'poke', args: {} }, work(60), work(60), work(900), { kind: 'input', prompt: 'Done?', save_as: 'done', schema: { type: 'boolean' } }],
};

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab({ deck: DECK });
}, 30_000);
afterAll(() => lab?.close());

type Step = { task_id: number; instrument: string; method: string; duration_ms: number; bound_ms: number | null; overdue: boolean };

it('each call step with its duration, its learned bound (if any) and an overdue mark, in the JSON and on the page', async () => {
  // overdue beyond twice the median of the earlier calls, from the first one on
  await lab.admin
    .put('/app/notifications')
    .set('Accept', J)
    .send({ channels: [], watchdog: { factor: 2, mad_factor: 0, floor_s: 0, min_samples: 1 } })
    .expect(200);
  await lab.admin.post('/app/workflows').set('Accept', J).send(TIMED).expect(201);
  const task = (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'timed', repeat: 1 }).expect(200)).body.task_id as number;
  await until(async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body.state === 'waiting_input');
  await lab.admin.post('/app/executions/input').set('Accept', J).send({ value: true }).expect(200);
  await until(async () => (await lab.runtime.store.queue.get(task))!.status === 'done');
  const runId = (await lab.runtime.store.queue.get(task))!.runId!;

  const record = (await lab.admin.get(`/app/executions/records/${runId}`).set('Accept', J).expect(200)).body;
  const steps = (record.phases as { steps: Step[] }[]).flatMap((p) => p.steps);
  expect(steps.map((s) => `${s.instrument}.${s.method}`)).toEqual(['flaky.poke', 'slow.work', 'slow.work', 'slow.work', '(input).done']);
  const [poke, w1, w2, w3, input] = steps as [Step, Step, Step, Step, Step];
  // nothing to learn from yet: no bound
  expect([poke.bound_ms, w1.bound_ms, input.bound_ms]).toEqual([null, null, null]);
  expect([poke.overdue, w1.overdue, input.overdue]).toEqual([false, false, false]);
  // the second call of slow.work: twice the first one's duration; it took about as long as that one
  expect(w2.bound_ms).toBe(2 * w1.duration_ms);
  expect(w2.overdue).toBe(w2.duration_ms > w2.bound_ms!);
  // the third: twice the median of the two before it, and it ran far longer
  expect(w3.bound_ms).toBe(w1.duration_ms + w2.duration_ms);
  expect(w3.duration_ms).toBeGreaterThan(w3.bound_ms!);
  expect(w3.overdue).toBe(true);

  const html = (await lab.admin.get(`/app/executions/records/${runId}`).expect(200)).text;
  const table = /<table[^>]*id="record-timing"[^>]*>[\s\S]*?<\/table>/.exec(html)![0];
  const rows = [...table.matchAll(/<tr data-step="(\d+)" data-overdue="(true|false)"[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => ({
    id: Number(m[1]),
    overdue: m[2] === 'true',
    text: m[3]!.replace(/<[^>]+>/g, ' '),
  }));
  // the call steps only (the input waited for a person, not an instrument)
  expect(rows.map((r) => r.id)).toEqual([poke.task_id, w1.task_id, w2.task_id, w3.task_id]);
  expect(rows.map((r) => r.overdue)).toEqual([false, false, w2.overdue, true]);
  expect(rows[0]!.text).toContain('none yet');
  expect(rows[3]!.text).toMatch(/slow\.work[\s\S]*\d+ ms[\s\S]*\d+ ms[\s\S]*overdue/);
  expect(html).toMatch(/<p[^>]*id="record-timing-summary"[^>]*>\d of 4 call steps ran longer than the bound/);
});
