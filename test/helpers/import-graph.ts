/**
 * The import graph of labdeck's TypeScript sources, read with a small parser of import and export
 * statements (no compiler): which module loads which when it is evaluated. Type-only imports (`import type`,
 * `export type`, and an import whose every name is marked `type`, which TypeScript drops) load nothing and are
 * left out, as are dynamic `import()`s (they load later, when called). Used by test/unit/no-cycle.test.ts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Every .ts/.tsx file under `dirs` (relative to `root`), skipping test fixtures and declaration files. */
export function sourceFiles(root: string, dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        if (name !== 'node_modules' && name !== 'fixtures') walk(p);
      } else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(relative(root, p));
    }
  };
  for (const d of dirs) walk(join(root, d));
  return out.sort();
}

/** The specifiers a module loads when evaluated: static imports and re-exports that are not type-only. */
export function runtimeImports(source: string): string[] {
  // comments out (a `from '…'` in a comment is not an import); strings keep their quotes
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const specs: string[] = [];
  const statement = /(?:^|[;\n])\s*(import|export)\s+([^;=(){}]*?(?:\{[^;=(){}]*\})?[^;=(){}]*?)\s*from\s*['"]([^'"]+)['"]|(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]/g;
  for (const m of code.matchAll(statement)) {
    if (m[4]) {
      specs.push(m[4]); // import 'x': for its effect
      continue;
    }
    const clause = m[2];
    if (/^type\b/.test(clause)) continue; // import type / export type
    const braces = clause.match(/\{([\s\S]*)\}/);
    const outside = braces ? clause.replace(braces[0], '').replace(/,/g, '').trim() : clause.trim();
    if (braces && outside === '') {
      const names = braces[1]
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (names.length > 0 && names.every((n) => /^type\s/.test(n))) continue; // every name a type
    }
    specs.push(m[3]);
  }
  return specs;
}

/** Module → the modules it loads (relative specifiers resolved to source files; packages left out). */
export function importGraph(root: string, dirs: string[]): Map<string, string[]> {
  const files = sourceFiles(root, dirs);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const deps = new Set<string>();
    for (const spec of runtimeImports(readFileSync(join(root, f), 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const base = relative(root, resolve(root, dirname(f), spec)).replace(/\.js$/, '');
      const hit = [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`].find((c) => known.has(c));
      if (hit) deps.add(hit);
    }
    graph.set(f, [...deps].sort());
  }
  return graph;
}

/** Each import circle once: a strongly connected component of more than one module (or a module that loads itself), as one path around it. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const comps: string[][] = [];
  const strong = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) comps.push(comp);
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  // name each circle by one path around it: from its first module back to it, inside the component
  return comps.map((comp) => {
    const inside = new Set(comp);
    const start = [...comp].sort()[0];
    const path = shortestBack(graph, start, inside);
    return path ?? [start];
  });
}

/** The shortest path start → … → start through `inside` (breadth first). */
function shortestBack(graph: Map<string, string[]>, start: string, inside: Set<string>): string[] | null {
  const prev = new Map<string, string>();
  const queue = [start];
  const seen = new Set<string>();
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x = v; x !== start; x = prev.get(x)!) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!seen.has(w)) {
        seen.add(w);
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return null;
}
