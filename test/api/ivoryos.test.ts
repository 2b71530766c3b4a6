/**
 * ivoryOS compatibility at /ivoryos (issue 15 item 1), driven as ivoryos-client 0.2.x drives ivoryOS 1.6:
 * the same methods, paths, bodies and headers (httpx accepts any type; it logs in with a form and keeps
 * the session cookie; calls post JSON with `hidden_name`, `hidden_wait` and flat keyword arguments), and as
 * the proxy file ivoryOS generates drives it (requests, no redirects followed, a 302 means log in again).
 * Against a real labdeck app on the demo deck, with a slow temporary instrument for background calls.
 */
import request from 'supertest';
import { PASSWORD, signupAndLogin, startLab, type TestLab } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

const ANY = '*/*';
const HTTPX = 'python-httpx/0.28.1';

let lab: TestLab;

/** One ivoryos-client: an httpx.Client (cookies kept) against `<lab>/ivoryos`, logged in as `username`. */
function ivoryosClient(username: string, password = PASSWORD) {
  const agent = request.agent(lab.app);
  const get = (path: string) => agent.get(`/ivoryos${path}`).set('Accept', ANY).set('User-Agent', HTTPX);
  const post = (path: string) => agent.post(`/ivoryos${path}`).set('Accept', ANY).set('User-Agent', HTTPX);
  /** `_check_authentication`: GET / without following redirects; unless 200, post the login form, following them. */
  const checkAuthentication = async () => {
    const home = await get('/').redirects(0);
    if (home.status === 200) return home;
    return post('/auth/login').type('form').send({ username, password }).redirects(5);
  };
  return { agent, get, post, checkAuthentication };
}
type Client = ReturnType<typeof ivoryosClient>;

const until = <T>(what: string, probe: () => Promise<T | undefined | false>, ms = 8000): Promise<T> => waitFor(probe, what, ms, 20) as Promise<T>;

/** `execute_task(component, method, kwargs, wait)`: the snapshot first, then the call. */
async function executeTask(c: Client, component: string, method: string, kwargs: Record<string, unknown> = {}, wait = true) {
  await c.checkAuthentication();
  const snapshot = (await c.get('/instruments').expect(200)).body as Record<string, unknown>;
  expect(Object.keys(snapshot)).toContain(component);
  const res = await c.post(`/instruments/${component}`).send({ ...kwargs, hidden_name: method, hidden_wait: wait });
  expect(res.status).toBe(200);
  return res;
}

/** Wait until the runner has nothing running or waiting (as a script polls get_execution_status). */
const idle = (c: Client) => until('the runner to be idle', async () => !(await c.get('/executions/status').expect(200)).body.busy);

const TEMPS = {
  name: 'temps',
  parameters: [{ name: 'celsius', type: 'number', default: 25 }],
  main: [{ kind: 'call', instrument: 'hotplate', method: 'set_temperature', args: { celsius: { param: 'celsius' } }, save_as: 'set' }],
  outputs: ['set'],
};
const PING = {
  name: 'ping-twice',
  main: [
    { kind: 'call', instrument: 'noop', method: 'ping', save_as: 'pong' },
    { kind: 'call', instrument: 'noop', method: 'ping' },
  ],
  outputs: ['pong'],
};
/** A workflow over the demo reactor: its yield is the output a campaign optimizes. */
const REACT = {
  name: 'react',
  parameters: [
    { name: 'temperature', type: 'number', default: 60 },
    { name: 'time', type: 'number', default: 10 },
    // recorded with each experiment, not passed to the reactor: a text parameter for a choice
    { name: 'solvent', type: 'string', default: 'water' },
  ],
  outputs: ['run.yield'],
  main: [{ kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { param: 'time' } }, save_as: 'run' }],
};
const SLOW = {
  name: 'slow',
  main: [
    { kind: 'wait', seconds: 1 },
    { kind: 'call', instrument: 'noop', method: 'ping' },
  ],
};

let ada: Client;
beforeAll(async () => {
  lab = await startLab();
  for (const wf of [TEMPS, PING, SLOW, REACT]) await lab.admin.post('/app/workflows').set('Accept', 'application/json').send(wf).expect(201);
  // a temporary instrument whose calls take a while: background calls are still running when looked at
  await lab.runtime.deck.connect('sim-noop', 'slowpoke', { delay_ms: 600 });
  ada = ivoryosClient('ada');
});
afterAll(() => lab.close());

describe('logging in as ivoryos-client does', () => {
  it('redirects a client with no session to the login route, logs in with the form and then answers 200', async () => {
    const c = ivoryosClient('ada');
    const first = await c.get('/').redirects(0).expect(302);
    expect(first.headers.location).toBe('/ivoryos/auth/login');
    const login = await c.post('/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).redirects(0).expect(302);
    expect(login.headers.location).toBe('/ivoryos/');
    expect(String(login.headers['set-cookie'])).toMatch(/labdeck\.sid=/);
    const home = await c.get('/').redirects(0).expect(200);
    expect(home.body).toMatchObject({ name: 'labdeck', user: 'ada', deck: 'demo-deck', workflow: null });
    // the same cookie is labdeck's own session: /app knows the user too
    await c.agent.get('/app/account').set('Accept', 'application/json').expect(200);
    // and followed as httpx does, the login ends on a 200
    await ivoryosClient('ada')
      .checkAuthentication()
      .then((r) => expect(r.status).toBe(200));
  });

  it('answers a wrong password 401 in ivoryOS error shape (not a login page that looks like success)', async () => {
    const res = await ivoryosClient('ada', 'wrong').checkAuthentication();
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: 'Wrong username or password.' });
  });

  it('refuses a login form with an unknown field by name', async () => {
    const res = await ivoryosClient('ada').post('/auth/login').type('form').send({ username: 'ada', password: PASSWORD, remember: 'y' }).expect(400);
    expect(res.body.success).toBe(false);
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'remember' })]);
  });

  it('logs out to the login route', async () => {
    const c = ivoryosClient('ada');
    await c.checkAuthentication();
    await c.get('/auth/logout').redirects(0).expect(302).expect('Location', '/ivoryos/auth/login');
    await c.get('/').redirects(0).expect(302);
  });
});

describe('direct control', () => {
  it('lists the deck as ivoryOS does: deck.<name> → method → signature and docstring', async () => {
    await ada.checkAuthentication();
    const res = await ada
      .get('/instruments')
      .expect(200)
      .expect('Content-Type', /application\/json/);
    expect(Object.keys(res.body)).toEqual(expect.arrayContaining(['deck.hotplate', 'deck.pump', 'deck.stirrer', 'deck.slowpoke']));
    expect(Object.keys(res.body).every((k) => k.startsWith('deck.'))).toBe(true);
    expect(res.body['deck.hotplate'].set_temperature).toEqual(expect.objectContaining({ signature: '(self, celsius: float)', docstring: expect.any(String), coroutine: false }));
    expect(res.body['deck.stirrer'].set_speed.signature).toBe('(self, rpm: float = 300)');
  });

  it('runs a call and waits for it: { success, output }, the text argument read as the number it types', async () => {
    const res = await executeTask(ada, 'deck.hotplate', 'set_temperature', { celsius: '80.5' });
    expect(res.body).toMatchObject({ success: true, task_id: expect.any(Number) });
    const task = (await ada.get(`/instruments/task/${res.body.task_id}`).expect(200)).body;
    expect(task).toMatchObject({ id: res.body.task_id, method_name: 'deck.hotplate.set_temperature', kwargs: { celsius: 80.5 }, run_error: false, status: 'ok' });
    expect(new Date(task.end_time).getTime()).toBeGreaterThanOrEqual(new Date(task.start_time).getTime());
    expect(task.start_time).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    // the temperature really was set
    const now = await executeTask(ada, 'deck.hotplate', 'temperature');
    expect(now.body.success).toBe(true);
  });

  it("answers ivoryos-client 0.2.11's default execute_task (wait=True: hidden_wait true as JSON) with { success, output }", async () => {
    const res = await executeTask(ada, 'deck.pump', 'dose', { volume_ml: 1.5 }, true);
    expect(res.body).toMatchObject({ success: true, output: expect.any(Number) });
  });

  it("reads every number written as text, as ivoryOS converts form values by the method's annotations", async () => {
    const dose = await executeTask(ada, 'deck.pump', 'dose', { volume_ml: ' 2 ' });
    expect(dose.body).toMatchObject({ success: true, output: expect.any(Number) });
    const task = (await ada.get(`/instruments/task/${dose.body.task_id}`).expect(200)).body;
    expect(task.kwargs).toEqual({ volume_ml: 2 });
  });

  it('runs a call in the background with hidden_wait false: the task has no end_time until it is done', async () => {
    const res = await executeTask(ada, 'deck.slowpoke', 'ping', {}, false);
    expect(res.body).toEqual({ status: 'task started', task_id: expect.any(Number) });
    const running = (await ada.get(`/instruments/task/${res.body.task_id}`).expect(200)).body;
    expect(running).toMatchObject({ end_time: null, status: 'running', output: null });
    // the status says a call is in flight
    expect((await ada.get('/executions/status').expect(200)).body).toMatchObject({ busy: true, current_task: { id: res.body.task_id, end_time: null } });
    // wait_for_task: poll until end_time is set
    const done = await until('the task to end', async () => {
      const t = (await ada.get(`/instruments/task/${res.body.task_id}`).expect(200)).body;
      return t.end_time !== null && t;
    });
    expect(done).toMatchObject({ output: 'pong', run_error: false, status: 'ok' });
    expect((await ada.get('/executions/status').expect(200)).body.busy).toBe(false);
  });

  it('accepts hidden_wait as text, as ivoryOS reads it ("False")', async () => {
    const res = await ada.post('/instruments/deck.noop').send({ hidden_name: 'ping', hidden_wait: 'False' }).expect(200);
    expect(res.body.status).toBe('task started');
    await until('the ping', async () => (await ada.get(`/instruments/task/${res.body.task_id}`)).body.end_time);
  });

  it('answers bad calls 400 in ivoryOS error shape, naming what is wrong; nothing is called', async () => {
    await ada.checkAuthentication();
    const unknown = await ada.post('/instruments/deck.nope').send({ hidden_name: 'ping', hidden_wait: true }).expect(400);
    expect(unknown.body).toMatchObject({ success: false, error: expect.stringContaining('No instrument "deck.nope"'), details: [{ field: 'instrument' }] });
    expect(unknown.body.error).toContain('deck.hotplate');
    const bare = await ada.post('/instruments/hotplate').send({ hidden_name: 'temperature' }).expect(400);
    expect(bare.body.error).toContain('"deck.<name>"');
    const method = await ada.post('/instruments/deck.hotplate').send({ hidden_name: 'boil' }).expect(400);
    expect(method.body).toMatchObject({ success: false, details: [{ field: 'hidden_name' }] });
    expect(method.body.error).toContain('set_temperature');
    const range = await ada.post('/instruments/deck.hotplate').send({ hidden_name: 'set_temperature', celsius: 999 }).expect(400);
    expect(range.body.details).toEqual([expect.objectContaining({ field: 'celsius' })]);
    const text = await ada.post('/instruments/deck.hotplate').send({ hidden_name: 'set_temperature', celsius: 'hot' }).expect(400);
    expect(text.body.details).toEqual([expect.objectContaining({ field: 'celsius' })]);
    const extra = await ada.post('/instruments/deck.hotplate').send({ hidden_name: 'temperature', celsius: 30 }).expect(400);
    expect(extra.body.details).toEqual([expect.objectContaining({ field: 'celsius' })]);
    const noWait = await ada.post('/instruments/deck.hotplate').send({ hidden_name: 'set_temperature', celsius: 999, hidden_wait: false }).expect(400);
    expect(noWait.body.details).toEqual([expect.objectContaining({ field: 'celsius' })]);
    const wait = await ada.post('/instruments/deck.noop').send({ hidden_name: 'ping', hidden_wait: 'maybe' }).expect(400);
    expect(wait.body.details).toEqual([expect.objectContaining({ field: 'hidden_wait' })]);
    // none of them reached an instrument: the latest hotplate call is still the one before
    const recent = await lab.runtime.store.steps.recent('hotplate', 1);
    expect(recent[0]?.args).not.toEqual({ celsius: 999 });
    // an unknown task id
    const task = await ada.get('/instruments/task/99999999').expect(404);
    expect(task.body).toMatchObject({ success: false, error: 'There is no task 99999999.' });
  });

  it('works for the proxy file ivoryOS generates: 302 when logged out (it logs in again), JSON payload, { success, output }', async () => {
    const session = request.agent(lab.app);
    const call = () => session.post('/ivoryos/instruments/deck.hotplate').set('Accept', ANY).send({ hidden_name: 'set_temperature', celsius: 42 }).redirects(0);
    // _call: a 302 means the session is gone, so _auth and try again
    await call().expect(302);
    expect((await session.get('/ivoryos/').redirects(0)).status).toBe(302);
    await session.post('/ivoryos/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).redirects(0).expect(302);
    await session.get('/ivoryos/').redirects(0).expect(200);
    const res = await call().expect(200);
    expect(res.body).toMatchObject({ success: true });
    expect((await lab.runtime.store.steps.recent('hotplate', 1))[0]?.args).toEqual({ celsius: 42 });
  });
});

describe('the library and the selected workflow (ivoryOS draft)', () => {
  it('lists workflow names, with keyword, and for a deck name as list_workflow_scripts(deck_name=...) asks', async () => {
    await ada.checkAuthentication();
    const all = (await ada.get('/library/').expect(200)).body;
    expect(all.workflows).toEqual(expect.arrayContaining(['temps', 'ping-twice', 'slow']));
    expect((await ada.get('/library/').query({ keyword: 'TEM' }).expect(200)).body).toEqual({ workflows: ['temps'] });
    const deck = (await ada.get('/library/demo-deck').query({ deck: 'demo-deck', keyword: 'ping' }).expect(200)).body;
    expect(deck).toEqual({ workflows: ['ping-twice'] });
  });

  it('selects a workflow per session with GET /library/<name>, and runs it over kwargs rows', async () => {
    const c = ivoryosClient('ada');
    await c.checkAuthentication();
    // nothing selected yet in this session
    const none = await c
      .post('/executions/config')
      .send({ kwargs: [{ celsius: 40 }], batch_size: 1 })
      .expect(400);
    expect(none.body).toMatchObject({ success: false, details: [{ field: 'workflow' }] });
    const loaded = (await c.get('/library/temps').expect(200)).body;
    expect(loaded).toMatchObject({ script: { name: 'temps', deck: 'demo-deck', author: 'ada', script_dict: { name: 'temps' } }, python_script: expect.stringContaining('labdeck_client') });
    expect(loaded.python_script).toMatch(/def temps\(/);
    expect((await c.get('/').expect(200)).body.workflow).toBe('temps');
    // ivoryos-client 0.2.11: run_workflow_kwargs() without rows sends kwargs: []: a 400 naming kwargs, nothing queued
    const empty = await c.post('/executions/config').send({ kwargs: [], batch_size: 1 }).expect(400);
    expect(empty.body).toMatchObject({ success: false, details: [{ field: 'kwargs' }] });
    expect(JSON.stringify(empty.body)).toContain('run_workflow_repeat');
    // run_workflow_kwargs: { kwargs, batch_size: 1 }, values as a CSV would give them
    const run = await c
      .post('/executions/config')
      .send({ kwargs: [{ celsius: '60' }, { celsius: 70 }], batch_size: 1 })
      .expect(200);
    expect(run.body).toMatchObject({ status: 'task started', task_id: expect.any(Number) });
    const runId = run.body.task_id as number;
    await idle(c);
    // get_last_workflow_run_id: the last key of workflow_data
    const records = (await c.get('/executions/records').query({ keyword: 'temps' }).expect(200)).body;
    expect(Object.keys(records.workflow_data).at(-1)).toBe(String(runId));
    expect(records.workflow_data[runId]).toEqual({ workflow_name: expect.stringContaining('temps'), start_time: expect.stringMatching(/GMT$/) });
    // load_workflow_data
    const record = (await c.get(`/executions/records/${runId}`).expect(200)).body;
    expect(record.workflow_info).toMatchObject({ id: runId, platform: 'demo-deck', status: 'completed', repeat_mode: 'sweep', end_time: expect.stringMatching(/GMT$/) });
    expect(Object.keys(record.phases.script)).toEqual(['0', '1']);
    const second = record.phases.script['1'][0];
    expect(second).toMatchObject({ name: 'main', repeat_index: 1, parameters: { celsius: 70 }, outputs: { set: 70 } });
    expect(second.steps).toEqual([expect.objectContaining({ method_name: 'deck.hotplate.set_temperature', run_error: false, output: 70 })]);
    expect(record.phases.script['0'][0].parameters).toEqual({ celsius: 60 });
  });

  it('runs the selected workflow a number of times with { repeat: "2" } (run_workflow_repeat)', async () => {
    await ada.checkAuthentication();
    await ada.get('/library/ping-twice').expect(200);
    const run = await ada.post('/executions/config').send({ repeat: '2' }).expect(200);
    expect(run.body.status).toBe('task started');
    await idle(ada);
    const record = (await ada.get(`/executions/records/${run.body.task_id}`).expect(200)).body;
    expect(record.workflow_info).toMatchObject({ status: 'completed', repeat_mode: 'static_repeat', workflow_name: 'ping-twice' });
    expect(Object.keys(record.phases.script)).toEqual(['0', '1']);
    expect(record.phases.script['0'][0].steps.map((s: { step_index: number }) => s.step_index)).toEqual([0, 1]);
  });

  it('keeps the selection per session: another user has none', async () => {
    await signupAndLogin(lab.app, 'olga');
    const olga = ivoryosClient('olga');
    await olga.checkAuthentication();
    expect((await olga.get('/').expect(200)).body).toMatchObject({ user: 'olga', workflow: null });
    await olga.post('/executions/config').send({ repeat: '1' }).expect(400);
  });

  it('says what labdeck cannot do instead of pretending: batches, rows that do not fit, an unknown workflow', async () => {
    await ada.checkAuthentication();
    await ada.get('/library/temps').expect(200);
    const batch = await ada.post('/executions/config').send({ repeat: '2', batch_size: '2' }).expect(400);
    expect(batch.body).toMatchObject({ success: false, details: [{ field: 'batch_size' }] });
    expect(batch.body.error).toContain('one iteration at a time');
    const column = await ada
      .post('/executions/config')
      .send({ kwargs: [{ celsius: 50, rpm: 3 }], batch_size: 1 })
      .expect(400);
    expect(column.body.details).toEqual([expect.objectContaining({ field: 'kwargs row 1, column rpm' })]);
    const both = await ada
      .post('/executions/config')
      .send({ kwargs: [{ celsius: 50 }], repeat: 2 })
      .expect(400);
    expect(both.body.details).toEqual([expect.objectContaining({ field: 'repeat' })]);
    const unknownField = await ada
      .post('/executions/config')
      .send({ kwargs: [{ celsius: 50 }], steps: {} })
      .expect(400);
    expect(unknownField.body.details).toEqual([expect.objectContaining({ field: 'steps' })]);
    const missing = await ada.get('/library/no-such').expect(404);
    expect(missing.body).toMatchObject({ success: false, error: expect.stringContaining('no workflow "no-such"') });
    expect((await lab.runtime.runner.queue()).tasks).toEqual([]);
  });
});

describe('status, queue and control', () => {
  it('answers aborts while idle 200 saying nothing was aborted', async () => {
    await ada.checkAuthentication();
    const res = await ada.post('/executions/abort/next-iteration').expect(200);
    expect(res.body).toMatchObject({ status: 'ok', message: expect.stringContaining('Nothing was aborted') });
    expect((await ada.post('/executions/abort/next-task').expect(200)).body.message).toContain('Nothing was aborted');
  });

  it('pauses the queue, lists the waiting task, resumes it; shows a running workflow in workflow_status; aborts it', async () => {
    await ada.checkAuthentication();
    expect((await ada.post('/executions/pause-resume').expect(200)).body).toMatchObject({ status: 'ok', pause_status: 'Paused' });
    await ada.get('/library/slow').expect(200);
    const queued = await ada.post('/executions/config').send({ repeat: '1' }).expect(200);
    expect(queued.body).toMatchObject({ status: 'queued', task_id: null, queue_id: expect.any(Number) });
    const queue = (await ada.get('/executions/queue').expect(200)).body;
    expect(queue).toEqual([
      expect.objectContaining({ id: queued.body.queue_id, status: 'pending', args: '1 iteration(s)', details: expect.objectContaining({ Workflow: 'slow', 'Repeat Count': 1 }) }),
    ]);
    expect((await ada.get('/executions/status').expect(200)).body).toMatchObject({ busy: true, paused: true });

    expect((await ada.post('/executions/pause-resume').expect(200)).body.pause_status).toBe('Resumed');
    const running = await until('the workflow to run', async () => {
      const s = (await ada.get('/executions/status').expect(200)).body;
      return s.workflow_status && s;
    });
    expect(running.workflow_status.workflow_info).toMatchObject({ workflow_name: 'slow', status: null, end_time: null });
    expect(running.workflow_status.runner_status).toMatchObject({ busy: true });
    expect((await ada.get('/executions/queue').expect(200)).body).toEqual([]);
    // the workflow holds its instruments: a direct call to one answers busy at once, as ivoryOS says it
    const held = await ada.post('/instruments/deck.noop').send({ hidden_name: 'ping', hidden_wait: true }).expect(200);
    expect(held.body).toMatchObject({ success: false, status: 'busy', output: expect.stringContaining('noop') });

    const abort = await ada.post('/executions/abort/next-task').expect(200);
    expect(abort.body.message).toContain('queue is held');
    const runId = running.workflow_status.workflow_info.id as number;
    await until('the run to stop', async () => (await ada.get(`/executions/records/${runId}`).expect(200)).body.workflow_info.end_time);
    expect((await ada.get(`/executions/records/${runId}`)).body.workflow_info).toMatchObject({ status: 'stopped', labdeck_status: 'aborted' });
    // release the held queue with the one pause button, once the runner has let the task go
    await idle(ada);
    expect(lab.runtime.runner.status()).toMatchObject({ queue_held: true });
    await ada.post('/executions/pause-resume').expect(200);
    expect(lab.runtime.runner.status()).toMatchObject({ busy: false, queue_held: false, paused: false });
  });

  it("writes its controls to the audit log as /app's controls are written (the same action, via ivoryos)", async () => {
    const audit = await lab.runtime.store.audit.list(500);
    const via = audit.filter((a) => (a.detail as { via?: string } | null)?.via === 'ivoryos').map((a) => a.action);
    expect(via).toEqual(expect.arrayContaining(['runner.pause-resume', 'runner.abort.next-task']));
    const ada = (await lab.runtime.store.users.byName('ada'))!;
    expect(audit.find((a) => a.action === 'runner.abort.next-task')).toMatchObject({ userId: ada.id, detail: { status: expect.any(String), via: 'ivoryos' } });
  });

  it('answers an unknown record 404 in ivoryOS error shape', async () => {
    const res = await ada.get('/executions/records/424242').expect(404);
    expect(res.body).toEqual({ success: false, error: 'There is no run 424242.', details: [{ field: 'workflow_id', message: 'unknown run' }] });
  });
});

describe("campaigns in ivoryOS's format", () => {
  /** `run_workflow_campaign(...)`: the JSON body ivoryos-client 0.2.x posts, every field it sends. */
  const runWorkflowCampaign = async (c: Client, fields: Record<string, unknown>, status?: number) => {
    await c.checkAuthentication();
    const res = await c.post('/executions/campaign').send({ batch_size: 1, steps: {}, parameter_constraints: [], repeat: 25, existing_data: null, ...fields });
    // the body shows in a failure: it says why
    if (status) expect({ status: res.status, body: res.status === status ? null : res.body }).toEqual({ status, body: null });
    return res;
  };
  const SPACE = [
    { name: 'temperature', type: 'range', value_type: 'float', bounds: [20, 120, 10] },
    { name: 'time', type: 'fixed', value_type: 'float', value: 15 },
  ];
  const OBJECTIVES = [{ name: 'run.yield', minimize: false }];

  it("runs a campaign asked of ax on the selected workflow with labdeck's gp, says so, and keeps to the step grid and the fixed value", async () => {
    await ada.checkAuthentication();
    await ada.get('/library/react').expect(200);
    const steps = { step_1: { model: 'Sobol', num_samples: 2 }, step_2: { model: 'BoTorch' } };
    const res = await runWorkflowCampaign(ada, { optimizer_type: 'ax', parameters: SPACE, objectives: OBJECTIVES, repeat: 4, steps }, 200);
    expect(res.body).toMatchObject({ status: 'task started', task_id: expect.any(Number), optimizer: 'gp' });
    expect(res.body.warnings).toEqual([
      expect.stringMatching(/^labdeck has no "ax" optimizer: its "gp" runs this campaign/),
      'steps.step_2.model "BoTorch" is not used: after the initial points, gp\'s own Gaussian process suggests.',
    ]);
    const runId = res.body.task_id as number;
    await until('the campaign to end', async () => (await ada.get(`/executions/records/${runId}`).expect(200)).body.workflow_info.end_time, 20_000);
    const record = (await ada.get(`/executions/records/${runId}`).expect(200)).body;
    expect(record.workflow_info).toMatchObject({ workflow_name: 'react', status: 'completed' });
    const iterations = Object.values(record.phases.script as Record<string, { parameters: Record<string, number>; outputs: Record<string, unknown> }[]>).map((p) => p[0]!);
    expect(iterations).toHaveLength(4);
    for (const { parameters, outputs } of iterations) {
      expect(parameters.time).toBe(15);
      expect(parameters.temperature).toBeGreaterThanOrEqual(20);
      expect(parameters.temperature).toBeLessThanOrEqual(120);
      expect(Number.isInteger(parameters.temperature / 10)).toBe(true);
      expect(outputs).toEqual({ 'run.yield': expect.any(Number) });
    }
    // labdeck's record of the campaign: gp, its initial points from step_1, the space as labdeck reads it
    const own = (await ada.agent.get(`/app/executions/records/${runId}`).set('Accept', 'application/json').expect(200)).body;
    expect(own.campaign).toMatchObject({
      optimizer: 'gp',
      budget: 4,
      config: expect.objectContaining({ initial_points: 2 }),
      space: [
        { name: 'temperature', type: 'range', bounds: [20, 120], step: 10 },
        { name: 'time', type: 'fixed', value: 15 },
      ],
      objectives: [{ name: 'run.yield', minimize: false }],
    });
    await idle(ada);
  });

  it("takes value_type int, log_scale, a choice, constraints and early_stop, and hands them to labdeck's own checks", async () => {
    await ada.checkAuthentication();
    await ada.get('/library/react').expect(200);
    const res = await runWorkflowCampaign(
      ada,
      {
        optimizer_type: 'random',
        parameters: [
          { name: 'temperature', type: 'range', value_type: 'int', bounds: [20, 120], log_scale: true },
          { name: 'time', type: 'range', bounds: [1, 60] },
          { name: 'solvent', type: 'choice', value_type: 'str', bounds: ['ethanol', 'dmso'] },
        ],
        objectives: [{ name: 'run.yield', minimize: false, weight: 1 }],
        parameter_constraints: ['2*time <= 70'],
        outcome_constraints: ['run.yield >= 0'],
        early_stop: ['run.yield >= 0'],
        repeat: 3,
        seed: 5,
      },
      200,
    );
    expect(res.body).toMatchObject({ optimizer: 'random', warnings: [] });
    const runId = res.body.task_id as number;
    await until('the campaign to end', async () => (await ada.get(`/executions/records/${runId}`).expect(200)).body.workflow_info.end_time, 20_000);
    const own = (await ada.agent.get(`/app/executions/records/${runId}`).set('Accept', 'application/json').expect(200)).body;
    expect(own.campaign).toMatchObject({
      space: [
        { name: 'temperature', type: 'int', bounds: [20, 120], log_scale: true },
        { name: 'time', type: 'range', bounds: [1, 60] },
        { name: 'solvent', type: 'choice', choices: ['ethanol', 'dmso'] },
      ],
      constraints: ['2*time <= 70'],
      outcome_constraints: ['run.yield >= 0'],
      stop_when: ['run.yield >= 0'],
    });
    // every yield is >= 0: early_stop ended the campaign after its first measurement
    const record = (await ada.get(`/executions/records/${runId}`).expect(200)).body;
    expect(Object.keys(record.phases.script)).toHaveLength(1);
    const { temperature, time, solvent } = record.phases.script['0'][0].parameters;
    expect(['ethanol', 'dmso']).toContain(solvent);
    expect(Number.isInteger(temperature)).toBe(true);
    expect(time).toBeLessThanOrEqual(35);
    await idle(ada);
  });

  it("refuses what does not fit with 400 in ivoryOS's error shape, naming the field", async () => {
    const fresh = ivoryosClient('ada');
    const none = await runWorkflowCampaign(fresh, { optimizer_type: 'gp', parameters: SPACE, objectives: OBJECTIVES }, 400);
    expect(none.body).toMatchObject({ success: false, details: [{ field: 'workflow', message: expect.stringContaining('No workflow is selected') }] });
    await ada.checkAuthentication();
    await ada.get('/library/react').expect(200);
    const cases: [Record<string, unknown>, number, string][] = [
      [{ parameters: [{ name: 'temperature', type: 'range', value_type: 'str', bounds: [20, 120] }] }, 400, 'parameters[0].value_type'],
      [{ parameters: [{ name: 'temperature', type: 'range', bounds: [20, 120], scaling: 'log' }] }, 400, 'parameters[0].scaling'],
      [{ parameters: [{ name: 'temperature', type: 'range', bounds: [20, 120, 7] }] }, 400, 'parameters[0].bounds[2]'],
      [{ parameters: [{ name: 'pressure', type: 'range', bounds: [1, 2] }] }, 400, 'parameters[0].name'],
      [{ parameters: [{ name: 'temperature', type: 'choice', value_type: 'float', bounds: [20, 40] }] }, 400, 'parameters[0].value_type'],
      [{ objectives: [{ name: 'purity', minimize: false }] }, 400, 'objectives[0].name'],
      [{ parameters: [{ name: 'temperature', type: 'range', value_type: 'int', bounds: [20, 120] }], parameter_constraints: ['temperature <= 100'] }, 400, 'parameter_constraints[0]'],
      [{ objectives: [{ name: 'run.yield', goal: 'max' }] }, 400, 'objectives[0].goal'],
      [{ additional_params: { acq: 'qEI' } }, 400, 'additional_params'],
      [{ repeat: 0 }, 400, 'repeat'],
      [{ optimizer_type: 'nimo' }, 404, 'optimizer_type'],
      [{ temperature: 5 }, 400, 'temperature'],
    ];
    for (const [fields, status, field] of cases) {
      const res = await runWorkflowCampaign(ada, { optimizer_type: 'gp', parameters: SPACE, objectives: OBJECTIVES, repeat: 2, ...fields });
      expect({ field, status: res.status }).toEqual({ field, status });
      expect(res.body.success).toBe(false);
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await ada.get('/executions/queue').expect(200)).body).toEqual([]);
  });

  it("answers get_optimizer_schema with labdeck's optimizers in ivoryOS's shape; ax is gp's, with a warning", async () => {
    await ada.checkAuthentication();
    const all = (await ada.post('/executions/optimizer_schema').send({ optimizer_type: null }).expect(200)).body;
    expect(Object.keys(all)).toEqual(expect.arrayContaining(['gp', 'random', 'sobol']));
    expect(all.gp).toMatchObject({
      parameter_types: ['range', 'choice', 'fixed'],
      value_types: ['float', 'int', 'str'],
      multiple_objectives: true,
      supports_continuous: true,
      supports_constraints: true,
      optimizer_config: { step_1: { model: ['Sobol'], num_samples: null }, step_2: { model: ['gp'] } },
      supports_outcome_constraints: true,
      config: expect.objectContaining({ type: 'object' }),
    });
    expect(all.random.optimizer_config).toEqual({});
    const ax = (await ada.post('/executions/optimizer_schema').send({ optimizer_type: 'ax' }).expect(200)).body;
    expect(ax).toEqual({ ...all.gp, answered_by: 'gp', warning: expect.stringContaining('labdeck has no "ax" optimizer') });
    const nope = await ada.post('/executions/optimizer_schema').send({ optimizer_type: 'nimo' }).expect(404);
    expect(nope.body).toMatchObject({ success: false, details: [{ field: 'optimizer_type' }] });
  });
});

describe('what is not there', () => {
  it("answers other paths 404 in ivoryOS error shape, and leaves labdeck's own API as it is", async () => {
    const res = await ada.get('/design/draft').expect(404);
    expect(res.body).toMatchObject({ success: false, error: expect.stringContaining('GET /ivoryos/design/draft') });
    // labdeck's API: its own shapes and its own answer to Accept */* (a page)
    const own = await ada.agent.get('/app/instruments/').set('Accept', ANY).expect(200);
    expect(own.headers['content-type']).toMatch(/text\/html/);
    const json = await ada.agent.get('/app/instruments/').set('Accept', 'application/json').expect(200);
    expect(json.body.instruments.map((i: { name: string }) => i.name)).toContain('hotplate');
  });
});
