/**
 * The campaign page's form for issue 14: parameter constraints, outcome limits, the early stop, fixed /
 * stepped / log-scale parameters and objective weights, posted as the page posts them (form fields), and
 * every 400 shown beside the field it names, with the form kept as typed.
 */
import { startLab, type TestLab } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

const J = 'application/json';

/** A mixture over the demo deck: three solvents dosed by the pump, then the reactor at a temperature for a time. */
const MIX = {
  name: 'mix',
  parameters: [
    { name: 'water', type: 'number', default: 0.4 },
    { name: 'ethanol', type: 'number', default: 0.3 },
    { name: 'dmso', type: 'number', default: 0.3 },
    { name: 'temperature', type: 'number', default: 60 },
    { name: 'time', type: 'number', default: 20 },
    { name: 'note', type: 'string', default: 'a' },
  ],
  outputs: ['run.yield', 'dmso_ml'],
  main: [
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'water' } } },
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'ethanol' } } },
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'dmso' } }, save_as: 'dmso_ml' },
    { kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { param: 'time' } }, save_as: 'run' },
  ],
};

/** The page's fields for the mixture: the three fractions searched, temperature fixed, time stepped. */
const FORM: Record<string, string> = {
  workflow: 'mix',
  repeat: '6',
  optimizer_type: 'gp',
  seed: '5',
  'config.initial_points': '3',
  'param.water.use': 'on',
  'param.water.type': 'range',
  'param.water.low': '0.05',
  'param.water.high': '0.9',
  'param.ethanol.use': 'on',
  'param.ethanol.type': 'range',
  'param.ethanol.low': '0.05',
  'param.ethanol.high': '0.9',
  'param.dmso.use': 'on',
  'param.dmso.type': 'range',
  'param.dmso.low': '0.05',
  'param.dmso.high': '0.9',
  'param.temperature.use': 'on',
  'param.temperature.type': 'fixed',
  'param.temperature.value': '85',
  'param.time.use': 'on',
  'param.time.type': 'range',
  'param.time.low': '10',
  'param.time.high': '40',
  'param.time.step': '5',
  parameter_constraints: 'water + ethanol + dmso == 1\n\nethanol <= 2*water',
  outcome_constraints: 'run.yield >= 0.05',
  stop_when: 'run.yield >= 0.99',
  'objective.run.yield': 'max',
  'objective.run.yield.weight': '3',
  'objective.dmso_ml': 'min',
  'objective.dmso_ml.weight': '1',
};

/** The HTML from the first `start` on to the next `end` after it (both included in the search, not the answer's end). */
function between(html: string, start: string, end: string): string {
  const i = html.indexOf(start);
  if (i < 0) throw new Error(`no ${start} in the page`);
  const j = html.indexOf(end, i + start.length);
  return html.slice(i, j < 0 ? undefined : j);
}
const row = (html: string, name: string) => between(html, `<tr data-param="${name}"`, '</tr>');
const objectiveRow = (html: string, name: string) => between(html, `<tr data-objective="${name}"`, '</tr>');
/** The opening tag of the element whose name attribute is `name`. */
const tag = (html: string, name: string) => {
  const at = html.indexOf(`name="${name}"`);
  if (at < 0) throw new Error(`no field ${name} in the page`);
  return html.slice(html.lastIndexOf('<', at), html.indexOf('>', at) + 1);
};
/** A field as the page shows it: its tag, and a textarea's text. */
const field = (html: string, name: string) => (tag(html, name).startsWith('<textarea') ? between(html, `name="${name}"`, '</textarea>') : tag(html, name));
/** The textarea's field block: from its label to its hint (where its messages are). */
const listBlock = (html: string, id: string) => between(html, `for="${id}"`, `id="${id}-hint"`);

describe('the campaign page: constraints, parameter kinds, limits and weights', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
    await lab.runtime.store.workflows.save(MIX.name, MIX, null);
  });
  afterAll(() => lab.close());

  it('offers every field: constraints with their syntax, fixed/step/log inputs where they apply, a weight per objective', async () => {
    const html = (await lab.admin.get('/app/executions/campaign?workflow=mix').expect(200)).text;
    expect(tag(html, 'parameter_constraints')).toMatch(/^<textarea [^>]*placeholder="water \+ ethanol &lt;= 1"/);
    expect(listBlock(html, 'campaign-constraints') + between(html, 'id="campaign-constraints-hint"', '</div>')).toContain('<code>water + ethanol + dmso == 1</code>');
    expect(tag(html, 'outcome_constraints')).toMatch(/^<textarea /);
    expect(tag(html, 'stop_when')).toMatch(/placeholder="run.yield &gt;= 0.95"/);
    // a number parameter: range, int or fixed; its step and log scale enabled, its fixed value hidden until chosen
    const water = row(html, 'water');
    expect([...water.matchAll(/<option value="(\w+)"/g)].map((m) => m[1])).toEqual(['range', 'int', 'fixed']);
    expect(tag(water, 'param.water.step')).not.toContain('disabled');
    expect(tag(water, 'param.water.log_scale')).toMatch(/type="checkbox"/);
    expect(tag(water, 'param.water.log_scale')).not.toContain('disabled');
    expect(tag(water, 'param.water.value')).toMatch(/disabled="" hidden=""/);
    // a string parameter: a choice or fixed; no bounds, step or log scale
    const note = row(html, 'note');
    expect([...note.matchAll(/<option value="(\w+)"/g)].map((m) => m[1])).toEqual(['choice', 'fixed']);
    for (const k of ['low', 'high', 'step', 'log_scale']) expect(tag(note, `param.note.${k}`)).toContain('disabled');
    expect(tag(note, 'param.note.choices')).not.toContain('disabled');
    // two outputs: a weight each, enabled for the chosen objective only
    expect(tag(objectiveRow(html, 'run.yield'), 'objective.run.yield.weight')).not.toContain('disabled');
    expect(tag(objectiveRow(html, 'dmso_ml'), 'objective.dmso_ml.weight')).toContain('disabled');
  });

  it('starts a mixture campaign from the page: the constraints, the fixed and stepped parameters, the limits and the weights all reach it', async () => {
    const res = await lab.admin.post('/app/executions/campaign').type('form').send(FORM).expect(302);
    expect(res.headers.location).toBe('/app/executions/config?workflow=mix');
    const first = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    const task = (await lab.runtime.store.queue.get(first.campaign.task_id))!;
    expect(task.payload).toMatchObject({
      space: [
        { name: 'water', type: 'range', bounds: [0.05, 0.9] },
        { name: 'ethanol', type: 'range', bounds: [0.05, 0.9] },
        { name: 'dmso', type: 'range', bounds: [0.05, 0.9] },
        { name: 'temperature', type: 'fixed', value: 85 },
        { name: 'time', type: 'range', bounds: [10, 40], step: 5 },
      ],
      constraints: ['water + ethanol + dmso == 1', 'ethanol <= 2*water'],
      outcome_constraints: ['run.yield >= 0.05'],
      stop_when: ['run.yield >= 0.99'],
      objectives: [
        { name: 'run.yield', minimize: false, weight: 3 },
        { name: 'dmso_ml', minimize: true, weight: 1 },
      ],
    });
    await waitFor(async () => (await lab.runtime.store.queue.get(task.id))!.status === 'done', 'the campaign to finish', 30_000, 50);
    const plot = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    expect(plot.points).toHaveLength(6);
    for (const { params } of plot.points) {
      expect(Math.abs(params.water + params.ethanol + params.dmso - 1)).toBeLessThan(1e-9);
      expect(params.ethanol).toBeLessThanOrEqual(2 * params.water + 1e-9);
      expect(params.temperature).toBe(85);
      expect([10, 15, 20, 25, 30, 35, 40]).toContain(params.time);
    }
    // its record shows the fixed value, and says that the numbers it shows are rounded
    const record = (await lab.admin.get(`/app/executions/records/${plot.campaign.run_id}`).expect(200)).text;
    expect(record).toContain('<td><code>temperature</code></td><td>fixed</td><td>fixed at 85</td>');
    expect(record).toContain('Numbers are shown rounded to 6 significant digits: hover over one for its full value');
  });

  it('shows each 400 beside the field it names and keeps the form as typed', async () => {
    const post = async (fields: Record<string, string>) =>
      (
        await lab.admin
          .post('/app/executions/campaign')
          .type('form')
          .send({ ...FORM, ...fields })
          .expect(400)
      ).text;

    // a bad line of the constraints: its message under the textarea, which keeps the text, escaped
    let html = await post({ parameter_constraints: 'water + ethanol + dmso == 1\nwater + ethnol <= 0.8 </textarea><b>' });
    expect(listBlock(html, 'campaign-constraints')).toContain('parameter_constraints[1]: cannot read');
    expect(tag(html, 'parameter_constraints')).toContain('is-invalid');
    expect(field(html, 'parameter_constraints')).toContain('water + ethanol + dmso == 1\nwater + ethnol &lt;= 0.8 &lt;/textarea&gt;&lt;b&gt;');
    html = await post({ parameter_constraints: 'water + ethanol + dmso == 1\nwater + ethnol <= 0.8' });
    expect(listBlock(html, 'campaign-constraints')).toContain('parameter_constraints[1]: &quot;ethnol&quot; in &quot;water + ethnol &lt;= 0.8&quot; is not a searched parameter');
    // the rest of the form as typed: the fixed value, the step, the weights, the limits
    expect(tag(html, 'param.temperature.value')).toContain('value="85"');
    expect(tag(html, 'param.temperature.value')).not.toMatch(/ (hidden|disabled)=/);
    expect(row(html, 'temperature')).toMatch(/<option value="fixed" selected=""/);
    expect(tag(html, 'param.time.step')).toContain('value="5"');
    expect(tag(html, 'objective.run.yield.weight')).toContain('value="3"');
    expect(field(html, 'outcome_constraints')).toContain('run.yield &gt;= 0.05');
    expect(field(html, 'stop_when')).toContain('run.yield &gt;= 0.99');

    // each message beside its field, that input marked: the limits, a parameter's step, fixed value, log
    // scale or a field the page does not have (the route's own check), an objective's weight
    const cases: [Record<string, string>, (html: string) => string, string, string | null][] = [
      [
        { outcome_constraints: 'run.yield >= 0.05\npurity >= 0.9' },
        (h) => listBlock(h, 'campaign-outcome-constraints'),
        'outcome_constraints[1]: &quot;purity&quot; is not an output of mix',
        'outcome_constraints',
      ],
      [{ stop_when: 'run.yield > 0.99' }, (h) => listBlock(h, 'campaign-stop-when'), 'stop_when[0]: cannot read &quot;run.yield &gt; 0.99&quot; at column 11', 'stop_when'],
      [{ 'param.time.step': '7' }, (h) => row(h, 'time'), 'parameters[4].step: &quot;time&quot;: the step 7 does not divide the range 10..40 (30)', 'param.time.step'],
      [{ 'param.temperature.value': 'hot' }, (h) => row(h, 'temperature'), 'parameters[3].value: &quot;temperature&quot; is a number parameter, and &quot;hot&quot; is not', 'param.temperature.value'],
      [
        { parameter_constraints: '', 'param.time.step': '', 'param.time.low': '0', 'param.time.log_scale': 'on' },
        (h) => row(h, 'time'),
        'parameters[4].bounds: &quot;time&quot; is searched on a log scale',
        'param.time.low',
      ],
      [{ 'param.time.steps': '5' }, (h) => row(h, 'time'), 'param.time.steps: is not a field of a parameter', null],
      [{ 'objective.dmso_ml.weight': '-1' }, (h) => objectiveRow(h, 'dmso_ml'), 'objectives[1].weight: must be a number above 0', 'objective.dmso_ml.weight'],
    ];
    for (const [fields, place, message, input] of cases) {
      html = await post(fields);
      expect(place(html)).toContain(message);
      if (input) expect({ input, tag: tag(html, input) }).toEqual({ input, tag: expect.stringContaining('is-invalid') });
      // only that input: the others of the row are not marked
      for (const other of ['param.water.low', 'param.time.step', 'param.time.log_scale', 'objective.run.yield.weight'].filter((o) => o !== input))
        expect({ other, tag: tag(html, other) }).toEqual({ other, tag: expect.not.stringContaining('is-invalid') });
      // and the form as typed
      for (const [k, v] of Object.entries(fields))
        if (v && input) expect({ k, field: field(html, k) }).toEqual({ k, field: expect.stringContaining(v === 'on' ? 'checked=""' : v.replace(/>/g, '&gt;')) });
    }
    html = await post({ 'objective.dmso_ml.weight': '' });
    expect(between(html, 'id="campaign-objectives"', 'Limits on the outputs')).toContain('objectives: give every objective a weight, or none');
    expect(await lab.runtime.store.queue.open()).toEqual([]);
  });
});
