// Build: transpile the TypeScript sources to dist/ (one file per source, ESM, no bundling) and bundle the
// browser code. Type checking is separate (`npm run typecheck`); this step only has to be fast.
import { build } from 'esbuild';
import { readdirSync, statSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['core', 'server', 'cli', 'plugins', 'examples'];
const sources = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      walk(p); // server/client too: its pure modules (e.g. the builder model) are shared with the views
    } else if (/\.(ts|tsx)$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts')) {
      sources.push(p);
    }
  }
};
for (const r of roots) walk(r);

rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: sources,
  outdir: 'dist',
  outbase: '.',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  jsx: 'automatic',
  sourcemap: 'linked',
  logLevel: 'warning',
});
await build({
  entryPoints: ['server/client/app.ts'],
  outfile: 'dist/client/app.js',
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2020',
  sourcemap: 'linked',
  logLevel: 'warning',
});
console.log(`built ${sources.length} modules and the browser bundle into dist/`);
