/**
 * Python instruments in Chromium: `lab serve --deck test/fixtures/python/deck.py` (an ivoryOS deck script run in
 * a Python host process). A scientist signs up, finds the deck's instances as instruments, calls them from the
 * forms generated from the Python type hints, reads what the driver printed in the call record, sees a driver
 * exception reported, and runs a workflow over the Python instruments and reads its record.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM, login, pageErrors, startServer, type Served } from './server.js';
import { installedFile } from './installed.js';

const DECK = installedFile('test/fixtures/python/deck.py');

describe('a scientist with a Python deck in Chromium', () => {
  // serverAndBrowser() starts the demo deck and takes no arguments: start the server with the deck here
  let server: Served;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer(['--deck', DECK]), chromium.launch({ headless: true, ...CHROMIUM })]);
    page = await browser.newPage();
    // the one 502 below is expected (jam: the driver raises); anything else is a fault
    errors = pageErrors(page, 'status of 502');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("signs up and finds the deck script's instances as instruments, including the one made under __main__", async () => {
    await login(page, server.base);
    await page.click('nav >> text=Instruments');
    await page.waitForURL(/\/app\/instruments\/$/);
    const items = page.locator('.list-group-item');
    expect(await items.locator('strong').allTextContents()).toEqual(['pump', 'hotplate', 'robot']);
    // the driver class and its docstring; settings (a dict) and _private are not instruments
    expect(await items.nth(0).textContent()).toContain('Pump');
    expect(await items.nth(0).textContent()).toContain('A syringe pump.');
    expect(await items.nth(2).textContent()).toContain('Robot');
  });

  it('doses from the form generated from the type hints, and reads what the driver printed in the call record', async () => {
    await page.click('a.list-group-item[href="/app/instruments/pump"]');
    await page.waitForURL(/\/app\/instruments\/pump$/);
    const card = page.locator('#method-dose');
    await expect(card.locator('.card-body > p').textContent()).resolves.toBe('Dispense a volume.');

    // volume_ml: float -> a required number field taking decimals; solvent: Solvent -> a select of the enum values
    const volume = card.locator('input[name=volume_ml]');
    expect(await volume.getAttribute('type')).toBe('number');
    expect(await volume.getAttribute('step')).toBe('any');
    expect(await volume.getAttribute('required')).not.toBeNull();
    const solvent = card.locator('select[name=solvent]');
    expect(await solvent.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['water', 'ethanol']);
    expect(await solvent.inputValue()).toBe('water'); // the default, Solvent.WATER

    await volume.fill('1.5');
    await solvent.selectOption('ethanol');
    await card.locator('button[type=submit]', { hasText: 'Run dose' }).click();
    const result = card.locator('[data-testid=call-result]');
    await result.waitFor();
    // the driver returns the total dispensed so far: 1.5 on a fresh deck
    expect((await result.locator('pre').textContent())?.trim()).toBe('1.5');
    expect(page.url()).toMatch(/\/app\/instruments\/pump$/); // swapped in by htmx, no reload
    // the recent calls panel refreshes itself after the call
    await page.locator('#recent-calls tr', { hasText: 'dose' }).waitFor();
    expect(await page.locator('#recent-calls tr', { hasText: 'dose' }).textContent()).toContain('ethanol');

    // the call record keeps the arguments and what the driver printed and logged
    await result.locator('a', { hasText: /^task \d+$/ }).click();
    await page.waitForURL(/\/app\/instruments\/task\/\d+$/);
    const record = (await page.locator('main').textContent()) ?? '';
    expect(record).toContain('dosing 1.5 mL of ethanol');
    expect(record).toContain('pump at COM3 dosed 1.5');
    expect(record).toContain('ethanol');
  });

  it('shows a driver exception to the user, with its Python type and message, and records the traceback', async () => {
    await page.goto(`${server.base}/instruments/pump`);
    const card = page.locator('#method-jam');
    await card.locator('button[type=submit]', { hasText: 'Run jam' }).click();
    const error = card.locator('[data-testid=call-error]');
    await error.waitFor();
    expect(await error.textContent()).toContain('RuntimeError: pump jammed at COM3');
    expect(await card.locator('[data-testid=call-result]').count()).toBe(0);

    await error.locator('a', { hasText: /^task \d+$/ }).click();
    await page.waitForURL(/\/app\/instruments\/task\/\d+$/);
    const record = (await page.locator('main').textContent()) ?? '';
    expect(record).toContain('Traceback (most recent call last)');
    expect(record).toContain('drivers.py');
    expect(record).toContain('RuntimeError: pump jammed at COM3');
  });

  it('saves a workflow over the Python instruments, runs it over 2 config rows, and reads its record', async () => {
    // the workflow, through the JSON API with the page's session
    const workflow = {
      name: 'py-dose-and-read',
      parameters: [{ name: 'volume', type: 'number', default: 1 }],
      outputs: ['temp'],
      main: [
        { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } },
        { kind: 'call', instrument: 'hotplate', method: 'target', save_as: 'temp' },
      ],
    };
    const saved = await page.request.post(`${server.base}/workflows`, { data: workflow, headers: { Accept: 'application/json' } });
    expect(saved.status()).toBe(201);
    expect(await saved.json()).toMatchObject({ name: workflow.name, version: 1 });

    // run it from the execution page over two typed rows, and watch it finish live
    await page.goto(`${server.base}/executions/config?workflow=${workflow.name}`);
    await page.fill('input[name="rows[0][volume]"]', '0.5');
    await page.fill('input[name="rows[1][volume]"]', '2');
    await page.click('#run-form button[type=submit]');
    await page.locator('#live-log li', { hasText: 'completed' }).first().waitFor({ timeout: 15_000 });
    await page.locator('#live-state', { hasText: 'idle' }).waitFor();

    // the record: completed, two iterations, each with its steps and its output
    await page.click('nav >> text=Records');
    await page.click(`a:has-text("${workflow.name}")`);
    await page.waitForURL(/\/executions\/records\/\d+$/);
    const summary = page.locator('#record-summary');
    expect(await summary.locator('.badge').textContent()).toBe('completed');
    expect(await summary.textContent()).toMatch(/Iterations\s*2/);
    const phases = page.locator('#record-steps tbody.phase[data-phase=main]');
    expect(await phases.count()).toBe(2);
    // the same Python pump as the direct call above: it had dispensed 1.5 mL, then 0.5 and 2 more
    const expected = [
      { volume: '{"volume_ml":0.5}', dispensed: '2' },
      { volume: '{"volume_ml":2}', dispensed: '4' },
    ];
    for (const [i, e] of expected.entries()) {
      const phase = phases.nth(i);
      const head = phase.locator('tr.phase-head');
      expect(await head.textContent()).toContain(`main · iteration ${i + 1}`);
      expect(await head.locator('.badge').textContent()).toBe('ok');
      expect(await head.locator('.phase-outputs code.json').textContent()).toBe('{"temp":25}');
      const steps = phase.locator('tr:not(.phase-head)');
      expect(await steps.count()).toBe(2);
      const [dose, target] = [steps.nth(0), steps.nth(1)];
      expect(await dose.locator('td').nth(2).textContent()).toBe('pump.dose');
      expect(await dose.locator('td').nth(3).textContent()).toBe(e.volume);
      expect(await dose.locator('td').nth(4).textContent()).toBe(e.dispensed);
      expect(await dose.locator('.badge').textContent()).toBe('ok');
      expect(await target.locator('td').nth(2).textContent()).toBe('hotplate.target');
      expect(await target.locator('td').nth(4).textContent()).toBe('25');
      expect(await target.locator('.badge').textContent()).toBe('ok');
    }
    expect(errors).toEqual([]);
  });
});
