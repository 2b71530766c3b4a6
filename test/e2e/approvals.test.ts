/**
 * The approval inbox in Chromium, with a real agent (issue 15 item 3, "Done when"): a real `lab serve` on the
 * demo deck; `lab mcp --server … --token labmcp_…` as a real child process, the official MCP SDK's client
 * talking to it over stdio. The agent's hazardous calls and its campaign wait in /app/approvals; a person
 * approves or rejects each there (a rejection with a typed reason), the agent learns the decision through
 * lab_approval, a rejected call never runs, and the approved campaign runs on the demo reactor to the end.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, login, pageErrors, startServer, type Served } from './server.js';
import { REACTOR } from '../helpers/workflows.js';
import { LAB_BIN } from './installed.js';
import { waitFor } from '../helpers/wait.js';

const bin = LAB_BIN;
const SCREENSHOT = fileURLToPath(new URL('../../docs/screenshots/approvals.png', import.meta.url));

/** What a tool answered: the JSON of its text content. */
type ToolResult = Awaited<ReturnType<Client['callTool']>>;
const answer = (r: ToolResult) => JSON.parse((r.content as { type: string; text: string }[])[0].text);

/** Poll `check` until it gives a value (not undefined), at most `ms`; then fail saying what was waited for. */
async function poll<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  let v: T | undefined;
  await waitFor(async () => (v = await check()) !== undefined, what, ms, 100);
  return v as T;
}

describe('an AI agent over `lab mcp`, every hazardous step approved or rejected by a person in Chromium', () => {
  let server: Served;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let client: Client;
  let bridgeLog = '';
  let base: string;
  let token: string;

  /** The agent calls a tool; a tool error fails the test with what it said. */
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name} answered an error: ${(r.content as { text: string }[])[0]?.text}\nlab mcp said:\n${bridgeLog}`);
    return answer(r);
  };
  /** JSON from the lab over HTTP, as the logged-in person. */
  const getJson = async (path: string) => {
    const res = await context.request.get(`${base}${path}`, { headers: { Accept: 'application/json' } });
    expect(res.status()).toBe(200);
    return res.json();
  };
  /** The pump's recorded calls (GET /app/instruments/pump/calls). */
  const pumpCalls = async () => (await getJson('/instruments/pump/calls')).calls as { method: string; args: Record<string, unknown> }[];
  /** The inbox, opened afresh; the card of request `id`. */
  const openInbox = async () => {
    await page.goto(`${base}/approvals`);
    await page.locator('h1', { hasText: 'Approvals' }).waitFor();
  };
  const card = (id: number) => page.locator(`section[data-approval="${id}"]`);
  const decidedRow = (id: number) => page.locator(`table#decided tr[data-approval="${id}"]`);

  beforeAll(async () => {
    // both at once; whichever started is stopped in afterAll even if the other failed
    const [s, b] = await Promise.allSettled([startServer(), chromium.launch({ headless: true, ...CHROMIUM })]);
    if (s.status === 'fulfilled') server = s.value;
    if (b.status === 'fulfilled') browser = b.value;
    if (s.status === 'rejected' || b.status === 'rejected') throw s.status === 'rejected' ? s.reason : (b as PromiseRejectedResult).reason;
    base = server.base;
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    errors = pageErrors(page);
    // the person: the first account (an admin), signed up and logged in in the browser
    await login(page, base);
    // the workflow the agent will optimise is saved by the person, not by the agent
    const saved = await context.request.post(`${base}/workflows`, { data: REACTOR, headers: { Accept: 'application/json' } });
    expect(saved.status()).toBe(201);
    // an MCP token for the agent, made on the person's account
    const made = await context.request.post(`${base}/account/tokens`, { data: { name: 'claude', scope: 'mcp' }, headers: { Accept: 'application/json' } });
    expect(made.status()).toBe(201);
    ({ token } = (await made.json()) as { token: string });
    expect(token).toMatch(/^labmcp_/);

    // the agent: the SDK's client starting `lab mcp` as a desktop assistant does, speaking MCP over its stdio
    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--server', base, '--token', token], stderr: 'pipe' });
    transport.stderr?.on('data', (b: Buffer) => (bridgeLog += b.toString()));
    client = new Client({ name: 'e2e-assistant', version: '1.0.0' });
    await client.connect(transport);
  }, 60_000);

  afterAll(async () => {
    await client?.close(); // ends `lab mcp` (its stdin closes)
    await browser?.close();
    await server?.stop();
  });

  it('the agent, through `lab mcp`, sees labdeck and the demo deck as tools', async () => {
    expect(client.getServerVersion()?.name).toBe('labdeck');
    expect(client.getInstructions()).toMatch(/approval inbox/);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['pump_dose', 'hotplate_set_temperature', 'hotplate_temperature', 'reactor_run', 'lab_start_campaign', 'lab_approval', 'lab_status', 'lab_records', 'lab_record']),
    );
    const dose = tools.find((t) => t.name === 'pump_dose')!;
    expect(dose.annotations).toMatchObject({ destructiveHint: true });
    expect(dose.description).toMatch(/hazardous/);
    // what `lab mcp` says goes to its standard error (standard output carries the protocol only)
    await poll('lab mcp to say what it serves', async () => (bridgeLog.includes(`lab mcp: serving ${base}/mcp on stdio`) ? true : undefined), 5_000);
  });

  it('a hazardous call waits in the inbox; the person approves it in the browser; the agent learns the outcome', async () => {
    const req = await call('hotplate_set_temperature', { celsius: 60 });
    expect(req).toMatchObject({ approval_id: expect.any(Number), state: 'pending', summary: expect.stringContaining('hotplate.set_temperature(celsius=60)') });
    const id: number = req.approval_id;
    // nothing ran: the hotplate has no set_temperature call on record
    expect(((await getJson('/instruments/hotplate/calls')).calls as { method: string }[]).some((c) => c.method === 'set_temperature')).toBe(false);

    // the person sees what the agent wants: the call, its safety, its arguments, and who asked
    await openInbox();
    const c = card(id);
    await c.waitFor();
    await expect(c.locator('.card-body code', { hasText: 'hotplate.set_temperature' }).count()).resolves.toBe(1);
    await expect(c.locator('.text-danger', { hasText: 'hazardous' }).count()).resolves.toBe(1);
    const args = c.locator('table tr');
    await expect(args.locator('th').allTextContents()).resolves.toEqual(['celsius']);
    await expect(args.locator('td').allTextContents()).resolves.toEqual(['60']);
    await expect(c.textContent()).resolves.toContain('agent token “claude” acting as ada');

    await c.locator('form[action$="/approve"] input[name=reason]').fill('60 °C is fine');
    await c.locator('button', { hasText: 'Approve' }).click();
    await page.waitForURL(new RegExp(`/app/approvals\\?decided=${id}$`));
    await expect(page.locator('.alert-success').textContent()).resolves.toBe(`Request ${id} is approved: ${req.summary}`);
    await expect(card(id).count()).resolves.toBe(0); // no longer waiting
    await expect(decidedRow(id).locator('td').nth(3).textContent()).resolves.toBe('approved');

    const told = await call('lab_approval', { approval_id: id, wait_seconds: 20 });
    expect(told).toMatchObject({ approval_id: id, state: 'approved', reason: '60 °C is fine', outcome: { task_id: expect.any(Number), output: 60 } });
    // the call was made as the person saw it, on the agent's account
    const record = await getJson(`/instruments/task/${told.outcome.task_id}`);
    expect(record).toMatchObject({ instrument: 'hotplate', method: 'set_temperature', args: { celsius: 60 }, status: 'ok', output: 60 });
    // the inbox, opened again, shows the call's record in the decided table
    await openInbox();
    await expect(decidedRow(id).textContent()).resolves.toContain(`call record ${told.outcome.task_id}: 60 — 60 °C is fine`);
  });

  it('a hazardous call the person rejects with a reason never runs, and the agent is told why', async () => {
    expect((await pumpCalls()).some((c) => c.method === 'dose')).toBe(false);
    const req = await call('pump_dose', { volume_ml: 3 });
    expect(req).toMatchObject({ state: 'pending', summary: expect.stringContaining('pump.dose(volume_ml=3)') });
    const id: number = req.approval_id;

    await openInbox();
    const c = card(id);
    await c.waitFor();
    await expect(c.locator('table td').allTextContents()).resolves.toEqual(['3']);
    // a rejection must say why: with the reason empty the browser does not send the form
    const reason = c.locator('form[action$="/reject"] input[name=reason]');
    await c.locator('button', { hasText: 'Reject' }).click();
    await expect(reason.evaluate((el: HTMLInputElement) => el.validity.valueMissing)).resolves.toBe(true);
    expect(page.url()).toBe(`${base}/approvals`);
    await reason.fill('no vial under the needle');
    await c.locator('button', { hasText: 'Reject' }).click();
    await page.waitForURL(new RegExp(`/app/approvals\\?decided=${id}$`));
    await expect(page.locator('.alert-success').textContent()).resolves.toBe(`Request ${id} is rejected: ${req.summary}`);
    const row = decidedRow(id);
    await expect(row.locator('td').nth(3).textContent()).resolves.toBe('rejected');
    await expect(row.locator('td').nth(5).textContent()).resolves.toBe('no vial under the needle');

    const told = await call('lab_approval', { approval_id: id, wait_seconds: 20 });
    expect(told).toMatchObject({ approval_id: id, state: 'rejected', reason: 'no vial under the needle' });
    expect(told).not.toHaveProperty('outcome');
    // decided once: approving it afterwards is refused, and the pump never doses
    const late = await context.request.post(`${base}/approvals/${id}/approve`, { data: {}, headers: { Accept: 'application/json' } });
    expect(late.status()).toBe(409);
    expect((await pumpCalls()).some((c) => c.method === 'dose')).toBe(false);
    expect((await getJson('/approvals')).done.find((a: { id: number }) => a.id === id)).toMatchObject({ state: 'rejected', outcome: null });
  });

  it("the agent's token cannot decide its own request: it opens /app/mcp and nothing else", async () => {
    const req = await call('pump_dose', { volume_ml: 1 });
    const id: number = req.approval_id;
    const res = await fetch(`${base}/approvals/${id}/approve`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(await call('lab_approval', { approval_id: id })).toMatchObject({ state: 'pending' });
    // the person rejects it in the browser, so the inbox is empty again for the campaign below
    await openInbox();
    await card(id).locator('form[action$="/reject"] input[name=reason]').fill('not now');
    await card(id).locator('button', { hasText: 'Reject' }).click();
    await page.waitForURL(new RegExp(`/app/approvals\\?decided=${id}$`));
    expect(await call('lab_approval', { approval_id: id })).toMatchObject({ state: 'rejected', reason: 'not now' });
    expect((await pumpCalls()).some((c) => c.method === 'dose')).toBe(false);
  });

  it('a campaign the agent starts waits with its space; approved in the browser, it runs on the demo reactor to the end', async () => {
    const req = await call('lab_start_campaign', { workflow: 'react', repeat: 4, optimizer_type: 'random', parameters: 'temperature: 40..120', objectives: 'run.yield:max', seed: 1 });
    expect(req).toMatchObject({ state: 'pending', summary: expect.stringMatching(/^campaign on react: random × 4 over temperature/) });
    const id: number = req.approval_id;
    // nothing runs until the person decides: no run record of the workflow yet
    expect((await call('lab_records', { keyword: 'react' })).total).toBe(0);

    await openInbox();
    const c = card(id);
    await c.waitFor();
    await expect(c.textContent()).resolves.toMatch(/Campaign on react version 1: optimizer random, 4 experiments/);
    const space = c.locator('table', { has: page.locator('caption', { hasText: 'The space it searches' }) });
    await expect(space.locator('tbody tr td').allTextContents()).resolves.toEqual(['temperature', 'range', '40 … 120']);
    await expect(c.textContent()).resolves.toContain('Objectives: run.yield (max)');
    // the other parameter, fixed at the workflow's default
    await expect(c.getByRole('table', { name: 'Other parameters, fixed' }).locator('td').allTextContents()).resolves.toEqual(['10']);
    // the inbox with the campaign waiting: the README's picture, taken when asked (LABDECK_SCREENSHOTS=1)
    if (process.env.LABDECK_SCREENSHOTS) await page.screenshot({ path: SCREENSHOT, fullPage: true });

    await c.locator('button', { hasText: 'Approve' }).click();
    await page.waitForURL(new RegExp(`/app/approvals\\?decided=${id}$`));
    await expect(page.locator('.alert-success').textContent()).resolves.toBe(`Request ${id} is approved: ${req.summary}`);
    await expect(page.locator('#no-pending').textContent()).resolves.toBe('Nothing waits for a decision.');

    const told = await call('lab_approval', { approval_id: id, wait_seconds: 20 });
    expect(told).toMatchObject({ state: 'approved', outcome: { task_id: expect.any(Number) } });
    const taskId: number = told.outcome.task_id;
    await expect(decidedRow(id).textContent()).resolves.toContain(`queued as task ${taskId}`);

    // the agent watches the run through its own tools until its record is complete and the runner idle
    const record = await poll(`the campaign's record (task ${taskId}) to complete`, async () => {
      const { records } = await call('lab_records', { keyword: 'react' });
      const r = (records as { id: number; task_id: number; status: string }[]).find((x) => x.task_id === taskId);
      if (r && r.status !== 'running') return r;
      return undefined;
    });
    expect(record).toMatchObject({ status: 'completed', workflow: 'react', iterations: 4 });
    await poll('the runner to be idle', async () => ((await call('lab_status')).state === 'idle' ? true : undefined));
    expect(await getJson('/executions/status')).toMatchObject({ busy: false, state: 'idle' });

    // four reactor runs, each inside the approved space, each with its yield
    const detail = await call('lab_record', { workflow_id: record.id });
    const runs = (detail.phases as { phase: string; steps: { instrument: string; method: string; args: { temperature: number; time: number }; status: string; output: { yield: number } }[] }[])
      .filter((p) => p.phase === 'main')
      .flatMap((p) => p.steps);
    expect(runs).toHaveLength(4);
    for (const s of runs) {
      expect(s).toMatchObject({ instrument: 'reactor', method: 'run', status: 'ok', args: { time: 10 } });
      expect(s.args.temperature).toBeGreaterThanOrEqual(40);
      expect(s.args.temperature).toBeLessThanOrEqual(120);
      expect(typeof s.output.yield).toBe('number');
    }
    expect(errors).toEqual([]);
  }, 60_000);
});
