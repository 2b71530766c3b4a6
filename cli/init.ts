/**
 * `lab init plugin NAME`: scaffold an instrument driver and its test in a plugin folder.
 *
 * The driver imports `defineInstrument` and `z` from 'labdeck/contracts'. That bare import works from any
 * folder because labdeck maps it to its own contract module when it loads plugins (see ./plugin-env.ts);
 * the folder needs no node_modules. The test uses Node's own test runner; `lab plugins test` runs it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import { projectRoot } from '../core/paths.js';
import { EXIT, guard, println, processIO, UsageError, type CliIO, type ExitCode } from './io.js';
import { shown } from './plugins.js';

/** Driver names: what defineInstrument accepts (a letter or _ first), at most 64 characters. */
export const PLUGIN_NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/** `my-pump` → `myPumpDriver` (the `Driver` suffix also keeps names like `class` from being keywords). */
export function driverIdentifier(name: string): string {
  const camel = name.replace(/[-_]+([A-Za-z0-9])/g, (_m, c: string) => c.toUpperCase()).replace(/[-_]+$/, '');
  return `${camel.charAt(0).toLowerCase()}${camel.slice(1)}Driver`;
}

/** The driver template (and its test) that `lab init plugin` copies: the single source of both. */
const TEMPLATE_DIR = join(projectRoot, 'examples', 'plugin-template');
const TEMPLATE = { name: 'my-instrument', id: 'myInstrument', contracts: `'../../core/contracts/index.js'` };

/**
 * A template file from its first import on (its header speaks of the template, so the caller writes its
 * own), with the template's driver name and identifier replaced and the contract imported as a plugin
 * folder imports it.
 */
function fromTemplate(file: string, name: string, header: string): string {
  const text = readFileSync(join(TEMPLATE_DIR, file), 'utf8');
  const start = text.search(/^import /m);
  if (start < 0) throw new Error(`${file}: the plugin template has no import line`);
  const id = driverIdentifier(name);
  const body = text
    .slice(start)
    .replaceAll(TEMPLATE.contracts, `'labdeck/contracts'`)
    .replace(new RegExp(`\\b${TEMPLATE.id}\\b`, 'g'), () => id)
    .replace(new RegExp(`\\b${TEMPLATE.name}\\b`, 'g'), () => name);
  return header + body;
}

export function driverSource(name: string): string {
  return fromTemplate(
    `${TEMPLATE.name}.ts`,
    name,
    `/**
 * The ${name} instrument driver (scaffolded by \`lab init plugin ${name}\`; simulated for now).
 *
 * Replace the simulated state with calls to your instrument (serial port, HTTP, vendor SDK, ...). Everything
 * the web app shows comes from this definition: \`options\` becomes the "connect" form, each method's
 * \`params\` a form on the instrument's page, and every call is validated against them. labdeck reloads
 * this file when you save it.
 *
 *   lab plugins check ${name}.ts    does it load?
 *   lab plugins test .              run ${name}.test.ts
 *   lab serve --plugins <this folder>
 *
 * 'labdeck/contracts' is provided by labdeck itself when it loads this file, from any folder: nothing to
 * install. (For type checking in an editor, map 'labdeck/contracts' to labdeck's core/contracts/index.ts
 * with \`paths\` in a tsconfig.json: see docs/plugins.md.)
 */
`,
  );
}

export function testSource(name: string): string {
  return fromTemplate(
    `${TEMPLATE.name}.test.ts`,
    name,
    `/**
 * Tests of the ${name} driver, with Node's own test runner. Run them with \`lab plugins test .\` in this
 * folder (node --test, with TypeScript and 'labdeck/contracts' provided by labdeck).
 */
`,
  );
}

export interface InitPluginOptions {
  /** The plugin folder (default `./lab-plugins`); created if missing. */
  dir?: string;
}

/** `lab init plugin NAME`: write `<dir>/<name>.ts` and `<dir>/<name>.test.ts`; never overwrites. */
export function initPlugin(name: string, opts: InitPluginOptions, io: CliIO = processIO()): Promise<ExitCode> {
  return guard(io, async () => {
    if (!PLUGIN_NAME_RE.test(name)) {
      throw new UsageError(`bad plugin name "${name}": use letters, digits, - and _, starting with a letter or _ (at most 64)`);
    }
    const dir = resolve(opts.dir ?? 'lab-plugins');
    const files = [
      { path: join(dir, `${name}.ts`), text: driverSource(name) },
      { path: join(dir, `${name}.test.ts`), text: testSource(name) },
    ];
    const existing = files.filter((f) => existsSync(f.path));
    if (existing.length) throw new UsageError(`${existing.map((f) => shown(f.path)).join(' and ')} already exist${existing.length > 1 ? '' : 's'}: nothing written`);
    mkdirSync(dir, { recursive: true });
    for (const f of files) writeFileSync(f.path, f.text, { flag: 'wx' }); // wx: fail rather than overwrite
    for (const f of files) println(io.stdout, `wrote ${shown(f.path)}`);
    const d = shown(dir);
    println(io.stdout, '');
    println(io.stdout, 'Next:');
    println(io.stdout, `  lab plugins check ${shown(files[0].path)}   does it load?`);
    println(io.stdout, `  lab plugins test ${d}   run its test`);
    println(io.stdout, `  lab serve --plugins ${d}   use it (connect a "${name}" instrument)`);
    return EXIT.ok;
  });
}

export function registerInitCommands(program: Command) {
  const init = program.command('init').description('scaffold new things');
  init
    .command('plugin')
    .description('scaffold an instrument driver NAME.ts and its test NAME.test.ts in a plugin folder')
    .argument('<name>', 'driver name: letters, digits, - and _ (a letter or _ first)')
    .option('--dir <dir>', 'plugin folder (created if missing)', 'lab-plugins')
    .addHelpText('after', '\nExample:\n  lab init plugin my-stage && lab plugins test lab-plugins && lab serve')
    .action(async (name, o) => {
      process.exitCode = await initPlugin(name, o);
    });
}
