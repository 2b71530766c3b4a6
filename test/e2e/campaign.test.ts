import type { BrowserContext, Locator, Page } from 'playwright-core';
import { login, pageErrors, serverAndBrowser } from './server.js';

/** The demo reactor as a workflow: its `run` returns { yield }, saved as `out`; a short wait makes the growth visible. */
const REACTOR_WORKFLOW = {
  name: 'reactor-opt',
  description: 'The demo reactor, for optimization',
  parameters: [
    { name: 'temperature', type: 'number', default: 80 },
    { name: 'time', type: 'number', default: 20 },
  ],
  outputs: ['out.yield'],
  main: [
    { kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { param: 'time' } }, save_as: 'out' },
    { kind: 'wait', seconds: 0.35 },
  ],
};
const OBJECTIVE = 'out.yield';

/** A mixture: three solvents dosed by the demo pump (their fractions), then the reactor at a temperature for a time. */
const MIXTURE_WORKFLOW = {
  name: 'mixture-opt',
  parameters: ['water', 'ethanol', 'dmso', 'temperature', 'time'].map((name) => ({ name, type: 'number', default: name === 'temperature' ? 60 : name === 'time' ? 20 : 0.3 })),
  outputs: ['out.yield', 'dmso_ml'],
  main: [
    ...['water', 'ethanol', 'dmso'].map((s) => ({ kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: s } }, ...(s === 'dmso' ? { save_as: 'dmso_ml' } : {}) })),
    { kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { param: 'time' } }, save_as: 'out' },
  ],
};

/** Submit the campaign form and land on the execution page; a rejected form fails with the page's error. */
async function start(page: Page) {
  await page.locator('#campaign-start').click();
  await page.waitForURL(/\/app\/executions\/(config|campaign)/);
  await page.waitForLoadState();
  if (/\/executions\/campaign/.test(page.url())) throw new Error(`the campaign was refused: ${await page.locator('.alert-danger').first().textContent()}`);
}

/** Tick each parameter's row of the campaign form and give its range. */
async function searchRanges(form: Locator, ranges: string[][]) {
  for (const [name, low, high] of ranges) {
    await form.locator(`input[name="param.${name}.use"]`).check();
    await form.locator(`input[name="param.${name}.low"]`).fill(low);
    await form.locator(`input[name="param.${name}.high"]`).fill(high);
  }
}

/** Watch #campaign's data-points (set by the page script on each draw); resolve with every value seen. */
async function watchPoints(page: Page, until: { points: number; status: string }, timeoutMs: number): Promise<number[]> {
  const seen: number[] = [];
  const end = Date.now() + timeoutMs;
  for (;;) {
    const [points, status] = await page.locator('#campaign').evaluate((el: HTMLElement) => [el.dataset.points ?? '', el.dataset.status ?? '']);
    if (points !== '' && seen[seen.length - 1] !== Number(points)) seen.push(Number(points));
    if (Number(points) === until.points && status === until.status) return seen;
    if (Date.now() > end) throw new Error(`the campaign plot stopped at ${points} point(s), status ${status}; seen ${seen.join(', ')}`);
    await page.waitForTimeout(50);
  }
}

describe('a scientist running a campaign in Chromium', () => {
  const lab = serverAndBrowser();
  let context: BrowserContext;
  beforeAll(async () => {
    context = await lab.browser.newContext({ viewport: { width: 1400, height: 1000 } });
    await login(await context.newPage(), lab.server.base);
    const res = await context.request.post(`${lab.server.base}/workflows`, { data: REACTOR_WORKFLOW, headers: { Accept: 'application/json' } });
    expect(res.status()).toBe(201);
  });

  it('sets a campaign up on the reactor from the page and watches its plot grow until the run completes', async () => {
    const page = await context.newPage();
    // no console noise either: before any campaign the panel does not even ask latest_plot (it would answer 404)
    const errors = pageErrors(page);

    // before any campaign, the execution page hides the panel (latest_plot answers 404) and links to the setup
    await page.goto(`${lab.server.base}/executions/config`);
    await page.click('#campaign-start-link a');
    await page.waitForURL(/\/app\/executions\/campaign\?workflow=reactor-opt$/); // the link keeps the workflow chosen
    await expect(page.locator('#campaign-pick-workflow').inputValue()).resolves.toBe('reactor-opt');

    // one row per parameter, one objective row per output; the optimizers are introduced in a sentence
    await expect(page.locator('#campaign-params tbody tr').count()).resolves.toBe(2);
    await expect(page.locator('#campaign-intro').textContent()).resolves.toMatch(/sobol.*quasi-random/i);
    const form = page.locator('#campaign-form');
    await searchRanges(form, [
      ['temperature', '20', '120'],
      ['time', '1', '60'],
    ]);
    await expect(form.locator(`select[name="objective.${OBJECTIVE}"]`).inputValue()).resolves.toBe('max');
    // only the selected optimizer's options are shown (and sent)
    await form.locator('#campaign-optimizer').selectOption('sobol');
    await expect(form.locator('fieldset[data-optimizer=sobol]').isVisible()).resolves.toBe(true);
    await expect(form.locator('fieldset[data-optimizer=gp]').isVisible()).resolves.toBe(false);
    await form.locator('input[name=repeat]').fill('6');
    await form.locator('input[name=seed]').fill('7');
    await form.locator('input[name=name]').fill('reactor <sweep>');
    // the execution page, where the campaign panel appears and grows with each iteration
    await start(page);
    await page.locator('#campaign').waitFor({ state: 'visible' });
    await expect(page.locator('#campaign-name').textContent()).resolves.toBe('reactor <sweep>');
    const seen = await watchPoints(page, { points: 6, status: 'done' }, 30_000);
    expect(seen[seen.length - 1]).toBe(6);
    expect(seen.length).toBeGreaterThanOrEqual(3); // it was seen growing, not only finished
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    await expect(page.locator('#campaign-chart canvas').count()).resolves.toBeGreaterThan(0);
    await expect(page.locator('#campaign-summary').textContent()).resolves.toMatch(/6 of 6 measured · best out\.yield 0\.\d+ at temperature = /);
    await expect(page.locator('#campaign-note').textContent()).resolves.toContain('sobol builds no model');

    // the SVG link: the same campaign as an image, its name escaped
    const href = await page.locator('#campaign-svg').getAttribute('href');
    const svg = await context.request.get(new URL(href!, lab.server.base).toString());
    expect(svg.status()).toBe(200);
    expect(svg.headers()['content-type']).toContain('image/svg+xml');
    const body = await svg.text();
    expect(body.match(/<circle class="point"/g)).toHaveLength(6);
    expect(body).toContain('Campaign: reactor &lt;sweep&gt;');
    expect(errors).toEqual([]);
  });

  it('starts gp from uploaded measurements: a bad field is named, the form kept, and the model surface drawn', async () => {
    const page = await context.newPage();
    // the one 400 below is expected (the server's answer to bad bounds); anything else is a fault
    const errors = pageErrors(page, 'status of 400');
    await page.goto(`${lab.server.base}/executions/campaign?workflow=reactor-opt`);
    // a warm start: earlier measurements uploaded as a history CSV, then chosen in the form
    await page.setInputFiles('input[type=file][name=file]', {
      name: 'earlier.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('temperature,time,out.yield\n60,40,0.41\n100,10,0.38\n40,50,0.12\n'),
    });
    await page.click('form[enctype="multipart/form-data"] button[type=submit]');
    await page.waitForURL(/uploaded=/);
    const form = page.locator('#campaign-form');
    await form.locator('#existing_data').selectOption({ label: 'earlier.csv (3 rows)' });
    await form.locator('input[name="param.temperature.use"]').check();
    await form.locator('input[name="param.temperature.low"]').fill('120');
    await form.locator('input[name="param.temperature.high"]').fill('20');
    await form.locator('input[name="param.time.use"]').check();
    await form.locator('input[name="param.time.low"]').fill('1');
    await form.locator('input[name="param.time.high"]').fill('60');
    await form.locator('#campaign-optimizer').selectOption('gp');
    await form.locator('input[name=repeat]').fill('7');
    await form.locator('#campaign-start').click();
    await page.locator('[data-testid=field-error]').first().waitFor();
    await expect(page.locator('tr[data-param=temperature] [data-testid=field-error]').textContent()).resolves.toContain('parameters[0].bounds');
    await expect(form.locator('input[name="param.temperature.low"]').getAttribute('class')).resolves.toContain('is-invalid');
    await expect(form.locator('input[name="param.temperature.low"]').inputValue()).resolves.toBe('120');
    await expect(form.locator('#campaign-optimizer').inputValue()).resolves.toBe('gp');
    await expect(form.locator('fieldset[data-optimizer=gp]').isVisible()).resolves.toBe(true);
    await expect(form.locator('#existing_data option:checked').textContent()).resolves.toBe('earlier.csv (3 rows)');

    await form.locator('input[name="param.temperature.low"]').fill('20');
    await form.locator('input[name="param.temperature.high"]').fill('120');
    await start(page);
    await watchPoints(page, { points: 7, status: 'done' }, 30_000);
    // gp models two numeric parameters: a heatmap of its mean, with the measurements on it
    await expect(page.locator('#campaign').getAttribute('data-model')).resolves.toBe('2d');
    await expect(page.locator('#campaign-model canvas.campaign-heatmap').isVisible()).resolves.toBe(true);
    await expect(page.locator('#campaign-model-title').textContent()).resolves.toContain('temperature × time');
    await expect(page.locator('#campaign-summary').textContent()).resolves.toContain('7 of 7 measured (+ 3 warm-start)');
    const svg = await (await context.request.get(`${lab.server.base}/executions/latest_plot?format=svg`)).text();
    expect(svg.match(/<circle class="warm"/g)).toHaveLength(3);
    expect(svg.match(/<circle class="point"/g)).toHaveLength(7);
    expect(errors).toEqual([]);
  });
});

describe('a scientist setting a constrained mixture campaign up in Chromium', () => {
  const lab = serverAndBrowser();
  let context: BrowserContext;
  beforeAll(async () => {
    context = await lab.browser.newContext({ viewport: { width: 1400, height: 1000 } });
    await login(await context.newPage(), lab.server.base);
    for (const data of [REACTOR_WORKFLOW, MIXTURE_WORKFLOW]) {
      const res = await context.request.post(`${lab.server.base}/workflows`, { data, headers: { Accept: 'application/json' } });
      expect(res.status()).toBe(201);
    }
  });

  it('sets a mixture summing to 1 and a fixed temperature up on the page; every suggestion keeps to them', async () => {
    const page = await context.newPage();
    const errors = pageErrors(page, 'status of 400'); // the one mistyped constraint below
    await page.goto(`${lab.server.base}/executions/campaign?workflow=mixture-opt`);
    const form = page.locator('#campaign-form');
    await searchRanges(
      form,
      ['water', 'ethanol', 'dmso'].map((name) => [name, '0.05', '0.9']),
    );
    // fixed: its value input appears in place of the choices, and the bounds, step and log scale no longer apply
    const temperature = form.locator('tr[data-param=temperature]');
    await expect(temperature.locator('input[name="param.temperature.value"]').isVisible()).resolves.toBe(false);
    await temperature.locator('select[name="param.temperature.type"]').selectOption('fixed');
    await expect(temperature.locator('input[name="param.temperature.value"]').isVisible()).resolves.toBe(true);
    for (const k of ['low', 'high', 'step', 'log_scale']) await expect(temperature.locator(`input[name="param.temperature.${k}"]`).isDisabled()).resolves.toBe(true);
    await temperature.locator('input[name="param.temperature.value"]').fill('85');
    await form.locator('input[name="param.time.low"]').fill('10');
    await form.locator('input[name="param.time.high"]').fill('40');
    await form.locator('input[name="param.time.step"]').fill('5');
    // a weight only for an output chosen as an objective
    const dmsoWeight = form.locator('input[name="objective.dmso_ml.weight"]');
    await expect(dmsoWeight.isDisabled()).resolves.toBe(true);
    await form.locator('select[name="objective.dmso_ml"]').selectOption('min');
    await expect(dmsoWeight.isDisabled()).resolves.toBe(false);
    await form.locator('select[name="objective.dmso_ml"]').selectOption('');
    await expect(page.locator('#campaign-constraints-hint').textContent()).resolves.toContain('water + ethanol + dmso == 1');
    await form.locator('#campaign-constraints').fill('water + ethanol + dmso == 1\nwater + ethnol <= 0.8');
    await form.locator('#campaign-optimizer').selectOption('gp');
    await form.locator('fieldset[data-optimizer=gp] input[name="config.initial_points"]').fill('3');
    await form.locator('input[name=repeat]').fill('6');
    await form.locator('input[name=seed]').fill('11');
    await form.locator('#campaign-start').click();

    // the mistyped name: named beside the constraints, the rest of the form as it was
    await page.locator('[data-testid=field-error]').first().waitFor();
    const constraints = page.locator('#campaign-constraints');
    await expect(page.locator('#campaign-constraints ~ [data-testid=field-error]').textContent()).resolves.toContain(
      'parameter_constraints[1]: "ethnol" in "water + ethnol <= 0.8" is not a searched parameter',
    );
    await expect(constraints.getAttribute('class')).resolves.toContain('is-invalid');
    await expect(constraints.inputValue()).resolves.toBe('water + ethanol + dmso == 1\nwater + ethnol <= 0.8');
    await expect(form.locator('select[name="param.temperature.type"]').inputValue()).resolves.toBe('fixed');
    await expect(form.locator('input[name="param.temperature.value"]').isVisible()).resolves.toBe(true);
    await expect(form.locator('input[name="param.temperature.value"]').inputValue()).resolves.toBe('85');
    await expect(form.locator('input[name="param.time.step"]').inputValue()).resolves.toBe('5');
    await expect(form.locator('input[name="param.water.high"]').inputValue()).resolves.toBe('0.9');

    await constraints.fill('water + ethanol + dmso == 1');
    await start(page);
    await page.locator('#campaign').waitFor({ state: 'visible' });
    await watchPoints(page, { points: 6, status: 'done' }, 30_000);
    await expect(page.locator('#campaign-stopped').isVisible()).resolves.toBe(false);
    const plot = (await (await context.request.get(`${lab.server.base}/executions/latest_plot`, { headers: { Accept: 'application/json' } })).json()) as {
      campaign: { optimizer: string; run_id: number };
      points: { params: Record<string, number> }[];
    };
    expect(plot.campaign.optimizer).toBe('gp');
    expect(plot.points).toHaveLength(6);
    for (const { params } of plot.points) {
      expect(Math.abs(params.water + params.ethanol + params.dmso - 1)).toBeLessThan(1e-9);
      for (const s of ['water', 'ethanol', 'dmso']) expect(params[s]).toBeGreaterThanOrEqual(0.05 - 1e-12);
      expect(params.temperature).toBe(85);
      expect(params.time % 5).toBe(0);
    }
    // the run's record: what each experiment ran with, the fixed temperature among it
    const record = await context.request.get(`${lab.server.base}/executions/records/${plot.campaign.run_id}`, { headers: { Accept: 'application/json' } });
    expect((await record.json()).campaign).toMatchObject({ constraints: ['water + ethanol + dmso == 1'], space: expect.arrayContaining([{ name: 'temperature', type: 'fixed', value: 85 }]) });
    expect(errors).toEqual([]);
  });

  it('stops a campaign early when a measurement meets stop_when, and the panel says why', async () => {
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.goto(`${lab.server.base}/executions/campaign?workflow=reactor-opt`);
    const form = page.locator('#campaign-form');
    await searchRanges(form, [
      ['temperature', '20', '120'],
      ['time', '1', '60'],
    ]);
    await form.locator('#campaign-optimizer').selectOption('random');
    await form.locator('#campaign-stop-when').fill('out.yield >= 0');
    await form.locator('input[name=repeat]').fill('5');
    await start(page);
    await watchPoints(page, { points: 1, status: 'done' }, 30_000);
    await page.locator('#campaign-stopped').waitFor({ state: 'visible' });
    await expect(page.locator('#campaign-stopped').textContent()).resolves.toMatch(/^Stopped early after 1 of 5 experiments: out\.yield = [\d.]+ met stop_when "out\.yield >= 0"\.$/);
    expect(errors).toEqual([]);
  });
});

/**
 * The whole story of issue 11 in the browser, on its own server (no workflow made through the API, no
 * earlier campaign): build the reactor workflow in the builder, set a gp campaign up on it, run it, and see
 * the optimizer do better than its initial design.
 *
 * Why the improvement assertion means something: gp measures INITIAL scrambled-Sobol points first, then
 * suggests from its Gaussian-process model. With seed 7 over temperature 20-120 °C and time 1-60 min the
 * three initial points reach a yield of 0.42 at best (none near the optimum, 85 °C and 25 min, yield 0.92:
 * plugins/sim-reactor.ts); the model's suggestions reach 0.92 by the 6th experiment. The seed fixes the
 * suggestions, and the demo reactor's noise (sd 0.01) is far smaller than the gaps checked, so the test is
 * steady. Beating the initial points alone would prove little (more quasi-random points usually do too:
 * the same seed's Sobol design continued to 9 points peaks at 0.79), so the best must also pass 0.85, which
 * only a working model phase reaches within this budget. Simulated over 30 seeds with this budget, gp
 * improved on every one whose initial design had not landed on the optimum by chance.
 */
describe('a scientist building the reactor campaign in the UI', () => {
  const lab = serverAndBrowser();
  let context: BrowserContext;
  const SEED = 7;
  const BUDGET = 9;
  const INITIAL = 3;
  beforeAll(async () => {
    context = await lab.browser.newContext({ viewport: { width: 1400, height: 1000 } });
    await login(await context.newPage(), lab.server.base);
  });

  it('builds the reactor workflow, runs a gp campaign on it from the page, and sees the optimizer improve', async () => {
    const page = await context.newPage();
    const errors = pageErrors(page);

    // 1. the builder: reactor.run from the palette, its arguments as #parameters, its result saved as `out`
    await page.goto(`${lab.server.base}/workflows/new`);
    await page.waitForSelector('#wf-builder[data-ready=true]');
    await page.click('.wf-palette-item[data-instrument=reactor][data-method=run]');
    const run = page.locator('.wf-step[data-path="main[0]"]');
    await expect(run.locator('.wf-step-title').textContent()).resolves.toBe('reactor.run');
    for (const arg of ['temperature', 'time']) {
      const input = run.locator(`input[data-arg=${arg}]`);
      await input.fill(`#${arg}`);
      await input.press('Tab');
      await expect(run.locator(`.wf-field:has(input[data-arg=${arg}]) .wf-hint`).textContent()).resolves.toBe(`parameter ${arg} (number)`);
    }
    await expect(page.locator('.wf-param [data-pprop=name]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))).resolves.toEqual(['temperature', 'time']);
    const saveAs = run.locator('input[data-prop=save_as]');
    await saveAs.fill('out');
    await saveAs.press('Tab');
    // the declared result's fields are offered; the number a campaign can optimise is ticked by itself
    const outputs = page.locator('#wf-outputs');
    await outputs.locator('input[data-output="out.yield"]').waitFor();
    await expect(outputs.locator('input[data-output="out.yield"]').isChecked()).resolves.toBe(true);
    await expect(outputs.locator('input[data-output="out"]').count()).resolves.toBe(1);
    await expect(outputs.locator('input[data-output="out"]').isChecked()).resolves.toBe(false);
    await page.fill('#wf-name', 'reactor-built');
    await page.click('#wf-save');
    await page.locator('#wf-status', { hasText: 'Saved version 1' }).waitFor();
    await expect(page.locator('[data-testid=save-errors]').count()).resolves.toBe(0);
    const saved = await context.request.get(`${lab.server.base}/workflows/reactor-built`, { headers: { Accept: 'application/json' } });
    expect((await saved.json()).workflow).toMatchObject({
      parameters: [
        { name: 'temperature', type: 'number' },
        { name: 'time', type: 'number' },
      ],
      outputs: ['out.yield'],
      main: [{ kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { param: 'time' } }, save_as: 'out' }],
    });

    // 2. from the builder's Run link to the execution page, and from there to the campaign page
    await page.click('#wf-run');
    await page.waitForURL(/\/app\/executions\/config\?workflow=reactor-built$/);
    await page.click('#campaign-start-link a');
    await page.waitForURL(/\/app\/executions\/campaign/);
    await expect(page.locator('#campaign-pick-workflow').inputValue()).resolves.toBe('reactor-built');
    const form = page.locator('#campaign-form');
    await searchRanges(form, [
      ['temperature', '20', '120'],
      ['time', '1', '60'],
    ]);
    await form.locator('select[name="objective.out.yield"]').selectOption('max');
    await form.locator('#campaign-optimizer').selectOption('gp');
    await form.locator('fieldset[data-optimizer=gp] input[name="config.initial_points"]').fill(String(INITIAL));
    await form.locator('input[name=repeat]').fill(String(BUDGET));
    await form.locator('input[name=seed]').fill(String(SEED));
    await start(page);

    // 3. the run completes (the panel says done with every point), then the optimizer's progress is read
    await page.locator('#campaign').waitFor({ state: 'visible' });
    await watchPoints(page, { points: BUDGET, status: 'done' }, 30_000);
    const res = await context.request.get(`${lab.server.base}/executions/latest_plot`, { headers: { Accept: 'application/json' } });
    expect(res.status()).toBe(200);
    const plot = (await res.json()) as {
      campaign: { workflow: string; optimizer: string; status: string; run_id: number };
      points: { iteration: number | null; params: Record<string, number>; values: Record<string, number | null> }[];
      best_so_far: { iteration: number; value: number }[];
    };
    expect(plot.campaign).toMatchObject({ workflow: 'reactor-built', optimizer: 'gp', status: 'done' });
    expect(plot.points).toHaveLength(BUDGET);
    expect(plot.best_so_far).toHaveLength(BUDGET);
    const yields = [...plot.points].sort((a, b) => a.iteration! - b.iteration!).map((p) => p.values['out.yield']!);
    const initialBest = Math.max(...yields.slice(0, INITIAL));
    const best = plot.best_so_far[plot.best_so_far.length - 1]!.value;
    expect(best).toBe(Math.max(...yields));
    expect(best).toBeGreaterThan(initialBest + 0.1); // the model phase found clearly better settings
    expect(best).toBeGreaterThan(0.85); // near the optimum (0.92), beyond what the Sobol design alone finds (0.79)

    // the run's record: completed, nothing skipped, and how the campaign was set up
    await page.goto(`${lab.server.base}/executions/records/${plot.campaign.run_id}`);
    await expect(page.locator('#record-summary').textContent()).resolves.toContain('completed');
    await expect(page.locator('h1').textContent()).resolves.not.toMatch(/skipped/);
    await expect(page.locator('#record-campaign').textContent()).resolves.toMatch(new RegExp(`gp.*seed ${SEED}, ${BUDGET} experiments`));
    await expect(page.locator('#record-campaign').textContent()).resolves.toContain('out.yield (maximise)');
    expect(errors).toEqual([]);
  });
});
