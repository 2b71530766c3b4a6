/**
 * No test waits a fixed time (issue 27 item 6): a test waits for the event or the condition it needs
 * (test/helpers/wait.ts: `waitFor` polls with a give-up bound, `nextEvent` waits for one event; the runner's
 * `settled()` says the loop has looked at the queue), and shows that something does not happen by a later
 * event that would come after it. A fixed sleep in a test body is caught here: a timer whose callback is only
 * a resolve (`setTimeout(r, 50)`, `setTimeout(() => resolve(), 50)`), a `sleep(…)` function, or the promise
 * timers of node:timers/promises. Strings and comments are not code: a Python snippet's `time.sleep(0.01)`
 * or a console snippet's `await sleep(5)` is what the test sends, not how it waits. Allowed: the wait helper
 * itself, the simulated instruments in test/fixtures (an instrument takes time, as a real one does), and the
 * line of an instrument written inside a test that ends with `// (the instrument takes its time)`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../core/paths.js';

const ALLOWED = [/^test\/helpers\/wait\.ts$/, /^test\/fixtures\//];

/** `text` with every string, template literal, regular expression and comment blanked (newlines kept). */
export function codeOnly(text: string): string {
  let out = '';
  let i = 0;
  let last = ''; // the last code character that is not a space (a `/` after one of `(,=:[!&|?{};` starts a regex)
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  const skipString = (q: string) => {
    const start = i++;
    while (i < text.length && text[i] !== q && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
    i++;
    out += blank(text.slice(start, i));
  };
  const skipTemplate = () => {
    const start = i++;
    let depth = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === '\\') i += 2;
      else if (depth === 0 && c === '`') break;
      else if (c === '$' && text[i + 1] === '{') {
        depth++;
        i += 2;
      } else if (depth > 0 && c === '}') {
        depth--;
        i++;
      } else i++;
    }
    i++;
    out += blank(text.slice(start, i));
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      out += blank(text.slice(i, end < 0 ? text.length : end));
      i = end < 0 ? text.length : end;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += blank(text.slice(i, stop));
      i = stop;
    } else if (c === "'" || c === '"') {
      skipString(c);
      last = 'x';
    } else if (c === '`') {
      skipTemplate();
      last = 'x';
    } else if (c === '/' && (last === '' || '(,=:[!&|?{};'.includes(last))) {
      const start = i++;
      let inClass = false;
      while (i < text.length && text[i] !== '\n' && (inClass || text[i] !== '/')) {
        if (text[i] === '\\') i++;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i++;
      }
      i++;
      out += blank(text.slice(start, i));
      last = 'x';
    } else {
      out += c;
      if (!/\s/.test(c)) last = c;
      i++;
    }
  }
  return out;
}

/** What a fixed sleep looks like in code (strings and comments blanked). */
const SLEEPS: [RegExp, string][] = [
  [/\bsetTimeout\(\s*[A-Za-z_$][\w$]*\s*,/, 'a timer that only resolves (a fixed sleep)'],
  [/\bsetTimeout\(\s*\(\)\s*=>\s*(?:r|res|resolve|done)\(\s*\)\s*,/, 'a timer that only resolves (a fixed sleep)'],
  [/(?:^|[^.\w$])sleep\s*\(|\bsleep\s*=|function\s+sleep\b/, 'a sleep function'],
];
/** An import of the promise timers (read from the line as written: the module's name is a string). */
const TIMER_IMPORT = /^\s*import\b.*['"](?:node:)?timers\/promises['"]/;
/**
 * A simulated instrument written inside a test takes its time as a real one does: its line says so with
 * this comment (the fixtures in test/fixtures need none).
 */
const INSTRUMENT_TIME = '// (the instrument takes its time)';

/** `file:line: why` for each fixed sleep in `text`. */
export function fixedSleeps(file: string, text: string): string[] {
  const raw = text.split('\n');
  return codeOnly(text)
    .split('\n')
    .flatMap((line, i) => {
      if (raw[i]!.trimEnd().endsWith(INSTRUMENT_TIME)) return [];
      const why = SLEEPS.filter(([re]) => re.test(line)).map(([, w]) => w);
      if (TIMER_IMPORT.test(raw[i]!)) why.push('the promise timers (a fixed sleep)');
      return why.map((w) => `${file}:${i + 1}: ${w}`);
    });
}

it('no test, and no test helper but test/helpers/wait.ts, waits a fixed time', () => {
  const files = readdirSync(join(projectRoot, 'test'), { recursive: true, encoding: 'utf8' })
    .map((f) => `test/${f}`)
    .filter((f) => /\.tsx?$/.test(f) && !ALLOWED.some((re) => re.test(f)));
  const found = files.flatMap((f) => fixedSleeps(f, readFileSync(join(projectRoot, f), 'utf8')));
  expect(found).toEqual([]);
  expect(files.filter((f) => f.endsWith('.test.ts')).length).toBeGreaterThan(100);
});

it('finds the sleeps it is for, and not what a test sends or says', () => {
  const caught = [
    'await new Promise((r) => setTimeout(r, 50));',
    'await new Promise((resolve) => setTimeout(resolve, 100));',
    'await new Promise<void>((res) => setTimeout(() => res(), 20));',
    'const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));',
    '  await sleep(20);',
    "import { setTimeout as wait } from 'node:timers/promises';",
  ];
  for (const line of caught) expect(fixedSleeps('x.ts', line)).not.toEqual([]);
  const fine = [
    "const timer = setTimeout(() => reject(new Error('agent did not connect')), 20_000);",
    'const timer = setTimeout(() => controller.abort(), 15_000);',
    "await runConsole('await sleep(5); [instruments]', { deck });",
    'const py = `def w():\n    time.sleep(0.01)\n`;',
    '// no fixed sleep: await sleep(5) would be one',
    'await new Promise((r) => setTimeout(r, p.delay_ms)); // (the instrument takes its time)',
    'expect(text).toMatch(/setTimeout\\(r, 5\\)/);',
    'await waitFor(() => done, "the upload");',
  ];
  for (const line of fine) expect(fixedSleeps('x.ts', line)).toEqual([]);
});
