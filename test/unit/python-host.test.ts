/**
 * The Python host's own unit tests (python/tests, unittest), run on the interpreter labdeck would use, so
 * `npm test` fails when they do. Those that need optuna run in the full suite (test/full/python-optuna.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pythonCommand } from '../../core/hosts/index.js';
import { projectRoot } from '../../core/paths.js';

describe('the Python host (python/tests)', () => {
  it('passes its unittest suite', () => {
    const r = spawnSync(pythonCommand(), ['-m', 'unittest', 'discover', '-s', 'tests'], {
      cwd: join(projectRoot, 'python'),
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (r.status !== 0) throw new Error(`python -m unittest failed (exit ${r.status}):\n${r.stderr}\n${r.stdout}`);
    expect(r.stderr).toMatch(/^OK/m);
    expect(Number(/Ran (\d+) tests?/.exec(r.stderr)?.[1])).toBeGreaterThan(10);
  }, 130_000);
});
