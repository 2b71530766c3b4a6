/**
 * `lab init plugin NAME`: scaffold an instrument driver and its test in a plugin folder.
 *
 * The driver imports `defineInstrument` and `z` from 'labdeck/contracts'. That bare import works from any
 * folder because labdeck maps it to its own contract module when it loads plugins (see ./plugin-env.ts);
 * the folder needs no node_modules. The test uses Node's own test runner; `lab plugins test` runs it.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import { EXIT, guard, println, processIO, UsageError, type CliIO, type ExitCode } from './io.js';
import { shown } from './plugins.js';

/** Driver names: what defineInstrument accepts (a letter or _ first), at most 64 characters. */
export const PLUGIN_NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/** `my-pump` → `myPumpDriver` (the `Driver` suffix also keeps names like `class` from being keywords). */
export function driverIdentifier(name: string): string {
  const camel = name.replace(/[-_]+([A-Za-z0-9])/g, (_m, c: string) => c.toUpperCase()).replace(/[-_]+$/, '');
  return `${camel.charAt(0).toLowerCase()}${camel.slice(1)}Driver`;
}

export function driverSource(name: string): string {
  const id = driverIdentifier(name);
  return `/**
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
import { defineInstrument, z } from 'labdeck/contracts';

/** What \`create\` returns: the connection/state your methods work on. */
interface Connection {
  port: string;
  position_mm: number;
  open: boolean;
}

export const ${id} = defineInstrument({
  name: '${name}',
  version: '0.1.0',
  description: '${name}: a linear stage (simulated; describe your instrument here).',
  options: z.object({
    port: z.string().default('/dev/ttyUSB0').describe('Serial port'),
  }),
  // Open the connection here. Throwing makes "connect" fail with your message.
  create: (o): Connection => ({ port: o.port, position_mm: 0, open: true }),
  // Called before the instance is replaced (file saved) or labdeck stops: close ports here.
  dispose: (c) => {
    c.open = false;
  },
  methods: {
    move_to: {
      description: 'Move to an absolute position.',
      params: z.object({ position_mm: z.number().min(0).max(300).describe('Target position, mm (0-300)') }),
      returns: z.number(),
      safety: 'hazardous', // asks for confirmation in the UI
      async run(c, { position_mm }, ctx) {
        // Long operations should honour ctx.signal (labdeck stopping) and may log progress.
        await new Promise((r) => setTimeout(r, 10));
        if (ctx.signal.aborted) throw new Error('aborted');
        c.position_mm = position_mm;
        ctx.log(\`moved to \${position_mm} mm\`);
        return c.position_mm;
      },
    },
    position: {
      description: 'Read the current position, mm.',
      params: z.object({}),
      returns: z.number(),
      safety: 'readonly',
      run: (c) => c.position_mm,
    },
    home: {
      description: 'Move to the home position (0 mm).',
      params: z.object({}),
      safety: 'idempotent',
      run(c) {
        c.position_mm = 0;
        return 0;
      },
    },
  },
});
`;
}

export function testSource(name: string): string {
  const id = driverIdentifier(name);
  return `/**
 * Tests of the ${name} driver, with Node's own test runner. Run them with \`lab plugins test .\` in this
 * folder (node --test, with TypeScript and 'labdeck/contracts' provided by labdeck).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ${id} } from './${name}.js';

/** What labdeck hands to every method run. */
const ctx = { signal: new AbortController().signal, log: () => {} };

test('move_to moves, position reads it back, home returns to 0', async () => {
  const c = await ${id}.create(${id}.options.parse({}));
  assert.equal(await ${id}.methods.move_to.run(c, { position_mm: 12.5 }, ctx), 12.5);
  assert.equal(await ${id}.methods.position.run(c, {}, ctx), 12.5);
  await ${id}.methods.home.run(c, {}, ctx);
  assert.equal(await ${id}.methods.position.run(c, {}, ctx), 0);
  await ${id}.dispose?.(c);
  assert.equal(c.open, false);
});

test('move_to refuses positions outside 0-300 mm (labdeck validates params before run)', () => {
  assert.equal(${id}.methods.move_to.params.safeParse({ position_mm: 500 }).success, false);
  assert.equal(${id}.methods.move_to.params.safeParse({ position_mm: 150 }).success, true);
});
`;
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
