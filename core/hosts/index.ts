/**
 * Python decks, driver modules and plugin files for the deck (the deck's ForeignModules): a PythonHost
 * started on first use, whose instruments become devices, whose classes become drivers, and whose
 * crashes and restarts take those devices offline and back online.
 */
import { existsSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import type { InstrumentDriver, Optimizer } from '../contracts/index.js';
import type { ConsoleAnswer } from '../contracts/host.js';
import type { Deck, ForeignModules } from '../deck/index.js';
import { isDeckFile, readDeckFile, type FailedInstrument } from '../deck/deck-file.js';
import { LabError } from '../errors.js';
import { PythonHost, RemoteError, type PythonHostOptions } from './python.js';
import { ParsePool } from './python-parse.js';
import { pythonOptimizer } from './python-optimizer.js';
import { classDriver, instanceDriver, remoteInfo } from './remote.js';
import { identifierMethods } from './vet.js';
import { sentence } from '../text.js';

export { PythonHost, HostLost, RemoteError, pythonCommand } from './python.js';
export { remoteInfo } from './remote.js';
export { ParsePool, parseLimits } from './python-parse.js';

const cannotLoad = (file: string, message: string, data: Record<string, unknown> = {}) =>
  new LabError('invalid_input', `Cannot load ${file}: ${message}`, [{ field: 'filepath', message }], { file, ...data });

function checkPythonFile(file: string): string {
  const abs = resolve(file);
  if (!existsSync(abs)) throw cannotLoad(abs, 'no such file');
  if (!statSync(abs).isFile()) throw cannotLoad(abs, 'not a file');
  return abs;
}

/** A load that failed in Python → 400 with the Python error, its file and line. */
function loadFailure(file: string, e: unknown): unknown {
  if (!(e instanceof RemoteError)) return e;
  const p = e.payload;
  if (p.kind === 'conflict') {
    return new LabError(
      'conflict',
      `${file}: ${sentence(p.message)}`,
      (p.names ?? []).map((n) => ({ field: n, message: 'name taken' })),
      { names: p.names ?? [] },
    );
  }
  return cannotLoad(file, p.kind === 'load_error' ? p.message : `${p.type}: ${p.message}`, {
    ...(p.file ? { error_file: p.file } : {}),
    ...(p.line ? { line: p.line } : {}),
    ...(p.traceback ? { traceback: p.traceback } : {}),
  });
}

export class PythonModules implements ForeignModules {
  readonly host: PythonHost;
  /** Reads workflows written in Python, in processes of its own (never the host's: a runaway parse must not hold the instruments). */
  readonly parser: ParsePool;
  private readonly log: (line: string) => void;

  constructor(opts: PythonHostOptions = {}) {
    this.host = new PythonHost(opts);
    this.log = opts.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.parser = new ParsePool({ python: opts.python, log: opts.log });
  }

  handles(file: string): boolean {
    return extname(file).toLowerCase() === '.py' || isDeckFile(file);
  }

  /** Take the host's devices offline while it is down, and back online as it re-creates them. */
  attach(deck: Deck): void {
    const mine = () => deck.devicesWhere((d) => remoteInfo(d)?.host === this.host);
    this.host.on('offline', (reason: string) => deck.setOffline(mine(), reason));
    this.host.on('online', (names: string[]) => {
      const back = new Set(names);
      const all = mine();
      deck.setOffline(
        all.filter((n) => back.has(n)),
        null,
      );
      deck.setOffline(
        all.filter((n) => !back.has(n)),
        'not re-created after the Python host restarted (the server log says why)',
      );
    });
  }

  async loadDeck(file: string, reserved: string[]): Promise<{ file: string; devices: [string, InstrumentDriver][]; drivers: InstrumentDriver[]; sources: string[]; failed: FailedInstrument[] }> {
    const abs = checkPythonFile(file);
    if (isDeckFile(abs)) readDeckFile(abs); // an ivoryos-deck/1 file: its shape, 400 naming the field
    try {
      const { instruments, classes, modules, failed } = await this.host.loadDeck(abs, reserved);
      return {
        file: abs,
        devices: instruments.map((i) => identifierMethods(i, i.name, this.log)).map((i) => [i.name, instanceDriver(this.host, i)]),
        drivers: classes.map((c) => classDriver(this.host, identifierMethods(c, c.name, this.log))),
        sources: modules,
        failed: failed.map((f) => ({
          name: f.name,
          driver: instanceDriver(this.host, { name: f.name, class: f.class ?? 'not loaded', description: `Not loaded: ${f.stage} failed`, methods: [] }),
          failure: { stage: f.stage, error: f.error, ...(f.detail ? { detail: f.detail } : {}), import: f.import ?? null, class: f.class ?? null, file: abs },
        })),
      };
    } catch (e) {
      throw loadFailure(abs, e);
    }
  }

  /** Build a failed instrument of a deck file again; a failure keeps its stage (400 with stage and error). */
  async retry(file: string, name: string): Promise<InstrumentDriver> {
    try {
      return instanceDriver(this.host, await this.host.retryInstrument(file, name));
    } catch (e) {
      if (e instanceof RemoteError && e.payload.kind === 'load_error') {
        const p = e.payload as typeof e.payload & { stage?: string; detail?: string };
        throw new LabError('invalid_input', `${name} still does not load: ${p.stage ?? 'load'} failed: ${p.message}`, [{ field: 'instrument', message: `${p.stage ?? 'load'} failed` }], {
          stage: p.stage ?? null,
          failed: p.message,
          ...(p.detail ? { detail: p.detail } : {}),
        });
      }
      throw e;
    }
  }

  /** A driver module or plugin file: its classes become drivers, its Optimizer subclasses optimizers. */
  async loadModule(file: string): Promise<{ file: string; drivers: InstrumentDriver[]; optimizers: Optimizer[] }> {
    const abs = checkPythonFile(file);
    try {
      const { classes, optimizers } = await this.host.loadModule(abs);
      return { file: abs, drivers: classes.map((c) => classDriver(this.host, identifierMethods(c, c.name, this.log))), optimizers: optimizers.map((o) => pythonOptimizer(this.host, o)) };
    } catch (e) {
      throw loadFailure(abs, e);
    }
  }

  console(code: string, timeoutMs: number): Promise<ConsoleAnswer> {
    return this.host.console(code, timeoutMs);
  }

  async close(): Promise<void> {
    await Promise.all([this.host.close(), this.parser.close()]);
  }
}
