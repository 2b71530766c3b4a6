/** docs/optimizers.md: its example optimizer plugin loads, is registered, and suggests what it says. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isOptimizer } from '../../core/contracts/index.js';
import { Deck, NO_RECORDS } from '../../core/deck/index.js';
import { PluginHost } from '../../core/plugins/index.js';

const doc = readFileSync(new URL('../../docs/optimizers.md', import.meta.url), 'utf8');

it('the example optimizer in docs/optimizers.md loads as a plugin and walks its grid', async () => {
  const code = /```ts\n([\s\S]*?)```/.exec(doc)![1];
  const dir = mkdtempSync(join(tmpdir(), 'labdeck-optdoc-'));
  writeFileSync(join(dir, 'grid.ts'), code);
  const host = new PluginHost({ deck: new Deck({ records: NO_RECORDS }), dirs: [dir], watch: false });
  try {
    await host.start();
    expect(host.errors()).toEqual([]);
    const grid = host.registry('optimizer').get('grid')?.value;
    expect(isOptimizer(grid)).toBe(true);
    if (!isOptimizer(grid)) return;
    const opt = grid.create({ space: [{ name: 'x', type: 'range', bounds: [0, 1] }], objectives: [{ name: 'y', minimize: false }], config: { points: 3 }, seed: 1 });
    expect(await opt.suggest(4)).toEqual([{ x: 0 }, { x: 0.5 }, { x: 1 }, { x: 0 }]);
    expect(() => grid.create({ space: [{ name: 'c', type: 'choice', choices: ['a', 'b'] }], objectives: [{ name: 'y', minimize: false }] })).toThrow(/choice/);
  } finally {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
