/**
 * `npm test` passes on a fresh machine with the README's requirements: tests that need more (optuna) are
 * in the full suite (jest.full.config.js), which .ci/run runs after installing it. And the probe that
 * looks for such a Python says why each candidate failed, in Python's own words.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pythonCommand } from '../../core/hosts/index.js';
import { projectRoot } from '../../core/paths.js';
import { pythonWith } from '../helpers/python.js';

const files = (dir: string): string[] =>
  readdirSync(join(projectRoot, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => join(dir, f));

it('no test npm test runs needs optuna; the full suite has them, and CI runs it', () => {
  const needs = (f: string) => /optunaPython|import optuna/.test(readFileSync(join(projectRoot, f), 'utf8'));
  const self = 'test/unit/test-suites.test.ts'; // (its own pattern above is no need)
  expect([...files('test/unit'), ...files('test/api')].filter((f) => f !== self && needs(f))).toEqual([]);
  expect(files('test/full').filter(needs).sort()).toEqual(['test/full/python-optimizers.test.ts', 'test/full/python-optuna.test.ts']);
  expect(readFileSync(join(projectRoot, '.ci/run'), 'utf8')).toContain('npm run test:full');
  expect(JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')).scripts['test:full']).toContain('--config jest.full.config.js');
});

it("the Python probe names each interpreter it tried and Python's reason", () => {
  const e = (() => {
    try {
      pythonWith('labdeck_no_such_module', 'install it', [pythonCommand(), '/no/such/python3']);
    } catch (err) {
      return (err as Error).message;
    }
    return '';
  })();
  expect(e).toContain(`${pythonCommand()}: ModuleNotFoundError: No module named 'labdeck_no_such_module'`);
  expect(e).toContain('/no/such/python3: spawnSync /no/such/python3 ENOENT');
  expect(e).toContain('(install it)');
});
