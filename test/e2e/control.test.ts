import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, startServer, type Served } from './server.js';

describe('a scientist in Chromium', () => {
  let server: Served;
  let browser: Browser;
  beforeAll(async () => {
    server = await startServer();
    browser = await chromium.launch({ headless: true, ...CHROMIUM });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('signs up, logs in, opens the pump, doses, and sees the result', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // the one 400 below is expected (the server's answer to a bad value); anything else is a fault
    page.on('console', (m) => m.type() === 'error' && !m.text().includes('status of 400') && errors.push(m.text()));

    await page.goto(`${server.base}/instruments/pump`);
    expect(page.url()).toContain('/auth/login?next=');
    await page.click('text=Sign up');
    await page.fill('#username', 'ada');
    await page.fill('#password', 'correct horse');
    await page.click('button[type=submit]');
    await page.waitForURL(/\/auth\/login/);
    await page.fill('#username', 'ada');
    await page.fill('#password', 'correct horse');
    await page.click('button[type=submit]');
    await page.waitForURL(/\/app\/$/);

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
