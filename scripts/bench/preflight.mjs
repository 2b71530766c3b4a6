import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { built, line, median, runEnd } from './common.mjs';

/**
 * Issue 32: the preflight of a 1,000-row run on a 20-step workflow (target ≤ 200 ms), with consumption rules
 * on every step; and the ETA's error after 3 runs of the same workflow (target within 25% of the real
 * duration of the fourth).
 */
export default async function preflight() {
  console.log('\n== preflight (issue 32): 1,000 rows × 20 steps, and the ETA after 3 runs ==');
  const { createRuntime } = await built('core/runtime.js');
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-pre-'));
  const runtime = await createRuntime({ dataDir: dir, watch: false, pluginDirs: [] });
  try {
    const { store, resources, preflight, runner } = runtime;
    // 20 steps: pump.dose and balance.weigh in turn, each using a tip and, for doses, the volume of water
    const main = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0 ? { kind: 'call', instrument: 'pump', method: 'dose', args: { volume_ml: { param: 'volume' } } } : { kind: 'call', instrument: 'balance', method: 'weigh' },
    );
    await store.workflows.save('bench-pre', { name: 'bench-pre', parameters: [{ name: 'volume', type: 'number', default: 0.5 }], main }, null);
    await resources.setRules(
      [
        { target: 'class:sim-pump', method: 'dose', resource: 'tips' },
        { target: 'pump', method: 'dose', resource: 'water', amount: { arg: 'volume_ml' } },
        { target: 'balance', method: 'weigh', resource: 'tips' },
      ],
      null,
    );
    await resources.create({ name: 'tips', kind: 'consumable', quantity: 1_000_000 }, null);
    await resources.create({ name: 'water', kind: 'liquid', quantity: 1_000_000, unit: 'ml' }, null);

    // the ETA: three runs to learn from, then the fourth is predicted and timed
    const small = { workflow: 'bench-pre', config: Array.from({ length: 3 }, (_, i) => ({ volume: 0.5 + i * 0.1 })) };
    for (let i = 0; i < 3; i++) {
      const task = await runner.submit({ ...small, userId: null });
      await runEnd(runner, task.id);
    }
    const eta = await preflight.check(small);
    const t0 = performance.now();
    const task = await runner.submit({ ...small, userId: null });
    await runEnd(runner, task.id);
    const real = (performance.now() - t0) / 1000;
    const error = Math.abs(eta.duration_s.p50 - real) / real;
    line('ETA after 3 runs (P50 vs real)', `${eta.duration_s.p50.toFixed(2)} s / ${real.toFixed(2)} s`, '', undefined);
    line('ETA error after 3 runs', `${(error * 100).toFixed(1)} %`, '≤ 25 %', error <= 0.25);

    const rows = Array.from({ length: 1000 }, (_, i) => ({ volume: 0.1 + (i % 40) * 0.01 }));
    const times = [];
    let last;
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      last = await preflight.check({ workflow: 'bench-pre', config: rows });
      times.push(performance.now() - t);
    }
    if (!last.ok || last.resources.find((r) => r.name === 'tips').needed !== 20_000) throw new Error(`unexpected preflight: ${JSON.stringify(last.problems)}`);
    line('preflight, 1,000 rows × 20 steps (median)', `${median(times).toFixed(1)} ms`, '≤ 200 ms', median(times) <= 200);
  } finally {
    await runtime.close();
    await rm(dir, { recursive: true, force: true });
  }
}
