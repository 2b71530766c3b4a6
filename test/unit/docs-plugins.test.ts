/**
 * docs/plugins.md keeps its promises. Every complete module in it (a ```ts block whose first line is
 * `// file: PATH`) is written to a temp folder at PATH: the plugin modules (under lab-plugins/) load with
 * PluginHost without errors, the deck modules load with Deck.loadDeck and their devices answer through
 * deck.call, the messages the guide quotes are the ones labdeck produces, the guide's driver test passes
 * under `lab plugins test`, and its table of contents and relative links resolve.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { pluginsCheck, pluginsTest } from '../../cli/plugins.js';
import type { CliIO } from '../../cli/io.js';
import { defineInstrument, z } from '../../core/contracts/index.js';
import { DEFAULT_BUSY_TIMEOUT_MS, Deck, NO_RECORDS, memoryRecords } from '../../core/deck/index.js';
import { PluginHost } from '../../core/plugins/index.js';
import { labError } from '../helpers/errors.js';

const root = resolve('.');
const guideFile = join(root, 'docs', 'plugins.md');
const guide = readFileSync(guideFile, 'utf8');

/** The guide's complete modules: relative path → source. */
function modules(): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of guide.matchAll(/```ts\n([\s\S]*?)```/g)) {
    const first = /^\/\/ file: (\S+)\n/.exec(m[1]);
    if (!first) continue;
    if (out.has(first[1])) throw new Error(`docs/plugins.md has two modules named ${first[1]}`);
    out.set(first[1], m[1]);
  }
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');

const anchors = (markdown: string) => new Set([...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));

function captureIO(): { io: CliIO; text: () => string } {
  const out: string[] = [];
  const sink = { write: (s: string) => out.push(s) };
  return { io: { stdin: new PassThrough(), stdout: sink, stderr: sink }, text: () => out.join('') };
}

const files = modules();
let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'labdeck-guide-'));
  for (const [rel, text] of files) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const isTest = (rel: string) => /\.(test|spec)\.[mc]?[jt]s$/.test(rel);
const isPlugin = (rel: string) => rel.startsWith('lab-plugins/') && !isTest(rel);

describe('docs/plugins.md', () => {
  it('has a table of contents whose links resolve, and relative links to files that exist', () => {
    const own = anchors(guide);
    const toc = [...guide.matchAll(/^\d+\. \[[^\]]+\]\(#([^)]+)\)$/gm)].map((m) => m[1]);
    expect(toc.length).toBeGreaterThanOrEqual(10);
    for (const a of toc) expect(own).toContain(a);
    for (const m of guide.matchAll(/\]\(#([^)]+)\)/g)) expect(own).toContain(m[1]);
    for (const m of guide.matchAll(/\]\((\.{0,2}\/?[^)#:\s]+\.md)(?:#([^)]+))?\)/g)) {
      const target = resolve(dirname(guideFile), m[1]);
      expect(existsSync(target)).toBe(true);
      if (m[2]) expect(anchors(readFileSync(target, 'utf8'))).toContain(m[2]);
    }
    expect(guide).toContain('](../README.md#writing-a-driver)');
  });

  it('has complete modules: plugins, a deck module and a test', () => {
    const names = [...files.keys()];
    expect(names.filter(isPlugin).length).toBeGreaterThanOrEqual(2);
    expect(names.filter((n) => !isPlugin(n) && !isTest(n)).length).toBeGreaterThanOrEqual(1);
    expect(names.filter(isTest).length).toBeGreaterThanOrEqual(1);
  });

  it('loads every module without errors, and the calls it describes work as it says', async () => {
    const records = memoryRecords();
    const { rows } = records;
    const deck = new Deck({ records });
    const logs: { instrument: string; method: string; message: string }[] = [];
    deck.on('log', (l) => logs.push(l));
    const host = new PluginHost({ deck, dirs: [join(dir, 'lab-plugins')], watch: false });
    try {
      await host.start();
      expect(host.errors()).toEqual([]);
      // every plugin module of the guide provides something labdeck uses
      for (const rel of [...files.keys()].filter(isPlugin)) {
        expect(host.list().some((i) => i.file === join(dir, rel))).toBe(true);
      }
      for (const rel of [...files.keys()].filter((n) => !isPlugin(n) && !isTest(n))) {
        expect((await deck.loadDeck(join(dir, rel))).length).toBeGreaterThan(0);
      }
      const user = { userId: null };

      // the deck module: export names, in source order
      expect(deck.list().map((i) => i.name)).toEqual(['bath_a', 'bath_b', 'dispenser']);

      // a working call, and ctx.log as an event
      expect((await deck.call('bath_a', 'set_temperature', { celsius: 40 }, user)).output).toBe(40);
      expect(logs).toEqual([{ instrument: 'bath_a', method: 'set_temperature', message: 'set point 20 → 40 °C' }]);
      // ... and kept with the direct call's record
      expect(rows.at(-1)).toMatchObject({ instrument: 'bath_a', method: 'set_temperature', log: 'set point 20 → 40 °C' });
      expect((await deck.call('bath_a', 'temperature', {}, user)).output).toBe(40);

      // the validation messages quoted in the guide
      let e = await labError(deck.call('bath_a', 'set_temperature', { celsius: 200 }, user));
      expect(e.code).toBe('invalid_input');
      expect(guide).toContain(`→ 400 ${e.message}\n`);
      e = await labError(deck.call('bath_a', 'set_temperature', { celcius: 40 }, user));
      expect(guide).toContain(`→ 400 ${e.message}\n`);
      expect(guide).toContain(`\`${JSON.stringify(e.details).replace(/":/g, '": ').replace(/,"/g, ', "').replace(/},\{/g, '}, {')}\``);
      e = await labError(deck.call('bath_b', 'calibrate', { points: [{ read_c: 20 }] }, user));
      expect(e.details?.map((d) => d.field)).toContain('points.0.true_c');
      const recorded = rows.length;

      // an error thrown by run: instrument_error with the task id of the record
      e = await labError(deck.call('bath_b', 'set_temperature', { celsius: 80 }, user));
      expect(e.code).toBe('instrument_error');
      expect(guide).toContain(`{"error": {"code": "instrument_error", "message": "${e.message}"}`);
      expect(e.data).toMatchObject({ task_id: recorded + 1, instrument: 'bath_b', method: 'set_temperature' });
      expect(rows.at(-1)).toMatchObject({ status: 'error', error: e.message, args: { celsius: 80 } });

      // one call at a time: the quoted busy and lock messages
      expect(DEFAULT_BUSY_TIMEOUT_MS).toBe(30_000);
      expect(guide).toContain('`bath_a is busy: an earlier call did not finish within 30 s.`');
      deck.lock(['bath_a'], '12');
      e = await labError(deck.call('bath_a', 'temperature', {}, user));
      expect(guide).toContain(`(\`${e.message}\`)`);
      deck.unlock('12');

      // safety, hidden and defaults as declared
      const bath = deck.schema('bath_a').methods;
      expect(bath.map((m) => [m.name, m.safety, m.hidden])).toEqual([
        ['set_temperature', 'hazardous', false],
        ['temperature', 'readonly', false],
        ['circulation', 'idempotent', false],
        ['keypad', 'unknown', false],
        ['calibrate', 'unknown', true],
      ]);

      // zero-config object device: JSDoc read, the untyped parameter marked inferred
      const disp = deck.schema('dispenser').methods;
      expect(disp.map((m) => [m.name, m.safety, m.inferred])).toEqual([
        ['dispense', 'hazardous', true],
        ['total', 'readonly', true],
        ['program', 'unknown', true],
      ]);
      expect(disp[0].params).toMatchObject({ properties: { speed: { enum: ['slow', 'fast'], default: 'slow' } }, required: ['volume_ml'] });
      expect(disp[2].inferredFields).toEqual(['doses']);
      expect((await deck.call('dispenser', 'dispense', { volume_ml: 1.5 }, user)).output).toEqual({ volume_ml: 1.5, speed: 'slow' });

      // zero-config class driver: options from the constructor, static schemas win, _write and dispose left out
      const shutter = deck.drivers().find((d) => d.name === 'Shutter')!;
      expect(shutter).toMatchObject({ version: '0.2.0', inferred: true, description: 'A light-source shutter on a digital output line.' });
      expect(shutter.options).toMatchObject({ properties: { line: { type: 'number', default: 3 }, inverted: { type: 'boolean', default: false } } });
      const s = await deck.connect('Shutter', 'shutter', { line: 5 });
      expect(s.methods.map((m) => [m.name, m.safety, m.inferred])).toEqual([
        ['open', 'hazardous', true],
        ['close', 'unknown', true],
        ['is_open', 'readonly', true],
        ['pulse', 'hazardous', false],
      ]);
      expect((await deck.call('shutter', 'pulse', { ms: 1 }, user)).output).toBe('closed');
      expect((await labError(deck.call('shutter', 'pulse', { ms: 0.5 }, user))).details).toEqual([{ field: 'ms', message: 'must be an integer' }]);
    } finally {
      await host.close();
      await deck.close();
    }
  });

  it('quotes the load-time messages labdeck gives', async () => {
    // bad options in a deck module
    const bad = join(dir, 'bad-deck.ts');
    writeFileSync(bad, "import { bath } from './lab-plugins/bath.js';\nexport const bath_b = bath.with({ max_c: 200 });\n");
    const deck = new Deck({ records: NO_RECORDS });
    const e = await labError(deck.loadDeck(bad));
    expect(guide).toContain(`\`${e.message}\``);
    await deck.close();

    // another contract version
    const def = { name: 'water-bath', version: '1', contract: 2, options: z.object({}), create: () => ({}), methods: { a: { params: z.object({}), run: () => 1 } } };
    expect(() => defineInstrument(def)).toThrow();
    try {
      defineInstrument(def);
    } catch (err) {
      expect(guide).toContain(`\`${(err as Error).message}\``);
    }

    // lab plugins check on the guide's driver
    const { io, text } = captureIO();
    expect(await pluginsCheck(join(dir, 'lab-plugins', 'bath.ts'), {}, io)).toBe(0);
    const line = /: (instrument water-bath \(\d+ methods\))/.exec(text());
    expect(line).not.toBeNull();
    expect(guide).toContain(`ok    lab-plugins/bath.ts: ${line![1]}`);

    // the hazardous confirmation the web form asks
    const view = readFileSync(join(root, 'server', 'views', 'instruments.tsx'), 'utf8');
    expect(view).toContain('is marked hazardous. Run it?');
    expect(guide).toContain('set_temperature is marked hazardous. Run it?');
  });

  it('gives `npm start` options that reach lab serve', () => {
    // npm appends what follows `--` to the script: the script must end with `lab serve` for it to get them
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toMatch(/ bin\/lab serve$/);
    const main = readFileSync(join(root, 'cli', 'main.ts'), 'utf8');
    const uses = [...guide.matchAll(/`npm start -- ([^`]+)`/g)].map((m) => m[1]);
    expect(uses.length).toBeGreaterThan(0);
    for (const use of uses) for (const flag of use.match(/--[a-z-]+/g) ?? []) expect(main).toContain(`.option('${flag} `);
  });

  it('has a driver test that passes under lab plugins test', async () => {
    const tests = [...files.keys()].filter(isTest).map((rel) => join(dir, rel));
    const { io, text } = captureIO();
    const code = await pluginsTest(tests, io);
    if (code !== 0) throw new Error(`lab plugins test failed:\n${text()}`);
    expect(text()).toMatch(/pass [1-9]/);
  });
});
