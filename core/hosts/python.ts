/**
 * PythonHost: the runtime's side of one Python instrument host (python/run_host.py), a child process on
 * the lab's own interpreter, speaking the host protocol (core/contracts/host.ts).
 *
 * One host per runtime holds every Python deck, driver module and plugin file: instances live in one
 * process, so a robot's constructor can take the pump instance, and the console sees the whole deck.
 *
 * Requests run concurrently (each call on a thread of the host). When the process dies (a segfault
 * in a vendor library, `os._exit`), every request in flight fails with HostLost, the host emits `offline`,
 * and it is started again with back-off; the decks, modules and connected devices it had are re-created in
 * their original order (`history`), then it emits `online` with the instruments that came back. A call is
 * never re-sent: the deck records a call lost that way as in-doubt.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import {
  HOST_PROTOCOL_VERSION,
  type ConsoleAnswer,
  type HelloMessage,
  type HostClass,
  type HostFailedInstrument,
  type HostErrorPayload,
  type HostInstrument,
  type HostMessage,
  type HostRequest,
} from '../contracts/host.js';
import { LabError } from '../errors.js';
import { projectRoot } from '../paths.js';
import { LineReader, maxReplyBytes } from './lines.js';
import type { HostOptimizerClass, OptimizerRequest } from './python-optimizer.js';

/** The interpreter: `--python`, then LABDECK_PYTHON, then `python3` on the PATH. */
export function pythonCommand(explicit?: string): string {
  return explicit || process.env.LABDECK_PYTHON || 'python3';
}

export const HOST_SCRIPT = join(projectRoot, 'python', 'run_host.py');

/** A line the host writes to stderr is logged up to this many bytes (the rest is cut). */
const STDERR_LINE = 64 * 1024;

/** A request was in flight when the host process went away: it may or may not have happened. */
export class HostLost extends Error {
  /** The deck records a call that failed this way as in-doubt. */
  readonly inDoubt = true;
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'HostLost';
  }
}

/** An exception raised by Python code: `Type: message`, with the traceback for the record. */
export class RemoteError extends Error {
  readonly type: string;
  readonly traceback?: string;
  readonly payload: HostErrorPayload;
  constructor(p: HostErrorPayload) {
    super(`${p.type}: ${p.message}`);
    this.name = 'RemoteError';
    this.type = p.type;
    this.traceback = p.traceback;
    this.payload = p;
  }
}

/**
 * A workflow written in Python, read by the host with `ast` (never run; python/labdeck_host/workflow_py.py):
 * `source` a whole script, or `parts` ivoryOS's prep / script / cleanup texts. It answers the workflow
 * document, or an `invalid_input` error whose message names the line (and `field` the part, `line` the line).
 */
export type ParseWorkflowInput = { name?: string } & ({ source: string } | { parts: { prep?: string; script?: string; cleanup?: string } });
export type ParseWorkflowRequest = { type: 'parse_workflow' } & ParseWorkflowInput;

export interface PythonHostOptions {
  /** Interpreter to run (see pythonCommand). */
  python?: string;
  /** Lines the host writes to stderr (prints outside calls, C-level output) and lifecycle notes. */
  log?: (line: string) => void;
  /** How long loading a deck or module may take before the host is restarted (default 120 s). */
  loadTimeoutMs?: number;
  /** First restart delay after a crash (default 500 ms), doubling up to maxRestartDelayMs (default 30 s). */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
  /** The largest reply taken (bytes; default 16 MB, or LABDECK_PYTHON_MAX_REPLY): a call whose result is larger fails, naming the limit. */
  maxReplyBytes?: number;
}

export interface CallEvents {
  onEvent?(e: { kind: string; text: string; level?: string }): void;
}

type Pending = { resolve(v: unknown): void; reject(e: Error): void; onEvent?: CallEvents['onEvent'] };
/** What the host had, to build it again after a restart. */
type HistoryOp = { type: 'load_deck'; file: string } | { type: 'load_module'; file: string } | { type: 'connect'; class: string; name: string; kwargs: Record<string, unknown> };

export class PythonHost extends EventEmitter {
  readonly python: string;
  private readonly log: (line: string) => void;
  private readonly loadTimeoutMs: number;
  private readonly firstDelay: number;
  private readonly maxDelay: number;
  readonly maxReply: number;
  private child: ChildProcessWithoutNullStreams | null = null;
  private starting: Promise<HelloMessage> | null = null;
  private pending = new Map<number, Pending>();
  private nextId = 1;
  private history: HistoryOp[] = [];
  private stderrTail: string[] = [];
  private restartTimer: NodeJS.Timeout | null = null;
  private delay: number;
  private upSince = 0;
  private closed = false;
  /** Why the host is down, while it is. */
  offlineReason: string | null = null;
  hello: HelloMessage | null = null;

  constructor(opts: PythonHostOptions = {}) {
    super();
    this.python = pythonCommand(opts.python);
    this.log = opts.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.loadTimeoutMs = opts.loadTimeoutMs ?? 120_000;
    this.firstDelay = opts.restartDelayMs ?? 500;
    this.maxDelay = opts.maxRestartDelayMs ?? 30_000;
    this.delay = this.firstDelay;
    this.maxReply = opts.maxReplyBytes ?? maxReplyBytes();
  }

  /* ---------------------------------------------------------------- process */

  /** Start the process (once) and wait for its hello. */
  start(): Promise<HelloMessage> {
    if (this.closed) return Promise.reject(new LabError('unavailable', 'The Python host is shut down.'));
    this.starting ??= this.spawnHost().catch((e) => {
      this.starting = null;
      throw e;
    });
    return this.starting;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  private spawnHost(): Promise<HelloMessage> {
    return new Promise<HelloMessage>((resolve, reject) => {
      let child: ChildProcessWithoutNullStreams;
      const env = { ...process.env, PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8', PYTHONDONTWRITEBYTECODE: '1' };
      try {
        child = spawn(this.python, ['-X', 'utf8', HOST_SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'], env, windowsHide: true });
      } catch (e) {
        return reject(this.noPython(e));
      }
      this.child = child;
      this.stderrTail = [];
      let greeted = false;
      const onLine = (line: string) => {
        if (!line.trim()) return;
        let msg: HostMessage;
        try {
          msg = JSON.parse(line) as HostMessage;
        } catch {
          this.log(`[python] unreadable protocol line: ${line.slice(0, 200)}`);
          return;
        }
        if (msg.type === 'hello' && !greeted) {
          greeted = true;
          const problem = this.checkHello(msg);
          if (problem) {
            reject(problem);
            child.kill('SIGKILL');
            return;
          }
          this.hello = msg;
          this.upSince = Date.now();
          resolve(msg);
        } else this.onMessage(msg);
      };
      const out = new LineReader(onLine, { maxBytes: this.maxReply, onTooLong: (head, bytes) => this.tooLong(head, bytes) });
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      const err = new LineReader(
        (l) => {
          this.stderrTail.push(l);
          if (this.stderrTail.length > 20) this.stderrTail.shift();
          this.log(`[python] ${l}`);
        },
        { maxBytes: STDERR_LINE, onTooLong: (head, bytes) => this.log(`[python] ${head}… (a line of ${bytes} bytes, cut)`) },
      );
      child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
      child.stdin.on('error', () => undefined); // EPIPE when it died: reported by 'exit'
      child.on('error', (e) => {
        // the process could not be started (no such interpreter): there will be no 'exit'
        if (child.pid === undefined && this.child === child) this.child = null;
        if (!greeted) {
          greeted = true;
          reject(this.noPython(e));
        }
      });
      child.on('exit', (code, signal) => {
        if (this.child === child) this.child = null;
        const reason = this.exitReason(code, signal);
        if (!greeted) {
          greeted = true;
          reject(
            new LabError('invalid_input', `The Python host did not start (${this.python}): ${reason}. Name another interpreter with --python PATH (or LABDECK_PYTHON).`, [
              { field: 'python', message: reason },
            ]),
          );
          return;
        }
        this.onExit(reason);
      });
    });
  }

  private noPython(e: unknown): LabError {
    const code = (e as { code?: string }).code;
    const why = code === 'ENOENT' ? 'not found' : code === 'EACCES' ? 'not executable' : String((e as Error).message);
    return new LabError(
      'invalid_input',
      `No Python interpreter "${this.python}" (${why}): install Python 3.9 or newer, or name the one with your drivers' packages with --python PATH (or LABDECK_PYTHON).`,
      [{ field: 'python', message: why }],
    );
  }

  private checkHello(h: HelloMessage): LabError | null {
    if (h.protocol !== HOST_PROTOCOL_VERSION) {
      return new LabError('unavailable', `The Python host speaks protocol ${h.protocol}; this labdeck speaks ${HOST_PROTOCOL_VERSION}.`);
    }
    const [major, minor] = h.version.split('.').map(Number);
    if (major < 3 || (major === 3 && minor < 9)) {
      return new LabError('invalid_input', `${this.python} is Python ${h.version}; labdeck needs 3.9 or newer: pass another with --python PATH.`, [{ field: 'python', message: 'too old' }]);
    }
    return null;
  }

  private exitReason(code: number | null, signal: NodeJS.Signals | null): string {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const tail = this.stderrTail
      .filter((l) => l.trim())
      .slice(-3)
      .join(' | ');
    return `the Python host ${how}${tail ? ` (${tail.slice(0, 500)})` : ''}`;
  }

  private onExit(reason: string): void {
    this.starting = null;
    this.hello = null;
    const lost = [...this.pending.values()];
    this.pending.clear();
    for (const p of lost) p.reject(new HostLost(reason));
    if (this.closed) return;
    this.offlineReason = reason;
    // a host that stayed up a while starts again quickly; one that keeps dying waits longer each time
    if (Date.now() - this.upSince > 60_000) this.delay = this.firstDelay;
    const wait = this.delay;
    this.delay = Math.min(this.maxDelay, this.delay * 2);
    this.log(`[python] ${reason}; restarting it in ${wait} ms`);
    this.emit('offline', `${reason}; labdeck restarts it`);
    this.restartTimer = setTimeout(() => void this.restart(), wait);
  }

  private async restart(): Promise<void> {
    this.restartTimer = null;
    if (this.closed) return;
    try {
      await this.start();
    } catch (e) {
      this.log(`[python] restart failed: ${(e as Error).message}`);
      return this.onExit((e as Error).message);
    }
    const names: string[] = [];
    for (const op of this.history) {
      try {
        const v = (await this.send(op, op.type === 'connect' ? undefined : this.loadTimeoutMs)) as { instruments?: HostInstrument[]; name?: string };
        if (op.type === 'load_deck') names.push(...(v.instruments ?? []).map((i) => i.name));
        if (op.type === 'connect') names.push(op.name);
      } catch (e) {
        this.log(`[python] could not re-create ${op.type === 'connect' ? op.name : op.file} after the restart: ${(e as Error).message}`);
        if (!this.child) return; // died again: onExit scheduled the next try
      }
    }
    this.offlineReason = null;
    this.log(`[python] host restarted; back: ${names.join(', ') || 'no instruments'}`);
    this.emit('online', names);
  }

  /* --------------------------------------------------------------- messages */

  private onMessage(msg: HostMessage): void {
    if (msg.type === 'event') {
      const p = msg.call === null ? undefined : this.pending.get(msg.call);
      if (p?.onEvent) p.onEvent({ kind: msg.kind, text: msg.text, level: msg.level });
      else this.log(`[python] ${msg.text}`);
      return;
    }
    if (msg.type !== 'result' && msg.type !== 'error') return;
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.type === 'result') p.resolve(msg.value);
    else p.reject(new RemoteError(msg.error));
  }

  /**
   * A reply over the limit (its bytes were dropped as they came): the request it answers fails with the
   * limit named; the host goes on with the next line. A reply starts `{"id":N,` (python/labdeck_host/host.py).
   */
  private tooLong(head: string, bytes: number): void {
    const id = /^\{\s*"id"\s*:\s*(\d+)/.exec(head)?.[1];
    const p = id === undefined ? undefined : this.pending.get(Number(id));
    const limit = `${this.maxReply} bytes (LABDECK_PYTHON_MAX_REPLY)`;
    this.log(`[python] a reply of ${bytes} bytes is over the limit of ${limit}; ${p ? `request ${id} failed` : 'dropped'}`);
    if (!p) return;
    this.pending.delete(Number(id));
    p.reject(
      new RemoteError({
        kind: 'exception',
        type: 'ReplyTooLarge',
        message: `the reply is ${bytes} bytes, over the Python host's limit of ${limit}: return less (a summary, or a file's path)`,
      }),
    );
  }

  /** Send one request and wait for its reply. */
  private async send(req: HostRequest | OptimizerRequest | ParseWorkflowRequest, timeoutMs?: number, onEvent?: CallEvents['onEvent']): Promise<unknown> {
    // not sent at all (the host is down): unavailable, never in-doubt
    const down = () => new LabError('unavailable', `The Python host is down: ${this.offlineReason ?? 'not running'}.`);
    if (!this.child) {
      if (this.offlineReason) throw down();
      await this.start();
    }
    const child = this.child;
    if (!child) throw down();
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done =
        <T>(fn: (v: T) => void) =>
        (v: T) => {
          clearTimeout(timer);
          fn(v);
        };
      this.pending.set(id, { resolve: done(resolve), reject: done(reject), onEvent });
      if (timeoutMs) {
        timer = setTimeout(() => {
          if (!this.pending.delete(id)) return;
          reject(new LabError('invalid_input', `${'file' in req ? req.file : req.type} did not finish loading within ${Math.round(timeoutMs / 1000)} s; the Python host was restarted.`));
          child.kill('SIGKILL');
        }, timeoutMs);
      }
      this.write(child, `${JSON.stringify({ ...req, id })}\n`);
    });
  }

  /** Requests made in one turn of the event loop go to the host in one write (one pipe write per burst). */
  private write(child: ChildProcessWithoutNullStreams, line: string): void {
    if (!child.stdin.writableCorked) {
      child.stdin.cork();
      process.nextTick(() => child.stdin.uncork());
    }
    child.stdin.write(line);
  }

  /* -------------------------------------------------------------- operations */

  /** Run a deck file: its instruments, the classes they are instances of (connectable too), and its own modules (files under its folder). */
  async loadDeck(file: string, reserved: string[]): Promise<{ instruments: HostInstrument[]; classes: HostClass[]; modules: string[]; failed: HostFailedInstrument[] }> {
    const v = (await this.send({ type: 'load_deck', file, reserved }, this.loadTimeoutMs)) as {
      instruments: HostInstrument[];
      classes?: HostClass[];
      modules?: string[];
      failed?: HostFailedInstrument[];
    };
    this.history.push({ type: 'load_deck', file });
    return { instruments: v.instruments, classes: v.classes ?? [], modules: v.modules ?? [], failed: v.failed ?? [] };
  }

  /** Build an instrument of a deck file again (`ivoryos-deck/1`): it failed at load and the lab has fixed it. */
  retryInstrument(file: string, name: string): Promise<HostInstrument> {
    return this.send({ type: 'retry_instrument', file, name }, this.loadTimeoutMs) as Promise<HostInstrument>;
  }

  /** Import a module: its driver classes, and its optimizer classes (Optimizer subclasses). */
  async loadModule(file: string): Promise<{ classes: HostClass[]; optimizers: HostOptimizerClass[] }> {
    const v = (await this.send({ type: 'load_module', file }, this.loadTimeoutMs)) as { classes: HostClass[]; optimizers?: HostOptimizerClass[] };
    this.history = this.history.filter((op) => !(op.type === 'load_module' && op.file === file));
    this.history.push({ type: 'load_module', file });
    return { classes: v.classes, optimizers: v.optimizers ?? [] };
  }

  /** Create, call or drop a Python optimizer's state (core/hosts/python-optimizer.ts). */
  optimizerRequest(req: OptimizerRequest): Promise<unknown> {
    return this.send(req);
  }

  async connect(classId: string, name: string, kwargs: Record<string, unknown>): Promise<HostInstrument> {
    const v = (await this.send({ type: 'connect', class: classId, name, kwargs })) as HostInstrument;
    this.history.push({ type: 'connect', class: classId, name, kwargs });
    return v;
  }

  async dispose(name: string): Promise<void> {
    this.history = this.history.filter((op) => !(op.type === 'connect' && op.name === name));
    if (!this.child) return; // nothing to close in a host that is down; it will not be re-created
    await this.send({ type: 'dispose', name });
  }

  call(instrument: string, method: string, args: Record<string, unknown>, events?: CallEvents): Promise<unknown> {
    return this.send({ type: 'call', instrument, method, args }, undefined, events?.onEvent);
  }

  console(code: string, timeoutMs: number): Promise<ConsoleAnswer> {
    return this.send({ type: 'console', code, timeout_ms: timeoutMs }) as Promise<ConsoleAnswer>;
  }

  /** The workflow document of a Python script (not validated against the deck: the caller does that). */
  parseWorkflow(req: ParseWorkflowInput): Promise<unknown> {
    return this.send({ type: 'parse_workflow', ...req });
  }

  ping(): Promise<unknown> {
    return this.send({ type: 'ping' });
  }

  /** Ask the host to dispose everything and exit; kill it when it does not within `graceMs`. */
  async close(graceMs = 5_000): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.stdin.write(`${JSON.stringify({ type: 'shutdown', id: this.nextId++ })}\n`);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
