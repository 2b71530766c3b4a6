/**
 * The buttons an operator presses, in Chromium against the installed `lab` (issue 25): Connect device with a
 * driver's options, and the run page's controls, which showed "Failed (200)." after every success when the
 * event stream told the new state before the button's answer came.
 */
import type { Page } from 'playwright-core';
import { login, pageErrors, serverAndBrowser } from './server.js';

const JAMMED = {
  name: 'jammed',
  parameters: [],
  outputs: [],
  prep: [{ kind: 'pause', message: 'load the vials' }],
  main: [
    { kind: 'wait', seconds: 1 },
    { kind: 'call', instrument: 'pump', method: 'jam', args: {} },
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { value: 1 } } },
  ],
  cleanup: [],
};

/** Every alert the run page shows from now on, as it is added (a later alert may replace an earlier one). */
async function recordAlerts(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen: string[] = ((window as unknown as { alertsSeen: string[] }).alertsSeen = []);
    new MutationObserver(() => seen.push(document.getElementById('live-alert')!.textContent ?? '')).observe(document.getElementById('live-alert')!, {
      childList: true,
      subtree: true,
      characterData: true,
    });
  });
  return () => page.evaluate(() => (window as unknown as { alertsSeen: string[] }).alertsSeen);
}

describe('an operator in Chromium', () => {
  const lab = serverAndBrowser();
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    page = await lab.browser.newPage();
    errors = pageErrors(page);
    await login(page, lab.server.base);
  });
  afterAll(() => page.close());

  it("connects a device with the driver's options from its page, and lands on the new instrument", async () => {
    await page.goto(`${lab.server.base}/instruments/new/`);
    await page.click('a:has-text("sim-pump")');
    await page.waitForURL(/\/instruments\/new\/sim-pump$/);
    await page.fill('#device_name', 'pump_2');
    await page.fill('input[name=delay_ms]', '5');
    await page.fill('input[name=density_g_per_ml]', '0.8');
    await page.click('form button:has-text("Connect")');
    await page.waitForURL(/\/instruments\/pump_2$/);
    expect(await page.locator('h1').textContent()).toContain('pump_2');
    const made = await page.request.get(`${lab.server.base}/instruments/pump_2`, { headers: { Accept: 'application/json' } });
    expect(made.status()).toBe(200);
    expect(errors).toEqual([]);
  });

  it('presses Continue, Pause, Resume, Retry, Skip, Abort and Release on the run page: each works and none says it failed', async () => {
    expect((await page.request.post(`${lab.server.base}/workflows`, { data: JAMMED })).status()).toBe(201);
    const queued = await page.request.post(`${lab.server.base}/executions/config`, { data: { workflow: 'jammed', repeat: 3 } });
    expect(queued.status()).toBe(200);
    await page.goto(`${lab.server.base}/executions/config?workflow=jammed`);
    const alerts = await recordAlerts(page);
    const state = page.locator('#live-state');
    const press = async (control: string, then: string) => {
      const answer = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/executions/'));
      if (control === 'abort-task') page.once('dialog', (d) => d.accept());
      await page.click(`button[data-control-name="${control}"]:not([disabled])`);
      expect((await answer).status()).toBe(200);
      await state.locator(`text=${then}`).waitFor();
    };
    await state.locator('text=waiting at a pause step').waitFor();
    await press('continue', 'running');
    await press('pause', 'paused');
    await press('resume', 'failed step waiting for a decision');
    await press('retry', 'failed step waiting for a decision'); // iteration 1 done, iteration 2's dose fails
    await press('skip', 'failed step waiting for a decision'); // iteration 3's dose fails
    await press('abort-task', 'queue held');
    await press('release', 'idle');
    expect((await alerts()).filter((a) => /fail/i.test(a) && !/Step main\[2\] failed/.test(a))).toEqual([]);
    expect(errors).toEqual([]);
  });
});
