/**
 * The Optuna adapter's Python tests (python/tests/test_optimizer.py) on an interpreter with optuna, none of
 * them skipped. In the full suite (jest.full.config.js, which .ci/run runs after installing python3-optuna),
 * not in `npm test`: a fresh machine with the README's requirements has no optuna.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../core/paths.js';
import { optunaPython } from '../helpers/python.js';

it('passes the optimizer tests on an interpreter with optuna, none of them skipped', () => {
  const r = spawnSync(optunaPython(), ['-m', 'unittest', 'discover', '-v', '-s', 'tests', '-p', 'test_optimizer.py'], { cwd: join(projectRoot, 'python'), encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`python -m unittest test_optimizer failed (exit ${r.status}):\n${r.stderr}\n${r.stdout}`);
  expect(r.stderr).toMatch(/^OK$/m);
  expect(r.stderr).not.toMatch(/skipped/);
}, 130_000);
