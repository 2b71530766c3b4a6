/**
 * The "Workflow execution" routes (DESIGN.md §5, §7) over HTTP, on the demo deck: starting runs (JSON, the
 * page's form, repeat), the queue, status and current task, the controls with their 409s, login, and the
 * live event stream read from a real socket.
 */
import type { Server } from 'node:http';
import request from 'supertest';
import type { RunnerEvent, RunnerState } from '../../core/runner/index.js';
import { startLab, type TestLab } from './helpers.js';
import { takeEvents } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const J = 'application/json';

/** A task that stays running: a ping, then a pause step waiting for the operator. */
const HOLD = {
  name: 'hold',
  parameters: [{ name: 'v', type: 'number', default: 1 }],
  main: [
    { kind: 'call', instrument: 'noop', method: 'ping', save_as: 'pong' },
    { kind: 'pause', message: 'Check the vial' },
  ],
  outputs: ['pong'],
};
/** Quick: one ping per iteration. */
const PING = { name: 'ping', parameters: [{ name: 'v', type: 'number', default: 1 }], main: [{ kind: 'call', instrument: 'noop', method: 'ping', save_as: 'pong' }], outputs: ['pong'] };
/** Fails at run time unless v > 100: the variable `x` is only saved in the branch not taken. */
const FAILS = {
  name: 'fails',
  parameters: [{ name: 'v', type: 'number', default: 1 }],
  main: [
    { kind: 'if', condition: { left: { param: 'v' }, op: '>', right: { value: 100 } }, then: [{ kind: 'call', instrument: 'noop', method: 'ping', save_as: 'x' }] },
    { kind: 'call', instrument: 'stirrer', method: 'set_speed', args: { rpm: { var: 'x' } } },
  ],
};

/** A wait step (the runner is `running` through it), then a ping. */
const SLOW = {
  name: 'slow',
  main: [
    { kind: 'wait', seconds: 1.5 },
    { kind: 'call', instrument: 'noop', method: 'ping' },
  ],
};

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab();
  for (const wf of [HOLD, PING, FAILS, SLOW]) await lab.admin.post('/app/workflows').set('Accept', J).send(wf).expect(201);
});
afterAll(() => lab.close());

/** Leave the runner idle, its queue empty and released, between tests. */
afterEach(async () => {
  const runner = lab.runtime.runner;
  const clean = async () => {
    const s = runner.status();
    return !s.busy && !s.queue_held && !s.paused && (await runner.queue()).tasks.length === 0;
  };
  for (let i = 0; i < 20 && !(await clean()); i++) {
    if (runner.status().busy) {
      await runner.abortNextTask();
      await until(() => !runner.status().busy, 'the task to end');
    }
    // a task the runner takes meanwhile answers 409: the next round aborts it
    for (const t of (await runner.queue()).tasks) await runner.deleteTask(t.id).catch(() => undefined);
    if (runner.status().queue_held || runner.status().paused) await runner.pauseResume();
  }
  expect(await clean()).toBe(true);
});

const until = (cond: () => boolean | Promise<boolean>, what: string, ms = 4000) => waitFor(cond, what, ms, 5);

const api = {
  submit: (body: Record<string, unknown>) => lab.admin.post('/app/executions/config').set('Accept', J).send(body),
  status: async () => (await lab.admin.get('/app/executions/status').set('Accept', J).expect(200)).body,
  queue: async () => (await lab.admin.get('/app/executions/queue').set('Accept', J).expect(200)).body,
  control: (path: string) => lab.admin.post(`/app/executions/${path}`).set('Accept', J),
};

const state = (s: RunnerState) => until(async () => (await api.status()).state === s, `state ${s}`);

/** Submit `hold`, wait until it waits at its pause step; then queue `pending` ping tasks behind it. */
async function holding(pending = 0): Promise<{ id: number; more: number[] }> {
  const { body } = await api.submit({ workflow: 'hold', repeat: 1 }).expect(200);
  await until(async () => (await api.status()).waiting !== null, 'the pause step');
  const more: number[] = [];
  for (let i = 0; i < pending; i++) more.push((await api.submit({ workflow: 'ping', repeat: 1, name: `p${i}` }).expect(200)).body.task_id);
  return { id: body.task_id, more };
}

const taskStatus = async (id: number) => (await lab.admin.get(`/app/executions/queue/task/${id}`).set('Accept', J).expect(200)).body.status;
const ended = (id: number) => until(async () => !['pending', 'running'].includes(await taskStatus(id)), `task ${id} to end`);

describe('POST /executions/config', () => {
  it('JSON config rows: 200 { task_id, status }, the task runs over the rows', async () => {
    const res = await api.submit({ workflow: 'ping', config: [{ v: 1 }, { v: '2.5' }], name: 'two pings' }).expect(200);
    expect(res.body).toEqual({ task_id: expect.any(Number), status: expect.stringMatching(/^(queued|running)$/) });
    await ended(res.body.task_id);
    const task = (await lab.admin.get(`/app/executions/queue/task/${res.body.task_id}`).set('Accept', J).expect(200)).body;
    expect(task).toMatchObject({ id: res.body.task_id, name: 'two pings', kind: 'workflow', status: 'done', workflow: 'ping', iterations: 2, created_by: expect.any(Number) });
    expect(task.payload.rows).toEqual([{ v: 1 }, { v: 2.5 }]);
    const run = (await lab.runtime.store.runs.get(task.run_id))!;
    expect(run.status).toBe('completed');
  });

  it('repeat: n iterations of the defaults', async () => {
    const res = await api.submit({ workflow: 'ping', repeat: 3 }).expect(200);
    await ended(res.body.task_id);
    const task = (await lab.admin.get(`/app/executions/queue/task/${res.body.task_id}`).expect(200)).body;
    expect(task.payload.repeat).toEqual({ times: 3, row: { v: 1 } }); // a count, not three rows
  });

  it("the page's form: typed rows (rows[i][param]) or a repeat count; errors re-render the page with 400", async () => {
    const rows = await lab.admin.post('/app/executions/config').type('form').send({ workflow: 'ping', 'rows[0][v]': '4', 'rows[1][v]': '', 'rows[2][v]': '6' }).expect(200);
    expect(rows.type).toBe('text/html');
    const id = Number(/Task (\d+)/.exec(rows.text)?.[1]);
    expect(id).toBeGreaterThan(0);
    await ended(id);
    expect((await lab.admin.get(`/app/executions/queue/task/${id}`).expect(200)).body.payload.rows).toEqual([{ v: 4 }, { v: 6 }]);

    const repeat = await lab.admin.post('/app/executions/config').type('form').send({ workflow: 'ping', repeat: '2', 'rows[0][v]': '9' }).expect(200);
    const rid = Number(/Task (\d+)/.exec(repeat.text)?.[1]);
    await ended(rid);
    expect((await lab.admin.get(`/app/executions/queue/task/${rid}`).expect(200)).body.payload.repeat).toEqual({ times: 2, row: { v: 1 } });

    const bad = await lab.admin.post('/app/executions/config').type('form').send({ workflow: 'ping', 'rows[0][v]': 'lots' }).expect(400);
    expect(bad.type).toBe('text/html');
    expect(bad.text).toContain('row 1, column v');
  });

  it('400 naming row and column; 400 for config and repeat both or neither; 404 for an unknown workflow', async () => {
    const bad = await api.submit({ workflow: 'ping', config: [{ v: 1 }, { v: 'lots' }, { w: 2 }] }).expect(400);
    expect(bad.body.error.code).toBe('invalid_input');
    expect(bad.body.error.details).toEqual(expect.arrayContaining([{ field: 'row 2, column v', message: '"lots" is not a number' }, expect.objectContaining({ field: 'row 3, column w' })]));
    expect((await api.submit({ workflow: 'ping' }).expect(400)).body.error.details[0].field).toBe('config');
    expect((await api.submit({ workflow: 'ping', config: [{ v: 1 }], repeat: 2 }).expect(400)).body.error.details[0].field).toBe('repeat');
    expect((await api.submit({ workflow: 'ping', repeat: 0 }).expect(400)).body.error.details[0].field).toBe('repeat');
    expect((await api.submit({ repeat: 1 }).expect(400)).body.error.details[0].field).toBe('workflow');
    const unknown = await api.submit({ workflow: 'no-such', repeat: 1 }).expect(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found', details: [{ field: 'workflow', message: 'unknown workflow' }] });
    expect((await api.queue()).tasks).toEqual([]);
  });

  it('refuses a field it does not take with 400 naming it (batch_size, as an ivoryOS example sends); nothing is queued', async () => {
    // issue 11 item 5: a run over config rows has no batches (a campaign does: POST /executions/campaign)
    const res = await api.submit({ workflow: 'ping', config: [{ v: 1 }], batch_size: 2 }).expect(400);
    expect(res.body.error.code).toBe('invalid_input');
    expect(res.body.error.details).toEqual([{ field: 'batch_size', message: expect.stringContaining('is not a field of this request') }]);
    expect(res.body.error.message).toContain('batch_size');
    // the page's form likewise, with the page again and the message; its typed rows pass, other fields do not
    const page = await lab.admin.post('/app/executions/config').type('form').send({ workflow: 'ping', 'rows[0][v]': '4', batch_size: '2' }).expect(400);
    expect(page.type).toBe('text/html');
    expect(page.text).toContain('batch_size');
    expect(page.text).toContain('value="4"');
    // typed rows are the form's: a JSON body sends config
    const json = await api.submit({ workflow: 'ping', 'rows[0][v]': '4' }).expect(400);
    expect(json.body.error.details[0].field).toBe('rows[0][v]');
    expect((await api.queue()).tasks).toEqual([]);
  });
});

describe('the queue', () => {
  it('lists unfinished tasks in order with the runner flags; a task with its payload; 404/400 for bad ids', async () => {
    const { id, more } = await holding(2);
    const q = await api.queue();
    expect(q).toMatchObject({ paused: false, queue_held: false, current_task_id: id });
    expect(q.tasks.map((t: { id: number; status: string }) => [t.id, t.status])).toEqual([
      [id, 'running'],
      [more[0], 'pending'],
      [more[1], 'pending'],
    ]);
    expect(q.tasks[0]).not.toHaveProperty('payload');
    const one = (await lab.admin.get(`/app/executions/queue/task/${more[0]}`).set('Accept', J).expect(200)).body;
    expect(one).toMatchObject({ id: more[0], name: 'p0', status: 'pending', payload: { workflow: 'ping', version: 1, repeat: { times: 1, row: { v: 1 } } } });
    expect((await lab.admin.get('/app/executions/queue/task/999999').set('Accept', J).expect(404)).body.error.code).toBe('not_found');
    expect((await lab.admin.get('/app/executions/queue/task/abc').set('Accept', J).expect(400)).body.error.details[0].field).toBe('task_id');
  });

  it('delete: a pending task 200; the running task 409; unknown 404; a bad id 400', async () => {
    const { id, more } = await holding(2);
    expect((await lab.admin.post('/app/executions/queue/delete').send({ id: more[0] }).expect(200)).body).toEqual({ deleted: more[0] });
    expect((await api.queue()).tasks.map((t: { id: number }) => t.id)).toEqual([id, more[1]]);
    const running = await lab.admin.post('/app/executions/queue/delete').send({ id }).expect(409);
    expect(running.body.error.code).toBe('conflict');
    expect(running.body.state).toBe('paused');
    await lab.admin.post('/app/executions/queue/delete').send({ id: 999999 }).expect(404);
    expect((await lab.admin.post('/app/executions/queue/delete').send({ id: 'x' }).expect(400)).body.error.details[0].field).toBe('id');
  });

  it('reorder: up, down, top, bottom; a bad direction 400; the running task 409; unknown 404', async () => {
    const { id, more } = await holding(3);
    const [a, b, c] = more;
    const order = async (direction: string, task: number) =>
      (await lab.admin.post('/app/executions/queue/reorder').send({ id: task, direction }).expect(200)).body.tasks.map((t: { id: number }) => t.id);
    expect(await order('up', c)).toEqual([id, a, c, b]);
    expect(await order('down', a)).toEqual([id, c, a, b]);
    expect(await order('bottom', c)).toEqual([id, a, b, c]);
    expect(await order('top', b)).toEqual([b, id, a, c]); // before the running task too: the next to run is still b
    const bad = await lab.admin.post('/app/executions/queue/reorder').send({ id: a, direction: 'sideways' }).expect(400);
    expect(bad.body.error.details[0].field).toBe('direction');
    expect((await lab.admin.post('/app/executions/queue/reorder').send({ id, direction: 'down' }).expect(409)).body.error.code).toBe('conflict');
    await lab.admin.post('/app/executions/queue/reorder').send({ id: 999999, direction: 'up' }).expect(404);
    // the queue runs in its new order once the held task ends
    await api.control('pause-resume').expect(200);
    for (const t of [b, a, c]) await ended(t);
    const started = await Promise.all([b, a, c].map(async (t) => (await lab.runtime.store.queue.get(t))!.startedAt!.getTime()));
    expect(started).toEqual([...started].sort((x, y) => x - y));
  });

  it('rename: a pending or the running task; empty name 400; unknown 404', async () => {
    const { id, more } = await holding(1);
    const res = await lab.admin.post('/app/executions/queue/task/rename').send({ id: more[0], new_name: 'renamed' }).expect(200);
    expect(res.body).toMatchObject({ id: more[0], name: 'renamed', status: 'pending' });
    await lab.admin.post('/app/executions/queue/task/rename').send({ id, new_name: 'now running' }).expect(200);
    expect((await api.status()).current_task.name).toBe('now running');
    expect((await lab.admin.post('/app/executions/queue/task/rename').send({ id, new_name: '' }).expect(400)).body.error.details[0].field).toBe('new_name');
    await lab.admin.post('/app/executions/queue/task/rename').send({ id: 999999, new_name: 'x' }).expect(404);
  });
});

describe('status and current task', () => {
  it('idle: not busy, no current task', async () => {
    expect(await api.status()).toMatchObject({ busy: false, state: 'idle', paused: false, queue_held: false, current_task: null, failed_step: null, waiting: null, interrupted: null });
    expect((await lab.admin.get('/app/executions/current_task').set('Accept', J).expect(200)).body).toMatchObject({ current_task: null, state: 'idle' });
  });

  it('while a task runs: its name, progress, the pause step it waits at; current_task has its payload', async () => {
    const { id } = await holding();
    const s = await api.status();
    expect(s).toMatchObject({
      busy: true,
      state: 'paused',
      current_task: { id, name: 'hold × 1', workflow: 'hold', run_id: expect.any(Number) },
      waiting: { path: 'main[1]', message: 'Check the vial' },
    });
    expect(s.progress).toMatchObject({ phase: 'main', iteration: 1, iterations: 1, step: 1, steps: 2 });
    const cur = (await lab.admin.get('/app/executions/current_task').set('Accept', J).expect(200)).body;
    expect(cur).toMatchObject({ state: 'paused', current_task: { id, status: 'running', payload: { workflow: 'hold', repeat: { times: 1, row: { v: 1 } } } }, waiting: { message: 'Check the vial' } });
  });

  it('GET /executions/config as JSON lists the workflows and the status', async () => {
    const res = await lab.admin.get('/app/executions/config').set('Accept', J).expect(200);
    expect(res.body.workflows.map((w: { name: string }) => w.name)).toEqual(expect.arrayContaining(['fails', 'hold', 'ping']));
    expect(res.body.status).toMatchObject({ state: 'idle' });
    const page = await lab.admin.get('/app/executions/config?workflow=hold').expect(200);
    expect(page.type).toBe('text/html');
    // the campaign link keeps the workflow chosen
    expect(page.text).toContain('<a href="/app/executions/campaign?workflow=hold">start an optimization campaign on hold</a>');
  });
});

describe('controls', () => {
  it('idle: retry and both aborts are 409 with the state; pause-resume toggles the flag', async () => {
    for (const path of ['retry', 'abort/next-iteration', 'abort/next-task']) {
      const res = await api.control(path).expect(409);
      expect(res.body).toMatchObject({ error: { code: 'conflict' }, state: 'idle' });
    }
    expect((await api.control('pause-resume').expect(200)).body).toMatchObject({ paused: true, state: 'idle' });
    // no run starts while the queue is paused: none is heard of before the operator resumes it
    const started: number[] = [];
    const onEvent = (e: RunnerEvent) => void (e.type === 'run' && started.push(e.task_id));
    lab.runtime.runner.on('event', onEvent);
    const { body } = await api.submit({ workflow: 'ping', repeat: 1 }).expect(200);
    expect(body.status).toBe('queued');
    expect(await taskStatus(body.task_id)).toBe('pending');
    expect((await api.status()).paused).toBe(true);
    expect(started).toEqual([]);
    lab.runtime.runner.off('event', onEvent);
    expect((await api.control('pause-resume').expect(200)).body.paused).toBe(false);
    await ended(body.task_id);
    expect(await taskStatus(body.task_id)).toBe('done');
  });

  it('a pause step: pause-resume continues it; retry is 409', async () => {
    const { id } = await holding();
    expect((await api.control('retry').expect(409)).body.state).toBe('paused');
    await api.control('pause-resume').expect(200);
    await ended(id);
    expect(await taskStatus(id)).toBe('done');
  });

  it('a failed step: retry re-runs it (fails again), pause-resume skips it', async () => {
    const { body } = await api.submit({ workflow: 'fails', repeat: 1 }).expect(200);
    await state('failed');
    const s = await api.status();
    expect(s.failed_step).toMatchObject({ phase: 'main', path: 'main[1]', error: expect.stringContaining('"x" is not set') });
    // the answer already shows the task going on (a client that reads "failed" here would retry again)
    expect((await api.control('retry').expect(200)).body).toMatchObject({ state: 'running', failed_step: null });
    await state('failed');
    await api.control('pause-resume').expect(200);
    await ended(body.task_id);
    expect(await taskStatus(body.task_id)).toBe('done');
  });

  it('abort next-task: aborted, the queue held with its pending tasks; pause-resume releases it', async () => {
    const { id, more } = await holding(1);
    expect((await api.control('abort/next-task').expect(200)).body.queue_held).toBe(true);
    await ended(id);
    expect(await taskStatus(id)).toBe('aborted');
    expect(await api.status()).toMatchObject({ busy: false, queue_held: true });
    expect((await api.queue()).tasks.map((t: { id: number; status: string }) => [t.id, t.status])).toEqual([[more[0], 'pending']]);
    expect((await api.control('pause-resume').expect(200)).body.queue_held).toBe(false);
    await ended(more[0]);
    expect(await taskStatus(more[0])).toBe('done');
  });

  it('abort next-iteration: stopped, the queue goes on', async () => {
    const { body } = await api.submit({ workflow: 'hold', repeat: 3 }).expect(200);
    await until(async () => (await api.status()).waiting !== null, 'the pause step');
    const next = (await api.submit({ workflow: 'ping', repeat: 1 }).expect(200)).body.task_id;
    await api.control('abort/next-iteration').expect(200);
    await ended(body.task_id);
    expect(await taskStatus(body.task_id)).toBe('stopped');
    await ended(next);
    expect(await taskStatus(next)).toBe('done');
    const run = (await lab.runtime.store.runs.get((await lab.runtime.store.queue.get(body.task_id))!.runId!))!;
    expect(run.status).toBe('stopped');
  });

  it('takes no fields: a field sent to a control or the queue routes is refused by name, and nothing is done', async () => {
    for (const path of ['pause-resume', 'pause', 'resume', 'continue', 'skip', 'release', 'retry', 'abort/next-iteration', 'abort/next-task']) {
      const res = await api.control(path).send({ force: true }).expect(400);
      // the controls of a running task take one field, task_id (needed while several run); release takes none
      const takes = path === 'release' ? '(it takes none)' : '(its fields: task_id)';
      expect([path, res.body.error.details]).toEqual([path, [{ field: 'force', message: expect.stringContaining(takes) }]]);
    }
    expect(await api.status()).toMatchObject({ state: 'idle', paused: false, queue_held: false });
    const { more } = await holding(1);
    const stray = await lab.admin.post('/app/executions/queue/delete').set('Accept', J).send({ id: more[0], direction: 'up' }).expect(400);
    expect(stray.body.error.details).toEqual([{ field: 'direction', message: expect.stringContaining('its fields: id') }]);
    expect((await api.queue()).tasks.map((t: { id: number }) => t.id)).toContain(more[0]);
  });

  it('every control is audit-logged with who did it', async () => {
    await api.control('pause-resume').expect(200);
    await api.control('pause-resume').expect(200);
    const audit = await lab.runtime.store.audit.list(10);
    expect(audit.find((a) => a.action === 'runner.pause-resume')).toMatchObject({ userId: expect.any(Number) });
  });
});

/* ------------------------------------------------- the page, as the runner is */

/** The execution page as rendered now, read the way a scientist reads it. */
async function runPage() {
  const html = (await lab.admin.get('/app/executions/config').expect(200)).text;
  const tags = [...html.matchAll(/<button[^>]*data-control-name="([^"]+)"[^>]*>([^<]*)<\/button>/g)];
  const state = /<span id="live-state"[^>]*>([^<]*)<\/span>/.exec(html)?.[1];
  const row = (id: number) => new RegExp(`<tr data-task="${id}">(?:<td>[^<]*</td>){4}<td class="queue-status">([^<]*)</td>`).exec(html)?.[1];
  return {
    html,
    state,
    /** the words on every control button, in order */
    words: tags.map((t) => t[2]),
    /** the controls not disabled */
    enabled: tags.filter((t) => !/ disabled=""/.test(t[0])).map((t) => t[1]),
    row,
  };
}

/** The enabled controls after `GET /executions/config`, and that each of the others answers 409 (doing nothing). */
async function refusedExcept(enabled: string[]) {
  const routes: Record<string, string> = { pause: 'pause', resume: 'resume', continue: 'continue', skip: 'skip', release: 'release', retry: 'retry' };
  const before = await api.status();
  for (const [name, path] of Object.entries(routes)) {
    if (enabled.includes(name)) continue;
    const res = await api.control(path);
    expect([name, res.status, res.body.state]).toEqual([name, 409, before.state]);
  }
  expect(await api.status()).toEqual(before);
}

describe('the execution page shows the runner as it is', () => {
  it('idle: says idle, every control is there in its own words, and none is enabled', async () => {
    const p = await runPage();
    expect(p.state).toBe('idle');
    expect(p.words).toEqual([
      'Pause',
      'Resume',
      'Continue',
      'Retry the failed step',
      'Skip the failed step',
      'Release the held queue',
      'Stop after this iteration',
      'Abort the task',
      'Re-run the iteration',
      'Retry the step only',
    ]);
    expect(p.enabled).toEqual([]);
    await refusedExcept([]);
  });

  it('running: Pause; once paused, the queue and the state say so (not running) and Resume goes on', async () => {
    const { body } = await api.submit({ workflow: 'slow', repeat: 1 }).expect(200);
    await until(async () => (await api.status()).progress.phase === 'main', 'the wait step');
    let p = await runPage();
    expect([p.state, p.row(body.task_id)]).toEqual(['running', 'running']);
    expect(p.enabled).toEqual(['pause', 'stop-iteration', 'abort-task']);
    await refusedExcept(['pause']);

    expect((await api.control('pause').expect(200)).body).toMatchObject({ paused: true, state: 'running' });
    p = await runPage(); // the wait goes on: no new step starts after it
    expect([p.state, p.row(body.task_id)]).toEqual(['pausing after this step', 'pausing after this step']);
    expect(p.enabled).toEqual(['resume', 'stop-iteration', 'abort-task']);
    await state('paused');
    p = await runPage();
    expect([p.state, p.row(body.task_id)]).toEqual(['paused', 'paused']);
    expect(p.enabled).toEqual(['resume', 'stop-iteration', 'abort-task']);
    await refusedExcept(['resume']);

    await api.control('resume').expect(200);
    await ended(body.task_id);
    expect(await taskStatus(body.task_id)).toBe('done');
  });

  it('a pause step: waiting at it, Continue goes on; then the page links the record of the run that ended', async () => {
    const { id } = await holding(1);
    let p = await runPage();
    expect([p.state, p.row(id)]).toEqual(['waiting at a pause step', 'waiting at a pause step']);
    expect(p.enabled).toEqual(['continue', 'stop-iteration', 'abort-task']);
    expect(p.html).toContain('Waiting at a pause step: Check the vial. Continue when it is done.');
    await refusedExcept(['continue']);

    await api.control('continue').expect(200);
    await ended(id);
    // not an idle moment between two tasks: the queue empty and nothing running
    await until(async () => !(await api.status()).busy && (await lab.runtime.runner.queue()).tasks.length === 0, 'the queue to empty');
    const runId = (await lab.runtime.store.queue.get(id))!.runId!;
    p = await runPage();
    expect(p.state).toBe('idle');
    expect(p.enabled).toEqual([]);
    // the last run to end is the ping queued behind; the held one has its record too
    const last = (await lab.runtime.store.runs.list({ page: 1, perPage: 1 })).rows[0];
    expect(last.id).toBeGreaterThan(runId);
    expect(p.html).toMatch(new RegExp(`Last run: <a href="/app/executions/records/${last.id}">run ${last.id}</a> \\(p0\\) completed\\.`));
  });

  it('a failed step: waits for a decision; Pause does not skip it (409); Skip the failed step goes on without it', async () => {
    const { body } = await api.submit({ workflow: 'fails', repeat: 1 }).expect(200);
    await state('failed');
    const p = await runPage();
    expect([p.state, p.row(body.task_id)]).toEqual(['failed step waiting for a decision', 'failed step waiting for a decision']);
    expect(p.enabled).toEqual(['retry', 'skip', 'stop-iteration', 'abort-task']);
    await refusedExcept(['retry', 'skip']);
    expect((await api.control('pause').expect(409)).body.error.message).toBe('Pause does nothing now: the runner is failed step waiting for a decision.');

    expect((await api.control('skip').expect(200)).body.paused).toBe(false);
    await ended(body.task_id);
    const run = (await lab.runtime.store.runs.get((await lab.runtime.store.queue.get(body.task_id))!.runId!))!;
    expect(run).toMatchObject({ status: 'completed', skipped: 1 });
    expect((await runPage()).html).toMatch(new RegExp(`Last run: <a href="/app/executions/records/${run.id}">run ${run.id}</a> \\(fails × 1\\) completed with 1 skipped step\\.`));
  });

  it('a held queue: says so, pending tasks wait for it, only Release the held queue is enabled, and it releases', async () => {
    const { id, more } = await holding(1);
    await api.control('abort/next-task').expect(200);
    await ended(id);
    const p = await runPage();
    expect([p.state, p.row(more[0])]).toEqual(['queue held', 'pending (queue held)']);
    expect(p.enabled).toEqual(['release']);
    await refusedExcept(['release']);
    expect((await api.control('release').expect(200)).body.queue_held).toBe(false);
    await ended(more[0]);
    expect(await taskStatus(more[0])).toBe('done');
    expect((await runPage()).enabled).toEqual([]);
  });

  it("the form's note follows the task: queued behind a held queue, never 'running' before it runs", async () => {
    await api.control('pause-resume').expect(200); // idle: the flag holds the queue
    const res = await lab.admin.post('/app/executions/config').type('form').send({ workflow: 'ping', repeat: '1' }).expect(200);
    const id = Number(/Task (\d+)/.exec(res.text)?.[1]);
    expect(res.text).toContain(`Task ${id} (ping × 1) is queued: the queue is held.`);
    expect(res.text).not.toContain('is running');
    expect(res.text).toContain(`data-task="${id}"`); // the page script follows it from here
    await api.control('release').expect(200);
    await ended(id);
  });
});

describe('login', () => {
  it('every execution route answers 401 JSON without a session', async () => {
    const anon = request(lab.app);
    const routes: [string, string][] = [
      ['get', '/app/executions/status'],
      ['get', '/app/executions/current_task'],
      ['get', '/app/executions/queue'],
      ['get', '/app/executions/queue/task/1'],
      ['get', '/app/executions/events'],
      ['post', '/app/executions/config'],
      ['post', '/app/executions/queue/delete'],
      ['post', '/app/executions/queue/reorder'],
      ['post', '/app/executions/queue/task/rename'],
      ['post', '/app/executions/pause-resume'],
      ['post', '/app/executions/pause'],
      ['post', '/app/executions/resume'],
      ['post', '/app/executions/continue'],
      ['post', '/app/executions/skip'],
      ['post', '/app/executions/release'],
      ['post', '/app/executions/retry'],
      ['post', '/app/executions/abort/next-iteration'],
      ['post', '/app/executions/abort/next-task'],
    ];
    for (const [method, path] of routes) {
      const res = await (method === 'get' ? anon.get(path) : anon.post(path).send({})).set('Accept', J);
      expect([path, res.status]).toEqual([path, 401]);
      expect(res.body.error.code).toBe('unauthenticated');
    }
    // a page asks for a login instead
    expect((await anon.get('/app/executions/config')).status).toBe(302);
  });
});

describe('GET /executions/events', () => {
  let server: Server;
  let base: string;
  let token: string;
  beforeAll(async () => {
    token = (await lab.admin.post('/app/account/tokens').set('Accept', J).send({ name: 'sse' }).expect(201)).body.token;
    server = lab.app.listen(0);
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  /** Read server-sent events until `done` says so (or 15 s pass: a loaded CI machine on PostgreSQL took more than 5 once). */
  async function readEvents(done: (events: { event: string; data: Record<string, unknown> }[]) => boolean, started: () => Promise<void>) {
    const controller = new AbortController();
    const res = await fetch(`${base}/app/executions/events`, { headers: { Authorization: `Bearer ${token}` }, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const events: { event: string; data: Record<string, unknown> }[] = [];
    let buffer = '';
    let kicked = false;
    const timer = setTimeout(() => controller.abort(), 15_000);
    try {
      while (!done(events)) {
        const { value, done: end } = await reader.read();
        if (end) break;
        const got = takeEvents(buffer + decoder.decode(value, { stream: true }));
        buffer = got.rest;
        events.push(...got.events);
        if (!kicked && events.length > 0) {
          kicked = true; // the stream is open (hello came): now make something happen
          await started();
        }
      }
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
    return events;
  }

  it('streams hello, then the status, run, step, log, iteration and queue events of a run', async () => {
    let taskId = 0;
    // done once a status after the run's end says idle (a queue event may still follow it: on PostgreSQL the
    // queue's wake-ups come through NOTIFY, and one came after the last status there, so waiting for a status
    // to be the very last event waited for ever)
    const idleAfterRun = (ev: { event: string; data: Record<string, unknown> }[]) => {
      const end = ev.findIndex((e) => e.event === 'run' && e.data.task_id === taskId && e.data.status === 'completed');
      return end >= 0 && ev.slice(end + 1).some((e) => e.event === 'status' && (e.data.status as { busy?: boolean }).busy === false);
    };
    const events = await readEvents(idleAfterRun, async () => {
      taskId = (await api.submit({ workflow: 'ping', config: [{ v: 1 }, { v: 2 }] }).expect(200)).body.task_id;
    });
    expect(events[0]).toMatchObject({ event: 'hello', data: { type: 'hello', status: { state: 'idle' } } });
    const kinds = new Set(events.map((e) => e.event));
    for (const k of ['queue', 'status', 'run', 'step', 'log', 'iteration']) expect(kinds).toContain(k);
    const steps = events.filter((e) => e.event === 'step').map((e) => `${e.data.iteration}:${e.data.state}`);
    expect(steps).toEqual(['0:start', '0:ok', '1:start', '1:ok']);
    expect(events.find((e) => e.event === 'step' && e.data.state === 'ok')!.data).toMatchObject({ instrument: 'noop', method: 'ping', output: 'pong' });
    expect(events.filter((e) => e.event === 'iteration').map((e) => e.data.outputs)).toEqual([{ pong: 'pong' }, { pong: 'pong' }]);
    const runStart = events.findIndex((e) => e.event === 'run' && e.data.status === 'running');
    const firstStep = events.findIndex((e) => e.event === 'step');
    expect(runStart).toBeGreaterThan(0);
    expect(firstStep).toBeGreaterThan(runStart);
    expect(events.filter((e) => e.event === 'status').at(-1)!.data.status).toMatchObject({ busy: false, state: 'idle' });
  });

  it('says hello with the last run that ended, so a page opened after a run links its record', async () => {
    const { body } = await api.submit({ workflow: 'ping', repeat: 1 }).expect(200);
    await ended(body.task_id);
    await until(async () => !(await api.status()).busy, 'the runner to be idle');
    const runId = (await lab.runtime.store.queue.get(body.task_id))!.runId;
    const events = await readEvents(
      (ev) => ev.length > 0,
      async () => undefined,
    );
    expect(events[0]).toMatchObject({ event: 'hello', data: { last_run: { run_id: runId, name: 'ping × 1', status: 'completed', skipped: 0 } } });
  });

  it('is for logged-in users only (401 JSON)', async () => {
    const res = await fetch(`${base}/app/executions/events`, { headers: { Accept: J } });
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe('unauthenticated');
  });
});
