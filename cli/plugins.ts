/**
 * `lab plugins list|check|test`: what the plugin folders provide, whether each module loads, and running
 * plugin tests. Loading goes through the same PluginHost and loader as `lab serve` (watching off), on a
 * Deck of its own; no database is opened.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { extname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import type { InstrumentDriver } from '../core/contracts/index.js';
import { Deck, NO_RECORDS, type DriverOrigin } from '../core/deck/index.js';
import { firstPartyPluginsDir, projectRoot } from '../core/paths.js';
import { checkModuleFile, discoverPlugins, PluginHost, type PluginItem } from '../core/plugins/index.js';
import { PythonModules } from '../core/hosts/index.js';
import { EXIT, guard, println, processIO, table, UsageError, type CliIO, type ExitCode } from './io.js';
import { installPluginAliases, jitiRegisterUrl } from './plugin-env.js';

/** A Deck that also remembers how many methods each registered driver has (DriverInfo does not say). */
class CountingDeck extends Deck {
  readonly methodCounts = new Map<string, number>();
  override setFileDrivers(file: string, origin: DriverOrigin, drivers: InstrumentDriver[]): string[] {
    const names = super.setFileDrivers(file, origin, drivers);
    for (const d of drivers) this.methodCounts.set(d.name, Object.keys(d.methods).length);
    return names;
  }
}

/** A PluginHost over `dirs` with watching off; close() when done. */
async function loadPlugins(dirs: string[]) {
  const python = new PythonModules({ log: () => undefined }); // started only when a .py file is loaded
  const deck = new CountingDeck({ records: NO_RECORDS, foreign: python });
  const host = new PluginHost({ deck, dirs, watch: false, foreign: python });
  await host.start();
  return {
    deck,
    host,
    async close() {
      await host.close();
      await deck.close();
      await python.close();
    },
  };
}

/** A path for display: relative to the working folder when inside it. */
export function shown(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

const isInside = (dir: string, path: string) => {
  const rel = relative(dir, path);
  return !rel.startsWith('..') && !isAbsolute(rel);
};

/** The loader's message without its "Cannot load FILE: " prefix (the file is printed beside it). */
const reason = (file: string, message: string) => message.replace(`Cannot load ${file}: `, '');

export interface DriverListing {
  name: string;
  version: string;
  description: string;
  methods: number;
  file: string;
  firstParty: boolean;
  /** Introspected from a plain class (zero-config). */
  inferred: boolean;
}

export interface PluginsListOptions {
  /** The user's plugin folder (default `./lab-plugins`); first-party plugins are always listed. */
  plugins?: string;
  json?: boolean;
}

/** `lab plugins list`: the drivers the first-party and the user's plugin folders provide, and load errors. */
export function pluginsList(opts: PluginsListOptions, io: CliIO = processIO()): Promise<ExitCode> {
  return guard(io, async () => {
    const ours = firstPartyPluginsDir();
    const userDir = resolve(opts.plugins ?? 'lab-plugins');
    const p = await loadPlugins([ours, userDir]);
    try {
      const drivers: DriverListing[] = p.deck.drivers().map((d) => ({
        name: d.name,
        version: d.version,
        description: d.description,
        methods: p.deck.methodCounts.get(d.name) ?? 0,
        file: d.file,
        firstParty: isInside(ours, d.file),
        inferred: d.inferred,
      }));
      const others = p.host.list().filter((i) => i.kind !== 'instrument');
      const errors = p.host.errors();
      if (opts.json) {
        println(io.stdout, JSON.stringify({ drivers, other: others, errors, folders: [ours, userDir] }, null, 2));
        return EXIT.ok;
      }
      const rows = drivers.map((d) => [d.name, d.version, String(d.methods), shown(d.file) + (d.inferred ? '  (zero-config class)' : '')]);
      println(io.stdout, drivers.length ? table(['DRIVER', 'VERSION', 'METHODS', 'FILE'], rows) : 'no instrument drivers');
      for (const o of others) println(io.stdout, `${o.kind} ${o.name}  ${shown(o.file)}`);
      if (!existsSync(userDir)) println(io.stdout, `(no folder ${shown(userDir)}: create it, or run lab init plugin NAME)`);
      if (errors.length) {
        println(io.stdout);
        println(io.stdout, `${errors.length} plugin module(s) failed to load:`);
        for (const e of errors) println(io.stdout, `  ${shown(e.file)}: ${reason(e.file, e.message)}`);
      }
      return EXIT.ok;
    } finally {
      await p.close();
    }
  });
}

export interface CheckResult {
  file: string;
  ok: boolean;
  /** What the module provides when it loads. */
  items: PluginItem[];
  error?: string;
}

/**
 * `lab plugins check [DIR|FILE]`: load each plugin module of a folder (or one file) as `lab serve` would,
 * next to the first-party plugins (so a clashing driver name fails here too). Exit 0 when all load, 1 when
 * any fails, 2 when the path is wrong.
 */
export function pluginsCheck(target: string | undefined, opts: { json?: boolean }, io: CliIO = processIO()): Promise<ExitCode> {
  return guard(io, async () => {
    const path = resolve(target ?? 'lab-plugins');
    if (!existsSync(path)) throw new UsageError(`no such file or folder: ${shown(path)}`);
    const files = statSync(path).isDirectory() ? discoverPlugins(path) : [extname(path) === '.py' ? path : checkModuleFile(path)];
    if (files.length === 0) {
      println(io.stdout, `no plugin modules in ${shown(path)} (*.py, *.ts, *.js, *.mjs, or folders with an index file)`);
      return EXIT.ok;
    }
    // First-party plugins are loaded first, as by `lab serve`, so a driver name clashing with one of ours
    // fails here too; unless ours are what is being checked (from dist/ or from the sources).
    const ours = [firstPartyPluginsDir(), join(projectRoot, 'plugins')];
    const p = await loadPlugins(ours.some((d) => isInside(d, path)) ? [] : [firstPartyPluginsDir()]);
    const results: CheckResult[] = [];
    try {
      for (const file of files) {
        await p.host.reload(file);
        const err = p.host.errors().find((e) => e.file === file);
        const items = p.host.list().filter((i) => i.file === file);
        results.push(err ? { file, ok: false, items: [], error: reason(file, err.message) } : { file, ok: true, items });
      }
    } finally {
      await p.close();
    }
    const methodCounts = p.deck.methodCounts;
    const failed = results.filter((r) => !r.ok).length;
    if (opts.json) {
      println(io.stdout, JSON.stringify({ ok: failed === 0, results }, null, 2));
    } else {
      for (const r of results) {
        if (!r.ok) {
          println(io.stdout, `FAIL  ${shown(r.file)}`);
          println(io.stdout, `      ${r.error}`);
          continue;
        }
        const item = (i: PluginItem) => {
          const n = i.kind === 'instrument' ? methodCounts.get(i.name) : undefined;
          return `${i.kind} ${i.name}${n === undefined ? '' : ` (${n} method${n === 1 ? '' : 's'})`}`;
        };
        const what = r.items.length ? r.items.map(item).join(', ') : 'nothing labdeck uses (no drivers exported)';
        println(io.stdout, `ok    ${shown(r.file)}: ${what}`);
      }
      println(io.stdout, failed ? `${failed} of ${results.length} failed to load` : `all ${results.length} loaded`);
    }
    return failed ? EXIT.failed : EXIT.ok;
  });
}

const TEST_RE = /\.(test|spec)\.(ts|mts|js|mjs)$/;

/** The test files of a folder (its top level and its package folders), or the one file named. */
export function findTestFiles(target: string): string[] {
  const path = resolve(target);
  if (!existsSync(path)) throw new UsageError(`no such file or folder: ${shown(path)}`);
  if (!statSync(path).isDirectory()) return [path];
  const out: string[] = [];
  for (const ent of readdirSync(path, { withFileTypes: true })) {
    if (ent.name.startsWith('.') || ent.name === 'node_modules') continue;
    const p = join(path, ent.name);
    if (ent.isFile() && TEST_RE.test(ent.name)) out.push(p);
    else if (ent.isDirectory()) {
      for (const f of readdirSync(p)) if (TEST_RE.test(f)) out.push(join(p, f));
    }
  }
  return out.sort();
}

/**
 * `lab plugins test [DIR|FILE...]`: run plugin tests with Node's test runner (`node --test`), TypeScript
 * loaded by jiti's hook and `labdeck/contracts` resolved to this labdeck. Exit 0 when all pass, 1 when any
 * fails, 2 when there is nothing to run.
 */
export function pluginsTest(targets: string[], io: CliIO = processIO()): Promise<ExitCode> {
  return guard(io, async () => {
    const list = targets.length ? targets : ['lab-plugins'];
    const files = [...new Set(list.flatMap(findTestFiles))];
    if (files.length === 0) throw new UsageError(`no test files (*.test.ts, *.test.js, ...) in ${list.join(', ')}`);
    const env = { ...process.env };
    installPluginAliases(env);
    const args = ['--import', jitiRegisterUrl(), '--test', '--test-reporter=spec', ...files];
    const inherit = io.stdout === process.stdout;
    const child = spawn(process.execPath, args, { env, stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => io.stdout.write(d.toString()));
    child.stderr?.on('data', (d: Buffer) => io.stderr.write(d.toString()));
    const code = await new Promise<number | null>((res, rej) => {
      child.once('error', rej);
      child.once('close', (c) => res(c));
    });
    return code === 0 ? EXIT.ok : EXIT.failed;
  });
}

export function registerPluginsCommands(program: Command) {
  const plugins = program.command('plugins').description('instrument drivers and other plugins: list, check, test');
  plugins
    .command('list')
    .description('list the drivers of the first-party plugins and of your plugin folder, and any load errors')
    .option('--plugins <dir>', 'your plugin folder', 'lab-plugins')
    .option('--json', 'print JSON')
    .action(async (o) => {
      process.exitCode = await pluginsList(o);
    });
  plugins
    .command('check')
    .description('load every plugin module of a folder (or one file) and report each one: exit 1 if any fails')
    .argument('[path]', 'plugin folder or module file', 'lab-plugins')
    .option('--json', 'print JSON')
    .action(async (path, o) => {
      process.exitCode = await pluginsCheck(path, o);
    });
  plugins
    .command('test')
    .description('run the *.test.ts / *.test.js files of plugin folders with node --test (TypeScript supported)')
    .argument('[paths...]', 'plugin folders or test files (default: lab-plugins)')
    .action(async (paths) => {
      process.exitCode = await pluginsTest(paths);
    });
}
