/**
 * Which Python interpreter has optuna, for the tests of the Optuna adapter: LABDECK_PYTHON, the python3 on
 * the PATH, or Debian's /usr/bin/python3 (python3-optuna, which .ci/run installs). The rest of the suite runs
 * on the interpreter labdeck would use (with pydantic, numpy), so neither kind of test is skipped in CI.
 */
import { spawnSync } from 'node:child_process';
import { pythonCommand } from '../../core/hosts/index.js';

export function optunaPython(): string {
  const candidates = [...new Set([pythonCommand(), 'python3', '/usr/bin/python3'])];
  const found = candidates.find((p) => spawnSync(p, ['-c', 'import optuna'], { encoding: 'utf8' }).status === 0);
  if (!found) throw new Error(`No Python here has optuna (tried ${candidates.join(', ')}): apt-get install python3-optuna`);
  return found;
}
