/**
 * Which Python interpreter has optuna, for the tests of the Optuna adapter (the full suite,
 * jest.full.config.js): LABDECK_PYTHON, the python3 on the PATH, or Debian's /usr/bin/python3
 * (python3-optuna, which .ci/run installs). The rest of the suite runs on the interpreter labdeck would use
 * (with pydantic, numpy), so neither kind of test is skipped in CI.
 */
import { spawnSync } from 'node:child_process';
import { pythonCommand } from '../../core/hosts/index.js';

/** Why `python` cannot import `module` (its own error's last line, or why it did not start), or null when it can. */
export function whyNot(python: string, module: string): string | null {
  const r = spawnSync(python, ['-c', `import ${module}`], { encoding: 'utf8', timeout: 60_000 });
  if (r.error) return `${python}: ${r.error.message}`;
  if (r.status === 0) return null;
  const last = r.stderr.trim().split('\n').at(-1) ?? '';
  return `${python}: ${last || (r.signal ? `killed by ${r.signal}` : `exit ${r.status}`)}`;
}

/** The first of `candidates` that imports `module`; else an Error naming each one and Python's own reason. */
export function pythonWith(module: string, install: string, candidates = [...new Set([pythonCommand(), 'python3', '/usr/bin/python3'])]): string {
  const reasons: string[] = [];
  for (const p of candidates) {
    const why = whyNot(p, module);
    if (why === null) return p;
    reasons.push(why);
  }
  throw new Error(`No Python here imports ${module}:\n  ${reasons.join('\n  ')}\n(${install})`);
}

export const optunaPython = (): string => pythonWith('optuna', 'apt-get install python3-optuna, or point LABDECK_PYTHON at a Python that has it');
