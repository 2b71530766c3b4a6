/**
 * Several tasks at once over HTTP (`lab serve --parallel 2`, issue 13 item 2) on the demo deck: two tasks on
 * disjoint instruments run together and the status lists both (current_task the first); a task sharing an
 * instrument with a running one waits; the controls without task_id answer 409 listing the running tasks,
 * with one act on that task only, and an unknown task_id is a 404; the generated clients take task_id.
 */
import { startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';
/** A ping of `noop`, then a pause step: stays running until continued. */
const NOOP_HOLD = {
  name: 'noopHold',
  main: [
    { kind: 'call', instrument: 'noop', method: 'ping' },
    { kind: 'pause', message: 'Check the vial' },
  ],
};
/** The same on `stirrer` (disjoint from noop). */
const STIR_HOLD = {
  name: 'stirHold',
  main: [
    { kind: 'call', instrument: 'stirrer', method: 'set_speed', args: { rpm: { value: 100 } } },
    { kind: 'pause', message: 'Look at the stirrer' },
  ],
};

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab({ parallel: 2 });
  for (const wf of [NOOP_HOLD, STIR_HOLD]) await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
});
afterAll(() => lab.close());

const queue = async (workflow: string): Promise<number> => (await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow, repeat: 1 }).expect(200)).body.task_id;
const status = async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;
const control = (path: string, body: Record<string, unknown> = {}) => lab.admin.post(`/app/executions/${path}`).set('Accept', J).send(body);
const waitingAt = async (id: number) => (await status()).running.some((t: { id: number; waiting: unknown }) => t.id === id && t.waiting !== null);

it('runs tasks on disjoint instruments together; controls need task_id while several run and act on that task', async () => {
  const a = await queue('noopHold');
  const b = await queue('stirHold');
  const c = await queue('noopHold'); // noop again: waits for a
  await until(async () => (await waitingAt(a)) && (await waitingAt(b)));
  const s = await status();
  expect(s).toMatchObject({ busy: true, parallel: 2, current_task: { id: a }, state: 'paused', waiting: { message: 'Check the vial' } });
  expect(s.running.map((t: { id: number; instruments: string[] }) => [t.id, t.instruments])).toEqual([
    [a, ['noop']],
    [b, ['stirrer']],
  ]);
  const q = (await lab.admin.get('/app/executions/queue').set('Accept', J).expect(200)).body;
  expect(q.running_task_ids).toEqual([a, b]);
  expect(q.tasks.find((t: { id: number }) => t.id === c).status).toBe('pending');

  // several running: 409 listing them, for every control of a task
  for (const path of ['pause-resume', 'pause', 'resume', 'continue', 'skip', 'retry', 'abort/next-iteration', 'abort/next-task']) {
    const res = await control(path).expect(409);
    expect([path, res.body.error.message]).toEqual([path, expect.stringContaining(`task ${a} ("noopHold × 1"), task ${b} ("stirHold × 1")`)]);
    expect(res.body.running.map((t: { task_id: number }) => t.task_id)).toEqual([a, b]);
  }
  expect((await control('continue', { task_id: 99_999 }).expect(404)).body.error.message).toBe('There is no task 99999.');
  expect((await control('continue', { task_id: c }).expect(409)).body.error.message).toContain(`Task ${c} is not running (it is pending)`);
  expect((await control('continue', { task_id: 'b' }).expect(400)).body.error.details[0].field).toBe('task_id');

  // continue b only: it ends, a still waits; c still waits for noop
  const after = (await control('continue', { task_id: b }).expect(200)).body;
  expect(after.running.find((t: { id: number }) => t.id === a).waiting).not.toBeNull();
  await until(async () => (await lab.runtime.store.queue.get(b))!.status === 'done');
  expect((await status()).running.map((t: { id: number }) => t.id)).toEqual([a]);
  expect((await lab.runtime.store.queue.get(c))!.status).toBe('pending');

  // one running again: no task_id needed; then c takes noop
  await control('continue').expect(200);
  await until(() => waitingAt(c));
  await control('continue', { task_id: c }).expect(200);
  await until(async () => (await lab.runtime.store.queue.get(c))!.status === 'done');
  expect((await lab.runtime.store.queue.get(a))!.status).toBe('done');
});

it('the generated clients take task_id on the controls', async () => {
  const py = (await lab.admin.get('/app/instruments/proxy?lang=python').expect(200)).text;
  expect(py).toMatch(/def pause_resume\(self, \*, task_id: Optional\[Union\[str, int\]\] = None\)/);
  expect(py).toMatch(/def retry\(self, \*, task_id: Optional\[Union\[str, int\]\] = None\)/);
  const ts = (await lab.admin.get('/app/instruments/proxy?lang=typescript').expect(200)).text;
  expect(ts).toMatch(/task_id\?: string \| number;/);
  expect(ts).toMatch(/pauseResume\(options\?: ControlBody\)/);
});
