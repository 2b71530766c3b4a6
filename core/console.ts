/**
 * The admin console: run a JavaScript or TypeScript snippet against the live deck.
 *
 * SECURITY: node:vm is NOT a security boundary. A snippet can reach the host process (e.g. through the
 * constructor of any object handed in) and do anything the server can do. That is why the console is
 * admin-only and every use is audit-logged — both are the caller's job (the HTTP route). The vm context
 * only gives snippets a clean global scope, a captured console, and a timeout.
 *
 * Limitations: the timeout stops synchronous loops (vm's `timeout`) and abandons asynchronous work (a race
 * against a timer); it cannot preempt a loop that starts after an `await` inside the snippet (`await x;
 * while (true) {}` or `while (true) await null`): that blocks the server's event loop. (vm's
 * `microtaskMode: 'afterEvaluate'` would cover it but then host promises — deck calls — never resume the
 * snippet; a worker thread that can be terminated would be the fix if this matters.) Line numbers in stack
 * traces are the user's for JavaScript, those of the type-stripped code for TypeScript. Once a
 * run has ended (done, failed or timed out), the snippet's `deck` methods reject and its `sleep` timers are
 * cleared, so an abandoned snippet cannot keep driving instruments.
 */
import vm from 'node:vm';
import { format, inspect, types } from 'node:util';
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
  /** Extra globals for the snippet; they may shadow the built-in ones (deck, instruments, console, sleep). */
  globals?: Record<string, unknown>;
}

const FILENAME = '<console>';
const MAX_STDOUT = 1_000_000;

export async function runConsole(code: string, opts: ConsoleOptions): Promise<ConsoleResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const started = Date.now();
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

  // 3. A fresh context per run.
  let live = true;
  const timers = new Set<NodeJS.Timeout>();
  const log = (...args: unknown[]) => write(`${format(...args)}\n`);
  const sandbox: Record<string, unknown> = {
    deck: deckFacade(opts.deck, () => live),
    instruments: structuredClone(opts.deck.list()),
    console: { log, info: log, warn: log, error: log, debug: log, dir: (x: unknown) => write(`${inspect(x)}\n`) },
    sleep: (ms: number) =>
      new Promise<void>((resolve) => {
        if (!live) return;
        const t = setTimeout(() => (timers.delete(t), resolve()), Math.max(0, Number(ms) || 0));
        timers.add(t);
      }),
    ...opts.globals,
  };
  const context = vm.createContext(sandbox, { name: 'labdeck console' });

  let timer: NodeJS.Timeout | undefined;
  try {
    const script = new vm.Script(source, { filename: FILENAME, lineOffset: -1 });
    const promise = script.runInContext(context, { timeout: timeoutMs }) as Promise<unknown>;
    const remaining = Math.max(0, timeoutMs - (Date.now() - started));
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(timeoutMs)), remaining);
    });
    const value = await Promise.race([promise, timedOut]);
    return { success: true, result: jsonSafe(value), stdout, error: null };
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT' || e instanceof TimeoutError) {
      return fail(`timed out after ${timeoutMs} ms`);
    }
    return fail(errorMessage(e));
  } finally {
    live = false;
    clearTimeout(timer);
    for (const t of timers) clearTimeout(t);
  }
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/**
 * `deck.<instrument>.<method>(...)`: accepts one args object (`dose({ volume_ml: 1 })`) or positional
 * arguments in the order of the method's JSON Schema properties (`dose(1)`); resolves to the call's output.
 */
function deckFacade(deck: ConsoleDeck, live: () => boolean): Record<string, Record<string, unknown>> {
  const facade: Record<string, Record<string, unknown>> = {};
  for (const inst of deck.list()) {
    const methods: Record<string, unknown> = {};
    for (const m of inst.methods) {
      const props = (m.params.properties ?? {}) as Record<string, JSONSchema>;
      const names = Object.keys(props);
      methods[m.name] = async (...args: unknown[]) => {
        if (!live()) throw new Error('this console run has ended');
        const { output } = await deck.call(inst.name, m.name, toArgs(`${inst.name}.${m.name}`, names, props, args));
        return output;
      };
    }
    facade[inst.name] = Object.freeze(methods);
  }
  return Object.freeze(facade);
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x) as object | null;
  // Objects made inside the vm context have that context's Object.prototype, so compare by shape.
  return proto === null || Object.getPrototypeOf(proto) === null;
}

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
  const first = (e as { errors?: { text: string; location: { line: number; column: number; lineText: string } | null }[] })
    .errors?.[0];
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
