/**
 * Before the end-to-end tests: install labdeck as the README does, from what is committed. The tracked files
 * (git ls-files: a clean clone's) are copied into a temporary folder and built there with the build that
 * `npm install` runs (its `prepare` script); the dependencies are this folder's, installed from the same
 * lock file. So a file that was never committed, a stale dist/, or a path that only works from the source
 * tree fails here as it would for a lab (DESIGN.md §18).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export default function installCopy(): void {
  const repo = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../..');
  const dir = mkdtempSync(join(tmpdir(), 'labdeck-installed-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached'], { cwd: repo }).toString('utf8').split('\0').filter(Boolean);
  for (const f of files) {
    const from = join(repo, f);
    if (!existsSync(from)) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(from, join(dir, f));
  }
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const prepare = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.prepare;
  execFileSync('sh', ['-c', prepare], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  process.env.LABDECK_E2E_INSTALLED = dir;
}
