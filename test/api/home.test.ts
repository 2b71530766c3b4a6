import request from 'supertest';
import { signupAndLogin, startLab, type TestLab } from './helpers.js';
import { CATALOGUE } from '../helpers/catalogue.js';
import { waitFor } from '../helpers/wait.js';

const ROUTES = CATALOGUE.info;

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex');

describe('home, help, health, logo', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(() => lab.close());

  it('answers the health check without login, under /app and at /', async () => {
    const res = await request(lab.app).get('/app/healthz').expect(200);
    expect(res.body.ok).toBe(true);
    await request(lab.app).get('/healthz').expect(200);
  });

  it('lists every route on the home page, with links for the mount used', async () => {
    const page = await lab.admin.get('/app/').expect(200);
    for (const r of ROUTES) expect(page.text).toContain(`/app${r.path}`);
    const root = await lab.admin.get('/').expect(200);
    expect(root.text).toContain('href="/instruments/"');
    const json = await lab.admin.get('/app/?format=json').expect(200);
    expect(json.body.routes.length).toBe(ROUTES.length);
  });

  it("is the lab's front page: the runner, the queue, the latest runs, the instruments and what to do next", async () => {
    const first = (await lab.admin.get('/app/').expect(200)).text;
    expect(first).toMatch(/data-situation="idle">idle<\/span>ready for a run/);
    expect(first).toContain('Nothing waits.');
    expect(first).toContain('No run yet.');
    expect(first).toContain('Build your first workflow from the instruments below');
    expect(first).toMatch(/<h3 class="h6 card-title mb-1">pump<\/h3>/);
    expect(first).toContain('<details class="mb-4" id="home-routes">'); // every route, folded away
    // after a run, it is among the latest, with its status, and the next step is to run again
    const { store, runner } = lab.runtime;
    await store.workflows.save('ping', { name: 'ping', main: [{ kind: 'call', instrument: 'noop', method: 'ping' }] }, null);
    const task = await runner.submit({ workflow: 'ping', repeat: 1, userId: null });
    await waitFor(async () => (await store.queue.get(task.id))?.status === 'done', 'the run to be done');
    const after = (await lab.admin.get('/app/').expect(200)).text;
    expect(after).toMatch(/<a href="\/app\/executions\/records\/\d+">ping × 1<\/a><\/td><td><span class="badge text-bg-success">completed<\/span>/);
    expect(after).toContain('Run a workflow');
    expect(after).not.toContain('Build your first workflow');
  });

  it('serves the help page without login and the vendor assets from our own origin', async () => {
    const help = await request(lab.app).get('/app/help').expect(200);
    expect(help.text).toContain('labdeck help');
    const css = await request(lab.app).get('/app/static/vendor/bootstrap.min.css').expect(200);
    expect(css.headers['content-type']).toContain('text/css');
    await request(lab.app).get('/app/static/vendor/htmx.min.js').expect(200);
    for (const path of ['/app/static/vendor/..%2f..%2fpackage.json', '/app/static/..%2f..%2fpackage.json', '/app/static/%2e%2e/%2e%2e/package.json']) {
      const res = await lab.admin.get(path);
      expect([403, 404]).toContain(res.status);
      expect(res.text).not.toContain('"name": "labdeck"');
    }
    expect(help.headers['content-security-policy']).toContain("default-src 'self'");
    expect(help.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
  });

  it('escapes user-controlled text in pages', async () => {
    const res = await request(lab.app).post('/app/auth/login').type('form').send({ username: '<script>alert(1)</script>', password: 'whatever-x' });
    expect(res.status).toBe(401);
    expect(res.text).not.toContain('<script>alert(1)</script>');
    expect(res.text).toContain('&lt;script&gt;');
  });

  it('stores a logo and the display mode (admin), 302 home, and shows them', async () => {
    const res = await lab.admin.post('/app/customize-logo').field('mode', 'dark').attach('logo', PNG, 'logo.png').expect(302);
    expect(res.headers.location).toBe('/app/');
    const logo = await request(lab.app).get('/app/logo').expect(200);
    expect(logo.headers['content-type']).toBe('image/png');
    const page = await lab.admin.get('/app/help').expect(200);
    expect(page.text).toContain('data-bs-theme="dark"');
    expect(page.text).toContain('src="/app/logo"');
  });

  it('rejects a logo that is not an image, a bad mode, an oversized file, and operators', async () => {
    const notImage = await lab.admin.post('/app/customize-logo').set('Accept', 'application/json').attach('logo', Buffer.from('<svg onload=alert(1)>'), 'x.png');
    expect(notImage.status).toBe(400);
    expect(notImage.body.error.details[0].field).toBe('logo');
    await lab.admin.post('/app/customize-logo').set('Accept', 'application/json').field('mode', 'purple').expect(400);
    const big = Buffer.concat([PNG, Buffer.alloc(1024 * 1024 + 10)]);
    await lab.admin.post('/app/customize-logo').set('Accept', 'application/json').attach('logo', big, 'big.png').expect(413);
    const op = await signupAndLogin(lab.app, 'otto');
    await op.post('/app/customize-logo').set('Accept', 'application/json').field('mode', 'light').expect(403);
  });

  it('refuses a logo field it does not take, by name, in a multipart form and in JSON, and changes nothing', async () => {
    const before = await lab.runtime.branding.get();
    for (const send of [
      () => lab.admin.post('/app/customize-logo').set('Accept', 'application/json').field('mode', 'light').field('colour', 'red'),
      () => lab.admin.post('/app/customize-logo').set('Accept', 'application/json').send({ mode: 'light', colour: 'red' }),
    ]) {
      const res = await send().expect(400);
      expect(res.body.error.details).toEqual([{ field: 'colour', message: expect.stringMatching(/^is not a field of this request/) }]);
    }
    expect(await lab.runtime.branding.get()).toEqual(before);
  });
});

describe('upload and asset errors', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab();
  });
  afterAll(() => lab.close());

  it('answers 400 naming the field for an unexpected upload field, and 404 for an unknown asset', async () => {
    const res = await lab.admin.post('/app/customize-logo').set('Accept', 'application/json').attach('picture', PNG, 'x.png');
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('picture');
    await request(lab.app).get('/app/static/nope.css').set('Accept', 'application/json').expect(404);
    await request(lab.app).get('/app/static/vendor/nope.js').expect(404);
  });
});
