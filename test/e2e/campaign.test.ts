import type { BrowserContext, Page } from 'playwright-core';
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

/** Submit the campaign form and land on the execution page; a rejected form fails with the page's error. */
async function start(page: Page) {
  await page.locator('#campaign-start').click();
  await page.waitForURL(/\/app\/executions\/(config|campaign)/);
  await page.waitForLoadState();
  if (/\/executions\/campaign/.test(page.url())) throw new Error(`the campaign was refused: ${await page.locator('.alert-danger').first().textContent()}`);
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
    await page.waitForURL(/\/app\/executions\/campaign$/);
    await expect(page.locator('#campaign-pick-workflow').inputValue()).resolves.toBe('reactor-opt');

    // one row per parameter, one objective row per output; the optimizers are introduced in a sentence
    await expect(page.locator('#campaign-params tbody tr').count()).resolves.toBe(2);
    await expect(page.locator('#campaign-intro').textContent()).resolves.toMatch(/sobol.*quasi-random/i);
    const form = page.locator('#campaign-form');
    for (const [name, low, high] of [
      ['temperature', '20', '120'],
      ['time', '1', '60'],
    ]) {
      await form.locator(`input[name="param.${name}.use"]`).check();
      await form.locator(`input[name="param.${name}.low"]`).fill(low);
      await form.locator(`input[name="param.${name}.high"]`).fill(high);
    }
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
