/**
 * The parse pool: workflows written in Python (the Import Python form, POST /app/workflows/import/python,
 * ivoryOS's /draft/submit_python and PUT script) are read by processes of their own (python/parse_workflow.py),
 * never by the lab's Python host, so a hostile text cannot hold the instruments' process or the request.
 *
 * - The text is at most `maxSourceBytes` (256 kB, LABDECK_PARSE_MAX_BYTES): more is a 413 before any Python.
 * - Each process reads one request at a time; a parse not answered within `timeoutMs` (5 s,
 *   LABDECK_PARSE_TIMEOUT_MS) is a 400 saying so, and that process is killed and replaced on the next request.
 * - At most `size` processes (2); at most `maxWaiting` requests wait for one (16), more are a 429.
 * - A process's replies are framed by the linear line reader, at most LABDECK_PYTHON_MAX_REPLY bytes each.
 *
 * An error the parser answers (outside the subset, too deep, a syntax error) comes back as a RemoteError of
 * kind `invalid_input` naming the line, as the Python host answered it before (core/workflow/python.ts).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import type { HostErrorPayload } from '../contracts/host.js';
import { LabError } from '../errors.js';
import { projectRoot } from '../paths.js';
import { LineReader, maxReplyBytes } from './lines.js';
import { pythonCommand, RemoteError, type ParseWorkflowInput } from './python.js';

export const PARSE_SCRIPT = join(projectRoot, 'python', 'parse_workflow.py');

const envNumber = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

/** The limits of a parse: LABDECK_PARSE_TIMEOUT_MS (default 5000) and LABDECK_PARSE_MAX_BYTES (default 256 kB). */
export function parseLimits(): { timeoutMs: number; maxSourceBytes: number } {
  return { timeoutMs: envNumber('LABDECK_PARSE_TIMEOUT_MS', 5_000), maxSourceBytes: Math.floor(envNumber('LABDECK_PARSE_MAX_BYTES', 256 * 1024)) };
}

export interface ParsePoolOptions {
  python?: string;
  /** Parse processes at most (default 2). */
  size?: number;
  /** How long one parse may take (default: parseLimits()). */
  timeoutMs?: number;
  /** The largest text taken, in bytes, all parts together (default: parseLimits()). */
  maxSourceBytes?: number;
  /** Requests that may wait for a free process (default 16); more are refused with 429. */
  maxWaiting?: number;
  /** How long a new process may take to start (default 30 s: a loaded lab PC starts Python slowly). */
  startTimeoutMs?: number;
  log?: (line: string) => void;
}

type Reply = { id: number | null; type: 'ready' | 'result' | 'error'; value?: unknown; error?: HostErrorPayload };

/** One parse process: started, then one request at a time. */
class Worker {
  readonly child: ChildProcessWithoutNullStreams;
  readonly ready: Promise<void>;
  dead = false;
  private current: { id: number; resolve(v: unknown): void; reject(e: Error): void } | null = null;
  private onReady?: { resolve(): void; reject(e: Error): void };
  private stderr: string[] = [];

  constructor(python: string, maxReply: number, log: (line: string) => void) {
    const env = { ...process.env, PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1' };
    this.child = spawn(python, ['-X', 'utf8', '-I', PARSE_SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'], env, windowsHide: true });
    this.ready = new Promise<void>((resolve, reject) => (this.onReady = { resolve, reject }));
    this.ready.catch(() => undefined);
    const out = new LineReader((line) => this.onLine(line), {
      maxBytes: maxReply,
      onTooLong: (_head, bytes) =>
        this.fail(new LabError('invalid_input', `The workflow read from this Python is ${bytes} bytes, over the limit of ${maxReply} bytes (LABDECK_PYTHON_MAX_REPLY): make it smaller.`)),
    });
    this.child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    const err = new LineReader(
      (line) => {
        this.stderr.push(line);
        if (this.stderr.length > 5) this.stderr.shift();
        log(`[python parse] ${line}`);
      },
      { maxBytes: 4096, onTooLong: (head) => log(`[python parse] ${head}…`) },
    );
    this.child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    this.child.stdin.on('error', () => undefined); // EPIPE when it died: reported by 'exit'
    this.child.on('error', (e) => this.end(noPython(python, e)));
    this.child.on('exit', (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const tail = this.stderr
        .filter((l) => l.trim())
        .slice(-2)
        .join(' | ');
      this.end(new LabError('invalid_input', `This Python could not be read: the parse process ${how}${tail ? ` (${tail.slice(0, 300)})` : ''}. Make the script simpler.`));
    });
  }

  run(id: number, req: ParseWorkflowInput): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      this.current = { id, resolve, reject };
      this.child.stdin.write(`${JSON.stringify({ ...req, id })}\n`);
    });
  }

  /** The request in flight fails with `e`, and this process is not used again. */
  fail(e: Error): void {
    this.dead = true;
    const c = this.current;
    this.current = null;
    c?.reject(e);
    this.child.kill('SIGKILL');
  }

  kill(): void {
    this.dead = true;
    this.child.kill('SIGKILL');
  }

  private end(e: Error): void {
    this.dead = true;
    this.onReady?.reject(e);
    const c = this.current;
    this.current = null;
    c?.reject(e);
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    let msg: Reply;
    try {
      msg = JSON.parse(line) as Reply;
    } catch {
      return this.fail(new LabError('invalid_input', `This Python could not be read: the parse process answered something unreadable (${line.slice(0, 100)}).`));
    }
    if (msg.type === 'ready') return this.onReady?.resolve();
    const c = this.current;
    if (!c || msg.id !== c.id) return;
    this.current = null;
    if (msg.type === 'result') c.resolve(msg.value);
    else c.reject(new RemoteError(msg.error ?? { kind: 'invalid_input', type: 'Error', message: 'cannot be read as a workflow' }));
  }
}

function noPython(python: string, e: unknown): LabError {
  const code = (e as { code?: string }).code;
  const why = code === 'ENOENT' ? 'not found' : code === 'EACCES' ? 'not executable' : String((e as Error).message);
  return new LabError(
    'unavailable',
    `Python workflows are read with Python, and there is no interpreter "${python}" (${why}): install Python 3.9 or newer, or name one with --python PATH (or LABDECK_PYTHON).`,
  );
}

/** The bytes of the text to parse, and the field that holds most of it. */
function sizeOf(req: ParseWorkflowInput): { bytes: number; field: string } {
  if ('source' in req) return { bytes: typeof req.source === 'string' ? Buffer.byteLength(req.source) : 0, field: 'source' };
  let bytes = 0;
  let field = 'script';
  let most = -1;
  for (const [k, v] of Object.entries(req.parts ?? {})) {
    const n = typeof v === 'string' ? Buffer.byteLength(v) : 0;
    bytes += n;
    if (n > most) [most, field] = [n, k];
  }
  return { bytes, field };
}

export class ParsePool {
  readonly python: string;
  readonly timeoutMs: number;
  readonly maxSourceBytes: number;
  private readonly size: number;
  private readonly maxWaiting: number;
  private readonly startTimeoutMs: number;
  private readonly maxReply = maxReplyBytes();
  private readonly log: (line: string) => void;
  private idle: Worker[] = [];
  private readonly all = new Set<Worker>();
  private waiting: ((w: Worker | Error) => void)[] = [];
  private nextId = 1;
  private closed = false;

  constructor(opts: ParsePoolOptions = {}) {
    const limits = parseLimits();
    this.python = pythonCommand(opts.python);
    this.size = Math.max(1, opts.size ?? 2);
    this.timeoutMs = opts.timeoutMs ?? limits.timeoutMs;
    this.maxSourceBytes = opts.maxSourceBytes ?? limits.maxSourceBytes;
    this.maxWaiting = opts.maxWaiting ?? 16;
    this.startTimeoutMs = opts.startTimeoutMs ?? 30_000;
    this.log = opts.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /** Processes running now (for tests and the status). */
  get processes(): number[] {
    return [...this.all].map((w) => w.child.pid ?? -1);
  }

  /** The workflow document of a Python text (not validated against the deck: core/workflow/python.ts does that). */
  async parseWorkflow(req: ParseWorkflowInput): Promise<unknown> {
    const { bytes, field } = sizeOf(req);
    if (bytes > this.maxSourceBytes) {
      throw new LabError('payload_too_large', `The Python is ${bytes} bytes; a workflow script is at most ${this.maxSourceBytes} bytes (LABDECK_PARSE_MAX_BYTES).`, [
        { field, message: `over ${this.maxSourceBytes} bytes` },
      ]);
    }
    const w = await this.acquire();
    let timer: NodeJS.Timeout | undefined;
    try {
      await this.started(w);
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const e = new LabError(
            'invalid_input',
            `This Python was not read within ${this.timeoutMs / 1000} s (the limit of a parse, LABDECK_PARSE_TIMEOUT_MS): make the script simpler (fewer, shallower expressions).`,
            [{ field, message: 'took too long to read' }],
          );
          w.fail(e);
          reject(e);
        }, this.timeoutMs);
      });
      return await Promise.race([w.run(this.nextId++, req), timeout]);
    } finally {
      clearTimeout(timer);
      this.release(w);
    }
  }

  private async started(w: Worker): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        w.kill();
        reject(new LabError('unavailable', `The Python parse process did not start within ${this.startTimeoutMs / 1000} s (${this.python}): try again.`));
      }, this.startTimeoutMs);
    });
    try {
      await Promise.race([w.ready, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private acquire(): Promise<Worker> {
    if (this.closed) return Promise.reject(new LabError('unavailable', 'The Python parse pool is shut down.'));
    while (this.idle.length) {
      const w = this.idle.pop()!;
      if (!w.dead) return Promise.resolve(w);
    }
    if (this.all.size < this.size) return Promise.resolve(this.spawn());
    if (this.waiting.length >= this.maxWaiting) {
      return Promise.reject(
        new LabError('too_many_requests', `${this.waiting.length} Python workflows are waiting to be read already: try again in a moment.`, undefined, {
          retry_after: Math.ceil(this.timeoutMs / 1000),
        }),
      );
    }
    return new Promise<Worker>((resolve, reject) => this.waiting.push((w) => (w instanceof Error ? reject(w) : resolve(w))));
  }

  private spawn(): Worker {
    const w = new Worker(this.python, this.maxReply, this.log);
    this.all.add(w);
    w.child.on('exit', () => {
      this.all.delete(w);
      this.idle = this.idle.filter((x) => x !== w);
    });
    w.child.on('error', () => this.all.delete(w));
    return w;
  }

  /** A process back: to the next waiting request, or idle; a dead one is replaced for the next request. */
  private release(w: Worker): void {
    if (w.dead) {
      this.all.delete(w);
      const next = this.waiting.shift();
      if (next) next(this.closed ? new LabError('unavailable', 'The Python parse pool is shut down.') : this.spawn());
      return;
    }
    const next = this.waiting.shift();
    if (next) next(w);
    else this.idle.push(w);
  }

  close(): Promise<void> {
    this.closed = true;
    for (const next of this.waiting.splice(0)) next(new LabError('unavailable', 'The Python parse pool is shut down.'));
    const exits = [...this.all].map((w) =>
      w.child.pid === undefined || w.child.exitCode !== null || w.child.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => w.child.once('exit', () => r())),
    );
    for (const w of this.all) w.kill();
    this.idle = [];
    return Promise.all(exits).then(() => undefined);
  }
}
