/**
 * A Python optimizer end to end: the Optuna adapter (examples/optimizers/optuna_optimizer.py) loaded from a
 * plugin folder by the Python host, run as a campaign on the demo deck's reactor. Needs an interpreter with
 * optuna (Debian's python3-optuna, which .ci/run installs; test/helpers/python.ts finds it).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isOptimizer, type Observation } from '../../core/contracts/index.js';
import { optunaPython } from '../helpers/python.js';
import { REACTOR, startLab, until, type TestLab } from '../api/helpers.js';

const J = 'application/json';
const ADAPTERS = fileURLToPath(new URL('../../examples/optimizers', import.meta.url));

describe('a Python optimizer (the Optuna adapter)', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startLab({ pluginDirs: [ADAPTERS], log: () => undefined, python: optunaPython() });
    expect(lab.runtime.plugins.errors()).toEqual([]);
    await lab.runtime.store.workflows.save(REACTOR.name, REACTOR, null);
  }, 60_000);
  afterAll(() => lab?.close());

  it('is the complete example of docs/optimizers.md, "Wrapping a Python optimizer"', () => {
    const doc = readFileSync(new URL('../../docs/optimizers.md', import.meta.url), 'utf8');
    const shown = /## Wrapping a Python optimizer[\s\S]*?```python\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(shown).toBe(readFileSync(`${ADAPTERS}/optuna_optimizer.py`, 'utf8'));
  });

  it('is described like any optimizer: its options from the class signature, its capabilities', async () => {
    const res = await lab.admin.post('/app/executions/optimizer_schema').send({ optimizer_type: 'optuna' }).expect(200);
    expect(res.body.description).toMatch(/^Optuna's samplers/);
    expect(res.body.config.properties.sampler).toMatchObject({ enum: ['tpe', 'random'], default: 'tpe' });
    expect(res.body.config.properties.n_startup_trials).toMatchObject({ type: 'integer', default: 10, description: expect.stringContaining('random suggestions') });
    expect(res.body.capabilities).toEqual({
      parameterTypes: ['range', 'int', 'choice'],
      multiObjective: true,
      batch: true,
      constraints: false,
      outcomeConstraints: false,
      logScale: true,
      steps: true,
    });
    // the campaign page's form for it, from the same schema
    const page = (await lab.admin.get('/app/executions/campaign?workflow=react&optimizer_type=optuna').expect(200)).text;
    expect(page).toMatch(/<input [^>]*step="1" name="config\.n_startup_trials" value="10"/);
    expect(page).toContain('name="config.sampler"');
    // never mistaken for an instrument driver
    const drivers = lab.runtime.plugins.list().filter((i) => i.file.endsWith('optuna_optimizer.py'));
    expect(drivers).toEqual([{ file: expect.any(String), kind: 'optimizer', name: 'optuna' }]);
  });

  it('runs a campaign on the demo reactor: batches, a stepped and a log-scale range, its record and plot', async () => {
    await lab.admin
      .post('/app/executions/campaign')
      .set('Accept', J)
      .send({
        workflow: 'react',
        repeat: 8,
        optimizer_type: 'optuna',
        batch_size: 2,
        seed: 5,
        parameters: 'temperature: 20..120 step 5, time: log 1..60',
        objectives: 'run.yield:max',
        config: { n_startup_trials: 4 },
      })
      .expect(200);
    await until(async () => ['done', 'failed'].includes((await lab.admin.get('/app/executions/latest_plot').set('Accept', J)).body.campaign?.status), 30_000);
    const plot = (await lab.admin.get('/app/executions/latest_plot').set('Accept', J).expect(200)).body;
    expect(plot.campaign).toMatchObject({ optimizer: 'optuna', status: 'done' });
    expect(plot.points).toHaveLength(8);
    for (const { params } of plot.points) {
      expect(params.temperature % 5).toBe(0);
      expect(params.temperature).toBeGreaterThanOrEqual(20);
      expect(params.time).toBeGreaterThanOrEqual(1);
      expect(params.time).toBeLessThanOrEqual(60);
    }
    expect(new Set(plot.points.map((p: { params: unknown }) => JSON.stringify(p.params))).size).toBe(8);
    // the model panel shows the Python optimizer's snapshot
    expect(plot.model).toMatchObject({ trials: 8, best: [{ params: expect.any(Object), values: [Math.max(...plot.points.map((p: { values: Record<string, number> }) => p.values['run.yield']))] }] });
    const record = await lab.admin.get(`/app/executions/records/${plot.campaign.run_id}`).set('Accept', J).expect(200);
    expect(record.body).toMatchObject({ status: 'completed', campaign: { optimizer: 'optuna', seed: 5, batch_size: 2, config: { n_startup_trials: 4, sampler: 'tpe' } } });
  }, 60_000);

  it('refuses what it cannot honour, and options it does not have, by name, before anything is queued', async () => {
    const base = { workflow: 'react', repeat: 4, optimizer_type: 'optuna', parameters: 'temperature: 20..120, time: 1..60', objectives: 'run.yield:max' };
    const cases: [Record<string, unknown>, string, string][] = [
      [
        { ...base, parameter_constraints: ['temperature + time <= 100'] },
        'parameter_constraints',
        'the optimizer "optuna" cannot honour parameter constraints: choose one that can (random, sobol, gp)',
      ],
      [{ ...base, outcome_constraints: ['run.yield >= 0.2'] }, 'outcome_constraints', 'the optimizer "optuna" cannot honour outcome constraints: choose one that can (random, sobol, gp)'],
      [{ ...base, config: { sampler: 'cmaes' } }, 'config.sampler', expect.stringContaining('"tpe"') as unknown as string],
      [{ ...base, config: { n_trials: 3 } }, 'config.n_trials', 'is not an option of the optimizer "optuna" (its options: sampler, n_startup_trials)'],
    ];
    for (const [body, field, message] of cases) {
      const res = await lab.admin.post('/app/executions/campaign').set('Accept', J).send(body);
      expect({ field, status: res.status }).toEqual({ field, status: 400 });
      expect(res.body.error.details).toContainEqual({ field, message });
    }
    expect(await lab.runtime.store.queue.open()).toEqual([]);
  });

  it('builds its state again from what it was told when the Python host restarts', async () => {
    const optuna = lab.runtime.plugins.registry('optimizer').get('optuna')?.value;
    if (!isOptimizer(optuna)) throw new Error('no optuna optimizer');
    const opt = optuna.create({ space: [{ name: 'x', type: 'range', bounds: [0, 1] }], objectives: [{ name: 'y', minimize: true }], seed: 2, config: { n_startup_trials: 2 } });
    const rows: Observation[] = [];
    for (let i = 0; i < 4; i++) {
      const [p] = await opt.suggest(1);
      rows.push({ params: p, values: { y: (Number(p.x) - 0.3) ** 2 } });
      await opt.observe([rows[i]]);
    }
    const host = lab.runtime.python.host;
    const before = host.pid!;
    const back = new Promise((r) => host.once('online', r));
    process.kill(before, 'SIGKILL');
    await back;
    expect(host.pid).not.toBe(before);
    const [next] = await opt.suggest(1);
    expect(Number(next.x)).toBeGreaterThanOrEqual(0);
    // the new state holds the four observations and the pending suggestion
    expect(opt.snapshot()).toMatchObject({ trials: 4, best: [{ values: [Math.min(...rows.map((r) => r.values.y))] }] });
  }, 60_000);

  it('loads, reloads and unloads with its file like any plugin; a name another plugin has fails the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labdeck-pyopt-'));
    const file = join(dir, 'fixed_opt.py');
    const source = (name: string) =>
      [
        'from labdeck_host.optimizer import Optimizer',
        '',
        'class Fixed(Optimizer):',
        '    """Always the low bounds."""',
        `    name = "${name}"`,
        '',
        '    def suggest(self, n):',
        '        return [{p["name"]: p["bounds"][0] for p in self.setup.space}] * n',
        '',
        '    def observe(self, rows):',
        '        pass',
        '',
      ].join('\n');
    const { plugins } = lab.runtime;
    const names = () => [...plugins.registry('optimizer').keys()];
    try {
      writeFileSync(file, source('fixed'));
      await plugins.reload(file);
      expect(names()).toContain('fixed');
      writeFileSync(file, source('lowest'));
      await plugins.reload(file);
      expect(names()).toEqual(expect.arrayContaining(['lowest', 'optuna', 'gp']));
      expect(names()).not.toContain('fixed');
      writeFileSync(file, source('gp'));
      await plugins.reload(file);
      expect(plugins.errors()).toEqual([{ file, message: expect.stringContaining('the optimizer "gp" is already provided by') }]);
      expect(names()).toContain('lowest'); // the last good version stays
      rmSync(file);
      await plugins.reload(file);
      expect(names()).not.toContain('lowest');
      expect(plugins.errors()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
