/**
 * The admin console: run a JavaScript or TypeScript snippet against the live deck.
 *
 * Each run happens in a worker thread of its own, which is terminated when the time limit passes: a
 * runaway snippet (`while (true) {}`, or `await null; while (true) {}`) is stopped and never holds the
 * server, and `process.exit()` inside a snippet ends only its worker. The snippet reaches the deck through
 * messages: `deck.<instrument>.<method>(...)` is a call the main thread makes on the real deck (validated,
 * locked and recorded like any call). Once a run has ended, nothing it started can reach the deck.
 *
 * SECURITY: a worker is not a sandbox: a snippet can still `require` node modules and act as the server's
 * user. That is why the console is admin-only and every use is audit-logged (the caller's job: the HTTP
 * route writes the audit line before the run). Line numbers in stack traces are the user's for JavaScript,
 * those of the type-stripped code for TypeScript.
 */
import vm from 'node:vm';
import { inspect, types } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { InstrumentSchema, JSONSchema } from './contracts/index.js';

/** What the console sees of the deck (the runtime wires the real Deck in). */
export interface ConsoleDeck {
  list(): InstrumentSchema[];
  call(instrument: string, method: string, args: unknown): Promise<{ taskId: number; output: unknown }>;
}

export interface ConsoleResult {
  success: boolean;
  /** The value of the snippet's last expression statement (or of a top-level `return`), JSON-safe. */
  result: unknown;
  stdout: string;
  error: string | null;
}

export interface ConsoleOptions {
  language?: 'javascript' | 'typescript';
  deck: ConsoleDeck;
  /** Wall-clock limit for the whole run, synchronous and asynchronous parts together. */
  timeoutMs?: number;
  /** Extra globals for the snippet (structured-cloneable); they may shadow the built-in ones. */
  globals?: Record<string, unknown>;
}

const FILENAME = '<console>';
const MAX_STDOUT = 1_000_000;

/** Messages from a console worker. */
type FromWorker =
  { type: 'stdout'; text: string } | { type: 'call'; id: number; instrument: string; method: string; args: unknown[] } | { type: 'done'; success: boolean; result: unknown; error: string | null };

export async function runConsole(code: string, opts: ConsoleOptions): Promise<ConsoleResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  let stdout = '';
  const write = (text: string) => {
    if (stdout.length >= MAX_STDOUT) return;
    stdout += text.length + stdout.length > MAX_STDOUT ? `${text.slice(0, MAX_STDOUT - stdout.length)}\n…[output truncated]\n` : text;
  };
  const fail = (error: string): ConsoleResult => ({ success: false, result: null, stdout, error });

  // 1. Syntax check (both languages) and type stripping (TypeScript). JavaScript runs as written, so the
  //    line numbers in its stack traces are the user's; TypeScript line numbers are those of the stripped code.
  let js = code;
  try {
    const { transform } = await import('esbuild'); // loaded on first use: labdeck idles without it
    const out = await transform(code, { loader: opts.language === 'typescript' ? 'ts' : 'js', sourcefile: FILENAME });
    if (opts.language === 'typescript') js = out.code;
  } catch (e) {
    return fail(esbuildMessage(e));
  }

  // 2. Wrap in an async function so top-level `await` works; `return` the last expression statement.
  const { body, tail } = splitLastExpression(js);
  const source = `(async () => {\n${body}${tail === null ? '\n' : `return (${tail}\n);`}})()`;

  // 3. A worker per run, terminated at the time limit.
  const instruments = opts.deck.list();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { source, instruments, globals: opts.globals ?? {}, filename: FILENAME },
    resourceLimits: { maxOldGenerationSizeMb: 256 },
    stdout: true,
    stderr: true,
  });
  return new Promise<ConsoleResult>((resolve) => {
    let settled = false;
    const finish = (r: ConsoleResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(r);
    };
    const timer = setTimeout(() => finish(fail(`timed out after ${timeoutMs} ms`)), timeoutMs);
    worker.on('message', (m: FromWorker) => {
      if (m.type === 'stdout') return write(m.text);
      if (m.type === 'done') return finish(m.success ? { success: true, result: m.result, stdout, error: null } : fail(m.error ?? 'failed'));
      // a deck call: made here, on the real deck, while the run lasts
      if (settled) return;
      const label = `${m.instrument}.${m.method}`;
      const inst = instruments.find((i) => i.name === m.instrument);
      const schema = inst?.methods.find((x) => x.name === m.method);
      const props = (schema?.params.properties ?? {}) as Record<string, JSONSchema>;
      Promise.resolve()
        .then(() => opts.deck.call(m.instrument, m.method, toArgs(label, Object.keys(props), props, m.args)))
        .then(
          ({ output }) => !settled && worker.postMessage({ type: 'reply', id: m.id, ok: true, output }),
          (e: unknown) => !settled && worker.postMessage({ type: 'reply', id: m.id, ok: false, error: errorData(e) }),
        );
    });
    worker.on('error', (e) => finish(fail(errorMessage(e))));
    worker.on('exit', (code) => finish(fail(`the snippet ended the console run (exit code ${code})`)));
  });
}

/** An error sent to the worker: enough to rebuild its name, code, message and details there. */
function errorData(e: unknown) {
  const err = e as { name?: string; message?: string; code?: unknown; details?: unknown };
  return { name: err?.name ?? 'Error', message: err?.message ?? String(e), code: typeof err?.code === 'string' ? err.code : undefined, details: err?.details };
}

/**
 * The worker's program: a clean vm context with the captured console, `sleep`, `instruments`, extra
 * globals and a `deck` facade whose methods are messages to the main thread. Built from the functions
 * below (their source is the worker's), so the console's rules are written once.
 */
function workerMain() {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const vmw = require('node:vm') as typeof vm;
  const util = require('node:util') as typeof import('node:util');
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const port = parentPort!;
  const data = workerData as { source: string; instruments: InstrumentSchema[]; globals: Record<string, unknown>; filename: string };
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  let nextId = 1;
  port.on('message', (m: { id: number; ok: boolean; output?: unknown; error?: { name: string; message: string; code?: string; details?: unknown } }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.output);
    else p.reject(Object.assign(new Error(m.error!.message), { name: m.error!.name, code: m.error!.code, details: m.error!.details }));
  });
  const print = (text: string) => {
    port.postMessage({ type: 'stdout', text });
  };
  const log = (...args: unknown[]) => print(`${util.format(...args)}\n`);
  const deck: Record<string, Record<string, unknown>> = {};
  for (const inst of data.instruments) {
    const methods: Record<string, unknown> = {};
    for (const m of inst.methods) {
      methods[m.name] = (...args: unknown[]) =>
        new Promise((resolve, reject) => {
          const id = nextId++;
          pending.set(id, { resolve, reject });
          port.postMessage({ type: 'call', id, instrument: inst.name, method: m.name, args });
        });
    }
    deck[inst.name] = Object.freeze(methods);
  }
  const sandbox: Record<string, unknown> = {
    deck: Object.freeze(deck),
    instruments: data.instruments,
    console: { log, info: log, warn: log, error: log, debug: log, dir: (x: unknown) => print(`${util.inspect(x)}\n`) },
    sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, Number(ms) || 0))),
    ...data.globals,
  };
  const context = vmw.createContext(sandbox, { name: 'labdeck console' });
  const done = (success: boolean, result: unknown, error: string | null) => port.postMessage({ type: 'done', success, result, error });
  try {
    const script = new vmw.Script(data.source, { filename: data.filename, lineOffset: -1 });
    Promise.resolve(script.runInContext(context)).then(
      (v) => done(true, jsonSafe(v), null),
      (e) => done(false, null, errorMessage(e)),
    );
  } catch (e) {
    done(false, null, errorMessage(e));
  }
}

/** The worker's source: its helpers, then its program (see workerMain). */
const WORKER_SOURCE = [
  `const FILENAME = ${JSON.stringify(FILENAME)};`,
  `const { inspect, types } = require('node:util');`,
  jsonSafe.toString(),
  errorMessage.toString(),
  `(${workerMain.toString()})();`,
].join('\n');

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x) as object | null;
  // Objects made inside the vm context have that context's Object.prototype, so compare by shape.
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * A console call's arguments: one args object (`dose({ volume_ml: 1 })`) or positional arguments in the
 * order of the method's JSON Schema properties (`dose(1)`).
 */
function toArgs(label: string, names: string[], props: Record<string, JSONSchema>, args: unknown[]): Record<string, unknown> {
  if (args.length === 0) return {};
  if (args.length === 1 && isPlainObject(args[0])) {
    // One object is the args object — unless the first parameter itself takes an object (or anything) and
    // the keys are not parameter names: then it is that parameter's value.
    const first = names[0] === undefined ? undefined : props[names[0]];
    const firstTakesObject = first !== undefined && (first.type === undefined || first.type === 'object');
    const keysAreParams = Object.keys(args[0]).every((k) => names.includes(k));
    if (!(firstTakesObject && !keysAreParams)) return { ...args[0] };
  }
  if (args.length > names.length) {
    throw new TypeError(`${label} takes at most ${names.length} argument(s) (${names.join(', ') || 'none'}), got ${args.length}`);
  }
  const out: Record<string, unknown> = {};
  args.forEach((a, i) => {
    if (a !== undefined) out[names[i]] = a; // undefined: leave it to the default
  });
  return out;
}

/**
 * Split a script into the statements before its last expression statement and that expression, so the
 * wrapper can `return` it. Without a parser: the earliest cut (after `;`, `}` or a newline) such that the
 * rest compiles as ONE expression and the whole wrapper compiles. The earliest cut gives the longest tail,
 * which is the whole last statement. A cut at a newline or `}` is refused when the tail starts with a token
 * that would have continued the previous line (`(`, `[`, `+`, `-`, …), since no semicolon is inserted there.
 */
export function splitLastExpression(js: string): { body: string; tail: string | null } {
  const code = js.replace(/[\s;]+$/, '');
  const compiles = (src: string) => {
    try {
      new vm.Script(src);
      return true;
    } catch {
      return false;
    }
  };
  for (let i = 0; i <= code.length; i++) {
    const cut = i === 0 || code[i - 1] === ';' || code[i - 1] === '\n' || code[i - 1] === '}';
    if (!cut) continue;
    const tail = code.slice(i);
    if (!tail.trim()) continue;
    const lead = tail.replace(/^(?:\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/)+/, '');
    // These start a declaration or a block, never an expression statement (`function f() {}\n(1)`).
    if (/^(?:function\b|class\b|async\s+function\b|let\s*\[|\{)/.test(lead)) continue;
    if (i > 0 && code[i - 1] !== ';' && /^[([`+\-/*%.,?<>=&|^]/.test(lead)) continue;
    if (!compiles(`(async () => (${tail}\n))`)) continue;
    const body = code.slice(0, i);
    if (compiles(`(async () => {\n${body}return (${tail}\n);})`)) return { body, tail };
  }
  return { body: js, tail: null };
}

function esbuildMessage(e: unknown): string {
  const first = (e as { errors?: { text: string; location: { line: number; column: number; lineText: string } | null }[] }).errors?.[0];
  if (!first) return `SyntaxError: ${(e as Error).message}`;
  const at = first.location ? ` (line ${first.location.line}, column ${first.location.column + 1})` : '';
  const line = first.location ? `\n  ${first.location.lineText}\n  ${' '.repeat(first.location.column)}^` : '';
  return `SyntaxError: ${first.text}${at}${line}`;
}

/** `Name: message`, then only the stack frames inside the snippet. Works for errors from either realm. */
function errorMessage(e: unknown): string {
  if (!types.isNativeError(e) && !(e instanceof Error)) return `Uncaught ${inspect(e)}`;
  const err = e as Error;
  const code = (err as { code?: unknown }).code;
  const details = (err as { details?: { field?: string; message: string }[] }).details;
  const head = [
    `${err.name}${typeof code === 'string' && err.name === 'LabError' ? ` [${code}]` : ''}: ${err.message}`,
    ...(Array.isArray(details) ? details.map((d) => `  ${d.field ? `${d.field}: ` : ''}${d.message}`) : []),
  ].join('\n');
  const frames = (err.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l) && l.includes(FILENAME));
  return [head, ...frames].join('\n');
}

/** Make a value safe to send as JSON: functions/undefined → null, Dates → ISO, Map/Set → object/array, cyclic → text. */
export function jsonSafe(value: unknown): unknown {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return null;
  try {
    const text = JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v === 'function' || typeof v === 'symbol') return null;
      if (typeof v === 'bigint') return v.toString();
      if (types.isMap(v)) return Object.fromEntries(v as Map<unknown, unknown>);
      if (types.isSet(v)) return [...(v as Set<unknown>)];
      return v;
    });
    return text === undefined ? null : (JSON.parse(text) as unknown);
  } catch {
    return inspect(value, { depth: 4 }); // cyclic structures
  }
}
