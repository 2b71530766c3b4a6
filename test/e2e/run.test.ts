import { login, pageErrors, serverAndBrowser } from './server.js';

describe('a scientist runs a workflow and reads its record', () => {
  const lab = serverAndBrowser();

  it('builds a two-step workflow, runs it over 3 config rows, watches it finish live, and opens its record', async () => {
    const page = await lab.browser.newPage();
    const errors = pageErrors(page);
    await login(page, lab.server.base);

    // build: pump.dose with #volume, balance.weigh saved as mass
    await page.goto(`${lab.server.base}/workflows/new`);
    await page.waitForSelector('#wf-builder[data-ready=true]');
    await page.click('.wf-palette-item[data-instrument=pump][data-method=dose]');
    await page.locator('.wf-step[data-path="main[0]"] input[data-arg=volume_ml]').fill('#volume');
    await page.locator('.wf-step[data-path="main[0]"] input[data-arg=volume_ml]').press('Tab');
    await page.click('.wf-palette-item[data-instrument=balance][data-method=weigh]');
    await page.locator('.wf-step[data-path="main[1]"] input[data-prop=save_as]').fill('mass');
    await page.locator('.wf-step[data-path="main[1]"] input[data-prop=save_as]').press('Tab');
    await page.check('#wf-outputs input[data-output=mass]');
    await page.fill('#wf-name', 'dose-and-weigh');
    await page.click('#wf-save');
    await page.locator('#wf-status', { hasText: 'Saved version 1' }).waitFor();

    // run over three typed rows
    await page.click('#wf-run');
    await page.waitForURL(/\/executions\/config\?workflow=dose-and-weigh$/);
    for (const [i, v] of ['0.5', '1', '1.5'].entries()) await page.fill(`input[name="rows[${i}][volume]"]`, v);
    await page.click('#run-form button[type=submit]');

    // live: the steps appear without a reload, the runner goes back to idle, the log says completed
    await page.locator('#live-steps li', { hasText: 'balance.weigh' }).first().waitFor();
    await page.locator('#live-log li', { hasText: 'completed' }).first().waitFor({ timeout: 20_000 });
    await page.locator('#live-state', { hasText: 'idle' }).waitFor();
    expect(await page.locator('#live-steps li[data-state=ok]').count()).toBe(6);

    // the record: three iterations with their volumes and masses
    await page.click('nav >> text=Records');
    await page.click('a:has-text("dose-and-weigh")');
    await page.waitForURL(/\/executions\/records\/\d+$/);
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).toContain('completed');
    for (const v of ['0.5', '1.5']) expect(text).toContain(v);
    expect(errors).toEqual([]);
  });
});
