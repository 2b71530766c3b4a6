import type { Page } from 'playwright-core';
import { login, pageErrors, serverAndBrowser, signUpAndLogIn } from './server.js';

describe('a scientist in Chromium', () => {
  const lab = serverAndBrowser();

  it('signs up, logs in, opens the pump, doses, and sees the result', async () => {
    const page = await lab.browser.newPage();
    // the one 400 below is expected (the server's answer to a bad value); anything else is a fault
    const errors = pageErrors(page, 'status of 400');

    await page.goto(`${lab.server.base}/instruments/pump`);
    expect(page.url()).toContain('/auth/login?next=');
    await page.click('text=Sign up');
    await signUpAndLogIn(page);

    await page.click('a[href="/app/instruments/pump"] >> nth=0');
    await page.waitForURL(/\/app\/instruments\/pump$/);
    const card = page.locator('#method-dose');
    await card.locator('input[name=volume_ml]').fill('2.5');
    page.once('dialog', (d) => d.accept()); // dose is hazardous: the page asks first
    await card.locator('button[type=submit]').click();
    const result = card.locator('[data-testid=call-result]');
    await result.waitFor();
    expect(await result.locator('pre').textContent()).toContain('2.5');
    // the page was not reloaded: htmx swapped the result in
    expect(page.url()).toMatch(/\/app\/instruments\/pump$/);

    // a bad value is named, and nothing runs
    await card.locator('input[name=volume_ml]').fill('-1');
    page.once('dialog', (d) => d.accept());
    // the browser's own min= check would stop the form; submit through htmx directly to see the server's answer
    await card.locator('form').evaluate((f: HTMLFormElement) => f.setAttribute('novalidate', ''));
    await card.locator('button[type=submit]').click();
    await card.locator('[data-testid=call-error]').waitFor();
    expect(await card.locator('[data-testid=call-error]').textContent()).toContain('volume_ml');
    expect(errors).toEqual([]);
  });
});

/** A ping, a pause step for the operator, a ping. */
const CHECK = {
  name: 'check-vial',
  main: [
    { kind: 'call', instrument: 'noop', method: 'ping' },
    { kind: 'pause', message: 'Check the vial' },
    { kind: 'call', instrument: 'noop', method: 'ping' },
  ],
};
/** Fails at run time: `x` is saved only in the branch not taken. */
const FAILS = {
  name: 'fails',
  parameters: [{ name: 'v', type: 'number', default: 1 }],
  main: [
    { kind: 'if', condition: { left: { param: 'v' }, op: '>', right: { value: 100 } }, then: [{ kind: 'call', instrument: 'noop', method: 'ping', save_as: 'x' }] },
    { kind: 'call', instrument: 'stirrer', method: 'set_speed', args: { rpm: { var: 'x' } } },
  ],
};
/** A wait (the runner is running through it), then a ping. */
const SLOW = {
  name: 'slow',
  main: [
    { kind: 'wait', seconds: 1.5 },
    { kind: 'call', instrument: 'noop', method: 'ping' },
  ],
};

describe('a scientist at the run page in Chromium: the state and the controls follow the runner live', () => {
  const lab = serverAndBrowser();

  /** The controls the page has enabled now, by name. */
  const enabled = (page: Page) => page.locator('#controls [data-control-name]:enabled').evaluateAll((bs) => bs.map((b) => (b as HTMLElement).dataset.controlName));
  const state = (page: Page, text: string) => page.locator('#live-state', { hasText: new RegExp(`^${text}$`) }).waitFor();

  it('waits at a pause step, continues, and links the record; skips a failed step; pauses and resumes; releases a held queue', async () => {
    const page = await lab.browser.newPage();
    const errors = pageErrors(page);
    await login(page, lab.server.base);
    for (const wf of [CHECK, FAILS, SLOW]) expect((await page.request.post(`${lab.server.base}/workflows`, { data: wf, headers: { Accept: 'application/json' } })).status()).toBe(201);

    // a pause step: the note, the state and the queue say so; only Continue (and the aborts) apply
    await page.goto(`${lab.server.base}/executions/config?workflow=check-vial`);
    expect(await enabled(page)).toEqual([]);
    await page.fill('#repeat', '1');
    await page.click('#run-form button[type=submit]');
    await state(page, 'waiting at a pause step');
    const note = page.locator('#run-notice');
    await note.locator('.run-notice-text', { hasText: /: waiting at a pause step\.$/ }).waitFor();
    expect(await page.locator('#queue-rows .queue-status').first().textContent()).toBe('waiting at a pause step');
    expect(await enabled(page)).toEqual(['continue', 'stop-iteration', 'abort-task']);
    expect(await page.locator('#live-alert').textContent()).toContain('Waiting at a pause step: Check the vial. Continue when it is done.');

    // Continue: the run ends, the note no longer says it runs, and the page links its record
    await page.click('[data-control-name=continue]');
    await state(page, 'idle');
    await note.locator('.run-notice-text', { hasText: /ended: completed\.$/ }).waitFor();
    const record = await note.locator('a.run-notice-link').getAttribute('href');
    expect(record).toMatch(/^\/app\/executions\/records\/\d+$/);
    expect(await page.locator('#live-last a').getAttribute('href')).toBe(record);
    expect(await page.locator('#live-last').textContent()).toContain('completed.');
    expect(await enabled(page)).toEqual([]);

    // a failed step: retry and skip apply, pause does not; Skip the failed step goes on without it
    await page.goto(`${lab.server.base}/executions/config?workflow=fails`);
    await page.fill('#repeat', '1');
    await page.click('#run-form button[type=submit]');
    await state(page, 'failed step waiting for a decision');
    expect(await page.locator('#queue-rows .queue-status').first().textContent()).toBe('failed step waiting for a decision');
    expect(await enabled(page)).toEqual(['retry', 'skip', 'stop-iteration', 'abort-task']);
    await page.click('[data-control-name=skip]');
    await state(page, 'idle');
    await page.locator('#live-last', { hasText: 'completed with 1 skipped step.' }).waitFor();

    // running: Pause, the run stands still after its wait and the log says so; Resume goes on
    await page.goto(`${lab.server.base}/executions/config?workflow=slow`);
    await page.fill('#repeat', '1');
    await page.click('#run-form button[type=submit]');
    await state(page, 'running');
    expect(await enabled(page)).toEqual(['pause', 'stop-iteration', 'abort-task']);
    await page.click('[data-control-name=pause]');
    await state(page, 'pausing after this step');
    await state(page, 'paused');
    expect(await page.locator('#queue-rows .queue-status').first().textContent()).toBe('paused');
    expect(await enabled(page)).toEqual(['resume', 'stop-iteration', 'abort-task']);
    await page.locator('#live-log li', { hasText: 'Paused by the operator' }).waitFor();
    await page.click('[data-control-name=resume]');
    await page.locator('#live-log li', { hasText: 'Resumed by the operator.' }).waitFor();
    await state(page, 'idle');

    // abort with a task behind it: the queue is held until Release the held queue
    await page.goto(`${lab.server.base}/executions/config?workflow=check-vial`);
    await page.fill('#repeat', '1');
    await page.click('#run-form button[type=submit]');
    await state(page, 'waiting at a pause step');
    expect((await page.request.post(`${lab.server.base}/executions/config`, { data: { workflow: 'slow', repeat: 1, name: 'behind' }, headers: { Accept: 'application/json' } })).status()).toBe(200);
    page.once('dialog', (d) => d.accept());
    await page.click('[data-control-name=abort-task]');
    // (the abort's own answer says stopping; the stream's newer status must win over it)
    await state(page, 'queue held');
    await page.locator('#queue-rows tr', { hasText: 'behind' }).locator('.queue-status', { hasText: 'pending (queue held)' }).waitFor();
    expect(await enabled(page)).toEqual(['release']);
    await note.locator('.run-notice-text', { hasText: /ended: aborted\.$/ }).waitFor();
    await page.click('[data-control-name=release]');
    await state(page, 'running');
    await state(page, 'idle');
    expect(errors).toEqual([]);
  });
});
