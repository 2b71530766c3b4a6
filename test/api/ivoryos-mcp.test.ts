/**
 * ivoryOS's older routes at /ivoryos, driven exactly as the published `ivoryos-mcp` server (0.1.8,
 * ivoryos_mcp/server.py) drives them for an assistant: one httpx.Client that follows redirects and keeps the
 * session cookie, `_check_authentication` (GET / without following redirects; unless 200, POST /login with
 * the form, followed), form bodies where it posts `data=` (every value text, as httpx writes it: False →
 * "false", None → "", `str(None)` → "None") and JSON where it posts `json=`. Each tool is one function below
 * making the same requests in the same order; the tests assert what really happened on the deck, the runner
 * and the records. Written for labdeck (never copied from ivoryos-mcp).
 */
import request from 'supertest';
import { PASSWORD, REACTOR, startLab, type TestLab } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

const ANY = '*/*';
const HTTPX = 'python-httpx/0.28.1';

let lab: TestLab;

/** A value as httpx writes it into a form (`data=`). */
const formText = (v: unknown): string => (v === true ? 'true' : v === false ? 'false' : v === null || v === undefined ? '' : String(v));
const form = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, formText(v)]));

/** ivoryos-mcp's module state: `url`, `login_data` and `ivoryos_client = httpx.Client(follow_redirects=True)`. */
function ivoryosMcp(username = 'ada', password = PASSWORD) {
  const agent = request.agent(lab.app);
  const get = (path: string) => agent.get(`/ivoryos${path}`).set('Accept', ANY).set('User-Agent', HTTPX).redirects(5);
  const post = (path: string) => agent.post(`/ivoryos${path}`).set('Accept', ANY).set('User-Agent', HTTPX).redirects(5);

  const checkAuthentication = async () => {
    const resp = await agent.get('/ivoryos/').set('Accept', ANY).set('User-Agent', HTTPX).redirects(0);
    if (resp.status === 200) return;
    const login = await post('/login').type('form').send(form({ username, password }));
    if (login.status !== 200) throw new Error(`Login failed (${login.status}: ${JSON.stringify(login.body)})`);
  };

  return {
    agent,
    checkAuthentication,
    /** `platform-info`: the snapshot, without logging in first. */
    platformInfo: () => get('/backend_control'),
    /** `execution-status` */
    executionStatus: async () => (await checkAuthentication(), get('/api/status')),
    /** `execute-task`: the snapshot, then the call in the background (hidden_wait False) with the kwargs as form text. */
    executeTask: async (component: string, method: string, kwargs: Record<string, unknown> = {}) => {
      await checkAuthentication();
      const snapshot = (await get('/backend_control')).body as Record<string, unknown>;
      const name = component.startsWith('deck.') ? component : `deck.${component}`;
      if (!(name in snapshot)) return { missing: `The component ${name} does not exist in ${Object.keys(snapshot)}.` } as const;
      return post(`/backend_control/${name}`)
        .type('form')
        .send(form({ ...kwargs, hidden_name: method, hidden_wait: false }));
    },
    /** `list-workflow-scripts` */
    listWorkflowScripts: async (searchKey = '', deckName = '') => (await checkAuthentication(), get(`/database/${deckName}`).query({ keyword: searchKey })),
    /** `load-workflow-script`: select it, then read the draft's script. */
    loadWorkflowScript: async (workflowName: string) => {
      await checkAuthentication();
      const resp = await get(`/edit_workflow/${workflowName}`);
      if (resp.status !== 200) return { resp, script: null };
      return { resp, script: (await get('/api/get_script')).body as Record<string, string> };
    },
    /** `submit-workflow-script` */
    submitWorkflowScript: async (workflowName: string, mainScript = '', cleanupScript = '', prepScript = '') => (
      await checkAuthentication(),
      post('/api/get_script').send({ workflow_name: workflowName, script: mainScript, cleanup: cleanupScript, prep: prepScript })
    ),
    pauseAndResume: async () => (await checkAuthentication(), post('/api/pause')),
    abortPendingWorkflow: async () => (await checkAuthentication(), post('/api/abort_pending')),
    stopCurrentWorkflow: async () => (await checkAuthentication(), post('/api/abort_current')),
    /** `run-workflow-repeat`: `data={"repeat": str(repeat_time)}` */
    runWorkflowRepeat: async (repeatTime: number | null = null) => (
      await checkAuthentication(),
      post('/experiment')
        .type('form')
        .send({ repeat: repeatTime === null ? 'None' : String(repeatTime) })
    ),
    /** `run-workflow-kwargs`: `json={"kwargs": kwargs_list}` */
    runWorkflowKwargs: async (kwargsList: Record<string, unknown>[] | null = null) => (await checkAuthentication(), post('/experiment').send({ kwargs: kwargsList })),
    /** `run-workflow-campaign` */
    runWorkflowCampaign: async (parameters: Record<string, unknown>[], objectives: Record<string, unknown>[], repeat = 25, parameterConstraints: string[] = []) => (
      await checkAuthentication(),
      post('/experiment').send({ parameters, objectives, parameter_constraints: parameterConstraints, repeat })
    ),
    /** `list-workflow-data` */
    listWorkflowData: async (workflowName = '') => (await checkAuthentication(), get('/workflow_runs').query({ keyword: workflowName })),
    /** `load-workflow-data` */
    loadWorkflowData: async (workflowId: number) => (await checkAuthentication(), get(`/workflow_steps/${workflowId}`)),
  };
}
type Mcp = ReturnType<typeof ivoryosMcp>;

const until = <T>(what: string, probe: () => Promise<T | undefined | false | null>, ms = 10_000): Promise<T> => waitFor(probe, what, ms, 25) as Promise<T>;
/** What an assistant does after starting something: poll execution-status until the lab is idle. */
const idle = (mcp: Mcp, ms?: number) => until('the lab to be idle', async () => ((await mcp.executionStatus()).body.busy === false ? true : null), ms);

const HEAT = {
  name: 'mcp_heat',
  parameters: [{ name: 'celsius', type: 'number', default: 25 }],
  main: [{ kind: 'call', instrument: 'hotplate', method: 'set_temperature', args: { celsius: { param: 'celsius' } }, save_as: 'set' }],
  outputs: ['set'],
};
const SLOW = {
  name: 'mcp_slow',
  main: [
    { kind: 'wait', seconds: 0.4 },
    { kind: 'call', instrument: 'noop', method: 'ping', save_as: 'pong' },
  ],
  outputs: ['pong'],
};
const REACT = { ...REACTOR, name: 'mcp_react', parameters: [...REACTOR.parameters, { name: 'solvent', type: 'string', default: 'water' }] };

let mcp: Mcp;
beforeAll(async () => {
  lab = await startLab();
  for (const wf of [HEAT, SLOW, REACT]) await lab.admin.post('/app/workflows').set('Accept', 'application/json').send(wf).expect(201);
  mcp = ivoryosMcp();
}, 30_000);
afterAll(() => lab.close());

describe('logging in as ivoryos-mcp does', () => {
  it('is redirected without a session, logs in at POST /login with the form, follows the redirect to a 200, and keeps the cookie', async () => {
    const fresh = ivoryosMcp();
    await fresh.agent.get('/ivoryos/').redirects(0).expect(302).expect('Location', '/ivoryos/auth/login');
    const login = await fresh.agent.post('/ivoryos/login').type('form').send({ username: 'ada', password: PASSWORD }).redirects(0).expect(302);
    expect(login.headers.location).toBe('/ivoryos/');
    expect(String(login.headers['set-cookie'])).toMatch(/labdeck\.sid=/);
    // the whole dance, as the tool makes it; then GET / answers 200 and no log-in happens again
    const other = ivoryosMcp();
    await other.checkAuthentication();
    const home = await other.agent.get('/ivoryos/').redirects(0).expect(200);
    expect(home.body).toMatchObject({ name: 'labdeck', user: 'ada', compatible_with: expect.stringContaining('ivoryos-mcp') });
  });

  it('fails the log-in with a wrong password (401, ivoryOS error shape): the tools say "Login failed"', async () => {
    const wrong = ivoryosMcp('ada', 'nope');
    await expect(wrong.checkAuthentication()).rejects.toThrow(/Login failed \(401: \{"success":false,"error":"Wrong username or password\."\}\)/);
    const status = await wrong.agent.get('/ivoryos/api/status').redirects(0);
    expect(status.status).toBe(302);
  });

  it('refuses a login form with a field it does not take, by name', async () => {
    const res = await ivoryosMcp().agent.post('/ivoryos/login').type('form').send({ username: 'ada', password: PASSWORD, remember: 'y' }).expect(400);
    expect(res.body).toMatchObject({ success: false, details: [{ field: 'remember' }] });
  });
});

describe('platform-info and execute-task', () => {
  it('answers the deck snapshot keyed deck.<name> once logged in; before, it says how to log in (labdeck does not show the deck to anyone)', async () => {
    const anonymous = await ivoryosMcp().platformInfo();
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ success: false, error: 'Log in by posting the form fields username and password to /ivoryos/auth/login.' });
    await mcp.checkAuthentication();
    const res = await mcp.platformInfo();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(expect.arrayContaining(['deck.hotplate', 'deck.pump', 'deck.reactor', 'deck.noop']));
    expect(res.body['deck.hotplate'].set_temperature).toMatchObject({ signature: '(self, celsius: float)' });
  });

  it('runs a call in the background with the kwargs as form text, records it on the instrument, and execution-status shows it', async () => {
    const res = await mcp.executeTask('hotplate', 'set_temperature', { celsius: '61.5' });
    if ('missing' in res) throw new Error(res.missing);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'task started', task_id: expect.any(Number) });
    const id = res.body.task_id as number;
    await idle(mcp);
    const status = (await mcp.executionStatus()).body;
    expect(status).toEqual({
      busy: false,
      last_task: expect.objectContaining({ id, method_name: 'deck.hotplate.set_temperature', kwargs: { celsius: 61.5 }, run_error: false, end_time: expect.stringMatching(/GMT$/) }),
    });
    // the record of the call on the instrument: the text read as the number the method takes
    const step = await lab.runtime.store.steps.get(id);
    expect(step).toMatchObject({ instrument: 'hotplate', method: 'set_temperature', args: { celsius: 61.5 }, output: 61.5, status: 'ok', userId: expect.any(Number) });
    // the plate heats towards its new set point (from room temperature, 22 °C)
    const temperature = await mcp.executeTask('deck.hotplate', 'temperature');
    if ('missing' in temperature) throw new Error(temperature.missing);
    await idle(mcp);
    expect((await lab.runtime.store.steps.get(temperature.body.task_id))?.output).toBeGreaterThan(22);
  });

  it('reads "true"/"false" and integers from the form by the parameter types', async () => {
    const res = await mcp.executeTask('deck.pump', 'dose', { volume_ml: 2 });
    if ('missing' in res) throw new Error(res.missing);
    await idle(mcp);
    expect((await lab.runtime.store.steps.get(res.body.task_id))?.args).toEqual({ volume_ml: 2 });
  });

  it('shows a call in flight as busy with current_task', async () => {
    await lab.runtime.deck.connect('sim-noop', 'mcp_slowpoke', { delay_ms: 500 });
    const res = await mcp.executeTask('mcp_slowpoke', 'ping');
    if ('missing' in res) throw new Error(res.missing);
    const busy = (await mcp.executionStatus()).body;
    expect(busy).toEqual({ busy: true, current_task: expect.objectContaining({ id: res.body.task_id, end_time: null, method_name: 'deck.mcp_slowpoke.ping' }) });
    await idle(mcp);
  });

  it('answers calls that do not fit 400 in ivoryOS error shape; nothing reaches the instrument', async () => {
    const before = (await lab.runtime.store.steps.recent('hotplate', 1))[0]?.id;
    expect(await mcp.executeTask('deck.kettle', 'boil')).toEqual({ missing: expect.stringContaining('does not exist') });
    const post = (path: string, body: Record<string, unknown>) => mcp.agent.post(`/ivoryos${path}`).set('Accept', ANY).type('form').send(form(body));
    const range = await post('/backend_control/deck.hotplate', { celsius: '999', hidden_name: 'set_temperature', hidden_wait: false }).expect(400);
    expect(range.body).toMatchObject({ success: false, details: [expect.objectContaining({ field: 'celsius' })] });
    const text = await post('/backend_control/deck.hotplate', { celsius: 'hot', hidden_name: 'set_temperature', hidden_wait: false }).expect(400);
    expect(text.body.details).toEqual([expect.objectContaining({ field: 'celsius' })]);
    const method = await post('/backend_control/deck.hotplate', { hidden_name: 'boil', hidden_wait: false }).expect(400);
    expect(method.body).toMatchObject({ success: false, details: [{ field: 'hidden_name' }] });
    const unknown = await post('/backend_control/deck.kettle', { hidden_name: 'boil' }).expect(400);
    expect(unknown.body).toMatchObject({ success: false, details: [{ field: 'instrument' }], error: expect.stringContaining('deck.hotplate') });
    expect((await lab.runtime.store.steps.recent('hotplate', 1))[0]?.id).toBe(before);
  });
});

describe('workflow scripts: list, load, submit', () => {
  it("lists the workflows for no deck, labdeck's deck and a keyword; another deck has none and the answer says so", async () => {
    const all = await mcp.listWorkflowScripts();
    expect(all.status).toBe(200);
    expect(all.body.workflows).toEqual(expect.arrayContaining(['mcp_heat', 'mcp_slow', 'mcp_react']));
    expect((await mcp.listWorkflowScripts('HEAT', 'demo-deck')).body).toEqual({ workflows: ['mcp_heat'] });
    const other = (await mcp.listWorkflowScripts('', 'abstract_sdl')).body;
    expect(other).toEqual({ workflows: [], message: expect.stringContaining('labdeck has one deck, "demo-deck"') });
  });

  it("loads a workflow into this session's draft and answers it as ivoryOS compiles it: Python calling deck.<name>", async () => {
    const { resp, script } = await mcp.loadWorkflowScript('mcp_heat');
    expect(resp.status).toBe(200);
    expect(resp.body.script).toMatchObject({ name: 'mcp_heat', deck: 'demo-deck' });
    expect(script).toEqual({ script: 'def mcp_heat(celsius: float = 25):\n    set = deck.hotplate.set_temperature(celsius=celsius)\n    return {"set": set}\n' });
    expect((await mcp.agent.get('/ivoryos/').set('Accept', ANY)).body.workflow).toBe('mcp_heat');
    const missing = await mcp.loadWorkflowScript('no_such_flow');
    expect(missing.resp.status).toBe(404);
    expect(missing.resp.body).toMatchObject({ success: false, error: expect.stringContaining('no workflow "no_such_flow"') });
  });

  it('saves a submitted Python script as a workflow (read, never run), selects it, and loads back the same workflow', async () => {
    const main = [
      'def mcp_titrate(volume_ml=1.5, target=30):',
      '    deck.hotplate.set_temperature(celsius=target)',
      '    for _ in range(2):',
      '        dosed = deck.pump.dose(volume_ml=volume_ml)',
      '    time.sleep(0.05)',
      '    return {"dosed": dosed}',
    ].join('\n');
    const res = await mcp.submitWorkflowScript('mcp_titrate', main, 'def cleanup():\n    deck.hotplate.set_temperature(celsius=25)\n', 'def prep():\n    deck.noop.ping()\n');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['cleanup', 'prep', 'script']);
    // saved as a labdeck workflow, with its parameters, phases and output
    const saved = await lab.runtime.store.workflows.get('mcp_titrate');
    expect(saved?.definition).toMatchObject({
      name: 'mcp_titrate',
      parameters: [
        { name: 'volume_ml', type: 'number', default: 1.5 },
        { name: 'target', type: 'integer', default: 30 },
      ],
      prep: [{ kind: 'call', instrument: 'noop', method: 'ping' }],
      main: [
        { kind: 'call', instrument: 'hotplate' },
        { kind: 'repeat', times: 2 },
        { kind: 'wait', seconds: 0.05 },
      ],
      cleanup: [{ kind: 'call', instrument: 'hotplate', method: 'set_temperature', args: { celsius: { value: 25 } } }],
      outputs: ['dosed'],
    });
    expect((await mcp.agent.get('/ivoryos/').set('Accept', ANY)).body.workflow).toBe('mcp_titrate');
    // loaded back: the same texts as the submit answered; submitted again, the same workflow (a new version)
    const { script } = await mcp.loadWorkflowScript('mcp_titrate');
    expect(script).toEqual(res.body);
    const again = await mcp.submitWorkflowScript('mcp_titrate', script!.script, script!.cleanup, script!.prep);
    expect(again.status).toBe(200);
    const second = await lab.runtime.store.workflows.get('mcp_titrate');
    expect(second?.version).toBe((saved?.version ?? 0) + 1);
    expect(second?.definition).toEqual(saved?.definition);
  });

  it('refuses Python outside the subset, or calls the deck does not have, 400 naming the line or step; nothing is saved', async () => {
    const loop = await mcp.submitWorkflowScript('mcp_bad', 'def mcp_bad():\n    while True:\n        deck.noop.ping()\n');
    expect(loop.status).toBe(400);
    expect(loop.body).toMatchObject({ success: false, error: expect.stringMatching(/line 2: a while loop is outside the workflow subset/), details: [{ field: 'script' }] });
    const kettle = await mcp.submitWorkflowScript('mcp_bad', 'def mcp_bad():\n    deck.kettle.boil()\n');
    expect(kettle.status).toBe(400);
    expect(kettle.body.details).toEqual([expect.objectContaining({ field: 'main[0].instrument' })]);
    const field = await mcp.agent.post('/ivoryos/api/get_script').set('Accept', ANY).send({ workflow_name: 'mcp_bad', script: 'pass', notes: 'x' }).expect(400);
    expect(field.body.details).toEqual([expect.objectContaining({ field: 'notes' })]);
    expect(await lab.runtime.store.workflows.get('mcp_bad')).toBeFalsy();
  });
});

describe('running the loaded workflow: repeat, kwargs, campaign', () => {
  it('runs it repeat times from the form (run-workflow-repeat), and once for repeat None; the records list and load it', async () => {
    await mcp.loadWorkflowScript('mcp_slow');
    const res = await mcp.runWorkflowRepeat(2);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'task started', task_id: expect.any(Number) });
    const runId = res.body.task_id as number;
    await idle(mcp);
    const runs = (await mcp.listWorkflowData('mcp_slow')).body;
    expect(runs.workflow_data[runId]).toEqual({ workflow_name: expect.stringContaining('mcp_slow'), start_time: expect.stringMatching(/GMT$/) });
    const data = (await mcp.loadWorkflowData(runId)).body;
    expect(data.workflow_info).toMatchObject({ id: runId, status: 'completed', workflow_name: 'mcp_slow', repeat_mode: 'static_repeat' });
    expect(Object.keys(data.steps.script)).toEqual(['0', '1']);
    expect(data.steps.script['1']).toEqual([
      expect.objectContaining({ workflow_id: runId, phase: 'script', repeat_index: 1, step_index: 1, method_name: 'deck.noop.ping', run_error: false, output: 'pong' }),
    ]);
    expect(data.phases.script['1'][0]).toMatchObject({ outputs: { pong: 'pong' } });

    const once = await mcp.runWorkflowRepeat(null);
    expect(once.status).toBe(200);
    await idle(mcp);
    expect(Object.keys((await mcp.loadWorkflowData(once.body.task_id)).body.steps.script)).toEqual(['0']);
  });

  it("runs it over kwargs rows (run-workflow-kwargs), each row's values on the instrument and in the record", async () => {
    await mcp.loadWorkflowScript('mcp_heat');
    const res = await mcp.runWorkflowKwargs([{ celsius: 40 }, { celsius: '45.5' }]);
    expect(res.status).toBe(200);
    const runId = res.body.task_id as number;
    await idle(mcp);
    const data = (await mcp.loadWorkflowData(runId)).body;
    expect(data.workflow_info).toMatchObject({ status: 'completed', repeat_mode: 'sweep' });
    expect(data.steps.script['1']).toEqual([expect.objectContaining({ method_name: 'deck.hotplate.set_temperature', output: 45.5 })]);
    expect(data.phases.script['0'][0]).toMatchObject({ parameters: { celsius: 40 }, outputs: { set: 40 } });
    const calls = await lab.runtime.store.runSteps.list(runId);
    expect(calls.map((s) => s.args)).toEqual([{ celsius: 40 }, { celsius: 45.5 }]);
  });

  it("runs an Ax-style campaign (run-workflow-campaign) with labdeck's gp, saying so, within the space it was given", async () => {
    await mcp.loadWorkflowScript('mcp_react');
    const res = await mcp.runWorkflowCampaign(
      [
        { name: 'temperature', type: 'range', bounds: [20, 120] },
        { name: 'time', type: 'fixed', value: 15 },
        { name: 'solvent', type: 'choice', is_ordered: true, values: ['water', 'ethanol'] },
      ],
      [{ name: 'run.yield', minimize: false }],
      3,
      ['temperature <= 100'],
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'task started', task_id: expect.any(Number), optimizer: 'gp' });
    expect(res.body.warnings).toEqual([expect.stringMatching(/^labdeck has no "ax" optimizer: its "gp" runs this campaign/), "parameters[2].is_ordered is not used: labdeck's choices have no order."]);
    const runId = res.body.task_id as number;
    await idle(mcp, 30_000);
    const own = (await lab.admin.get(`/app/executions/records/${runId}`).set('Accept', 'application/json').expect(200)).body;
    expect(own.campaign).toMatchObject({
      optimizer: 'gp',
      budget: 3,
      space: [
        { name: 'temperature', type: 'range', bounds: [20, 120] },
        { name: 'time', type: 'fixed', value: 15 },
        { name: 'solvent', type: 'choice', choices: ['water', 'ethanol'] },
      ],
      constraints: ['temperature <= 100'],
      objectives: [{ name: 'run.yield', minimize: false }],
    });
    const data = (await mcp.loadWorkflowData(runId)).body;
    const experiments = Object.values(data.phases.script as Record<string, { parameters: Record<string, unknown>; outputs: Record<string, unknown> }[]>).map((p) => p[0]!);
    expect(experiments).toHaveLength(3);
    for (const { parameters, outputs } of experiments) {
      expect(parameters.time).toBe(15);
      expect(parameters.temperature).toBeGreaterThanOrEqual(20);
      expect(parameters.temperature).toBeLessThanOrEqual(100);
      expect(['water', 'ethanol']).toContain(parameters.solvent);
      expect(outputs).toEqual({ 'run.yield': expect.any(Number) });
    }
    expect(Object.keys(data.steps.script)).toHaveLength(3);
  }, 40_000);

  it('refuses runs and campaigns that do not fit, 400 in ivoryOS error shape naming the field; nothing is queued', async () => {
    const fresh = ivoryosMcp();
    const none = await fresh.runWorkflowRepeat(1);
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ success: false, details: [{ field: 'workflow', message: expect.stringContaining('No workflow is selected') }] });
    await mcp.loadWorkflowScript('mcp_react');
    const space = [{ name: 'temperature', type: 'range', bounds: [20, 120] }];
    const goal = [{ name: 'run.yield', minimize: false }];
    const post = (body: Record<string, unknown>) => mcp.agent.post('/ivoryos/experiment').set('Accept', ANY).send(body);
    const cases: [Record<string, unknown>, string][] = [
      [{ parameters: [{ name: 'solvent', type: 'choice', bounds: ['water', 'dmso'] }], objectives: goal, repeat: 2 }, 'parameters[0].bounds'],
      [{ parameters: [{ name: 'temperature', type: 'range', bounds: [20, 120], digits: 2 }], objectives: goal, repeat: 2 }, 'parameters[0].digits'],
      [{ parameters: [{ name: 'temperature', type: 'range', value: 10 }], objectives: goal, repeat: 2 }, 'parameters[0].bounds'],
      [{ parameters: [{ name: 'solvent', type: 'choice', values: [1, 2] }], objectives: goal, repeat: 2 }, 'parameters[0].values'],
      [{ parameters: [{ name: 'pressure', type: 'range', bounds: [1, 2] }], objectives: goal, repeat: 2 }, 'parameters[0].name'],
      [{ parameters: space, objectives: [{ name: 'purity' }], repeat: 2 }, 'objectives[0].name'],
      [{ parameters: space, repeat: 2 }, 'objectives'],
      [{ parameters: space, objectives: goal }, 'repeat'],
      [{ parameters: space, objectives: goal, repeat: 2, kwargs: [{ temperature: 30 }] }, 'kwargs'],
      [{ objectives: goal, repeat: 2 }, 'parameters'],
      [{ kwargs: [{ temperature: 30, pressure: 2 }] }, 'kwargs row 1, column pressure'],
      [{ repeat: 0 }, 'repeat'],
      [{ repeat: 2, batch_size: 2 }, 'batch_size'],
      [{ repeat: 2, steps: {} }, 'steps'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect({ field, status: res.status, success: res.body.success }).toEqual({ field, status: 400, success: false });
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const formRepeat = await mcp.agent.post('/ivoryos/experiment').set('Accept', ANY).type('form').send({ repeat: 'twice' }).expect(400);
    expect(formRepeat.body.details).toEqual([expect.objectContaining({ field: 'repeat' })]);
    expect((await lab.runtime.runner.queue()).tasks.filter((t) => t.status === 'pending')).toEqual([]);
  });
});

describe('workflow control: pause-and-resume, abort-pending-workflow, stop-current-workflow', () => {
  it('pauses the queue (a run then waits, "queued"), resumes it, and abort-pending finishes the iteration in hand and skips the rest', async () => {
    await mcp.loadWorkflowScript('mcp_slow');
    expect((await mcp.pauseAndResume()).body).toMatchObject({ status: 'ok', pause_status: 'Paused' });
    const queued = await mcp.runWorkflowRepeat(4);
    expect(queued.body).toMatchObject({ status: 'queued', task_id: null, queue_id: expect.any(Number) });
    expect((await mcp.executionStatus()).body).toMatchObject({ busy: true });
    expect((await mcp.pauseAndResume()).body).toMatchObject({ status: 'ok', pause_status: 'Resumed' });
    const running = await until('the run to start', async () => {
      const s = (await mcp.executionStatus()).body;
      return s.workflow_status?.workflow_info ? s : null;
    });
    expect(running).toMatchObject({ busy: true, workflow_status: { workflow_info: { workflow_name: 'mcp_slow', status: null }, runner_status: expect.objectContaining({ busy: true }) } });
    const abort = await mcp.abortPendingWorkflow();
    expect(abort.status).toBe(200);
    expect(abort.body).toMatchObject({ status: 'ok', message: expect.stringContaining('the rest are skipped') });
    await idle(mcp);
    const runId = running.workflow_status.workflow_info.id as number;
    const data = (await mcp.loadWorkflowData(runId)).body;
    expect(Object.keys(data.steps.script).length).toBeLessThan(4);
    expect(data.workflow_info.end_time).toMatch(/GMT$/);
  });

  it('stops the current workflow after the step in hand; the queue is then held until pause-and-resume releases it', async () => {
    await mcp.loadWorkflowScript('mcp_slow');
    const run = await mcp.runWorkflowRepeat(3);
    const runId = run.body.task_id as number;
    expect(runId).toEqual(expect.any(Number));
    const stop = await mcp.stopCurrentWorkflow();
    expect(stop.body).toMatchObject({ status: 'ok', message: expect.stringContaining('queue is held') });
    await until('the run to stop', async () => (await mcp.loadWorkflowData(runId)).body.workflow_info.end_time);
    expect((await mcp.loadWorkflowData(runId)).body.workflow_info).toMatchObject({ status: 'stopped', labdeck_status: 'aborted' });
    await until('the runner to let go', async () => !lab.runtime.runner.status().busy);
    expect(lab.runtime.runner.status()).toMatchObject({ queue_held: true });
    await mcp.pauseAndResume();
    expect(lab.runtime.runner.status()).toMatchObject({ queue_held: false, paused: false });
  });

  it('answers the aborts 200 when nothing runs, saying nothing was aborted', async () => {
    expect((await mcp.abortPendingWorkflow()).body).toMatchObject({ status: 'ok', message: expect.stringContaining('Nothing was aborted') });
    expect((await mcp.stopCurrentWorkflow()).body).toMatchObject({ status: 'ok', message: expect.stringContaining('Nothing was aborted') });
  });
});

describe('workflow data', () => {
  it('answers an unknown run 404 in ivoryOS error shape', async () => {
    const res = await mcp.loadWorkflowData(987654);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: 'There is no run 987654.', details: [{ field: 'workflow_id', message: 'unknown run' }] });
  });
});
