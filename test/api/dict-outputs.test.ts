/**
 * Dict results, the ivoryOS norm (issue 25 §3): a driver method that returns a dict reports its fields as
 * outputs. A campaign takes a field of a dict output as its objective (`run.yield:max` when the workflow
 * reports the whole `run`), in the short text form and as JSON, and its runs record that field as a number;
 * the campaign page proposes only an output the deck declares a number.
 */
import { startLab, until, type TestLab } from './helpers.js';

const J = 'application/json';

/** The demo reactor's run returns { yield }; the workflow reports the whole dict (`run`) and a text (`label`). */
const WHOLE = {
  name: 'whole',
  parameters: [
    { name: 'temperature', type: 'number', default: 60 },
    { name: 'time', type: 'number', default: 10 },
  ],
  outputs: ['label', 'run', { name: 'product', from: 'run.yield' }],
  main: [
    { kind: 'call', instrument: 'noop', method: 'ping', save_as: 'label' },
    { kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { param: 'time' } }, save_as: 'run' },
  ],
};

/** The stirrer is plain code: its `program` returns a dict nothing declares ({ steps, last_rpm }). */
const PLAIN = {
  name: 'plain',
  parameters: [{ name: 'rpm', type: 'number', default: 300 }],
  outputs: ['prog'],
  main: [
    { kind: 'call', instrument: 'stirrer', method: 'set_speed', args: { rpm: { param: 'rpm' } } },
    { kind: 'call', instrument: 'stirrer', method: 'program', args: { steps: { value: [1, 2] } }, save_as: 'prog' },
  ],
};

let lab: TestLab;
beforeAll(async () => {
  lab = await startLab();
  for (const wf of [WHOLE, PLAIN]) await lab.runtime.store.workflows.save(wf.name, wf, null);
});
afterAll(() => lab.close());

const start = (body: Record<string, unknown>) => lab.admin.post('/app/executions/campaign').set('Accept', J).send(body);
const done = (taskId: number) => until(async () => (await lab.runtime.store.queue.get(taskId))?.status === 'done');

describe('a field of a dict output as a campaign objective', () => {
  it('takes run.yield:max when the workflow reports the whole run, records it in every iteration, and plots it', async () => {
    const res = await start({ workflow: 'whole', repeat: 3, optimizer_type: 'sobol', seed: 1, parameters: 'temperature: 20..120', objectives: 'run.yield:max' }).expect(200);
    await done(res.body.task_id);
    const plot = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    expect(plot.points).toHaveLength(3);
    for (const p of plot.points) expect(typeof p.values['run.yield']).toBe('number');
    expect(plot.best_so_far).toHaveLength(3);
    const phases = (await lab.runtime.store.phases.list(plot.campaign.run_id)).filter((ph) => ph.phase === 'main');
    for (const ph of phases) expect(ph.outputs).toMatchObject({ label: 'pong', run: { yield: expect.any(Number) }, 'run.yield': expect.any(Number) });
  });

  it('takes the JSON objectives too, an output with a name of its own, and a field of a dict nothing declares', async () => {
    const json = await start({ workflow: 'whole', repeat: 1, optimizer_type: 'random', seed: 2, parameters: 'temperature: 20..120', objectives: [{ name: 'run.yield', minimize: true }] }).expect(200);
    await done(json.body.task_id);
    const named = await start({ workflow: 'whole', repeat: 1, optimizer_type: 'random', seed: 2, parameters: 'temperature: 20..120', objectives: 'product:max' }).expect(200);
    await done(named.body.task_id);
    expect((await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body.points[0].values.product).toEqual(expect.any(Number));
    const plain = await start({ workflow: 'plain', repeat: 2, optimizer_type: 'random', seed: 3, parameters: 'rpm: 100..900', objectives: 'prog.last_rpm:max' }).expect(200);
    await done(plain.body.task_id);
    const points = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body.points;
    expect(points.map((p: { values: Record<string, unknown> }) => typeof p.values['prog.last_rpm'])).toEqual(['number', 'number']);
  });

  it('refuses the whole dict, a text, and a name that is no output nor a field of one, naming the field', async () => {
    const base = { workflow: 'whole', repeat: 2, optimizer_type: 'sobol', parameters: 'temperature: 20..120' };
    const cases: [string, string][] = [
      ['run:max', '"run" is an object (the declared result of reactor.run), and an objective must be a number: choose run.yield'],
      ['label:max', '"label" is string (the declared result of noop.ping), and an objective must be a number'],
      ['cell.current_ma:max', '"cell.current_ma" is not an output of whole (its outputs: label, run, product)'],
    ];
    for (const [objectives, message] of cases) {
      const res = await start({ ...base, objectives }).expect(400);
      expect(res.body.error.details).toContainEqual({ field: 'objectives[0].name', message });
    }
  });
});

describe('the campaign page', () => {
  it('proposes the first output declared a number, never a dict or a text before it', async () => {
    const goal = (html: string, name: string) => {
      const at = html.indexOf(`name="objective.${name}"`);
      if (at < 0) throw new Error(`no objective.${name} in the page`);
      const select = html.slice(at, html.indexOf('</select>', at));
      return /<option value="(\w*)" selected=""/.exec(select)?.[1] ?? '';
    };
    const html = (await lab.admin.get('/app/executions/campaign?workflow=whole').expect(200)).text;
    expect([goal(html, 'label'), goal(html, 'run'), goal(html, 'product')]).toEqual(['', '', 'max']);
    // nothing declared a number: nothing is proposed
    const plain = (await lab.admin.get('/app/executions/campaign?workflow=plain').expect(200)).text;
    expect(goal(plain, 'prog')).toBe('');
  });
});
