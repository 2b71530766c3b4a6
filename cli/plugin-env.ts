/**
 * Making `import { defineInstrument, z } from 'labdeck/contracts'` work in a plugin's own test, run by
 * `lab plugins test` in a child `node --test` process. The loader maps the import itself (pluginAliases in
 * core/plugins/loader.ts); a child process gets the same map through JITI_ALIAS, which its TypeScript hook
 * (jiti/register) reads.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pluginAliases } from '../core/plugins/loader.js';

/** Add our aliases to JITI_ALIAS (keeping any the user set), for a child process. Idempotent. */
export function installPluginAliases(env: NodeJS.ProcessEnv = process.env): void {
  let current: Record<string, string> = {};
  try {
    const parsed: unknown = JSON.parse(env.JITI_ALIAS ?? '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) current = parsed as Record<string, string>;
  } catch {
    // an unreadable user value is replaced
  }
  env.JITI_ALIAS = JSON.stringify({ ...current, ...pluginAliases() });
}

/** file:// URL of jiti's ESM hook (`node --import URL` runs .ts files), resolved from labdeck's own install. */
export function jitiRegisterUrl(): string {
  // `jiti/register` is exported for `import` only, so locate the package and name the file.
  const pkg = createRequire(import.meta.url).resolve('jiti/package.json');
  return pathToFileURL(join(dirname(pkg), 'lib', 'jiti-register.mjs')).href;
}
