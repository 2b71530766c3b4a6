import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { line, built, runEnd } from './common.mjs';

export default async function orchestration() {
  console.log('\n== orchestration (issue 3): no-op steps through the real runner with step records, SQLite, in process ==');
  const { createRuntime } = await built('core/runtime.js');
  const dir = await mkdtemp(join(tmpdir(), 'labdeck-bench-'));
  const runtime = await createRuntime({ dataDir: dir, watch: false, pluginDirs: [] });
  const ping = { kind: 'call', instrument: 'noop', method: 'ping' };
  /** Queue `workflow` × `iterations`, run it to the end; ms per recorded step. */
  const timeRun = async (name, main, iterations) => {
    await runtime.store.workflows.save(name, { name, main }, null);
    const t0 = performance.now();
    const task = await runtime.runner.submit({ workflow: name, repeat: iterations, userId: null });
    const runId = await runEnd(runtime.runner, task.id);
    const ms = performance.now() - t0;
    let steps = 0;
    for await (const batch of runtime.store.runSteps.iterate(runId, 5000)) steps += batch.filter((x) => x.status === 'ok').length;
    return { ms, steps, perStep: ms / steps };
  };
  try {
    await timeRun('bench-warmup', [{ kind: 'repeat', times: 100, steps: [ping] }], 20); // JIT and page cache
    const a = await timeRun('bench-100x100', [{ kind: 'repeat', times: 100, steps: [ping] }], 100);
    const b = await timeRun('bench-1x10000', [{ kind: 'repeat', times: 10_000, steps: [ping] }], 1);
    if (a.steps !== 10_000 || b.steps !== 10_000) throw new Error(`expected 10,000 recorded steps, got ${a.steps} and ${b.steps}`);
    line('overhead per step, 100 iterations × 100 calls', `${a.perStep.toFixed(3)} ms`, '< 0.5 ms', a.perStep < 0.5);
    line('overhead per step, 1 iteration × 10,000 calls', `${b.perStep.toFixed(3)} ms`, '< 0.5 ms', b.perStep < 0.5);
    console.log(`  (10,000 steps in ${(a.ms / 1000).toFixed(2)} s and ${(b.ms / 1000).toFixed(2)} s: queue, phase and step records, events, deck call with validation and lock)`);
  } finally {
    await runtime.close();
    await rm(dir, { recursive: true, force: true });
  }
}
