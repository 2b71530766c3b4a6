/**
 * People in the loop, in Chromium against the installed `lab` (issue 31): an input step's form on the run page
 * is filled, and a manual campaign's table
 * is filled from its page (results of one point, another discarded with a reason, a point of one's own).
 */
import { login, pageErrors, serverAndBrowser } from './server.js';

const PH = {
  name: 'e2e-ph',
  parameters: [{ name: 'volume', type: 'number', default: 1 }],
  outputs: ['pH'],
  main: [
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } },
    { kind: 'input', prompt: 'Read the pH of the sample', save_as: 'pH', schema: { type: 'number', minimum: 0, maximum: 14, unit: 'pH' } },
  ],
};
const J = { Accept: 'application/json' };

describe('people in the loop, in Chromium', () => {
  const lab = serverAndBrowser();

  it('fills an input step on the run page, then a manual campaign table from its page', async () => {
    const base = lab.server.base;
    const context = await lab.browser.newContext();
    const page = await context.newPage();
    const errors = pageErrors(page);
    await login(page, base);
    const api = context.request;
    expect((await api.post(`${base}/workflows`, { data: PH, headers: J })).status()).toBe(201);
    const { task_id } = await (await api.post(`${base}/executions/config`, { data: { workflow: PH.name, repeat: 1 }, headers: J })).json();

    // the run page shows the prompt and its form
    await page.goto(`${base}/executions/config?workflow=${PH.name}`);
    const form = page.locator('#input-form');
    await form.waitFor({ timeout: 20_000 });
    await expect(form.textContent()).resolves.toContain('Read the pH of the sample');
    await page.locator('#input-value').fill('7.2');
    await form.locator('button[type=submit]').click();
    for (let i = 0; ; i++) {
      const t = await (await api.get(`${base}/executions/queue/task/${task_id}`, { headers: J })).json();
      if (t.status === 'done') break;
      expect(i).toBeLessThan(200);
      await page.waitForTimeout(100);
    }

    // a manual campaign over it: started from the campaign page's form, carried out by people
    await page.goto(`${base}/executions/campaign?workflow=${PH.name}`);
    await page.locator('#campaign-advanced summary').click();
    await page.locator('#campaign-parameters').fill('volume: 0..2');
    await page.locator('#campaign-objectives-text').fill('pH:max');
    await page.locator('#campaign-batch').fill('3');
    await page.locator('#campaign-execution').selectOption('manual');
    await page.locator('#campaign-start').click();
    await page.waitForURL(/\/executions\/campaigns\/\d+$/);
    const rows = page.locator('#campaign-points tbody tr');
    await expect(rows.count()).resolves.toBe(3);
    // point 1: its result; point 2: discarded with a reason
    await page.locator('form.point-results[data-n="1"] input[name="results.pH"]').fill('6.8');
    await page.locator('form.point-results[data-n="1"] button').click();
    await page.waitForLoadState();
    await page.locator('form.point-discard[data-n="2"] input[name=reason]').fill('the vial broke');
    await page.locator('form.point-discard[data-n="2"] button').click();
    await page.waitForLoadState();
    // a point of one's own
    await page.locator('#campaign-add-point input[name="parameters.volume"]').fill('1.5');
    await page.locator('#campaign-add-point button').click();
    await page.waitForLoadState();
    const states = await page.locator('#campaign-points tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-n'), tr.getAttribute('data-state'), tr.textContent]));
    expect(states.map(([n, s]) => [n, s])).toEqual([
      ['1', 'measured'],
      ['2', 'discarded'],
      ['3', 'pending'],
      ['4', 'pending'],
    ]);
    expect(states[0]![2]).toContain('pH = 6.8');
    expect(states[1]![2]).toContain('the vial broke');
    expect(states[3]![2]).toContain('person:');
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
