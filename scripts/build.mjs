// Build: transpile the TypeScript sources to dist/ (one file per source, ESM, no bundling), bundle the `lab`
// command into dist/lab/, and bundle the browser code. Type checking is separate (`npm run typecheck`); this
// step only has to be fast.
import { build } from 'esbuild';
import { readdirSync, readFileSync, statSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';

const requireHere = createRequire(import.meta.url);

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

/** What every build of the server-side code shares: ES modules for Node 20, JSX, linked source maps. */
const forNode = { format: 'esm', platform: 'node', target: 'node20', jsx: 'automatic', sourcemap: 'linked', logLevel: 'warning' };

rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: sources,
  outdir: 'dist',
  outbase: '.',
  ...forNode,
});

// zod in one file (dist/vendor/zod.js) instead of its ~100 modules, which took ~60 ms of `lab serve`'s
// start-up to resolve and load one by one (issue 16). Everything built imports this one copy: the modules
// above (rewritten here) and the `lab` bundle, and a lab's plugins get it as `z` from `labdeck/contracts`.
// A plugin that imports `zod` by name gets node_modules' copy; zod 4's instanceof and its global registry
// work across copies (test/e2e/plugins.test.ts).
// Its ~60 translations of the error messages (`z.locales.de()`…) are loaded when first called, from
// node_modules' CommonJS copy (they use only zod's pure helpers); English, the default, is in the file. They
// were a third of its size: ~10 ms of start-up. The file is minified: ~7 ms more.
const VENDOR_ZOD = 'dist/vendor/zod.js';
const zodLocales = requireHere.resolve('zod/v4/locales/index.js');
const localesOnDemand = {
  name: 'zod-locales-on-demand',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) => (resolve(args.resolveDir, args.path) === zodLocales ? { path: zodLocales, namespace: 'zod-locales' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => {
      const names = [...readFileSync(zodLocales, 'utf8').matchAll(/export \{ default as (\w+) \} from "\.\/([\w-]+)\.js"/g)];
      if (!names.some(([, name]) => name === 'en') || names.length < 10) throw new Error(`zod's locales index changed: ${zodLocales}`);
      const onDemand = names.filter(([, name]) => name !== 'en').map(([, name, file]) => `export const ${name} = onDemand(${JSON.stringify(file)});`);
      const contents = [
        "import { createRequire } from 'node:module';",
        "export { default as en } from './en.js';",
        'const load = createRequire(import.meta.url);',
        'const onDemand = (file) => function (...args) { const m = load(`zod/v4/locales/${file}.cjs`); return (m.default ?? m)(...args); };',
        ...onDemand,
      ].join('\n');
      return { contents, resolveDir: dirname(zodLocales) };
    });
  },
};
await build({
  stdin: { contents: "export * from 'zod'; export { default } from 'zod';", resolveDir: '.', sourcefile: 'zod-entry.js' },
  outfile: VENDOR_ZOD,
  bundle: true,
  minify: true,
  plugins: [localesOnDemand],
  ...forNode,
});
const importsZod = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"zod"/g;
const builtFiles = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? builtFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []));
for (const file of builtFiles('dist')) {
  if (file === join(VENDOR_ZOD)) continue;
  const text = readFileSync(file, 'utf8');
  if (!text.includes('"zod"')) continue;
  const rel = relative(dirname(file), VENDOR_ZOD).split(sep).join('/');
  writeFileSync(
    file,
    text.replace(importsZod, (_m, head) => `${head}"${rel.startsWith('.') ? rel : `./${rel}`}"`),
  );
}

// The `lab` command (bin/lab runs dist/lab/main.js): cli/main.ts with the packages it uses, in a few files
// instead of ~1,100 (loading them one by one was most of `lab serve`'s start-up, issue 16 item 5). What a
// command loads on demand (`lab run`'s terminal view, the MCP SDK, ws, multer) stays in chunks of its own.
// Left out, and imported from dist/ as they are: the plugin contract (core/contracts/, which first-party
// plugins, the demo deck and a lab's plugins import as `labdeck/contracts`) and zod (dist/vendor/), so that
// the process has one of each (driver tags, LabError, zod schemas and their registry); and core/console.ts,
// whose worker program is the source text of its functions (a bundle renames and rewrites them). The chunks
// sit in dist/lab/, one folder below dist/ as dist/core/ is, so what core/paths.ts finds from
// import.meta.url holds.
const asBuilt = (file) => file.startsWith(resolve('core/contracts') + sep) || file === resolve('core/console.js');
const importedAsBuilt = {
  name: 'imported-as-built',
  setup(b) {
    // zod's one copy; its subpaths (the MCP SDK's `zod/v4`…) as they are in node_modules, loaded on demand
    b.onResolve({ filter: /^zod(\/|$)/ }, (args) => ({ path: args.path === 'zod' ? '../vendor/zod.js' : args.path, external: true }));
    b.onResolve({ filter: /(contracts\/.*|console)\.js$/ }, (args) => {
      const file = resolve(args.resolveDir, args.path);
      if (!asBuilt(file)) return undefined;
      return { path: `../${relative('.', file).split(sep).join('/')}`, external: true };
    });
  },
};
// Of react-dom/server, only the renderer pages use (renderToStaticMarkup, server/http.ts), in its production
// build: the package's entry loads its streaming renderer too.
const reactDomServer = join(dirname(requireHere.resolve('react-dom/package.json')), 'cjs/react-dom-server-legacy.node.production.js');
const pageRendererOnly = { name: 'page-renderer-only', setup: (b) => b.onResolve({ filter: /^react-dom\/server$/ }, () => ({ path: reactDomServer })) };
const lab = await build({
  entryPoints: { main: 'cli/main.ts' },
  outdir: 'dist/lab',
  bundle: true,
  splitting: true,
  chunkNames: '[name]-[hash]',
  ...forNode,
  plugins: [importedAsBuilt, pageRendererOnly],
  // native (better-sqlite3, esbuild), loaders of other code (jiti), and what TypeORM requires only for
  // PostgreSQL (pg) or a development tool (react-devtools-core, ink's DEV mode) stay in node_modules
  external: ['better-sqlite3', 'esbuild', 'jiti', 'pg', 'react-devtools-core'],
  // the libraries' production builds only, whatever NODE_ENV says (docs/deploy.md): React's development
  // builds, which its packages choose between at run time, were a third of what `lab serve` loaded
  define: { 'process.env.NODE_ENV': '"production"' },
  // the CommonJS packages in the bundle call require() (node's built-ins, the externals above)
  banner: { js: "import { createRequire as __labRequire } from 'node:module'; const require = __labRequire(import.meta.url);" },
  metafile: true,
});
// No circle of static imports among labdeck's own modules: in a bundle, a module of a circle can run before a
// value it imports is assigned (Connect device refused every option field that way, and only in the bundle).
const circles = importCircles(lab.metafile.inputs);
if (circles.length)
  throw new Error(
    `import circles, each a set of modules that import one another (break them, e.g. with a dynamic import where the value is used):\n${circles.map((c) => `  ${c.join(', ')}`).join('\n')}`,
  );
// a second copy of any of them in the bundle would break plugins (or the console) without a build error
const copied = Object.keys(lab.metafile.inputs).filter((f) => asBuilt(resolve(f.replace(/\.ts$/, '.js'))) || f.includes('node_modules/zod/'));
if (copied.length) throw new Error(`dist/lab/ must import these from dist/ as built, not bundle them: ${copied.join(', ')}`);

/** The circles of static imports among the project's own files (Tarjan's strongly connected components). */
function importCircles(inputs) {
  const own = (f) => !f.includes('node_modules/');
  const edges = new Map(
    Object.entries(inputs)
      .filter(([f]) => own(f))
      .map(([f, i]) => [f, i.imports.filter((x) => x.kind === 'import-statement' && !x.external && own(x.path)).map((x) => x.path)]),
  );
  const index = new Map(),
    low = new Map(),
    stack = [],
    onStack = new Set(),
    found = [];
  const visit = (v) => {
    index.set(v, index.size);
    low.set(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1) found.push(scc.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

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
console.log(`built ${sources.length} modules, the lab command (dist/lab/) and the browser bundle into dist/`);
