import type { BrowserContext } from 'playwright-core';
import { login, pageErrors, serverAndBrowser } from './server.js';

describe('a scientist in the workflow builder', () => {
  const lab = serverAndBrowser();
  let context: BrowserContext;
  beforeAll(async () => {
    context = await lab.browser.newContext();
    await login(await context.newPage(), lab.server.base);
  });

  it('builds dose-and-weigh from the palette, sees the server name a bad value, saves, and finds it again', async () => {
    const page = await context.newPage();
    // the one 400 below is expected (the server's answer to a bad value); anything else is a fault
    const errors = pageErrors(page, 'status of 400');
    await page.goto(`${lab.server.base}/`);
    await page.click('nav >> text=Workflows');
    await page.click('text=New workflow');
    await page.waitForURL(/\/app\/workflows\/new$/);
    await page.waitForSelector('#wf-builder[data-ready=true]');

    // click a method: it lands in main, with its argument form
    await page.click('.wf-palette-item[data-instrument=pump][data-method=dose]');
    const dose = page.locator('.wf-step[data-path="main[0]"]');
    await expect(dose.locator('.wf-step-title').textContent()).resolves.toBe('pump.dose');
    const volume = dose.locator('input[data-arg=volume_ml]');
    // a value the pump refuses first: the server's message appears next to the field
    await volume.fill('99');
    await page.click('.wf-palette-item[data-instrument=balance][data-method=weigh]');
    const weigh = page.locator('.wf-step[data-path="main[1]"]');
    await weigh.locator('input[data-prop=save_as]').fill('mass');
    await page.fill('#wf-name', 'dose-and-weigh');
    await page.click('#wf-save');
    await page.locator('[data-testid=save-errors]').waitFor();
    await expect(dose.locator('.wf-field-errors[data-errors-for="args.volume_ml"]').textContent()).resolves.toMatch(/50/);
    expect(await volume.getAttribute('class')).toContain('is-invalid');

    // `#volume` makes a parameter (typed from the argument's schema)
    await volume.fill('#volume');
    await volume.press('Tab');
    await expect(page.locator('.wf-param [data-pprop=name]').inputValue()).resolves.toBe('volume');
    await expect(page.locator('.wf-param [data-pprop=type]').inputValue()).resolves.toBe('number');
    await expect(dose.locator('.wf-field:has(input[data-arg=volume_ml]) .wf-hint').textContent()).resolves.toBe('parameter volume (number)');
    await page.fill('.wf-param [data-pprop=default]', '1.5');
    await page.check('#wf-outputs input[data-output=mass]');
    const json = JSON.parse((await page.locator('#wf-json').textContent()) ?? '{}');
    expect(json.main[0].args).toEqual({ volume_ml: { param: 'volume' } });
    expect(json.parameters).toEqual([{ name: 'volume', type: 'number', default: 1.5 }]);
    await expect(page.locator('#wf-status').textContent()).resolves.toBe('Unsaved changes');
    // leaving now would ask first
    expect(await page.evaluate(() => !window.dispatchEvent(new Event('beforeunload', { cancelable: true })))).toBe(true);

    await page.click('#wf-save');
    await page.locator('#wf-status', { hasText: 'Saved version 1' }).waitFor();
    expect(page.url()).toMatch(/\/app\/workflows\/dose-and-weigh\/builder$/);
    expect(await page.locator('#wf-run').getAttribute('href')).toBe('/app/executions/config?workflow=dose-and-weigh');
    expect(await page.evaluate(() => !window.dispatchEvent(new Event('beforeunload', { cancelable: true })))).toBe(false);
    await expect(page.locator('[data-testid=save-errors]').count()).resolves.toBe(0);

    // reload (no unsaved-changes prompt after a save): the builder shows the saved workflow
    await page.reload();
    await page.waitForSelector('#wf-builder[data-ready=true]');
    await expect(page.locator('#wf-name').inputValue()).resolves.toBe('dose-and-weigh');
    await expect(page.locator('#wf-version').textContent()).resolves.toBe('v1');
    await expect(page.locator('.wf-step[data-path="main[0]"] input[data-arg=volume_ml]').inputValue()).resolves.toBe('#volume');
    await expect(page.locator('.wf-step[data-path="main[1]"] .wf-step-title').textContent()).resolves.toBe('balance.weigh');
    await expect(page.locator('.wf-step[data-path="main[1]"] input[data-prop=save_as]').inputValue()).resolves.toBe('mass');
    await expect(page.locator('#wf-outputs input[data-output=mass]').isChecked()).resolves.toBe(true);

    // the server has it as built
    const saved = await page.evaluate(async (u) => (await fetch(u, { headers: { Accept: 'application/json' } })).json(), `${lab.server.base}/workflows/dose-and-weigh`);
    expect(saved.workflow).toMatchObject({
      parameters: [{ name: 'volume', type: 'number', default: 1.5 }],
      outputs: ['mass'],
      main: [
        { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } },
        { kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' },
      ],
    });

    // a change, moved with the arrow buttons, is saved as version 2 with PUT
    await page.click('.wf-palette-item[data-block=wait]');
    await page.click('.wf-step[data-path="main[2]"] [data-action=up]');
    await expect(page.locator('.wf-step[data-path="main[1]"] .wf-step-title').textContent()).resolves.toBe('Wait');
    await page.click('#wf-save');
    await page.locator('#wf-status', { hasText: 'Saved version 2' }).waitFor();

    // its page reads it back; Delete (after a confirmation) goes back to the empty list
    await page.goto(`${lab.server.base}/workflows/dose-and-weigh`);
    expect(await page.locator('main').textContent()).toContain('pump.dose(volume_ml: #volume)');
    page.once('dialog', (d) => d.accept());
    await page.click('button[data-wf-delete]');
    await page.waitForURL(/\/app\/workflows$/);
    expect(await page.locator('main').textContent()).toContain('No workflows yet');
    expect(errors).toEqual([]);
  });

  it('moves a step into a repeat, and a method from the palette into cleanup, by drag and drop', async () => {
    const page = await context.newPage();
    await page.setViewportSize({ width: 1280, height: 1200 }); // the palette and the phases in view together
    await page.goto(`${lab.server.base}/workflows/new`);
    await page.waitForSelector('#wf-builder[data-ready=true]');
    await page.click('.wf-palette-item[data-instrument=balance][data-method=weigh]');
    await page.click('.wf-palette-item[data-block=repeat]');
    /** Drag with the mouse; SortableJS moves things while the pointer travels, so follow the target. */
    const drag = async (handle: string, target: string) => {
      await page.locator(handle).scrollIntoViewIfNeeded();
      const from = (await page.locator(handle).boundingBox())!;
      await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
      await page.mouse.down();
      for (let round = 0; round < 5; round++) {
        const to = (await page.locator(target).boundingBox())!;
        await page.mouse.move(to.x + 40, to.y + to.height / 2, { steps: 8 });
        await page.waitForTimeout(100);
      }
      await page.mouse.up();
    };
    const doc = async () => JSON.parse((await page.locator('#wf-json').textContent()) ?? '{}');
    await drag('.wf-step[data-path="main[0]"] .wf-handle', '.wf-steps[data-list="main[1].steps"]');
    await page.waitForFunction(() => JSON.parse(document.getElementById('wf-json')!.textContent!).main.length === 1);
    expect((await doc()).main).toEqual([{ kind: 'repeat', times: 2, steps: [{ kind: 'call', instrument: 'balance', method: 'weigh', args: {} }] }]);
    await drag('.wf-palette-item[data-instrument=noop][data-method=ping]', '.wf-steps[data-list=cleanup]');
    await page.waitForFunction(() => JSON.parse(document.getElementById('wf-json')!.textContent!).cleanup.length === 1);
    expect((await doc()).cleanup).toEqual([{ kind: 'call', instrument: 'noop', method: 'ping', args: {} }]);
    // the palette keeps its item
    await expect(page.locator('.wf-palette-item[data-instrument=noop][data-method=ping]').count()).resolves.toBe(1);
  });
});
