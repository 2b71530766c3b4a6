/**
 * Every form of every page, submitted in Chromium with valid values, against the installed `lab` (issue 25,
 * DESIGN.md §18). Nothing here lists the forms: the pages are the HTML routes of the served API document
 * (the route declarations) plus every page their links reach, and the forms are whatever those pages hold.
 * A new page or form is covered without a new test; a page with a path parameter this file has no sample
 * for fails, naming it. Each distinct form is filled from its own fields (type, min, max, pattern, options,
 * defaults; a few field names need a value of this lab, below) and submitted as a person would; its answer
 * must not be a 4xx or 5xx.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { installedFile } from './installed.js';
import { login, pageErrors, serverAndBrowser, USER } from './server.js';

/** The workflow the pages show: a parameter, two calls, an output. */
const WORKFLOW = {
  name: 'forms-wf',
  parameters: [{ name: 'volume', type: 'number', default: 1 }],
  outputs: ['mass'],
  prep: [],
  main: [
    { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } },
    { kind: 'call', instrument: 'balance', method: 'weigh', args: {}, save_as: 'mass' },
  ],
  cleanup: [],
};

/** A form as the page holds it. */
interface FormInfo {
  index: number;
  method: string;
  action: string;
  fields: { name: string; tag: string; type: string; value: string; required: boolean; pattern: string | null; min: string | null; max: string | null; accept: string | null; options: string[] }[];
  /** How many submit buttons it has (none: it is sent by a script, e.g. a select that submits on change). */
  submit: number;
  /** Whether a person can send it now (false when every submit button is disabled: the page says why). */
  offered: boolean;
}

/** A path with its numeric ids as N: forms that differ only in the id they act on are one form. */
const ids = (path: string) => path.replace(/\/\d+(?=\/|$)/g, '/N');

/** A path of the API document as a regular expression ({param} → one segment). */
const templateRe = (path: string) =>
  new RegExp(
    `^${path
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\\?\{[^}]+\\?\}/g, '[^/]+')
      .replace(/\{[^}]+\}/g, '[^/]+')}$`,
  );

describe('every form of every page, in Chromium', () => {
  const lab = serverAndBrowser();

  it('answers each with no 4xx or 5xx', async () => {
    const base = lab.server.base; // …/app
    const origin = new URL(base).origin;
    const context = await lab.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = pageErrors(page);
    // a page that asks for something that is not there (its console says only "404", not what)
    const missing: string[] = [];
    page.on('response', (r) => void (r.status() === 404 && missing.push(`${r.request().method()} ${r.url()} (on ${page.url()})`)));
    page.on('dialog', (d) => void d.accept()); // a person confirms what a form asks before it is sent
    await login(page, base);
    let password = USER.password;
    const api = context.request;
    const J = { Accept: 'application/json' };

    // What the pages show: a workflow with a run, a direct call, an uploaded config file, a second user, an approval.
    expect((await api.post(`${base}/workflows`, { data: WORKFLOW, headers: J })).status()).toBe(201);
    expect((await api.post(`${base}/executions/config`, { data: { workflow: WORKFLOW.name, config: [{ volume: 1 }] }, headers: J })).status()).toBe(200);
    const csv = join(lab.server.dataDir, 'forms-config.csv');
    await writeFile(csv, 'volume\n0.5\n1.5\n');
    const upload = await api.post(`${base}/files/batch-configs`, {
      multipart: { file: { name: 'forms-config.csv', mimeType: 'text/csv', buffer: Buffer.from('volume\n0.5\n1.5\n') }, workflow: WORKFLOW.name },
      headers: J,
    });
    expect(upload.status()).toBe(201);
    const { filename } = await upload.json();
    const other = await lab.browser.newContext();
    expect((await other.request.post(`${base}/auth/signup`, { form: { username: 'bea', password: 'another horse' }, maxRedirects: 0 })).status()).toBe(302);
    await other.close();
    /** An agent's request waiting in the inbox (a form may have decided the last one, or revoked its token). */
    let agents = 0;
    const pendingApproval = async (): Promise<{ id: number }> => {
      const inbox = (await (await api.get(`${base}/approvals`, { headers: J })).json()) as { pending: { id: number }[] };
      if (inbox.pending[0]) return inbox.pending[0];
      const token = (await (await api.post(`${base}/account/tokens`, { data: { name: `forms-agent-${agents++}`, scope: 'mcp' }, headers: J })).json()).token as string;
      const mcp = await api.post(`${base}/mcp`, {
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
        data: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'pump_dose', arguments: { volume_ml: 1 } } },
      });
      expect(mcp.status()).toBe(200);
      return pendingApproval();
    };
    /** Before each form: what the pages show is there again, and the user's current workflow is the one above. */
    const refresh = async () => {
      await pendingApproval();
      expect((await api.get(`${base}/executions/config?workflow=${WORKFLOW.name}`)).status()).toBe(200);
    };
    await pendingApproval();
    for (let i = 0; ; i++) {
      const s = await (await api.get(`${base}/executions/status`, { headers: J })).json();
      if (!s.busy) break;
      expect(i).toBeLessThan(200); // the run of one row ends in well under 20 s
      await page.waitForTimeout(100);
    }
    // a direct call once the run has let go of the pump
    const call = await (await api.post(`${base}/instruments/pump`, { data: { method: 'status', args: {} }, headers: J })).json();
    expect(call.task_id).toEqual(expect.any(Number));
    const records = (await (await api.get(`${base}/executions/records`, { headers: J })).json()).records as { id: number }[];
    const approval = await pendingApproval();
    const versions = (await (await api.get(`${base}/deck/versions`, { headers: J })).json()).versions as { id: number }[];
    // a campaign carried out by people (issue 31), its points pending: its page has a form per pending point
    const manual = await api.post(`${base}/executions/campaign`, {
      data: { workflow: WORKFLOW.name, execution: 'manual', optimizer_type: 'sobol', parameters: 'volume: 0..2', objectives: 'mass:max', batch_size: 6 },
      headers: J,
    });
    expect(manual.status()).toBe(200);
    const { campaign_id: campaignId } = await manual.json();
    expect(versions.length).toBeGreaterThan(0); // the deck as it started is version 1

    /** A value for each path parameter of an HTML route: what this lab has. */
    const SAMPLES: Record<string, string> = {
      '/instruments/{instrument}': '/instruments/pump',
      '/instruments/{instrument}/calls': '/instruments/pump/calls',
      '/instruments/{instrument}/labware': '/instruments/pump/labware',
      '/instruments/task/{task_id}': `/instruments/task/${call.task_id}`,
      '/instruments/new/{instrument}': '/instruments/new/sim-pump',
      '/workflows/{name}': `/workflows/${WORKFLOW.name}`,
      '/workflows/{name}/builder': `/workflows/${WORKFLOW.name}/builder`,
      '/files/preview/{filename}': `/files/preview/${filename}`,
      '/executions/records/{workflow_id}': `/executions/records/${records[0]!.id}`,
      '/approvals/{id}': `/approvals/${approval!.id}`,
      '/deck/versions/{id}': `/deck/versions/${versions[0]!.id}`,
      '/executions/campaigns/{id}': `/executions/campaigns/${campaignId}`,
    };

    // The HTML pages the routes declare.
    const doc = await (await api.get(`${base}/openapi.json`)).json();
    const mount = new URL(base).pathname; // /app
    const getRoutes = Object.entries(doc.paths as Record<string, Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>>)
      .filter(([path, ops]) => ops.get && path.startsWith(`${mount}/`))
      .map(([path, ops]) => ({ path: path.slice(mount.length) || '/', html: !!ops.get!.responses?.['200']?.content?.['text/html'] }))
      .sort((a, b) => a.path.split('{').length - b.path.split('{').length); // the most specific first: /instruments/proxy before /instruments/{instrument}
    const htmlRoutes = getRoutes.filter((r) => r.html).map((r) => r.path);
    const unknown = htmlRoutes.filter((p) => p.includes('{') && !SAMPLES[p]);
    expect(unknown).toEqual([]); // a page with a path parameter needs a sample above

    // Visit them, and every page their links reach (one of each route and query shape).
    /** The HTML route a path is a page of (undefined for a download, a JSON-only route, or none). */
    const routeOf = (path: string) => {
      const r = getRoutes.find((x) => templateRe(x.path).test(path));
      return r?.html ? r.path : undefined;
    };
    const queue = htmlRoutes.map((r) => SAMPLES[r] ?? r).filter((p) => !/\/auth\/(login|signup)$/.test(p)); // the logged-out forms are submitted last
    const seenShapes = new Set<string>();
    const forms = new Map<string, { urls: string[]; form: FormInfo }>(); // each form, and every page it was seen on
    const shape = (u: URL) => `${routeOf(u.pathname.slice(mount.length) || '/')}?${[...u.searchParams.keys()].sort().join('&')}`;
    while (queue.length) {
      const url = new URL(`${base}${queue.shift()!}`.replace(/\/app\/\//, '/app/'));
      if (seenShapes.has(shape(url))) continue;
      seenShapes.add(shape(url));
      if (process.env.LABDECK_E2E_VERBOSE) process.stderr.write(`page ${url.href}\n`);
      const res = await page.goto(url.href);
      expect([url.pathname + url.search, res?.status()]).toEqual([url.pathname + url.search, 200]);
      for (const href of await page.$$eval('a[href]', (as) => as.map((a) => (a as HTMLAnchorElement).href))) {
        const u = new URL(href);
        if (u.origin !== origin || !u.pathname.startsWith(`${mount}/`) || u.searchParams.has('format') || /\/auth\/(logout|login|signup)$/.test(u.pathname)) continue;
        if (!routeOf(u.pathname.slice(mount.length) || '/') || seenShapes.has(shape(u))) continue;
        queue.push(u.pathname.slice(mount.length) + u.search);
      }
      for (const form of await formsOf(page)) {
        const key = `${form.method} ${ids(form.action)} ${form.fields.map((f) => (f.type === 'hidden' ? `${f.name}=${f.value}` : f.name)).join(',')}`;
        if (!forms.has(key)) forms.set(key, { urls: [], form });
        forms.get(key)!.urls.push(url.href);
      }
    }
    expect(forms.size).toBeGreaterThan(15);

    // Submit each; the ones that change who is logged in come last, in this order.
    const last = (f: FormInfo) => (/\/auth\/change-password$/.test(f.action) ? 1 : /\/auth\/logout$/.test(f.action) ? 2 : 0);
    const failures: string[] = [];
    let n = 0;
    for (const { urls, form } of [...forms.values()].sort((a, b) => last(a.form) - last(b.form))) {
      n++;
      await refresh();
      // the same form on a page it was seen on (its fields may differ: a page shows the user's current workflow;
      // ids change)
      let now: FormInfo | undefined;
      let url = urls[0]!;
      for (const seen of urls) {
        url = seen.replace(/\/approvals\/\d+$/, `/approvals/${(await pendingApproval()).id}`);
        await page.goto(url);
        const same = (await formsOf(page)).filter((f) => ids(f.action) === ids(form.action) && f.method === form.method);
        now = same.find((f) => f.fields.map((x) => x.name).join() === form.fields.map((x) => x.name).join()) ?? same[0];
        if (now) break;
      }
      if (!now) {
        failures.push(`${urls.join(', ')}: the form ${form.method} ${form.action} is gone on a second visit`);
        continue;
      }
      if (!now.offered) continue;
      const values = valuesFor(now, { n, password, admin: USER.username });
      if (process.env.LABDECK_E2E_VERBOSE) process.stderr.write(`form ${form.method} ${form.action} on ${url}\n`);
      const status = await submit(page, now, values, lab.server.dataDir);
      if (status === null || status >= 400)
        failures.push(`${url}: ${form.method.toUpperCase()} ${form.action} answered ${status ?? 'nothing'} for ${JSON.stringify(values)}: ${await whatPageSays(page)}`);
      if (/\/auth\/change-password$/.test(form.action) && status !== null && status < 400) password = values.new_password!;
    }

    // Logged out now: the login and sign-up forms.
    for (const [path, values] of [
      ['/auth/signup', { username: 'cai', password: 'third horse' }],
      ['/auth/login', { username: USER.username, password }],
    ] as const) {
      await page.goto(`${base}${path}`);
      const form = (await formsOf(page)).find((f) => f.action.endsWith(path));
      if (!form) {
        // the account page's form closed sign-up above: the page says so instead of a form that answers 403
        if (!(path === '/auth/signup' && (await page.locator('h1').textContent())?.includes('Sign-up is closed'))) failures.push(`${path}: no form`);
        continue;
      }
      const status = await submit(page, form, values, lab.server.dataDir);
      if (status === null || status >= 400) failures.push(`${path} answered ${status ?? 'nothing'}`);
    }
    expect(failures).toEqual([]);
    expect(missing).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 300_000);
});

/** What the page says went wrong: its alerts, or the start of its main text. */
async function whatPageSays(page: Page): Promise<string> {
  const alerts = await page
    .locator('.alert, .invalid-feedback:visible, [data-testid=call-error]')
    .allTextContents()
    .catch(() => []);
  const text = alerts.length
    ? alerts.join(' | ')
    : ((await page
        .locator('main')
        .textContent()
        .catch(() => '')) ?? '');
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** The page's forms (the action resolved to a URL path). */
function formsOf(page: Page): Promise<FormInfo[]> {
  return page.$$eval('form', (fs) =>
    fs.map((f, index) => ({
      index,
      // htmx forms send with the method their hx- attribute names
      method: (['post', 'put', 'patch', 'delete'].find((m) => f.hasAttribute(`hx-${m}`)) ?? f.getAttribute('method') ?? 'get').toLowerCase(),
      action: new URL(['post', 'put', 'patch', 'delete'].map((m) => f.getAttribute(`hx-${m}`)).find(Boolean) ?? f.getAttribute('action') ?? location.href, location.href).pathname,
      submit: f.querySelectorAll('button:not([type=button]), input[type=submit]').length,
      offered:
        [...f.querySelectorAll<HTMLButtonElement>('button:not([type=button]), input[type=submit]')].some((b) => !b.disabled) || !f.querySelector('button:not([type=button]), input[type=submit]'),
      fields: [...f.elements]
        .filter((e): e is HTMLInputElement => !!(e as HTMLInputElement).name && !(e as HTMLInputElement).disabled)
        .map((e) => ({
          name: e.name,
          tag: e.tagName.toLowerCase(),
          type: e.type,
          value: e.value,
          required: e.required,
          pattern: e.getAttribute('pattern'),
          min: e.getAttribute('min'),
          max: e.getAttribute('max'),
          accept: e.getAttribute('accept'),
          options: e.tagName === 'SELECT' ? [...(e as unknown as HTMLSelectElement).options].map((o) => o.value) : [],
        })),
    })),
  );
}

/**
 * Valid values for a form: what its fields say (a default, a minimum, the first choice), and for the few
 * fields whose valid value is a fact of this lab (an existing account's password, a module on disk, Python
 * the deck understands), that fact. Values are unique per form (`n`) where a name must be new.
 */
function valuesFor(form: FormInfo, lab: { n: number; password: string; admin: string }): Record<string, string> {
  const byName: Record<string, string> = {
    username: `user${lab.n}`,
    password: 'correct horse staple',
    old_password: lab.password,
    new_password: 'correct horse battery',
    confirm_password: 'correct horse battery',
    device_name: `device_${lab.n}`,
    name: `forms-${lab.n}`,
    new_name: `forms-${lab.n}`,
    keyword: 'forms',
    code: '1 + 1',
    source: 'def workflow():\n    deck.pump.status()\n',
  };
  const out: Record<string, string> = {};
  for (const f of form.fields) {
    if (f.type === 'hidden' || f.type === 'checkbox' || f.type === 'radio' || f.type === 'file' || f.type === 'submit') continue;
    if (f.tag === 'select') out[f.name] = f.value || f.options.find(Boolean) || '';
    else if (f.name === 'filepath') out[f.name] = form.action.endsWith('/deck-python') ? installedFile('test/fixtures/forms/bench2.py') : installedFile('test/fixtures/plugins/thermo-driver.ts');
    else if (byName[f.name] !== undefined && !(f.value && f.name === 'name')) out[f.name] = byName[f.name]!;
    else if (f.value) out[f.name] = f.value;
    else if (f.type === 'number') out[f.name] = String(numberIn(f.min, f.max));
    else if (f.required || f.pattern) out[f.name] = f.pattern ? 'form_x1' : 'x';
  }
  return out;
}

/** A 1×1 PNG (a logo). */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/**
 * A CSV an upload form takes: for the workflow it names (a hidden `workflow` field), its parameters and, for a
 * history file, its outputs, with one row of numbers; otherwise a column of numbers.
 */
async function csvFor(page: Page, form: FormInfo): Promise<string> {
  // a campaign's results: its pending points as it hands them out, each result filled in
  if (/\/executions\/campaigns\/\d+\/results$/.test(form.action)) {
    const text = await (await page.request.get(new URL(form.action.replace(/results$/, 'points.csv?state=pending'), page.url()).href)).text();
    const [head, ...rows] = text.split(/\r?\n/).filter(Boolean);
    const at = head!.split(',').indexOf('discarded_reason') - 1; // the one output column, before discarded_reason
    return (
      [
        head,
        ...rows.map((r) =>
          r
            .split(',')
            .map((c, i) => (i === at ? '1' : c))
            .join(','),
        ),
      ].join('\n') + '\n'
    );
  }
  const workflow = form.fields.find((f) => f.name === 'workflow')?.value;
  if (!workflow) return 'volume\n1\n';
  const res = await page.request.get(new URL(`../workflows/${encodeURIComponent(workflow)}`, new URL(form.action, page.url()).href.replace(/\/files\/.*$/, '/files/')).href, {
    headers: { Accept: 'application/json' },
  });
  const def = ((await res.json()) as { workflow: { parameters: { name: string }[]; outputs: string[] } }).workflow;
  const columns = [...def.parameters.map((p) => p.name), ...(form.action.endsWith('/execution-data') ? def.outputs : [])];
  return columns.length ? `${columns.join(',')}\n${columns.map(() => '1').join(',')}\n` : 'n\n1\n';
}

/** A number a field takes: inside its bounds (both may be exclusive on the server: the middle, or one past a bound). */
function numberIn(min: string | null, max: string | null): number {
  const [lo, hi] = [min === null || min === '' ? null : Number(min), max === null || max === '' ? null : Number(max)];
  if (lo !== null && hi !== null) return Number.isInteger(lo) && Number.isInteger(hi) && hi - lo >= 2 ? Math.round((lo + hi) / 2) : (lo + hi) / 2;
  if (lo !== null) return lo + 1;
  if (hi !== null) return hi - 1;
  return 1;
}

/** Fill and submit form `form` as a person would; the status of its answer (null when nothing was sent). */
async function submit(page: Page, form: FormInfo, values: Record<string, string>, dir: string): Promise<number | null> {
  const el = page.locator('form').nth(form.index);
  // a form folded away in a <details> is opened first, as a person opens it
  await el.evaluate((f) => {
    for (let d = f.closest('details'); d; d = d.parentElement?.closest('details') ?? null) d.querySelector('summary')?.click();
  });
  for (const [name, value] of Object.entries(values)) {
    const field = el.locator(`[name="${name}"]`).first();
    if ((await field.evaluate((e) => e.tagName)) === 'SELECT') await field.selectOption(value);
    else await field.fill(value);
  }
  for (const f of form.fields.filter((x) => x.type === 'file')) {
    const image = /image/.test(f.accept ?? '') || f.name === 'logo';
    const file = join(dir, image ? 'forms.png' : 'forms.csv');
    await writeFile(file, image ? PNG : await csvFor(page, form));
    await el.locator(`[name="${f.name}"]`).setInputFiles(file);
  }
  const answer = page.waitForResponse((r) => r.request().method().toLowerCase() === form.method && new URL(r.url()).pathname === form.action, { timeout: 15_000 }).catch(() => null);
  if (form.submit) await el.locator('button:not([type=button]):not([disabled]), input[type=submit]:not([disabled])').first().click();
  else await el.evaluate((f: HTMLFormElement) => f.requestSubmit());
  const res = await answer;
  await page.waitForLoadState();
  return res ? res.status() : null;
}
