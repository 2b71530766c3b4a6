/**
 * Every promise of the README's feature list has a test (issue 25 item 4, DESIGN.md §18): the table in
 * docs/claims.md maps phrases of the README to tests, and this reads both.
 */
import { existsSync, readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** The README's feature bullets (after "and you get:"), cut at semicolons, whitespace folded. */
function claims(): string[] {
  const list = read('README.md').split('and you get:')[1]!.split('\n![')[0]!;
  return list
    .split(/\n- /)
    .map((b) =>
      b
        .replace(/^\s*- /, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean)
    .flatMap((b) =>
      b
        .replace(/[;.]$/, '')
        .split(';')
        .map((c) => c.trim()),
    );
}

/** The rows of docs/claims.md: a phrase, a test file, words of one of its test names. */
function rows(): { phrase: string; file: string; test: string }[] {
  return [...read('docs/claims.md').matchAll(/^\| (.+?) \| (test\/\S+) › (.+?) \|$/gm)].map((m) => ({ phrase: m[1]!, file: m[2]!, test: m[3]! }));
}

describe("the README's feature list", () => {
  it('has at least one row of docs/claims.md in each of its claims', () => {
    const table = rows();
    expect(claims().length).toBeGreaterThan(10);
    expect(claims().filter((c) => !table.some((r) => c.includes(r.phrase)))).toEqual([]);
  });

  it('says every phrase the table quotes, and each row names a test that exists', () => {
    const readme = claims().join(' ; ');
    const table = rows();
    expect(table.length).toBeGreaterThan(20);
    expect(table.filter((r) => !readme.includes(r.phrase)).map((r) => r.phrase)).toEqual([]);
    const missing = table.filter((r) => !existsSync(new URL(r.file, root)) || !read(r.file).includes(r.test));
    expect(missing.map((r) => `${r.file} › ${r.test}`)).toEqual([]);
  });
});
