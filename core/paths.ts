/** Where labdeck's own files are, whether it runs from the TypeScript sources or from dist/. */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The folder that holds core/, plugins/, examples/ (the repository root, or dist/ when built). */
export const codeRoot = resolve(here, '..');

/** The repository root (has package.json and node_modules). */
export const projectRoot = existsSync(join(codeRoot, 'package.json')) ? codeRoot : resolve(codeRoot, '..');

/** A module of ours by path without extension: the built `.js` if present, else the `.ts` source. */
export function ownModule(rel: string): string {
  const js = join(codeRoot, `${rel}.js`);
  return existsSync(js) ? js : join(codeRoot, `${rel}.ts`);
}

export const demoDeckPath = () => ownModule('examples/demo-deck');
export const firstPartyPluginsDir = () => join(codeRoot, 'plugins');

/**
 * Make a private folder (0700) and its parents. Node's recursive mkdir reports ENOENT when a parent cannot
 * be written (a read-only disk): then it is asked once more, without recursion, for the real reason (EROFS,
 * EACCES).
 */
export async function privateDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    await mkdir(dir, { mode: 0o700 });
  }
}
