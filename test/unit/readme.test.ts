/**
 * The README's promises, checked: its driver example loads and works, its test passes, its two quick-start
 * commands are the ones CI runs, and every `lab serve` flag it names exists.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pluginsTest } from '../../cli/plugins.js';
import type { CliIO } from '../../cli/io.js';
import { Deck, NO_RECORDS } from '../../core/deck/index.js';
import { PluginHost } from '../../core/plugins/index.js';

const root = new URL('../../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');

/** The fenced code block whose first line is `// <name>`. */
function block(name: string): string {
  const re = /```ts\n([\s\S]*?)```/g;
  for (const m of readme.matchAll(re)) if (m[1].startsWith(`// ${name}\n`)) return m[1];
  throw new Error(`README has no code block for ${name}`);
}

describe('README', () => {
  it('starts with the install+serve command and the test command that CI runs', () => {
    const first = /```sh\n(.*)\n(.*)\n```/.exec(readme)!;
    expect(first[1]).toMatch(/^npm install && npm start\b/);
    expect(first[2]).toMatch(/^npm test\b/);
    const ci = readFileSync(new URL('.ci/run', root), 'utf8');
    expect(ci).toMatch(/\bnpm test\b/);
  });

  it('has a driver example that loads, connects, validates and runs, and whose test passes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labdeck-readme-'));
    writeFileSync(join(dir, 'scale.ts'), block('lab-plugins/scale.ts'));
    writeFileSync(join(dir, 'scale.test.ts'), block('lab-plugins/scale.test.ts'));
    expect(block('lab-plugins/scale.ts').split('\n').length).toBeLessThanOrEqual(25);

    const deck = new Deck({ records: NO_RECORDS });
    const host = new PluginHost({ deck, dirs: [dir], watch: false });
    try {
      await host.start();
      expect(host.errors()).toEqual([]);
      await deck.connect('scale', 'scale1', {});
      expect((await deck.call('scale1', 'weigh', { samples: 3 }, { userId: null })).output).toBe(12.5);
      await expect(deck.call('scale1', 'weigh', { samples: 0 }, { userId: null })).rejects.toMatchObject({ code: 'invalid_input' });
    } finally {
      await host.close();
      await deck.close();
    }

    const out: string[] = [];
    const io: CliIO = { stdin: new PassThrough(), stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => out.push(s) } };
    expect(await pluginsTest([dir], io)).toBe(0);
  });

  it('names only lab serve flags that exist', () => {
    const main = readFileSync(new URL('cli/main.ts', root), 'utf8');
    const row = /`lab serve ([^`]*)`/.exec(readme)![1];
    for (const flag of row.match(/--[a-z-]+/g)!) expect(main).toContain(`'${flag}`);
  });
});
