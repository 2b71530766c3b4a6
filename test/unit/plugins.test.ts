import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Deck, NO_RECORDS, memoryRecords } from '../../core/deck/index.js';
import { PluginHost, discoverPlugins, type ReloadEvent } from '../../core/plugins/index.js';
import { nextEvent } from '../helpers/wait.js';

const CONTRACTS = resolve('core/contracts/index.js');

/**
 * A plugin driver "alpha" at some version. Lifecycle events go to a log file (plugins run in another realm
 * than jest's test globals, so a file is the simple shared channel).
 */
function alpha(version: string, log: string, extra = '') {
  return `import { appendFileSync } from 'node:fs';
import { defineInstrument, z } from ${JSON.stringify(CONTRACTS)};
const log = (line: string) => appendFileSync(${JSON.stringify(log)}, line + '\\n');
export const drv = defineInstrument({
  name: 'alpha',
  version: '${version}',
  options: z.object({ tag: z.string().default('x') }),
  create: (o) => { log('create ${version} ' + o.tag); return { v: '${version}', tag: o.tag }; },
  dispose: (i) => { log('dispose ' + i.v + ' ' + i.tag); },
  methods: { version: { params: z.object({}), run: (i) => i.v + ':' + i.tag } },
});
${extra}
`;
}

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function setup() {
  const root = mkdtempSync(join(tmpdir(), 'labdeck-plugins-'));
  roots.push(root);
  const dir = join(root, 'plugins');
  mkdirSync(dir);
  const log = join(root, 'log.txt');
  writeFileSync(log, '');
  const deck = new Deck({ records: memoryRecords() });
  const readLog = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { root, dir, log, deck, readLog };
}

/** Resolve with the first event `name` whose payload passes `pred`. */
const next = <T>(host: PluginHost, name: string, pred: (e: T) => boolean = () => true, ms = 5000): Promise<T> => nextEvent<T>(host, name, pred, ms);

const call = async (deck: Deck, name: string, owner?: string) => (await deck.call(name, 'version', {}, { userId: null, owner })).output;

describe('PluginHost: discovery and loading', () => {
  it('loads top-level modules and package folders, and sorts exports by kind', async () => {
    const { dir, log, deck } = setup();
    writeFileSync(join(dir, 'alpha.ts'), alpha('1', log, 'export class HelperNextToDriver { help() { return 1; } }'));
    writeFileSync(join(dir, 'lamp.mjs'), 'export class Lamp { on(level = 1) { return level; } off() { return 0; } }\n');
    writeFileSync(
      join(dir, 'opt.js'),
      "import { defineOptimizer, z } from 'labdeck/contracts';\n" +
        "export const rnd = defineOptimizer({ name: 'random', description: 'uniform', config: z.object({}), " +
        "capabilities: { parameterTypes: ['range'], multiObjective: false, batch: false, constraints: false }, " +
        'create: () => ({ suggest: () => [], observe() {}, snapshot: () => ({}) }) });\n',
    );
    mkdirSync(join(dir, 'pkg'));
    writeFileSync(join(dir, 'pkg', 'index.ts'), `export { Gauge } from './gauge.js';\n`);
    writeFileSync(join(dir, 'pkg', 'gauge.ts'), 'export class Gauge { read() { return 1.5; } }\n');
    mkdirSync(join(dir, 'helpers'));
    writeFileSync(join(dir, 'helpers', 'util.ts'), "throw new Error('helpers are not plugins');\n");
    writeFileSync(join(dir, 'alpha.test.ts'), "throw new Error('tests are not plugins');\n");
    writeFileSync(join(dir, 'README.md'), '# not code\n');

    expect(discoverPlugins(dir).map((f) => f.slice(dir.length + 1))).toEqual(['alpha.ts', 'lamp.mjs', 'opt.js', join('pkg', 'index.ts')]);
    const host = new PluginHost({ deck, dirs: [dir, join(dir, 'missing')] });
    await host.start();
    expect(host.errors()).toEqual([]);
    expect(deck.drivers().map((d) => [d.name, d.origin, d.inferred])).toEqual([
      ['alpha', 'plugin', false],
      ['Gauge', 'plugin', true],
      ['Lamp', 'plugin', true],
    ]);
    expect(host.registry('optimizer').get('random')?.file).toBe(join(dir, 'opt.js'));
    expect(host.list()).toContainEqual({ file: join(dir, 'opt.js'), kind: 'optimizer', name: 'random' });
    await deck.connect('Lamp', 'lamp', {});
    expect((await deck.call('lamp', 'on', { level: 3 }, { userId: null })).output).toBe(3);
    await host.close();
    await deck.close();
  });

  it('finds files in name order by character code, the same on every machine', () => {
    const { dir } = setup();
    for (const f of ['b.ts', 'a1.ts', 'a_b.ts', 'B.ts', 'a.ts']) writeFileSync(join(dir, f), 'export {};\n');
    // capitals first, then digits before "_" before small letters (the locale's collation says a_b, a, a1, b, B)
    expect(discoverPlugins(dir).map((f) => f.slice(dir.length + 1))).toEqual(['B.ts', 'a.ts', 'a1.ts', 'a_b.ts', 'b.ts']);
  });

  it('reports a broken file and keeps the last good version of it', async () => {
    const { dir, log, deck, readLog } = setup();
    const file = join(dir, 'alpha.ts');
    writeFileSync(file, alpha('1', log));
    writeFileSync(join(dir, 'broken.ts'), 'export const x = {;\n');
    writeFileSync(
      join(dir, 'bad-contract.ts'),
      `import { defineInstrument, z } from ${JSON.stringify(CONTRACTS)};
export const d = defineInstrument({ name: 'bad name', version: '1', options: z.object({}), create: () => ({}), methods: {} });\n`,
    );
    const host = new PluginHost({ deck, dirs: [dir] });
    const errors: unknown[] = [];
    host.on('error', (e) => errors.push(e));
    await host.start();
    expect(
      host
        .errors()
        .map((e) => e.file)
        .sort(),
    ).toEqual([join(dir, 'bad-contract.ts'), join(dir, 'broken.ts')]);
    expect(host.errors().find((e) => e.file.endsWith('bad-contract.ts'))?.message).toMatch(/instrument name must match/);
    expect(errors).toHaveLength(2);
    await deck.connect('alpha', 'a1', {});

    writeFileSync(file, alpha('2', log).replace('methods: {', 'methods: {{'));
    await host.reload(file);
    expect(host.errors().find((e) => e.file === file)?.message).toMatch(/alpha\.ts/);
    expect(deck.drivers().find((d) => d.name === 'alpha')?.version).toBe('1');
    expect(await call(deck, 'a1')).toBe('1:x');
    expect(readLog()).toEqual(['create 1 x']);

    writeFileSync(file, alpha('3', log));
    await host.reload(file);
    expect(host.errors().some((e) => e.file === file)).toBe(false);
    expect(await call(deck, 'a1')).toBe('3:x');
    await host.close();
    await deck.close();
  });
});

describe('PluginHost: watching and hot reload', () => {
  it('reloads a changed file, disposing the old instance before creating the new one with the same options', async () => {
    const { dir, log, deck, readLog } = setup();
    const file = join(dir, 'alpha.ts');
    writeFileSync(file, alpha('1', log));
    const host = new PluginHost({ deck, dirs: [dir], watch: true, stabilityMs: 30, debounceMs: 20 });
    await host.start();
    await deck.connect('alpha', 'a1', { tag: 'custom' });
    expect(await call(deck, 'a1')).toBe('1:custom');

    let reloaded = next<ReloadEvent>(host, 'reload', (e) => e.file === file);
    writeFileSync(file, alpha('2', log));
    expect((await reloaded).drivers).toEqual(['alpha']);
    expect(await call(deck, 'a1')).toBe('2:custom');
    expect(readLog()).toEqual(['create 1 custom', 'dispose 1 custom', 'create 2 custom']);

    // a device held by a task is not replaced until the task lets go
    deck.lock(['a1'], 'task:5');
    reloaded = next<ReloadEvent>(host, 'reload', (e) => e.file === file);
    writeFileSync(file, alpha('3', log));
    await reloaded;
    expect(deck.drivers()[0].version).toBe('3');
    expect(await call(deck, 'a1', 'task:5')).toBe('2:custom');
    expect(readLog()).not.toContain('dispose 2 custom');
    deck.unlock('task:5');
    await deck.settled();
    expect(await call(deck, 'a1')).toBe('3:custom');
    expect(readLog().slice(-2)).toEqual(['dispose 2 custom', 'create 3 custom']);

    // a removed file: its driver is unregistered and its temporary devices are disposed and removed
    const changes: number[] = [];
    deck.on('change', () => changes.push(1));
    const removed = next<ReloadEvent>(host, 'reload', (e) => e.file === file && !!e.removed);
    unlinkSync(file);
    await removed;
    expect(deck.drivers()).toEqual([]);
    expect(deck.has('a1')).toBe(false);
    expect(changes.length).toBeGreaterThan(0);
    expect(readLog().at(-1)).toBe('dispose 3 custom');
    await host.close();
    await deck.close();
  });

  it('picks up new files, and a broken save keeps the running version', async () => {
    const { dir, log, deck } = setup();
    const host = new PluginHost({ deck, dirs: [dir], watch: true, stabilityMs: 30, debounceMs: 20 });
    await host.start();
    expect(deck.drivers()).toEqual([]);
    const file = join(dir, 'alpha.ts');
    const loaded = next<ReloadEvent>(host, 'reload', (e) => e.file === file);
    writeFileSync(file, alpha('1', log));
    await loaded;
    await deck.connect('alpha', 'a1', {});
    const failed = next<{ file: string; message: string }>(host, 'error', (e) => e.file === file);
    writeFileSync(file, 'export const = ;\n');
    expect((await failed).message).toMatch(/alpha\.ts/);
    expect(await call(deck, 'a1')).toBe('1:x');
    await host.close();
    await deck.close();
  });

  it('deck devices use the plugin version of their driver, and fall back to their own when the plugin goes', async () => {
    const { root, dir, log, deck, readLog } = setup();
    const file = join(dir, 'alpha.ts');
    writeFileSync(file, alpha('1', log));
    // the deck module brings its own copy of the driver (version "own")
    const own = join(root, 'own-alpha.ts');
    writeFileSync(own, alpha('own', log));
    const deckFile = join(root, 'deck.ts');
    writeFileSync(deckFile, `import { drv } from ${JSON.stringify(own)};\nexport const dev = drv.with({ tag: 'deck' });\n`);
    const host = new PluginHost({ deck, dirs: [dir] });
    await host.start();
    expect(await deck.loadDeck(deckFile)).toEqual(['dev']);
    expect(await call(deck, 'dev')).toBe('1:deck');

    writeFileSync(file, alpha('2', log));
    await host.reload(file);
    expect(await call(deck, 'dev')).toBe('2:deck');

    unlinkSync(file);
    await host.reload(file);
    expect(deck.has('dev')).toBe(true);
    expect(await call(deck, 'dev')).toBe('own:deck');
    expect(readLog()).toEqual(['create 1 deck', 'dispose 1 deck', 'create 2 deck', 'dispose 2 deck', 'create own deck']);
    await host.close();
    await deck.close();
    expect(readLog().at(-1)).toBe('dispose own deck');
  });
});

describe('plugin template', () => {
  it('is a valid plugin that loads, connects and runs', async () => {
    const { deck } = setup();
    const host = new PluginHost({ deck, dirs: [resolve('examples/plugin-template')] });
    await host.start();
    expect(host.errors()).toEqual([]);
    expect(deck.drivers().map((d) => d.name)).toEqual(['my-instrument']);
    await deck.connect('my-instrument', 'stage', {});
    expect((await deck.call('stage', 'move_to', { position_mm: 12 }, { userId: null })).output).toBe(12);
    expect((await deck.call('stage', 'position', {}, { userId: null })).output).toBe(12);
    await host.close();
    await deck.close();
  });
});

describe('optimizer plugins', () => {
  it('checks an optimizer at load: one that breaks the contract fails its file with the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labdeck-opt-'));
    writeFileSync(
      join(dir, 'fake-opt.ts'),
      `export const opt = { [Symbol.for('labdeck.optimizer')]: true, name: 'fake', description: 'x', contract: 99, config: {}, capabilities: {}, create() {} };\n`,
    );
    const deck = new Deck({ records: NO_RECORDS });
    const host = new PluginHost({ deck, dirs: [dir], watch: false });
    try {
      await host.start();
      expect(host.registry('optimizer').has('fake')).toBe(false);
      expect(host.errors()).toEqual([expect.objectContaining({ file: join(dir, 'fake-opt.ts'), message: expect.stringMatching(/fake/) })]);
    } finally {
      await host.close();
    }
  });
});
