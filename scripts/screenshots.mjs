// `npm run screenshots`: the README's pictures of the UI, taken in Debian's Chromium from a fresh demo lab.
// The approval inbox's (docs/screenshots/approvals.png) needs an agent: its end-to-end test takes it when asked,
// `LABDECK_SCREENSHOTS=1 npm run test:e2e -- test/e2e/approvals.test.ts`.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const dir = await mkdtemp(join(tmpdir(), 'labdeck-shots-'));
/** `lab serve` on a free port with its own data folder under `dir`; resolves with the process and base URL. */
function serve(name, extra = []) {
  const data = join(dir, name);
  const proc = spawn(process.execPath, ['bin/lab', 'serve', '--port', '0', '--data-dir', data, '--plugins', join(data, 'p'), ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => {
    let out = '';
    proc.stdout.on('data', (b) => {
      out += b;
      const m = /ready in \d+ ms: (http:\/\/\S+)/.exec(out);
      if (m) resolve({ proc, base: m[1] });
    });
  });
}
/** Sign up the first account (the admin) and log in. */
async function signIn(page, base) {
  await page.goto(`${base}/auth/signup`);
  for (const path of ['signup', 'login']) {
    if (path === 'login') await page.goto(`${base}/auth/login`);
    await page.fill('#username', 'ada');
    await page.fill('#password', 'correct horse');
    await page.click('button[type=submit]');
    await page.waitForLoadState();
  }
}
const demo = await serve('demo');
const { base } = demo;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const servers = [demo];
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(page, base);
  await page.goto(`${base}/instruments/pump`);
  const card = page.locator('#method-dose');
  await card.locator('input[name=volume_ml]').fill('2.5');
  page.on('dialog', (d) => d.accept());
  await card.locator('button[type=submit]').click();
  await card.locator('[data-testid=call-result]').waitFor();
  await page.screenshot({ path: 'docs/screenshots/instrument.png' });
  await page.goto(`${base}/instruments/stirrer`);
  await page.screenshot({ path: 'docs/screenshots/inferred.png' });
  // a workflow, a run over three rows, and a campaign on the reactor
  const api = (path, body) =>
    page.evaluate(
      async ([url, data]) => (await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(data) })).json(),
      [`${base}${path}`, body],
    );
  await api('/workflows', {
    name: 'dose-and-weigh',
    parameters: [{ name: 'volume', type: 'number', default: 1 }],
    outputs: ['mass'],
    prep: [{ kind: 'call', instrument: 'balance', method: 'tare' }],
    main: [
      { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } },
      { kind: 'wait', seconds: 0.3 },
      { kind: 'call', instrument: 'balance', method: 'weigh', save_as: 'mass' },
    ],
  });
  await api('/workflows', {
    name: 'reactor-yield',
    parameters: [
      { name: 'temperature', type: 'number', default: 60 },
      { name: 'time', type: 'number', default: 10 },
    ],
    outputs: ['run.yield'],
    main: [{ kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { param: 'time' } }, save_as: 'run' }],
  });
  await page.goto(`${base}/workflows/dose-and-weigh/builder`);
  await page.waitForSelector('#wf-builder[data-ready=true]');
  await page.screenshot({ path: 'docs/screenshots/builder.png' });
  const run = await api('/executions/config', { workflow: 'dose-and-weigh', config: [{ volume: 0.5 }, { volume: 1 }, { volume: 1.5 }, { volume: 2 }] });
  await page.goto(`${base}/executions/config?workflow=dose-and-weigh`);
  await page.locator('#live-steps li').nth(3).waitFor();
  await page.screenshot({ path: 'docs/screenshots/run.png' });
  await page.locator('#live-state', { hasText: 'idle' }).waitFor({ timeout: 30000 });
  const task = await (await page.request.get(`${base}/executions/queue/task/${run.task_id}`, { headers: { Accept: 'application/json' } })).json();
  await page.goto(`${base}/executions/records/${task.run_id}`);
  await page.waitForTimeout(500);
  await page.screenshot({ path: 'docs/screenshots/record.png', fullPage: true });
  await api('/executions/campaign', { workflow: 'reactor-yield', repeat: 14, optimizer_type: 'gp', seed: 3, parameters: 'temperature: 20..120, time: 1..60', objectives: 'run.yield:max' });
  await page.goto(`${base}/executions/config?workflow=reactor-yield`);
  await page.locator('#campaign[data-status=done]').waitFor({ timeout: 60000 });
  await page.waitForTimeout(500);
  await page.screenshot({ path: 'docs/screenshots/campaign.png', fullPage: true });
  // the campaign's record: how it was set up, each suggestion, the best so far
  const plot = await (await page.request.get(`${base}/executions/latest_plot`, { headers: { Accept: 'application/json' } })).json();
  await page.goto(`${base}/executions/records/${plot.campaign.run_id}`);
  await page.locator('.record-chart').first().waitFor();
  await page.screenshot({ path: 'docs/screenshots/campaign-record.png' });
  // the front page, once the lab has run something
  await page.goto(`${base}/`);
  await page.screenshot({ path: 'docs/screenshots/home.png' });
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  await phone.context().addCookies(await page.context().cookies());
  await phone.goto(`${base}/instruments/pump`);
  await phone.screenshot({ path: 'docs/screenshots/phone.png' });
  // a Python deck (examples/python): the page generated from type hints and docstrings, after a dose
  const py = await serve('python', ['--deck', 'examples/python/deck.py']);
  servers.push(py);
  const pyPage = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await signIn(pyPage, py.base);
  await pyPage.goto(`${py.base}/instruments/pump`);
  const dose = pyPage.locator('#method-dose');
  await dose.locator('input[name=volume_ml]').fill('1.5');
  await dose.locator('select[name=solvent]').selectOption('ethanol');
  await dose.locator('button[type=submit]').click();
  await dose.locator('[data-testid=call-result]').waitFor();
  await pyPage.screenshot({ path: 'docs/screenshots/python.png' });
  console.log('wrote docs/screenshots/{instrument,inferred,home,builder,run,record,campaign,campaign-record,phone,python}.png');
} finally {
  await browser.close();
  for (const s of servers) s.proc.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
}
