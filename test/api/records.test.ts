/**
 * Workflow records and data over HTTP: the list (keyword, paging, bad paging), one record (JSON and the
 * page), the steps CSV (streamed, neutralised), the log file, the plot data and deletion (owner or admin,
 * not while running), every status of each route, on runs made by the real runner.
 */
import request from 'supertest';
import { recordDetail } from '../../core/records/index.js';
import { RecordDetailSchema, RecordListSchema } from '../../core/records/record-schema.js';
import { exactly } from '../helpers/schemas.js';
import { dataSourceOf } from '../../core/store/index.js';
import type { RunRow } from '../../core/store/types.js';
import { usingPostgres } from '../helpers/db.js';
import { signupAndLogin, startLab, type TestLab } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

const J = 'application/json';

let lab: TestLab;
let operator: Awaited<ReturnType<typeof signupAndLogin>>;
let adaId: number;
let olgaId: number;
/** Runs made by the runner: 3 iterations of `rec-stir`, and one with a failed (skipped) step. */
let good: number;
let failed: number;

const until = (what: string, ok: () => boolean | Promise<boolean>, ms = 5000) => waitFor(ok, what, ms, 5);

/** Queue a workflow over rows through the API, wait until its task has finished; its run id. */
async function runToEnd(workflow: string, config: Record<string, unknown>[], onFailed?: () => Promise<unknown>): Promise<number> {
  const res = await lab.admin
    .post('/app/executions/config')
    .set('Accept', J)
    .send({ workflow, config, name: `${workflow} test` })
    .expect(200);
  const taskId = res.body.task_id as number;
  const store = lab.runtime.store;
  await until(`task ${taskId}`, async () => {
    if (onFailed && lab.runtime.runner.status().state === 'failed') await onFailed();
    const t = await store.queue.get(taskId);
    return !!t && !['pending', 'running'].includes(t.status);
  });
  return (await store.queue.get(taskId))!.runId!;
}

/** A finished record made directly in the store (no runner), with a log line unless `log` is false. */
async function record(p: Partial<RunRow> & { log?: boolean } = {}): Promise<number> {
  const { log = true, ...fields } = p;
  const run = await lab.runtime.store.runs.create({
    taskId: null,
    name: 'made in the store',
    workflowName: 'store-wf',
    workflowVersion: 1,
    workflow: { name: 'store-wf', outputs: [] },
    parameters: [{}],
    status: 'completed',
    userId: adaId,
    startedAt: new Date('2024-05-01T10:00:00Z'),
    ...fields,
  });
  if (log) await lab.runtime.store.logs.add(run.id, 'info', 'made by the test');
  return run.id;
}

beforeAll(async () => {
  lab = await startLab();
  operator = await signupAndLogin(lab.app, 'olga');
  adaId = (await lab.runtime.store.users.byName('ada'))!.id;
  olgaId = (await lab.runtime.store.users.byName('olga'))!.id;
  const { workflows } = lab.runtime.store;
  await workflows.save(
    'rec-stir',
    {
      name: 'rec-stir',
      parameters: [{ name: 'rpm', type: 'number', default: 100 }],
      outputs: ['speed', 'echo'],
      prep: [{ kind: 'call', instrument: 'noop', method: 'ping' }],
      main: [
        { kind: 'call', instrument: 'stirrer', method: 'set_speed', args: { rpm: { param: 'rpm' } }, save_as: 'speed' },
        { kind: 'repeat', times: 2, steps: [{ kind: 'call', instrument: 'noop', method: 'ping', save_as: 'echo' }] },
      ],
      cleanup: [{ kind: 'call', instrument: 'stirrer', method: 'stop' }],
    },
    adaId,
  );
  await workflows.save(
    'rec-jam',
    {
      name: 'rec-jam',
      outputs: ['dosed'],
      main: [
        { kind: 'call', instrument: 'pump', method: 'jam' },
        { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: 1 } }, save_as: 'dosed' },
      ],
    },
    adaId,
  );
  good = await runToEnd('rec-stir', [{ rpm: 100 }, { rpm: 200 }, { rpm: 300 }]);
  failed = await runToEnd('rec-jam', [{}], () => lab.runtime.runner.pauseResume());
}, 20_000);
afterAll(() => lab.close());

describe('GET /executions/records', () => {
  it('lists runs newest first as JSON, with the list fields', async () => {
    const res = await lab.admin.get('/app/executions/records').set('Accept', J).expect(200);
    expect(res.body).toMatchObject({ page: 1, per_page: 20 });
    expect(res.body.total).toBeGreaterThanOrEqual(2);
    const ids = (res.body.records as { id: number }[]).map((r) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const r = (res.body.records as Record<string, unknown>[]).find((x) => x.id === good)!;
    expect(r).toMatchObject({ name: 'rec-stir test', workflow: 'rec-stir', workflow_version: 1, status: 'completed', user: 'ada', user_id: adaId, iterations: 3, error: null });
    expect(typeof r.duration_ms).toBe('number');
    expect(r.definition).toBeUndefined(); // the snapshot is not in the list
    const f = (res.body.records as Record<string, unknown>[]).find((x) => x.id === failed)!;
    expect(f.status).toBe('completed'); // the failed step was skipped by the operator
  });

  it('filters by run or workflow name (case-insensitive) and pages', async () => {
    const byWf = await lab.admin.get('/app/executions/records?keyword=REC-JAM&format=json').expect(200);
    expect(byWf.body.records.map((r: { id: number }) => r.id)).toEqual([failed]);
    const mine: number[] = [];
    for (let i = 0; i < 7; i++) mine.push(await record({ name: `Paging batch ${i}` }));
    const p1 = await lab.admin.get('/app/executions/records?keyword=paging%20batch&per_page=3').set('Accept', J).expect(200);
    expect(p1.body).toMatchObject({ page: 1, per_page: 3, total: 7, pages: 3 });
    expect(p1.body.records.map((r: { id: number }) => r.id)).toEqual(mine.slice(4).reverse());
    const p3 = await lab.admin.get('/app/executions/records?keyword=paging%20batch&per_page=3&page=3').set('Accept', J).expect(200);
    expect(p3.body.records.map((r: { id: number }) => r.id)).toEqual([mine[0]]);
    const beyond = await lab.admin.get('/app/executions/records?keyword=paging%20batch&per_page=3&page=9').set('Accept', J).expect(200);
    expect(beyond.body).toMatchObject({ records: [], total: 7, pages: 3, page: 9 });
    const none = await lab.admin.get('/app/executions/records?keyword=zzz-nothing').set('Accept', J).expect(200);
    expect(none.body).toEqual({ records: [], page: 1, per_page: 20, total: 0, pages: 0 });
    // % and _ are plain characters, not wildcards
    expect((await lab.admin.get('/app/executions/records?keyword=%25').set('Accept', J).expect(200)).body.total).toBe(0);
  });

  it('answers 400 naming the field for bad paging', async () => {
    for (const [q, field] of [
      ['page=0', 'page'],
      ['page=two', 'page'],
      ['per_page=0', 'per_page'],
      ['per_page=201', 'per_page'],
      ['page=1&page=2', 'page'],
    ]) {
      const res = await lab.admin.get(`/app/executions/records?${q}`).set('Accept', J).expect(400);
      expect(res.body.error.code).toBe('invalid_input');
      expect(res.body.error.details[0].field).toBe(field);
    }
    const page = await lab.admin.get('/app/executions/records?per_page=x').expect(400);
    expect(page.text).toContain('per_page must be a positive integer');
  });

  it('renders the page: search box, table with status badges, pager, links from the mount', async () => {
    const res = await lab.admin.get('/app/executions/records?per_page=2').expect(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.text).toMatch(/<form[^>]*role="search"[^>]*action="\/app\/executions\/records" method="get"><input[^>]*type="search"[^>]*name="keyword"/);
    expect(res.text).toContain('<input type="hidden" name="per_page" value="2"/>');
    expect(res.text).toContain('class="badge text-bg-success">completed</span>');
    expect(res.text).toMatch(/page 1 of \d+/);
    expect(res.text).toContain('href="/app/executions/records?page=2&amp;per_page=2"');
    const bare = await lab.admin.get(`/executions/records?keyword=rec-stir`).expect(200);
    expect(bare.text).toContain(`href="/executions/records/${good}"`);
    expect(bare.text).not.toContain('href="/app/');
    expect(bare.text).toContain('value="rec-stir"');
    const empty = await lab.admin.get('/app/executions/records?keyword=zzz-nothing').expect(200);
    expect(empty.text).toContain('No record matches this search.');
  });

  it('needs a login', async () => {
    await request(lab.app).get('/app/executions/records').set('Accept', J).expect(401);
    const page = await request(lab.app).get('/app/executions/records').expect(302);
    expect(page.headers.location).toContain('/app/auth/login');
  });
});

describe('GET /executions/records/{workflow_id}', () => {
  it('answers the record with its phases, their steps (with paths), the log and the snapshot', async () => {
    const res = await operator.get(`/app/executions/records/${good}`).set('Accept', J).expect(200);
    const r = res.body;
    expect(r).toMatchObject({ id: good, workflow: 'rec-stir', status: 'completed', user: 'ada', iterations: 3, steps_truncated: false });
    expect(r.definition).toMatchObject({ name: 'rec-stir', outputs: ['speed', 'echo'] });
    expect(r.parameters).toEqual([{ rpm: 100 }, { rpm: 200 }, { rpm: 300 }]);
    const phases = r.phases as {
      phase: string;
      iteration: number | null;
      status: string;
      outputs: unknown;
      steps: { index: number; path: string; instrument: string; method: string; output: unknown; status: string; task_id: number }[];
    }[];
    expect(phases.map((p) => [p.phase, p.iteration, p.status])).toEqual([
      ['prep', null, 'ok'],
      ['main', 0, 'ok'],
      ['main', 1, 'ok'],
      ['main', 2, 'ok'],
      ['cleanup', null, 'ok'],
    ]);
    expect(phases[2]!.outputs).toEqual({ speed: 200, echo: 'pong' });
    expect(phases[2]!.steps.map((s) => [s.index, s.path, `${s.instrument}.${s.method}`, s.output, s.status])).toEqual([
      [0, 'main[0]', 'stirrer.set_speed', 200, 'ok'],
      [1, 'main[1].steps[0]', 'noop.ping', 'pong', 'ok'],
      [2, 'main[1].steps[0]', 'noop.ping', 'pong', 'ok'],
    ]);
    expect(phases[4]!.steps[0]!.path).toBe('cleanup[0]');
    expect(r.steps_shown).toBe(1 + 3 * 3 + 1);
    // each step is a call record readable on its own
    await lab.admin.get(`/app/instruments/task/${phases[1]!.steps[0]!.task_id}`).set('Accept', J).expect(200);
    expect(r.logs[0].message).toContain('Started rec-stir');
    expect(r.logs.at(-1).message).toContain('Run completed');
  });

  it('cuts the steps at the limit and says which phases are cut short', async () => {
    const r = await recordDetail(lab.runtime.store, good, { stepLimit: 5 });
    expect(r).toMatchObject({ steps_shown: 5, steps_truncated: true });
    expect(r.phases.map((p) => [p.phase, p.iteration, p.steps.length, p.steps_complete])).toEqual([
      ['prep', null, 1, true],
      ['main', 0, 3, true],
      ['main', 1, 1, false],
      ['main', 2, 0, false],
      ['cleanup', null, 0, false],
    ]);
    const all = await recordDetail(lab.runtime.store, good, { stepLimit: 11 });
    expect(all.steps_truncated).toBe(false);
    expect(all.phases.every((p) => p.steps_complete)).toBe(true);
  });

  it('renders the page: summary, parameters, steps, a skipped failure marked, log, plot and downloads', async () => {
    const res = await lab.admin.get(`/app/executions/records/${failed}`).expect(200);
    const html = res.text;
    expect(html).toContain('<link rel="stylesheet" href="/app/static/vendor/uPlot.min.css"/>');
    expect(html).toContain('<script src="/app/static/vendor/uPlot.iife.min.js" defer=""></script>');
    expect(html).toContain(`data-url="/app/executions/data/${failed}"`);
    expect(html).toContain(`href="/app/executions/records/${failed}/steps_data_csv"`);
    expect(html).toContain(`href="/app/executions/records/${failed}/logs"`);
    expect(html).toContain(`hx-delete="/app/executions/records/${failed}"`);
    expect(html).toMatch(/hx-confirm="Delete record \d+/);
    // the failed step was skipped: marked so on the step, its iteration and the run, never a green "completed"
    expect(html).toMatch(/<tr class="table-warning">(?:(?!<\/tr>).)*pump\.dose(?:(?!<\/tr>).)*<span class="badge text-bg-secondary">skipped<\/span>/);
    expect(html).toContain('<tr class="phase-head table-warning"><th colSpan="7" scope="rowgroup"><span class="me-2">main · iteration 1</span><span class="badge text-bg-secondary">skipped</span>');
    expect(html).toContain('<strong>Error:</strong><pre class="traceback small mb-0">pump jammed');
    expect(html).toContain('1 failed step was skipped: its iteration is marked skipped below');
    expect(html).toContain('>completed with 1 skipped step</span></h1>');
    expect(html).not.toContain('text-bg-success">completed<');
    expect(html).toContain('<code>pump.dose</code>');
    expect(html).toContain('main[1]');
    // CSP 'self': every script is a file
    expect(html.match(/<script(?![^>]*\ssrc=)[^>]*>/g)).toBeNull();
    const ok = await lab.admin.get(`/app/executions/records/${good}`).expect(200);
    expect(ok.text).toContain('id="record-parameters"');
    expect(ok.text).toContain('main · iteration 3');
    expect(ok.text).toContain('<a href="/app/workflows/rec-stir">rec-stir</a>');
  });

  it('shows Delete only to who may delete', async () => {
    const other = await operator.get(`/app/executions/records/${good}`).expect(200);
    expect(other.text).not.toContain('hx-delete=');
    const own = await record({ userId: olgaId });
    expect((await operator.get(`/app/executions/records/${own}`).expect(200)).text).toContain('hx-delete=');
  });

  it('answers 404 for an unknown record and 400 for an id that is not a positive integer', async () => {
    const missing = await lab.admin.get('/app/executions/records/999999').set('Accept', J).expect(404);
    expect(missing.body.error.details[0].field).toBe('workflow_id');
    for (const bad of ['abc', '0', '-1', '1.5', '1e3']) {
      const res = await lab.admin.get(`/app/executions/records/${bad}`).set('Accept', J).expect(400);
      expect(res.body.error.details[0].field).toBe('workflow_id');
    }
    await lab.admin.get('/app/executions/records/999999').expect(404);
  });
});

describe('the record shapes, declared once (core/records/record-schema.ts)', () => {
  it('answers the list and a record exactly as their zod declares them (no field more, none missing)', async () => {
    const list = (await lab.admin.get('/app/executions/records').set('Accept', J).expect(200)).body;
    expect(exactly(RecordListSchema, list)).toEqual(list);
    for (const id of [good, failed]) {
      const one = (await lab.admin.get(`/app/executions/records/${id}`).set('Accept', J).expect(200)).body;
      expect(exactly(RecordDetailSchema, one)).toEqual(one);
    }
  });
});

describe('GET /executions/records/{workflow_id}/steps_data_csv', () => {
  it('downloads one row per step, in order, as an attachment', async () => {
    const res = await lab.admin.get(`/app/executions/records/${good}/steps_data_csv`).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="?run-${good}-steps\\.csv"?$`));
    const lines = res.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('phase,iteration,step_index,instrument,method,args,output,status,error,started_at,ended_at,duration_ms');
    expect(lines).toHaveLength(1 + 11);
    expect(lines[1]).toMatch(/^prep,,0,noop,ping,\{\},"""pong""",ok,,\d{4}-\d\d-\d\dT[^,]+Z,\d{4}-[^,]+Z,\d+$/);
    expect(lines[2]).toMatch(/^main,1,0,stirrer,set_speed,"\{""rpm"":100\}",100,ok,/);
    expect(lines.at(-1)).toMatch(/^cleanup,,0,stirrer,stop,/);
  });

  it('neutralises formula-looking cells', async () => {
    const id = await record();
    await lab.runtime.store.steps.insert({
      runId: id,
      phase: 'main',
      iteration: 0,
      stepIndex: 0,
      instrument: '@evil',
      method: 'run',
      args: {},
      output: null,
      status: 'error',
      error: '=HYPERLINK("http://x")',
      userId: null,
      startedAt: new Date(),
      endedAt: new Date(),
    });
    const res = await lab.admin.get(`/app/executions/records/${id}/steps_data_csv`).expect(200);
    expect(res.text).toContain(`'@evil,run`);
    expect(res.text).toContain(`"'=HYPERLINK(""http://x"")"`);
  });

  it('streams a large run (chunked, no Content-Length) with every row', async () => {
    const id = await record();
    const N = 20_000;
    const cols = `("run_id", "phase", "iteration", "step_index", "instrument", "method", "args", "output", "status", "started_at", "ended_at")`;
    const ts = usingPostgres() ? `'2024-01-01T00:00:00Z'` : `'2024-01-01 00:00:00.000'`;
    const vals = `${id}, 'main', n / 10, n % 10, 'noop', 'ping', '{}', '"pong"', 'ok', ${ts}, ${ts}`;
    const ds = dataSourceOf(lab.runtime.store);
    if (usingPostgres()) await ds.query(`INSERT INTO "steps" ${cols} SELECT ${vals} FROM generate_series(0, ${N - 1}) AS n`);
    else await ds.query(`WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < ${N - 1}) INSERT INTO "steps" ${cols} SELECT ${vals} FROM seq`);
    const res = await lab.admin.get(`/app/executions/records/${id}/steps_data_csv`).expect(200);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const lines = res.text.trimEnd().split('\r\n');
    expect(lines).toHaveLength(N + 1);
    expect(lines[1]).toMatch(/^main,1,0,noop,ping,\{\},"""pong""",ok,,/);
    expect(lines[N]).toMatch(new RegExp(`^main,${Math.floor((N - 1) / 10) + 1},9,noop,ping,`));
    expect(lines[N]).toMatch(/,0$/); // duration_ms
  });

  it('answers 404 for an unknown record, 400 for a bad id', async () => {
    const res = await lab.admin.get('/app/executions/records/999999/steps_data_csv').set('Accept', J).expect(404);
    expect(res.body.error.code).toBe('not_found');
    await lab.admin.get('/app/executions/records/x/steps_data_csv').set('Accept', J).expect(400);
  });
});

describe('GET /executions/records/{workflow_id}/logs', () => {
  it('downloads the log: one line per entry with ISO time, level and message', async () => {
    const res = await lab.admin.get(`/app/executions/records/${failed}/logs`).expect(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="?run-${failed}\\.log"?$`));
    const lines = res.text.trimEnd().split('\n');
    for (const l of lines) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (INFO |WARN |ERROR) \S/);
    expect(lines[0]).toContain('INFO  Started rec-jam');
    expect(lines.some((l) => /ERROR Step main\[1\] failed/.test(l))).toBe(true);
  });

  it('answers 404 when the record or its log does not exist, 400 for a bad id', async () => {
    const quiet = await record({ log: false });
    const res = await lab.admin.get(`/app/executions/records/${quiet}/logs`).set('Accept', J).expect(404);
    expect(res.body.error.message).toContain('log file');
    expect(res.body.error.message).toContain('does not exist');
    const missing = await lab.admin.get('/app/executions/records/999999/logs').set('Accept', J).expect(404);
    expect(missing.body.error.message).toContain('no workflow record');
    await lab.admin.get('/app/executions/records/0/logs').set('Accept', J).expect(400);
  });
});

describe('GET /executions/data/{workflow_id}', () => {
  it('answers the main iterations normalised for plotting', async () => {
    const res = await lab.admin.get(`/app/executions/data/${good}`).expect(200);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.body).toEqual({
      run_id: good,
      workflow: 'rec-stir',
      parameters: ['rpm'],
      outputs: ['speed', 'echo'],
      iterations: [100, 200, 300].map((rpm, i) => ({ iteration: i, params: { rpm }, outputs: { speed: rpm, echo: 'pong' }, status: 'ok' })),
      series: { rpm: [100, 200, 300], speed: [100, 200, 300], echo: [null, null, null] },
    });
    const jam = await lab.admin.get(`/app/executions/data/${failed}`).expect(200);
    expect(jam.body.series).toEqual({ dosed: [null] }); // the dose failed and was skipped: no output
  });

  it('answers 404 for an unknown record, 400 for a bad id', async () => {
    await lab.admin.get('/app/executions/data/999999').expect(404);
    const bad = await lab.admin.get('/app/executions/data/x').set('Accept', J).expect(400);
    expect(bad.body.error.details[0].field).toBe('workflow_id');
  });
});

describe('DELETE /executions/records/{workflow_id}', () => {
  it("lets the owner delete: the record, its steps and its log are gone, and it's audit-logged", async () => {
    const id = await record({ userId: olgaId });
    await lab.runtime.store.steps.insert({
      runId: id,
      phase: 'main',
      iteration: 0,
      stepIndex: 0,
      instrument: 'noop',
      method: 'ping',
      args: {},
      output: 'pong',
      status: 'ok',
      error: null,
      userId: olgaId,
      startedAt: new Date(),
      endedAt: new Date(),
    });
    const res = await operator.delete(`/app/executions/records/${id}`).set('Accept', J).expect(200);
    expect(res.body).toEqual({ deleted: id });
    await operator.get(`/app/executions/records/${id}`).set('Accept', J).expect(404);
    await operator.delete(`/app/executions/records/${id}`).set('Accept', J).expect(404);
    expect(await lab.runtime.store.runSteps.list(id)).toEqual([]);
    expect(await lab.runtime.store.logs.list(id)).toEqual([]);
    const audit = await lab.runtime.store.audit.list(20);
    expect(audit.find((a) => a.action === 'record.delete' && (a.detail as { run_id: number }).run_id === id)?.userId).toBe(olgaId);
  });

  it("refuses another user's record (403) to an operator, but lets an admin delete it", async () => {
    const id = await record({ userId: olgaId });
    const adas = await record({ userId: adaId });
    const headless = await record({ userId: null });
    const res = await operator.delete(`/app/executions/records/${adas}`).set('Accept', J).expect(403);
    expect(res.body.error.code).toBe('forbidden');
    await operator.delete(`/app/executions/records/${headless}`).set('Accept', J).expect(403);
    await operator.get(`/app/executions/records/${adas}`).set('Accept', J).expect(200);
    await lab.admin.delete(`/app/executions/records/${id}`).set('Accept', J).expect(200);
    await lab.admin.delete(`/app/executions/records/${headless}`).set('Accept', J).expect(200);
  });

  it('refuses (409) the run in progress, and deletes it once it has finished', async () => {
    const { runtime } = lab;
    await runtime.store.workflows.save('rec-hold', { name: 'rec-hold', main: [{ kind: 'pause', message: 'hold on' }] }, adaId);
    const task = await runtime.runner.submit({ workflow: 'rec-hold', repeat: 1, userId: adaId });
    await until('the pause step', () => runtime.runner.status().waiting !== null);
    const runId = runtime.runner.status().current_task!.run_id!;
    const res = await lab.admin.delete(`/app/executions/records/${runId}`).set('Accept', J).expect(409);
    expect(res.body.error.message).toContain('in progress');
    await runtime.runner.pauseResume();
    // done in the queue, and let go by the runner (a moment later: then it is no longer the current task)
    await until('the task to end', async () => (await runtime.store.queue.get(task.id))!.status === 'done' && runtime.runner.status().current_task === null);
    await lab.admin.delete(`/app/executions/records/${runId}`).set('Accept', J).expect(200);
  });

  it("answers the page's htmx form with HX-Redirect, and an error as a fragment", async () => {
    const id = await record();
    const res = await lab.admin.delete(`/app/executions/records/${id}`).set('HX-Request', 'true').expect(200);
    expect(res.headers['hx-redirect']).toBe(`/app/executions/records?deleted=${id}`);
    const list = await lab.admin.get(`/app/executions/records?deleted=${id}`).expect(200);
    expect(list.text).toContain(`Record ${id} was deleted.`);
    const adas = await record();
    const denied = await operator.delete(`/app/executions/records/${adas}`).set('HX-Request', 'true').expect(403);
    expect(denied.text).toContain('only its owner or an admin may delete it');
    expect(denied.text).not.toContain('<html');
  });

  it('answers 400 for a bad id and 404 for an unknown record', async () => {
    const bad = await lab.admin.delete('/app/executions/records/abc').set('Accept', J).expect(400);
    expect(bad.body.error.details[0].field).toBe('workflow_id');
    await lab.admin.delete('/app/executions/records/999999').set('Accept', J).expect(404);
  });

  it('refuses a cross-site delete with a session cookie (403)', async () => {
    const id = await record();
    await lab.admin.delete(`/app/executions/records/${id}`).set('Origin', 'http://evil.example').set('Accept', J).expect(403);
    await lab.admin.get(`/app/executions/records/${id}`).set('Accept', J).expect(200);
  });
});
