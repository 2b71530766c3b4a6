/**
 * The type tests of core/contracts (test/types/contracts.ts) are part of `npm run typecheck`, which CI runs; and
 * each of their `@ts-expect-error` lines marks the error it says, on that line: compiled without the
 * directives, the file has an error on the line after each one, and nowhere else.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { projectRoot } from '../../core/paths.js';

const FILE = join(projectRoot, 'test/types/contracts.ts');

it('npm run typecheck compiles test/types/contracts.ts, and CI runs it', () => {
  const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8'));
  expect(pkg.scripts.typecheck).toBe('tsc -p tsconfig.json --noEmit');
  const config = ts.getParsedCommandLineOfConfigFile(join(projectRoot, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  expect(config.fileNames).toContain(FILE);
  expect(readFileSync(join(projectRoot, '.ci/run'), 'utf8')).toMatch(/npm run typecheck/);
});

it('each broken definition is an error on its marked line, and the kept ones compile', () => {
  const text = readFileSync(FILE, 'utf8');
  const lines = text.split('\n');
  const marked = lines.flatMap((l, i) => (/^\s*\/\/ @ts-expect-error /.test(l) ? [i + 2] : [])); // the line after, 1-based
  expect(marked.length).toBeGreaterThanOrEqual(30);
  const bare = lines.map((l) => (/^\s*\/\/ @ts-expect-error /.test(l) ? '' : l)).join('\n');
  const config = ts.getParsedCommandLineOfConfigFile(join(projectRoot, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  const host = ts.createCompilerHost(config.options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => (name === FILE ? ts.createSourceFile(name, bare, lang) : read(name, lang, ...rest));
  const program = ts.createProgram([FILE], { ...config.options, noEmit: true }, host);
  const source = program.getSourceFile(FILE)!;
  const errorLines = [
    ...new Set(
      ts
        .getPreEmitDiagnostics(program, source)
        .filter((d) => d.file?.fileName === FILE)
        .map((d) => d.file!.getLineAndCharacterOfPosition(d.start!).line + 1),
    ),
  ];
  expect(errorLines.sort((a, b) => a - b)).toEqual(marked);
}, 60_000);
