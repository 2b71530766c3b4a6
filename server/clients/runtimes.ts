/**
 * The clients' runtimes, read from their files (real Python and TypeScript beside this module, checked as
 * such) once, when a client is first generated: what lies below each file's marker line is copied into
 * every client. The files are found from the project's root (core/paths.ts), from the sources and from the
 * built `lab` alike (the package carries server/clients/).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../core/paths.js';

const DIR = join(projectRoot, 'server', 'clients');

/** The part of `file` after its line containing `from` (and before the line containing `to`), led by a newline. */
function section(file: string, from: string, to?: string): string {
  const text = readFileSync(join(DIR, file), 'utf8');
  const start = text.indexOf('\n', text.indexOf(from)) + 1;
  const end = to ? text.lastIndexOf('\n', text.indexOf(to)) + 1 : text.length;
  if (start <= 0 || !text.includes(from) || (to && !text.includes(to))) throw new Error(`server/clients/${file} has lost its marker line ("${from}")`);
  return `\n${text.slice(start, end)}`;
}

const cache = new Map<string, string>();
const once = (key: string, read: () => string) => () => {
  if (!cache.has(key)) cache.set(key, read());
  return cache.get(key)!;
};

/** The Python client's errors and HTTP client (python-runtime.py). */
export const pyRuntime = once('py', () => section('python-runtime.py', '---- copied into every generated client from the next line'));
/** The Python Lab class's own methods (python-lab-methods.py). */
export const pyLabMethods = once('pylab', () => section('python-lab-methods.py', "---- copied into every generated client's Lab class from the next line"));
/** The TypeScript client's runtime (typescript-runtime.ts, between its markers). */
export const tsRuntime = once('ts', () => section('typescript-runtime.ts', '---- copied into every generated client from the next line', '---- end of what is copied'));
