/**
 * Campaigns carried out by people (issue 31 item 3): a manual gp campaign suggests 4 points, takes 2 results,
 * survives a restart (the first labdeck killed: it stops heart-beating, nothing is closed cleanly), takes a
 * third, and its next suggestions never repeat the pending one; a staff point is pending until its result,
 * then in the optimizer's observations and in the records with who suggested and who measured it; bad input
 * is a 400 naming the field.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp, type App } from '../../server/app.js';
import { createRuntime, type Runtime } from '../../core/runtime.js';
import { testDbUrl } from '../helpers/db.js';
import { PASSWORD, REACTOR, signupAndLogin, startLab, until } from './helpers.js';

const J = 'application/json';
const START = { workflow: 'react', execution: 'manual', optimizer_type: 'gp', parameters: 'temperature: 20..120, time: 1..30', objectives: 'run.yield:max', batch_size: 4, seed: 7 };
const key = (p: { parameters: Record<string, number> }) => `${p.parameters.temperature.toPrecision(8)},${p.parameters.time.toPrecision(8)}`;

describe('a manual gp campaign', () => {
  it('suggests 4, takes 2 results, survives a kill, takes a third, never repeats the pending one; staff points count', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'labdeck-manual-'));
    const db = await testDbUrl();
    const open = async (): Promise<{ runtime: Runtime; app: App }> => {
      const runtime = await createRuntime({ dataDir, db: db.url, watch: false, pluginDirs: [], labHost: { kind: 'serve', leaseMs: 2000 } });
      return { runtime, app: await createApp(runtime) };
    };
    let first: { runtime: Runtime; app: App } | null = await open();
    let second: { runtime: Runtime; app: App } | null = null;
    try {
      const ada = await signupAndLogin(first.app, 'ada');
      await ada.post('/app/workflows').set('Accept', J).send(REACTOR).expect(201);
      // bad input names the field
      const noRepeat = await ada
        .post('/app/executions/campaign')
        .set('Accept', J)
        .send({ ...START, execution: undefined })
        .expect(400);
      expect(JSON.stringify(noRepeat.body.error.details)).toContain('repeat');
      const badExec = await ada
        .post('/app/executions/campaign')
        .set('Accept', J)
        .send({ ...START, execution: 'sometimes' })
        .expect(400);
      expect(JSON.stringify(badExec.body.error)).toContain('execution');

      const started = await ada.post('/app/executions/campaign').set('Accept', J).send(START).expect(200);
      expect(Object.keys(started.body)).toEqual(['campaign_id']);
      const id = started.body.campaign_id as number;
      const view = async (agent: ReturnType<typeof request.agent>) => (await agent.get(`/app/executions/campaigns/${id}`).set('Accept', J).expect(200)).body;
      let c = await view(ada);
      expect(c.execution).toBe('manual');
      expect(c.points).toHaveLength(4);
      expect(c.points.map((p: { n: number; state: string; suggested_by: string }) => [p.n, p.state, p.suggested_by])).toEqual([1, 2, 3, 4].map((n) => [n, 'pending', 'optimizer:gp']));
      expect(new Set(c.points.map(key)).size).toBe(4);

      // results of 1 and 2; bad results name the field and change nothing
      const bad = await ada
        .put(`/app/executions/campaigns/${id}/points/1`)
        .set('Accept', J)
        .send({ results: { 'run.yield': 'abc' } })
        .expect(400);
      expect(bad.body.error.details[0].field).toBe('results.run.yield');
      const missing = await ada
        .put(`/app/executions/campaigns/${id}/points/1`)
        .set('Accept', J)
        .send({ results: { colour: 1 } })
        .expect(400);
      expect(missing.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['results.colour', 'results.run.yield']);
      const noReason = await ada.put(`/app/executions/campaigns/${id}/points/1`).set('Accept', J).send({ discarded: true }).expect(400);
      expect(noReason.body.error.details[0].field).toBe('reason');
      await ada
        .put(`/app/executions/campaigns/${id}/points/9`)
        .set('Accept', J)
        .send({ results: { 'run.yield': 1 } })
        .expect(404);
      const one = await ada
        .put(`/app/executions/campaigns/${id}/points/1`)
        .set('Accept', J)
        .send({ results: { 'run.yield': 0.41 } })
        .expect(200);
      expect(one.body).toMatchObject({ n: 1, state: 'measured', results: { 'run.yield': 0.41 }, measured_by: 'person:ada' });
      await ada
        .put(`/app/executions/campaigns/${id}/points/1`)
        .set('Accept', J)
        .send({ results: { 'run.yield': 0.5 } })
        .expect(409); // entered once
      // a form's text, from the page's form
      await ada.post(`/app/executions/campaigns/${id}/points/2`).type('form').send({ 'results.run.yield': '0.63' }).expect(302);

      // kill: the process stops heart-beating and its lease is over; nothing is closed cleanly
      first.runtime.runner.host.halt();
      await first.runtime.notifications.close();
      await first.runtime.store.hosts.stop(first.runtime.runner.host.id);
      (first.app.locals.sessionStore as { close(): void }).close();
      const dead = first;
      first = null;
      second = await open();
      const bea = request.agent(second.app);
      await bea.post('/app/auth/login').type('form').send({ username: 'ada', password: PASSWORD }).expect(302);

      c = await view(bea);
      expect(c.points.map((p: { state: string }) => p.state)).toEqual(['measured', 'measured', 'pending', 'pending']);
      await bea
        .put(`/app/executions/campaigns/${id}/points/3`)
        .set('Accept', J)
        .send({ results: { 'run.yield': 0.55 } })
        .expect(200);
      await bea.put(`/app/executions/campaigns/${id}/points/4`).set('Accept', J).send({ discarded: true, reason: 'the vial broke' }).expect(200);

      // a staff point: bad ones name the field; a good one is pending
      const outside = await bea
        .post(`/app/executions/campaigns/${id}/points`)
        .set('Accept', J)
        .send({ parameters: { temperature: 500, time: 5 } })
        .expect(400);
      expect(outside.body.error.details[0].field).toBe('parameters.temperature');
      const unknown = await bea
        .post(`/app/executions/campaigns/${id}/points`)
        .set('Accept', J)
        .send({ parameters: { temperature: 50, time: 5, ph: 7 } })
        .expect(400);
      expect(unknown.body.error.details[0].field).toBe('parameters.ph');
      const staff = await bea
        .post(`/app/executions/campaigns/${id}/points`)
        .set('Accept', J)
        .send({ parameters: { temperature: 77, time: 12 } })
        .expect(201);
      expect(staff.body).toMatchObject({ n: 5, state: 'pending', suggested_by: 'person:ada', measured_by: null });

      // the next suggestions never repeat the pending one (the staff point), nor any earlier point
      await bea.post(`/app/executions/campaigns/${id}/suggest`).set('Accept', J).send({ n: 0 }).expect(400);
      const more = await bea.post(`/app/executions/campaigns/${id}/suggest`).set('Accept', J).send({ n: 3 }).expect(200);
      expect(more.body.points).toHaveLength(3);
      c = await view(bea);
      const keys = c.points.map(key);
      expect(new Set(keys).size).toBe(keys.length);
      expect(more.body.points.map(key)).not.toContain(key(staff.body));

      // the staff point measured: in the optimizer's observations (rebuilt from the records) and in the data CSV
      await bea
        .put(`/app/executions/campaigns/${id}/points/5`)
        .set('Accept', J)
        .send({ results: { 'run.yield': 0.9 } })
        .expect(200);
      const record = await second.runtime.store.campaigns.get(id);
      const instance = await second.runtime.campaigns.points!.rebuild(record!.payload as never, await second.runtime.store.campaigns.points(id));
      const snap = instance.snapshot() as { observations: number; best: { params: Record<string, number> } };
      expect(snap.observations).toBe(4); // 1, 2, 3 and the staff point (4 was discarded)
      expect(snap.best.params).toMatchObject({ temperature: 77, time: 12 });
      const csv = (await bea.get(`/app/executions/campaigns/${id}/points.csv?state=all`).expect(200)).text.split(/\r?\n/);
      expect(csv[0]).toBe('n,state,temperature,time,run.yield,reason,suggested_by,measured_by,suggested_at,measured_at');
      expect(csv[5]).toMatch(/^5,measured,77,12,0\.9,,person:ada,person:ada,/);
      expect(csv[4]).toMatch(/^4,discarded,.*,the vial broke,optimizer:gp,person:ada,/);

      // the pending table down, filled in, and up again
      const pending = (await bea.get(`/app/executions/campaigns/${id}/points.csv`).expect(200)).text.split(/\r?\n/).filter(Boolean);
      expect(pending[0]).toBe('n,temperature,time,run.yield,discarded_reason,suggested_by');
      expect(pending).toHaveLength(4);
      const filled = [pending[0], ...pending.slice(1).map((l, i) => l.replace(/^(\d+,[^,]+,[^,]+),,/, i === 2 ? '$1,,no sample left' : `$1,0.${i + 2},`))].join('\n');
      const badFile = await bea.post(`/app/executions/campaigns/${id}/results`).set('Accept', J).attach('file', Buffer.from('n,run.yield\n6,abc\n'), 'r.csv').expect(400);
      expect(badFile.body.error.details[0].field).toBe('line 2, column run.yield');
      const up = await bea.post(`/app/executions/campaigns/${id}/results`).set('Accept', J).attach('file', Buffer.from(filled), 'results.csv').expect(200);
      expect(up.body).toEqual({ measured: [6, 7], discarded: [8], unchanged: [] });
      c = await view(bea);
      expect(c.counts).toEqual({ pending: 0, measured: 6, discarded: 2 });
      // the page shows the table
      const html = (await bea.get(`/app/executions/campaigns/${id}`).expect(200)).text;
      expect(html).toContain('campaign-points');
      expect(html).toContain('person:ada');
      await dead.runtime.close().catch(() => undefined);
    } finally {
      if (first) await first.runtime.close().catch(() => undefined);
      if (second) {
        (second.app.locals.sessionStore as { close(): void }).close();
        await second.runtime.close();
      }
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('a robot campaign takes points measured by hand', () => {
  it('has a campaign record; a staff point with its results is in latest_plot and the campaign, with who suggested and measured it', async () => {
    const lab = await startLab();
    try {
      await lab.admin.post('/app/workflows').set('Accept', J).send(REACTOR).expect(201);
      const { task_id } = (
        await lab.admin
          .post('/app/executions/campaign')
          .set('Accept', J)
          .send({ ...START, execution: undefined, optimizer_type: 'random', repeat: 2, batch_size: 1 })
          .expect(200)
      ).body;
      await until(async () => (await lab.admin.get(`/app/executions/queue/task/${task_id}`).set('Accept', J)).body.status === 'done');
      const plot = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
      const id = plot.campaign.campaign_id as number;
      expect(id).toEqual(expect.any(Number));
      expect(plot.points.map((p: { suggested_by: string; measured_by: string }) => [p.suggested_by, p.measured_by])).toEqual(
        [0, 1].map(() => ['optimizer:random', expect.stringMatching(/^run:\d+$/)]),
      );
      await lab.admin
        .post(`/app/executions/campaigns/${id}/points`)
        .set('Accept', J)
        .send({ parameters: { temperature: 90, time: 20 }, results: { 'run.yield': 0.7 } })
        .expect(201);
      const after = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
      expect(after.points[2]).toMatchObject({ iteration: null, n: 1, params: { temperature: 90, time: 20 }, values: { 'run.yield': 0.7 }, suggested_by: 'person:ada', measured_by: 'person:ada' });
      const c = (await lab.admin.get(`/app/executions/campaigns/${id}`).set('Accept', J).expect(200)).body;
      expect(c).toMatchObject({ execution: 'robot', task_id, counts: { measured: 1 } });
      expect(c.iterations).toHaveLength(2);

      // the run's own data CSV says who suggested and measured each iteration, after its documented columns, as the campaign's does
      const run = plot.campaign.run_id as number;
      const lines = (await lab.admin.get(`/app/files/execution-data/run-${run}.csv`).expect(200)).text.split(/\r?\n/).filter(Boolean);
      expect(lines[0]).toBe('iteration,status,temperature,time,run.yield,suggested_by,measured_by');
      expect(lines.slice(1).map((l) => l.split(',').slice(-2).join(','))).toEqual([`optimizer:random,run:${run}`, `optimizer:random,run:${run}`]);
      expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['1', '2']);
      const all = (await lab.admin.get(`/app/executions/campaigns/${id}/points.csv?state=all`).expect(200)).text.split(/\r?\n/);
      expect(all[1]).toMatch(new RegExp(`^,measured,.*,optimizer:random,run:${run},`));
      // and it is still a history file of its workflow: uploaded back, it warm-starts a campaign with its 2 rows
      const hist = await lab.admin
        .post('/app/files/execution-data')
        .set('Accept', J)
        .field('workflow', 'react')
        .attach('file', Buffer.from(lines.join('\n')), `run-${run}.csv`)
        .expect(201);
      const { execution: _robot, ...robot } = START;
      const warm = await lab.runtime.campaigns.plan({ ...robot, optimizer_type: 'random', repeat: 1, existing_data: hist.body.filename });
      expect(warm.existing).toHaveLength(2);
    } finally {
      await lab.close();
    }
  }, 60_000);
});

describe("a manual campaign's progress plot", () => {
  it('draws the measured points at their n with who chose each, and the best so far; it changes as results are entered', async () => {
    const lab = await startLab();
    try {
      await lab.admin.post('/app/workflows').set('Accept', J).send(REACTOR).expect(201);
      const { campaign_id: id } = (
        await lab.admin
          .post('/app/executions/campaign')
          .set('Accept', J)
          .send({ ...START, optimizer_type: 'random', batch_size: 3 })
          .expect(200)
      ).body;
      const plot = async () => (await lab.admin.get(`/app/executions/campaigns/${id}/plot`).expect(200)).body;
      const page = async () => (await lab.admin.get(`/app/executions/campaigns/${id}`).expect(200)).text;
      await lab.admin.get('/app/executions/campaigns/999999/plot').expect(404);

      let p = await plot();
      expect(p).toMatchObject({
        campaign: { campaign_id: id, execution: 'manual', optimizer: 'random', counts: { pending: 3, measured: 0 } },
        objectives: [{ name: 'run.yield', minimize: false }],
        points: [],
        best_so_far: [],
      });
      let html = await page();
      expect(html).toContain('id="campaign-plot"');
      expect(html).toContain('No measurement of run.yield yet');

      await lab.admin
        .put(`/app/executions/campaigns/${id}/points/2`)
        .set('Accept', J)
        .send({ results: { 'run.yield': 0.4 } })
        .expect(200);
      p = await plot();
      expect(p.points).toEqual([expect.objectContaining({ x: 2, n: 2, values: { 'run.yield': 0.4 }, suggested_by: 'optimizer:random', measured_by: 'person:ada' })]);
      expect(p.best_so_far).toEqual([{ x: 2, n: 2, value: 0.4 }]);
      html = await page();
      expect(html).not.toContain('No measurement of run.yield yet');
      expect(html.match(/<circle class="point"/g)).toHaveLength(1);
      expect(html).not.toContain('<path class="person"');

      // a person's own point, measured at once: a diamond, and the new best
      await lab.admin
        .post(`/app/executions/campaigns/${id}/points`)
        .set('Accept', J)
        .send({ parameters: { temperature: 90, time: 20 }, results: { 'run.yield': 0.7 } })
        .expect(201);
      await lab.admin.put(`/app/executions/campaigns/${id}/points/3`).set('Accept', J).send({ discarded: true, reason: 'spilt' }).expect(200);
      p = await plot();
      expect(p.points.map((x: { n: number; suggested_by: string }) => [x.n, x.suggested_by])).toEqual([
        [2, 'optimizer:random'],
        [4, 'person:ada'],
      ]);
      expect(p.best_so_far).toEqual([
        { x: 2, n: 2, value: 0.4 },
        { x: 4, n: 4, value: 0.7 },
      ]);
      html = await page();
      expect(html.match(/<circle class="point"/g)).toHaveLength(1);
      expect(html.match(/<path class="person"/g)).toHaveLength(1);
      expect(html).toContain('point 4: run.yield = 0.7 (temperature = 90, time = 20) · suggested by person:ada, measured by person:ada');
      expect(html).toContain('chosen by a person');

      // point 1 entered last is best from its n on
      await lab.admin
        .put(`/app/executions/campaigns/${id}/points/1`)
        .set('Accept', J)
        .send({ results: { 'run.yield': 0.9 } })
        .expect(200);
      p = await plot();
      expect(p.points.map((x: { x: number }) => x.x)).toEqual([1, 2, 4]);
      expect(p.best_so_far.map((b: { value: number }) => b.value)).toEqual([0.9, 0.9, 0.9]);
      const svg = await lab.admin.get(`/app/executions/campaigns/${id}/plot?format=svg`).expect(200);
      expect(svg.headers['content-type']).toMatch(/^image\/svg\+xml/);
      const image = String(svg.text ?? svg.body);
      expect(image).toContain('>point n<');
      expect(image.match(/<circle class="point"/g)).toHaveLength(2);
    } finally {
      await lab.close();
    }
  }, 60_000);
});
