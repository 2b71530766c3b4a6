// `npm run screenshots`: the README's pictures of the UI, taken in Debian's Chromium from a fresh demo lab.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const dir = await mkdtemp(join(tmpdir(), 'labdeck-shots-'));
const proc = spawn(process.execPath, ['bin/lab', 'serve', '--port', '0', '--data-dir', dir, '--plugins', join(dir, 'p')], { stdio: ['ignore', 'pipe', 'inherit'] });
const base = await new Promise((resolve) => {
  let out = '';
  proc.stdout.on('data', (b) => {
    out += b;
    const m = /ready in \d+ ms: (http:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
});
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/auth/signup`);
  for (const path of ['signup', 'login']) {
    if (path === 'login') await page.goto(`${base}/auth/login`);
    await page.fill('#username', 'ada');
    await page.fill('#password', 'correct horse');
    await page.click('button[type=submit]');
    await page.waitForLoadState();
  }
  await page.goto(`${base}/instruments/pump`);
  const card = page.locator('#method-dose');
  await card.locator('input[name=volume_ml]').fill('2.5');
  page.on('dialog', (d) => d.accept());
  await card.locator('button[type=submit]').click();
  await card.locator('[data-testid=call-result]').waitFor();
  await page.screenshot({ path: 'docs/screenshots/instrument.png' });
  await page.goto(`${base}/instruments/stirrer`);
  await page.screenshot({ path: 'docs/screenshots/inferred.png' });
  await page.goto(`${base}/`);
  await page.screenshot({ path: 'docs/screenshots/home.png' });
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  await phone.context().addCookies(await page.context().cookies());
  await phone.goto(`${base}/instruments/pump`);
  await phone.screenshot({ path: 'docs/screenshots/phone.png' });
  console.log('wrote docs/screenshots/{instrument,inferred,home,phone}.png');
} finally {
  await browser.close();
  proc.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
}
