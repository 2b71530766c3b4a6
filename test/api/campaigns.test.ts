import request from 'supertest';
import { campaignInput } from '../../server/routes/campaigns.js';
import { REACTOR, startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';

describe('optimization campaigns', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
    await lab.runtime.store.workflows.save(REACTOR.name, REACTOR, null);
  });
  afterAll(() => lab.close());

  it('describes every optimizer, or one, and 404s an unknown one', async () => {
    const all = await lab.admin.post('/app/executions/optimizer_schema').send({}).expect(200);
    expect(all.body.optimizers.map((o: { name: string }) => o.name)).toEqual(expect.arrayContaining(['random', 'sobol', 'gp']));
    const gp = await lab.admin.post('/app/executions/optimizer_schema').send({ optimizer_type: 'gp' }).expect(200);
    expect(gp.body.config.type).toBe('object');
    expect(gp.body.capabilities.batch).toBe(true);
    await lab.admin.post('/app/executions/optimizer_schema').send({ optimizer_type: 'nope' }).expect(404);
  });

  it('answers 404 for latest_plot before any campaign has run', async () => {
    await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(404);
  });

  it('rejects bad campaigns with the offending field', async () => {
    const base = { workflow: 'react', repeat: 4, optimizer_type: 'sobol', parameters: 'temperature: 20..120', objectives: 'run.yield:max' };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ ...base, workflow: 'nope' }, 404, 'workflow'],
      [{ ...base, optimizer_type: 'nope' }, 404, 'optimizer_type'],
      [{ ...base, parameters: 'pressure: 1..2' }, 400, 'parameters[0].name'],
      [{ ...base, parameters: 'temperature: 5' }, 400, 'parameters[0]'],
      [{ ...base, objectives: 'purity:max' }, 400, 'objectives[0].name'],
      [{ ...base, repeat: 0 }, 400, 'repeat'],
      [{ ...base, existing_data: 'hist-0000000000000000.csv' }, 404, ''],
    ];
    for (const [body, status, field] of cases) {
      const res = await lab.admin.post('/app/executions/campaign').set('Accept', J).send(body);
      expect({ field, status: res.status }).toEqual({ field, status });
      if (field) expect(JSON.stringify(res.body.error.details ?? [])).toContain(field);
    }
    const page = await lab.admin
      .post('/app/executions/campaign')
      .type('form')
      .send({ ...base, objectives: 'purity:max' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('purity');
  });

  it('runs a campaign on the demo reactor from a warm start, records it, and plots it', async () => {
    const hist = await lab.admin.post('/app/files/execution-data').set('Accept', J).attach('file', Buffer.from('temperature,time,run.yield\n40,10,0.1\n100,50,0.3\n'), 'earlier.csv').expect(201);
    const res = await lab.admin
      .post('/app/executions/campaign')
      .type('form')
      .send({
        workflow: 'react',
        repeat: '6',
        optimizer_type: 'gp',
        batch_size: '2',
        seed: '7',
        existing_data: hist.body.filename,
        parameters: 'temperature: 20..120, time: 1..60',
        objectives: 'run.yield:max',
        'config.initial_points': '3',
      })
      .expect(302);
    expect(res.headers.location).toBe('/app/executions/config?workflow=react');
    await until(async () => (await lab.admin.get('/app/executions/latest_plot').set('Accept', J)).body.campaign?.status === 'done');
    const plot = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    expect(plot.points).toHaveLength(8); // 2 warm-start rows + 6 measurements
    expect(plot.points.filter((p: { iteration: number | null }) => p.iteration === null)).toHaveLength(2);
    expect(plot.best_so_far).toHaveLength(6);
    const best = plot.best_so_far.map((b: { value: number }) => b.value);
    expect([...best].sort((a, b) => a - b)).toEqual(best); // never gets worse
    for (const p of plot.points) {
      expect(p.params.temperature).toBeGreaterThanOrEqual(20);
      expect(p.params.temperature).toBeLessThanOrEqual(120);
    }
    // the run is a record like any other: each suggestion is linked to the iteration that measured it
    const record = await lab.admin.get(`/app/executions/records/${plot.campaign.run_id}`).set('Accept', J).expect(200);
    expect(record.body.status).toBe('completed');
    // the record says how the campaign was set up, counts its experiments, and plots the best so far from the warm start's
    expect(record.body).toMatchObject({
      iterations: 6,
      campaign: { optimizer: 'gp', seed: 7, budget: 6, batch_size: 2, objectives: [{ name: 'run.yield', minimize: false }], warm_start: { file: hist.body.filename, rows: 2, best: 0.3 } },
    });
    expect(record.body.campaign.space.map((x: { name: string }) => x.name)).toEqual(['temperature', 'time']);
    expect(best[0]).toBeGreaterThanOrEqual(0.3); // latest_plot's best so far starts from the warm start's
    const data = (await lab.admin.get(`/app/executions/data/${plot.campaign.run_id}`).expect(200)).body;
    expect(data.best.objective).toBe('run.yield');
    expect(data.best.values).toEqual(best);
    const page = (await lab.admin.get(`/app/executions/records/${plot.campaign.run_id}`).expect(200)).text;
    expect(page).toContain('id="record-campaign"');
    expect(page).toMatch(/<code>gp<\/code>, seed 7, 6 experiments, 2 suggested at a time/);
    expect(page).toContain('2 earlier observations from');
    expect(page).not.toContain('takes no parameter rows');
    // suggestions shown to 6 significant digits; the exact value is in the title (and the JSON, the CSVs)
    expect(page.replace(/ title="[^"]*"/g, '')).not.toMatch(/\d\.\d{7,}/);
    expect(page).toMatch(/ title="\{&quot;temperature&quot;:\d+\.\d{7,}/);
    await request(lab.app).get('/app/executions/latest_plot?format=svg').expect(302); // a visitor: to the login form
    const image = await lab.admin.get('/app/executions/latest_plot?format=svg').expect(200);
    expect(image.headers['content-type']).toContain('image/svg+xml');
    expect(String(image.text ?? image.body)).toContain('<svg');
  });

  it('refuses a field it does not take by name, from JSON and from the page (the form comes back with the message)', async () => {
    const base = { workflow: 'react', repeat: 3, optimizer_type: 'random', parameters: 'temperature: 20..120', objectives: 'run.yield:max' };
    const res = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ ...base, constraints: ['temperature <= 100'], steps: { temperature: 5 } })
      .expect(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['constraints', 'steps']);
    expect(res.body.error.details[0].message).toMatch(/^is not a field of this request \(its fields: workflow, repeat, optimizer_type, /);
    const form = await lab.admin
      .post('/app/executions/campaign')
      .type('form')
      .send({ ...base, repeat: '3', steps: '5' })
      .expect(400);
    expect(form.text).toContain('steps is not a field of this request');
    expect(form.text).toContain('id="campaign-form"');
    // nothing is silently dropped: a parameter field the page does not have, an optimizer option, an objective's key
    const param = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ ...base, parameters: undefined, 'param.temperature.use': 'on', 'param.temperature.low': '20', 'param.temperature.high': '120', 'param.temperature.constraint': 'x' })
      .expect(400);
    expect(param.body.error.details).toEqual([{ field: 'param.temperature.constraint', message: expect.stringMatching(/^is not a field of a parameter/) }]);
    const option = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ ...base, config: { parameter_constraints: ['temperature <= 100'] } })
      .expect(400);
    expect(option.body.error.details).toEqual([{ field: 'config.parameter_constraints', message: 'is not an option of the optimizer "random" (its options: none)' }]);
    const objective = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ ...base, objectives: [{ name: 'run.yield', minimize: false, weigth: 2 }] })
      .expect(400);
    expect(objective.body.error.details[0].field).toBe('objectives.0.weigth');
    // the page's structured fields carry the kinds too: param.<name>.value (fixed), .step, .log_scale
    const kinds = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({
        workflow: 'react',
        repeat: '2',
        optimizer_type: 'random',
        'param.temperature.use': 'on',
        'param.temperature.type': 'range',
        'param.temperature.low': '20',
        'param.temperature.high': '120',
        'param.temperature.step': '7',
        'param.time.use': 'on',
        'param.time.type': 'fixed',
        'param.time.value': '30',
        'objective.run.yield': 'max',
      })
      .expect(400);
    expect(kinds.body.error.details).toEqual([{ field: 'parameters[0].step', message: '"temperature": the step 7 does not divide the range 20..120 (100)' }]);
    const logScale = await lab.runtime.campaigns.plan(
      campaignInput(
        {
          workflow: 'react',
          repeat: '2',
          optimizer_type: 'random',
          'param.temperature.use': 'on',
          'param.temperature.type': 'range',
          'param.temperature.low': '20',
          'param.temperature.high': '120',
          'param.temperature.log_scale': 'on',
          'param.time.use': 'on',
          'param.time.type': 'fixed',
          'param.time.value': '30',
          'objective.run.yield': 'max',
        },
        () => null,
      ),
    );
    expect(logScale.space).toEqual([
      { name: 'temperature', type: 'range', bounds: [20, 120], log_scale: true },
      { name: 'time', type: 'fixed', value: 30 },
    ]);
    // the page's own structured fields pass: param.<name>.*, objective.<name>, config.<key>
    await lab.admin
      .post('/app/executions/campaign')
      .type('form')
      .send({
        workflow: 'react',
        repeat: '2',
        optimizer_type: 'random',
        'param.temperature.use': 'on',
        'param.temperature.type': 'range',
        'param.temperature.low': '20',
        'param.temperature.high': '120',
        'objective.run.yield': 'max',
      })
      .expect(302);
  });

  it('refuses an objective the deck declares is not a number, naming the numeric field to choose', async () => {
    await lab.runtime.store.workflows.save('react-whole', { ...REACTOR, name: 'react-whole', outputs: ['run', 'run.yield'] }, null);
    const res = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ workflow: 'react-whole', repeat: 3, optimizer_type: 'random', parameters: 'temperature: 20..120', objectives: 'run:max' })
      .expect(400);
    expect(res.body.error.details).toEqual([{ field: 'objectives[0].name', message: '"run" is an object (the declared result of reactor.run), and an objective must be a number: choose run.yield' }]);
  });

  it('an objective that comes back not a number fails its step; skipped, the iteration is no observation and the run is not a clean success', async () => {
    const { runtime } = lab;
    // stirrer.program declares no result: only the run can tell that it is an object
    await runtime.store.workflows.save(
      'stir-prog',
      {
        name: 'stir-prog',
        parameters: [{ name: 'rpm', type: 'number', default: 100 }],
        outputs: ['prog'],
        main: [{ kind: 'call', instrument: 'stirrer', method: 'program', args: { steps: { value: [] } }, save_as: 'prog' }],
      },
      null,
    );
    const task = await runtime.campaigns.submit({ workflow: 'stir-prog', repeat: 1, optimizer_type: 'random', seed: 3, parameters: 'rpm: 0..1000', objectives: 'prog:max' }, null);
    await until(async () => runtime.runner.status().state === 'failed');
    expect(runtime.runner.status().failed_step?.error).toBe('stirrer.program returned {"steps":0,"last_rpm":0}: the campaign\'s objective "prog" must be a number, and it is {"steps":0,"last_rpm":0}');
    await runtime.runner.pauseResume(); // skip it
    await until(async () => (await runtime.store.queue.get(task.id))?.status === 'done');
    const runId = (await runtime.store.queue.get(task.id))!.runId!;
    expect(await runtime.store.runs.get(runId)).toMatchObject({ status: 'completed', skipped: 1 });
    expect((await runtime.store.phases.list(runId)).find((p) => p.phase === 'main')?.status).toBe('skipped');
    const plot = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    expect(plot.best_so_far).toEqual([]); // nothing was told to the optimizer
    const page = await lab.admin.get(`/app/executions/records/${runId}`).expect(200);
    expect(page.text).toContain('completed with 1 skipped step');
    expect(page.text).not.toContain('text-bg-success">completed<');
  });

  it("warm-starts from a run's data CSV: only its ok rows are observations", async () => {
    const csv = 'iteration,status,temperature,time,run.yield\n1,ok,40,10,0.1\n2,skipped,100,50,0.9\n3,error,90,20,\n';
    const hist = await lab.admin.post('/app/files/execution-data').set('Accept', J).field('workflow', 'react').attach('file', Buffer.from(csv), 'run-3.csv').expect(201);
    const plan = await lab.runtime.campaigns.plan({
      workflow: 'react',
      repeat: 2,
      optimizer_type: 'random',
      parameters: 'temperature: 20..120, time: 1..60',
      objectives: 'run.yield:max',
      existing_data: hist.body.filename,
    });
    expect(plan.existing).toEqual([{ params: { temperature: 40, time: 10 }, values: { 'run.yield': 0.1 } }]);
  });

  it('rebuilds the optimizer from the records when a campaign resumes', async () => {
    const { runtime } = lab;
    const task = await runtime.campaigns.submit(
      { workflow: 'react', repeat: 3, optimizer_type: 'random', seed: 1, parameters: 'temperature: 20..120, time: 1..60', objectives: [{ name: 'run.yield', minimize: false }] },
      null,
    );
    await until(async () => (await runtime.store.queue.get(task.id))?.status === 'done');
    const phases = (await runtime.store.phases.list((await runtime.store.queue.get(task.id))!.runId!)).filter((p) => p.phase === 'main');
    const logs: string[] = [];
    const source = await runtime.campaigns.source({ task, runId: 0, payload: task.payload as never, done: phases, log: async (m) => void logs.push(m) });
    expect(logs[0]).toContain('rebuilt from 0 warm-start row(s) and 3 measurement(s)');
    // a recorded iteration keeps the parameters it ran with
    expect(await source.params(0, phases[0].params as Record<string, unknown>)).toEqual(phases[0].params);
  });

  it('runs a constrained campaign with a fixed and a stepped parameter: every experiment satisfies the constraints, and the record says so', async () => {
    const res = await lab.admin.post('/app/executions/campaign').type('form').send({
      workflow: 'react',
      repeat: '6',
      optimizer_type: 'gp',
      batch_size: '2',
      seed: '3',
      parameters: 'temperature: 20..120 step 5, time: 1..60',
      parameter_constraints: 'temperature + 2*time <= 100\ntime >= 5',
      objectives: 'run.yield:max',
      'config.initial_points': '3',
    });
    expect(res.status).toBe(400); // a stepped parameter cannot be constrained: said, not ignored
    expect(res.text).toContain('&quot;temperature&quot; in &quot;temperature + 2*time &lt;= 100&quot; is stepped');
    const ok = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({
        workflow: 'react',
        repeat: 6,
        optimizer_type: 'gp',
        batch_size: 2,
        seed: 3,
        parameters: [
          { name: 'temperature', type: 'range', bounds: [20, 120] },
          { name: 'time', type: 'range', bounds: [1, 60], step: 1 },
        ],
        parameter_constraints: '["temperature + 2*time <= 100"]',
        objectives: 'run.yield:max',
        config: { initial_points: 3 },
      })
      .expect(400);
    expect(ok.body.error.details[0]).toEqual({ field: 'parameter_constraints[0]', message: '"time" in "temperature + 2*time <= 100" is stepped: constraints apply to continuous range parameters' });
    const started = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({
        workflow: 'react',
        repeat: 6,
        optimizer_type: 'gp',
        batch_size: 2,
        seed: 3,
        parameters: 'temperature: 20..120, time: 1..60',
        parameter_constraints: ['temperature + 2*time <= 100', 'time >= 5'],
        objectives: 'run.yield:max',
        config: { initial_points: 3 },
      })
      .expect(200);
    await until(async () => (await lab.runtime.store.queue.get(started.body.task_id))?.status === 'done');
    const plot = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    expect(plot.points).toHaveLength(6);
    for (const p of plot.points) {
      expect(p.params.temperature + 2 * p.params.time).toBeLessThanOrEqual(100 + 1e-9);
      expect(p.params.time).toBeGreaterThanOrEqual(5 - 1e-9);
    }
    const record = await lab.admin.get(`/app/executions/records/${plot.campaign.run_id}`).set('Accept', J).expect(200);
    expect(record.body.campaign.constraints).toEqual(['temperature + 2*time <= 100', 'time >= 5']);
    // a fixed parameter and a stepped one, in the short text form
    const fixed = await lab.runtime.campaigns.plan({
      workflow: 'react',
      repeat: 2,
      optimizer_type: 'sobol',
      seed: 1,
      parameters: 'temperature: 20..120 step 5, time: = 30',
      objectives: 'run.yield:max',
    });
    expect(fixed.space).toEqual([
      { name: 'temperature', type: 'range', bounds: [20, 120], step: 5 },
      { name: 'time', type: 'fixed', value: 30 },
    ]);
    // a constraint may name a fixed parameter: its value moves to the right-hand side (temperature <= 70)
    const source = await lab.runtime.campaigns.source({
      task: { id: 0 } as never,
      runId: 0,
      payload: await lab.runtime.campaigns.plan({
        workflow: 'react',
        repeat: 8,
        batch_size: 8,
        optimizer_type: 'random',
        seed: 1,
        parameters: 'temperature: 20..120, time: = 30',
        parameter_constraints: 'temperature + time <= 100',
        objectives: 'run.yield:max',
      }),
      done: [],
      log: async () => undefined,
    });
    for (let i = 0; i < 8; i++) {
      const p = await source.params(i, undefined);
      expect(p.time).toBe(30);
      expect(p.temperature).toBeLessThanOrEqual(70);
    }
  });

  it('refuses bad constraints and kinds before anything is queued, naming the field and the parameter', async () => {
    const base = { workflow: 'react', repeat: 4, optimizer_type: 'sobol', parameters: 'temperature: 20..120, time: 1..60', objectives: 'run.yield:max' };
    const cases: [Record<string, unknown>, string, string | RegExp][] = [
      [{ ...base, parameter_constraints: ['temperature + * time <= 10'] }, 'parameter_constraints[0]', 'cannot read "temperature + * time <= 10" at column 15: expected a number or a name, found "*"'],
      [
        { ...base, parameter_constraints: ['temperature + pressure <= 10'] },
        'parameter_constraints[0]',
        '"pressure" in "temperature + pressure <= 10" is not a searched parameter (the parameters: temperature, time)',
      ],
      [
        { ...base, parameter_constraints: ['temperature + time <= 30', 'time >= 20'] },
        'parameter_constraints',
        'no point within the bounds satisfies all of "temperature + time <= 30", "time >= 20" at once',
      ],
      [{ ...base, parameter_constraints: '[not json' }, 'parameter_constraints', /^is not valid JSON/],
      [{ ...base, parameters: 'temperature: log 0..120' }, 'parameters[0].bounds', '"temperature" is searched on a log scale: its bounds must be above 0, and low is 0'],
      [{ ...base, parameters: 'temperature: 20..120 step 7' }, 'parameters[0].step', '"temperature": the step 7 does not divide the range 20..120 (100)'],
      [
        {
          ...base,
          parameters: [
            { name: 'temperature', type: 'fixed', value: 200, bounds: [20, 120] },
            { name: 'time', type: 'range', bounds: [1, 60] },
          ],
        },
        'parameters[0].value',
        '"temperature" is fixed at 200, outside its bounds 20..120',
      ],
      [{ ...base, parameters: 'temperature: = hot, time: 1..60' }, 'parameters[0].value', '"temperature" is a number parameter, and "hot" is not'],
      [{ ...base, outcome_constraints: ['purity >= 0.9'] }, 'outcome_constraints[0]', '"purity" is not an output of react (its outputs: run.yield)'],
      [{ ...base, stop_when: 'run.yield > 0.95' }, 'stop_when[0]', 'cannot read "run.yield > 0.95" at column 11: write >= (a constraint includes its boundary)'],
    ];
    for (const [body, field, message] of cases) {
      const res = await lab.admin.post('/app/executions/campaign').set('Accept', J).send(body);
      expect({ field, status: res.status, body: res.status === 400 ? null : res.body }).toEqual({ field, status: 400, body: null });
      expect(res.body.error.details).toContainEqual({ field, message: typeof message === 'string' ? message : expect.stringMatching(message) });
    }
    expect(await lab.runtime.store.queue.open()).toEqual([]);
  });

  it('stop_when ends a campaign early, saying why; a measurement that misses an outcome constraint never counts as the best', async () => {
    const started = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ workflow: 'react', repeat: 30, optimizer_type: 'random', seed: 1, parameters: 'temperature: 70..100, time: 15..35', objectives: 'run.yield:max', stop_when: 'run.yield >= 0.8' })
      .expect(200);
    await until(async () => (await lab.runtime.store.queue.get(started.body.task_id))?.status === 'done');
    const plot = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    expect(plot.points.length).toBeLessThan(30);
    const last = plot.points.at(-1);
    expect(last.values['run.yield']).toBeGreaterThanOrEqual(0.8);
    expect(plot.points.slice(0, -1).every((p: { values: Record<string, number> }) => p.values['run.yield'] < 0.8)).toBe(true);
    expect(plot.campaign.stopped_early).toBe(`run.yield = ${last.values['run.yield']} met stop_when "run.yield >= 0.8"`);
    const record = await lab.admin.get(`/app/executions/records/${plot.campaign.run_id}`).set('Accept', J).expect(200);
    expect(record.body).toMatchObject({ status: 'completed', campaign: { stop_when: ['run.yield >= 0.8'] } });
    expect((await lab.runtime.store.phases.list(plot.campaign.run_id)).filter((ph) => ph.phase === 'main')).toHaveLength(plot.points.length);
    const logs = await lab.runtime.store.logs.list(plot.campaign.run_id);
    expect(logs.map((l: { message: string }) => l.message)).toContainEqual(expect.stringMatching(/^Campaign stopped early after iteration \d+ of 30: run.yield = [\d.]+ met stop_when/));

    const limited = await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({ workflow: 'react', repeat: 8, optimizer_type: 'sobol', seed: 2, parameters: 'temperature: 20..120, time: 1..60', objectives: 'run.yield:max', outcome_constraints: ['run.yield <= 0.4'] })
      .expect(200);
    await until(async () => (await lab.runtime.store.queue.get(limited.body.task_id))?.status === 'done');
    const p2 = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    const yields = p2.points.map((p: { values: Record<string, number> }) => p.values['run.yield']);
    expect(Math.max(...yields)).toBeGreaterThan(0.4); // sobol measured some beyond the limit …
    expect(Math.max(...p2.best_so_far.map((b: { value: number }) => b.value))).toBe(Math.max(...yields.filter((y: number) => y <= 0.4))); // … and none of them is the best
    expect(p2.model).toMatchObject({ outcome_constraints: ['run.yield <= 0.4'], feasible: yields.filter((y: number) => y <= 0.4).length });
  });
});
