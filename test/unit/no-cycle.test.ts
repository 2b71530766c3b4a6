/**
 * The house has no import circle (issue 27): no module of core/, server/ or cli/ loads, through its runtime
 * imports, a module that loads it back. A circle makes what a module sees at load time depend on which module
 * was loaded first (a class undefined in one order, fine in the other). Type-only imports are left out (they
 * load nothing), as import-x/no-cycle leaves them out. The graph is read by test/helpers/import-graph.ts.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cycles, importGraph, runtimeImports } from '../helpers/import-graph.js';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

describe('import circles', () => {
  it('core/, server/ and cli/ have none: each circle is named module by module', () => {
    const graph = importGraph(root, ['core', 'server', 'cli']);
    expect(graph.size).toBeGreaterThan(200); // it did read the sources
    expect(graph.get('core/runtime.ts')).toContain('core/operations/index.ts');
    const found = cycles(graph).map((c) => c.join(' -> '));
    expect(found).toEqual([]);
  });

  it('reads imports as TypeScript loads them: type-only ones load nothing, comments are not imports', () => {
    const src = [
      "import { a, type B } from './a.js';",
      "import type { C } from './c.js';",
      "import { type D, type E } from './d.js';",
      "export type { F } from './f.js';",
      "export * from './g.js';",
      "export { h } from './h.js';",
      "import './side.js';",
      "// import { x } from './comment.js';",
      "/* import { y } from './block.js'; */",
      'export type K = Extract<Step, { kind: "call" }>;',
      "import { k,\n  l } from './multi.js';",
      "const later = () => import('./lazy.js');",
    ].join('\n');
    expect(runtimeImports(src)).toEqual(['./a.js', './g.js', './h.js', './side.js', './multi.js']);
  });

  it('finds a circle when there is one, and names it', () => {
    const g = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(g)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
