/**
 * A call's result has a size bound (issue 26 #13, core/result-limit.ts): a 15 MB result is stored cut and
 * marked, the call's own answer is that marker, a later `{var}` reference to it fails its step by name, and
 * the instrument page, its Recent calls, a call record and a run record read only what they show, also of a
 * value stored whole before the bound existed. On SQLite, and on PostgreSQL with LABDECK_TEST_DB=postgres.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_RESULT_BYTES, PREVIEW_CHARS, SHOWN_RESULT_CHARS, isCutResult, setMaxResultBytes } from '../../core/result-limit.js';
import { startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';
const MB15 = 15 * 1024 * 1024;

let lab: TestLab;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labdeck-bound-'));
  const deck = join(dir, 'deck.mjs');
  // a spectrometer whose read returns a dict of 15 MB (a long text and a small number), and a sink to pass it to
  await writeFile(
    deck,
    `export const spectro = {
  read(size = ${MB15}) { return { peak: 3.5, trace: 'x'.repeat(size) }; },
  small() { return { peak: 2.5 }; },
  take(value) { return typeof value; },
};
`,
  );
  lab = await startLab({ deck });
});
afterAll(async () => {
  setMaxResultBytes(null);
  await lab.close();
  await rm(dir, { recursive: true, force: true });
});

const call = (method: string, args: Record<string, unknown> = {}) => lab.admin.post('/app/instruments/spectro').set('Accept', J).send({ method, args });

describe('a result over the bound', () => {
  it('is stored cut and marked, and the call answers the same marker', async () => {
    const res = await call('read').expect(200);
    expect(res.body.output).toEqual({ truncated: true, bytes: expect.any(Number), limit: DEFAULT_MAX_RESULT_BYTES, preview: expect.any(String) });
    expect(res.body.output.bytes).toBeGreaterThan(MB15);
    expect(res.body.output.preview).toHaveLength(PREVIEW_CHARS);
    expect(res.body.output.preview.startsWith('{"peak":3.5,"trace":"xxx')).toBe(true);
    expect(res.text.length).toBeLessThan(4096);
    const record = await lab.admin.get(`/app/instruments/task/${res.body.task_id}`).set('Accept', J).expect(200);
    expect(record.body.output).toEqual(res.body.output);
    expect(record.body.status).toBe('ok');
    // the record is the marker: the store never held the 15 MB
    const row = await lab.runtime.store.steps.get(res.body.task_id);
    expect(isCutResult(row!.output)).toBe(true);
    // a small result is kept whole
    expect((await call('small').expect(200)).body.output).toEqual({ peak: 2.5 });
  });

  it('shows on the page as cut, with its size', async () => {
    const frag = await lab.admin.post('/app/instruments/spectro').set('HX-Request', 'true').type('form').send({ method: 'read' }).expect(200);
    expect(frag.text).toContain('value-cut');
    expect(frag.text).toMatch(/15 MB of JSON, cut at 256 KB/);
    expect(frag.text.length).toBeLessThan(20_000);
  });

  it('cannot be passed on by a workflow: the step that references it fails, naming the variable', async () => {
    const wf = {
      name: 'pass-on',
      outputs: ['s'],
      main: [
        { kind: 'call', instrument: 'spectro', method: 'small', save_as: 's' },
        { kind: 'call', instrument: 'spectro', method: 'take', args: { value: { var: 's' } } },
        { kind: 'call', instrument: 'spectro', method: 'read', save_as: 'big' },
        { kind: 'call', instrument: 'spectro', method: 'take', args: { value: { var: 'big' } } },
      ],
    };
    await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
    const run = await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'pass-on', repeat: 1 }).expect(200);
    await until(async () => (await lab.admin.get('/app/executions/status').set('Accept', J)).body.state === 'failed');
    const status = (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body;
    expect(status.failed_step.path).toBe('main[3]');
    expect(status.failed_step.error).toMatch(/The variable "big" holds a result that was cut \(15 MB of JSON, cut at 256 KB\): it cannot be passed on/);
    // the small result went on as data
    const task = await lab.runtime.store.queue.get(run.body.task_id);
    const steps = await lab.runtime.store.runSteps.list(task!.runId!);
    expect(steps.filter((s) => s.method === 'take').map((s) => s.output)).toEqual(['object']);
    await lab.admin.post('/app/executions/abort/next-task').set('Accept', J).expect(200);
    await until(async () => (await lab.runtime.store.queue.get(run.body.task_id))?.status === 'aborted');
    await lab.admin.post('/app/executions/release').set('Accept', J).expect(200);
  });
});

describe('reading only what is shown', () => {
  let old: number;
  beforeAll(async () => {
    // a record stored whole, as before the bound existed
    setMaxResultBytes(64 * 1024 * 1024);
    old = (await call('read').expect(200)).body.task_id;
    setMaxResultBytes(null);
    for (let i = 0; i < 4; i++) await call('read').expect(200);
  });

  it('Recent calls (page, fragment and JSON) read a bounded part of each output', async () => {
    const page = await lab.admin.get('/app/instruments/spectro').expect(200);
    expect(page.text).toContain('value-cut');
    expect(page.text.length).toBeLessThan(200_000);
    const calls = await lab.admin.get('/app/instruments/spectro/calls').set('Accept', J).expect(200);
    expect(calls.text.length).toBeLessThan(10 * (SHOWN_RESULT_CHARS + 2048));
    const whole = calls.body.calls.find((c: { task_id: number }) => c.task_id === old);
    expect(whole.output).toEqual({ truncated: true, bytes: expect.any(Number), limit: SHOWN_RESULT_CHARS, preview: expect.any(String) });
    expect(whole.output.bytes).toBeGreaterThan(MB15);
    const frag = await lab.admin.get('/app/instruments/spectro/calls').expect(200);
    expect(frag.text.length).toBeLessThan(200_000);
  });

  it('a call record reads at most the bound, and a run record at most what it shows of each step', async () => {
    const record = await lab.admin.get(`/app/instruments/task/${old}`).set('Accept', J).expect(200);
    expect(record.body.output).toMatchObject({ truncated: true, limit: DEFAULT_MAX_RESULT_BYTES });
    expect(record.text.length).toBeLessThan(8192);
    const page = await lab.admin.get(`/app/instruments/task/${old}`).expect(200);
    expect(page.text.length).toBeLessThan(20_000);
    // a run whose step stored 15 MB whole (before the bound)
    setMaxResultBytes(64 * 1024 * 1024);
    const wf = { name: 'big-one', main: [{ kind: 'call', instrument: 'spectro', method: 'read' }] };
    await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
    const run = await lab.admin.post('/app/executions/config').set('Accept', J).send({ workflow: 'big-one', repeat: 1 }).expect(200);
    await until(async () => (await lab.runtime.store.queue.get(run.body.task_id))?.status === 'done');
    setMaxResultBytes(null);
    const runId = (await lab.runtime.store.queue.get(run.body.task_id))!.runId!;
    const detail = await lab.admin.get(`/app/executions/records/${runId}`).set('Accept', J).expect(200);
    expect(detail.text.length).toBeLessThan(SHOWN_RESULT_CHARS + 16_384);
    const step = detail.body.phases.find((p: { phase: string }) => p.phase === 'main').steps[0];
    expect(step.output).toMatchObject({ truncated: true, limit: SHOWN_RESULT_CHARS });
    const html = await lab.admin.get(`/app/executions/records/${runId}`).expect(200);
    expect(html.text.length).toBeLessThan(200_000);
  });
});
