/**
 * The clients' runtimes are real files (issue 27): the Python ones compile as Python, the TypeScript one is
 * type-checked and linted with the sources (npm run typecheck, npm run lint), and what a generated client
 * carries is what those files say.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../core/paths.js';
import { pythonCommand } from '../../core/hosts/index.js';
import { generateProxy } from '../../server/proxy.js';
import { ROUTES } from '../helpers/catalogue.js';
import { pyLabMethods, pyRuntime, tsRuntime } from '../../server/clients/runtimes.js';

const run = promisify(execFile);
const dir = join(projectRoot, 'server', 'clients');

it('the Python runtimes compile as Python, as they are', async () => {
  const code = "import ast, sys\nfor f in sys.argv[1:]:\n    ast.parse(open(f).read(), f)\nprint('ok')";
  const { stdout } = await run(pythonCommand(), ['-c', code, join(dir, 'python-runtime.py'), join(dir, 'python-lab-methods.py')]);
  expect(stdout.trim()).toBe('ok');
});

it('a generated client carries the runtime files below their markers', () => {
  const opts = { defaultBaseUrl: 'http://127.0.0.1:8000/app', generatedAt: new Date(0), routes: ROUTES };
  const py = generateProxy('python', [], opts).content;
  const ts = generateProxy('typescript', [], opts).content;
  expect(py).toContain(pyRuntime());
  expect(py).toContain(pyLabMethods());
  expect(ts).toContain(tsRuntime());
  expect(pyRuntime()).toContain('class LabError(Exception):');
  expect(pyLabMethods()).toContain('    def wait_for_run(');
  // the TypeScript file's own declarations (for its type check) stay out of the clients
  expect(readFileSync(join(dir, 'typescript-runtime.ts'), 'utf8')).toContain('declare function runnerRoutes');
  expect(ts).not.toContain('declare function runnerRoutes');
  expect(tsRuntime()).toContain('export class LabError extends Error');
});
