/**
 * PluginHost: discovers plugin modules in folders, loads them (jiti, see ./loader.ts), registers what they
 * export, watches the folders and reloads a file when it changes.
 *
 * A plugin folder holds modules (`*.ts`, `*.js`, `*.mjs`) at its top level, and packages as sub-folders
 * with an `index.ts|js|mjs`. Files in other sub-folders are helpers: they are loaded only through the
 * modules that import them (a change to a file inside a package folder reloads the package).
 *
 * What a module exports is sorted by kind. `instrument`: defineInstrument results, and plain classes with
 * public methods in modules that export no tagged item (zero-config); these go to the Deck's driver
 * registry (origin 'plugin'). `optimizer`: values tagged with Symbol.for('labdeck.optimizer') (the future
 * defineOptimizer), kept in `registry('optimizer')`. More kinds can be passed in `kinds`. A `.py` file goes to
 * the foreign loader (the Python host): its classes become drivers, its `Optimizer` subclasses optimizers.
 *
 * Errors are isolated per file: a module that fails to load or to pass its checks is reported in
 * `errors()` (and by an 'error' event when someone listens), and the last good version of it stays
 * registered. Events: 'reload' { file, drivers, items, removed? }, 'error' { file, message }.
 *
 * Removing a file unregisters its drivers. Deck devices built from them fall back to the driver their deck
 * module declared; temporary devices of a removed driver are disposed and removed from the deck once no
 * task holds them (immediately when free).
 */
import { EventEmitter } from 'node:events';
import { defineOptimizer, type InstrumentDriver, type Optimizer, type OptimizerDefinition, type ZodObjectAny } from '../contracts/index.js';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import type { FSWatcher } from 'chokidar';
import type { Deck, ForeignModules } from '../deck/index.js';
import { errorText } from '../deck/util.js';
import { findDrivers, isOwnCompiled, loadModule, type LoadedModule } from './loader.js';

export { loadModule, findDrivers, checkModuleFile } from './loader.js';

export const OPTIMIZER_TAG = Symbol.for('labdeck.optimizer');

const PLUGIN_EXTENSIONS = ['.ts', '.js', '.mjs', '.py'];
const INDEX_FILES = [...PLUGIN_EXTENSIONS.filter((e) => e !== '.py').map((e) => `index${e}`), '__init__.py'];

/** A kind of plugin export other than instruments (which the host hands to the Deck itself). */
export interface PluginKind {
  kind: string;
  /** The item's name when `value` is of this kind, else null. */
  detect(value: unknown): string | null;
  /** Check an item at load (contract version, schemas); throws to fail the file, keeping its last good version. */
  check?(value: unknown): unknown;
  /** Called with a file's current items of this kind after it (re)loads, and with [] when it is removed. */
  replace?(file: string, items: { name: string; value: unknown }[]): void;
}

export interface PluginHostOptions {
  deck: Deck;
  dirs: string[];
  /** Watch the folders and reload on change (chokidar). */
  watch?: boolean;
  /** Quiet time after the last change to a file before it is reloaded, ms (default 100). */
  debounceMs?: number;
  /** chokidar awaitWriteFinish stability threshold, ms (default 200). */
  stabilityMs?: number;
  /** Extra kinds (an `optimizer` kind is built in). */
  kinds?: PluginKind[];
  /** Loads plugin files of another language (`.py`): their classes become instrument drivers, or optimizers. */
  foreign?: ForeignPlugins;
}

/** A loader of plugin files in another language, whose files may provide optimizers too (Python's Optimizer subclasses). */
export interface ForeignPlugins extends ForeignModules {
  loadModule(file: string): Promise<{ file: string; drivers: InstrumentDriver[]; optimizers?: Optimizer[] }>;
}

export interface PluginItem {
  file: string;
  kind: string;
  name: string;
}

export interface PluginError {
  file: string;
  message: string;
}

export interface ReloadEvent {
  file: string;
  /** Instrument driver names the file now provides. */
  drivers: string[];
  /** Every item the file now provides, all kinds. */
  items: PluginItem[];
  removed?: boolean;
}

const tagged = (tag: symbol) => (v: unknown) => {
  if (!v || (typeof v !== 'object' && typeof v !== 'function')) return null;
  if ((v as Record<symbol, unknown>)[tag] !== true) return null;
  const name = (v as { name?: unknown }).name;
  return typeof name === 'string' && name ? name : null;
};

/** The plugin modules of a folder: its top-level module files and its packages' index files. */
export function discoverPlugins(dir: string): string[] {
  const abs = resolve(dir);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) return [];
  const out: string[] = [];
  // by character code, as `ls` sorts in the C locale: the same on every machine, and without loading ICU's
  // collation at start-up (its first use costs ~13 ms)
  for (const ent of readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (ent.name.startsWith('.') || ent.name === 'node_modules') continue;
    const p = join(abs, ent.name);
    if (ent.isFile() && isPluginFileName(ent.name)) out.push(p);
    else if (ent.isDirectory()) {
      const index = INDEX_FILES.map((f) => join(p, f)).find((f) => existsSync(f));
      if (index) out.push(index);
    }
  }
  return out;
}

function isPluginFileName(name: string): boolean {
  if (extname(name) === '.py') return !/^(test_.*|.*_test|conftest|setup|__init__)\.py$/.test(name);
  return PLUGIN_EXTENSIONS.includes(extname(name)) && !name.endsWith('.d.ts') && !/\.(test|spec)\.[mc]?[jt]s$/.test(name);
}

interface Loaded {
  items: PluginItem[];
  drivers: string[];
}

export class PluginHost extends EventEmitter {
  readonly deck: Deck;
  readonly dirs: string[];
  private readonly watchEnabled: boolean;
  private readonly debounceMs: number;
  private readonly stabilityMs: number;
  private readonly kinds: PluginKind[];
  private readonly foreign: ForeignPlugins | undefined;
  private readonly loaded = new Map<string, Loaded>();
  private readonly errs = new Map<string, PluginError>();
  private readonly registries = new Map<string, Map<string, { value: unknown; file: string }>>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private watcher: FSWatcher | null = null;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(opts: PluginHostOptions) {
    super();
    this.deck = opts.deck;
    this.dirs = [...new Set(opts.dirs.map((d) => resolve(d)))];
    this.watchEnabled = opts.watch ?? false;
    this.debounceMs = opts.debounceMs ?? 100;
    this.stabilityMs = opts.stabilityMs ?? 200;
    this.foreign = opts.foreign;
    // an optimizer is checked again at load, as instrument drivers are: a hand-tagged object or one written
    // for another contract version fails its file with the checker's message
    const checkOptimizer = (v: unknown) => defineOptimizer({ ...(v as OptimizerDefinition<ZodObjectAny>) });
    this.kinds = [{ kind: 'optimizer', detect: tagged(OPTIMIZER_TAG), check: checkOptimizer }, ...(opts.kinds ?? [])];
    for (const k of this.kinds) this.registries.set(k.kind, new Map());
  }

  /** Load every plugin of every folder, then start watching (when asked). Missing folders are skipped. */
  async start(): Promise<void> {
    const files = this.dirs.flatMap((dir) => discoverPlugins(dir));
    // labdeck's own compiled plugins are imported all at once, so that their file reads overlap (start-up,
    // issue 16); each file is still checked and registered in turn, in the folders' order
    const early = new Map(files.filter(isOwnCompiled).map((f) => [f, loadModule(f)]));
    for (const p of early.values()) p.catch(() => undefined); // its failure is reported when its turn comes
    for (const file of files) await this.enqueue(file, early.get(file));
    if (this.watchEnabled && !this.watcher && !this.closed) await this.startWatching();
  }

  /** Files that failed to load or to pass their checks, with the loader's message. */
  errors(): PluginError[] {
    return [...this.errs.values()];
  }

  /** Everything the plugins provide, all kinds. */
  list(): PluginItem[] {
    return [...this.loaded.values()].flatMap((l) => l.items);
  }

  /** The items of one non-instrument kind, e.g. registry('optimizer'): name → { value, file }. */
  registry(kind: string): ReadonlyMap<string, { value: unknown; file: string }> {
    return this.registries.get(kind) ?? new Map();
  }

  /** Load (or reload) one file now. Resolves when done; failures are recorded, not thrown. */
  reload(file: string): Promise<void> {
    return this.enqueue(resolve(file));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    const w = this.watcher;
    this.watcher = null;
    if (w) await w.close();
    await this.chain;
  }

  /* ------------------------------------------------------------- internals */

  /** Loads and removals run one at a time, in order. */
  private enqueue(file: string, imported?: Promise<LoadedModule>): Promise<void> {
    const run = () => (existsSync(file) ? this.loadFile(file, imported) : this.removeFile(file));
    this.chain = this.chain.then(run, run);
    return this.chain;
  }

  private fail(file: string, e: unknown): void {
    const message = errorText(e);
    const err = { file, message };
    this.errs.set(file, err);
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  /** Load `file` (`imported`: its module, already on its way). */
  private async loadFile(file: string, imported?: Promise<LoadedModule>): Promise<void> {
    if (extname(file) === '.py') return this.loadForeignFile(file);
    let mod: LoadedModule;
    try {
      mod = await (imported ?? loadModule(file));
    } catch (e) {
      return this.fail(file, e); // the last good version stays registered
    }
    let loaded: Loaded;
    try {
      const drivers = findDrivers(mod, 'untagged-only');
      const byKind = this.itemsByKind(file, mod.exports);
      this.deck.setFileDrivers(file, 'plugin', drivers);
      loaded = this.apply(
        file,
        drivers.map((d) => d.name),
        byKind,
      );
    } catch (e) {
      return this.fail(file, e);
    }
    await this.commit(file, loaded);
  }

  /** A file's items of each kind (checked), refusing a name another file already provides. */
  private itemsByKind(file: string, exports: Record<string, unknown>): Map<PluginKind, { name: string; value: unknown }[]> {
    const byKind = new Map<PluginKind, { name: string; value: unknown }[]>();
    for (const k of this.kinds) {
      const items: { name: string; value: unknown }[] = [];
      for (const [exp, value] of Object.entries(exports)) {
        const name = k.detect(value);
        if (name === null || items.some((i) => i.value === value)) continue;
        const other = this.registries.get(k.kind)!.get(name);
        if (other && other.file !== file) throw new Error(`export "${exp}": the ${k.kind} "${name}" is already provided by ${other.file}`);
        items.push({ name, value: k.check ? k.check(value) : value });
      }
      byKind.set(k, items);
    }
    return byKind;
  }

  /** Register a file's items of every kind; what it now provides. */
  private apply(file: string, drivers: string[], byKind: Map<PluginKind, { name: string; value: unknown }[]>): Loaded {
    const items: PluginItem[] = drivers.map((name) => ({ file, kind: 'instrument', name }));
    for (const [k, list] of byKind) {
      this.applyKind(k, file, list);
      for (const i of list) items.push({ file, kind: k.kind, name: i.name });
    }
    return { items, drivers };
  }

  /** A file loaded: it is no longer in error, and its devices are replaced before anyone hears of it. */
  private async commit(file: string, loaded: Loaded): Promise<void> {
    this.errs.delete(file);
    this.loaded.set(file, loaded);
    await this.deck.settled();
    this.emit('reload', { file, drivers: loaded.drivers, items: loaded.items } satisfies ReloadEvent);
  }

  /** A Python plugin: its classes become drivers or optimizers; a file that fails to import keeps its last good version. */
  private async loadForeignFile(file: string): Promise<void> {
    let loaded: Loaded;
    try {
      if (!this.foreign?.handles(file)) throw new Error(`${file}: no loader for this kind of file here`);
      const { drivers: found, optimizers = [] } = await this.foreign.loadModule(file);
      const byKind = this.itemsByKind(file, Object.fromEntries(optimizers.map((o) => [o.name, o])));
      loaded = this.apply(file, this.deck.setFileDrivers(file, 'plugin', found), byKind);
    } catch (e) {
      return this.fail(file, e);
    }
    await this.commit(file, loaded);
  }

  private applyKind(k: PluginKind, file: string, list: { name: string; value: unknown }[]): void {
    const reg = this.registries.get(k.kind)!;
    for (const [name, v] of [...reg]) if (v.file === file) reg.delete(name);
    for (const i of list) reg.set(i.name, { value: i.value, file });
    k.replace?.(file, list);
  }

  private async removeFile(file: string): Promise<void> {
    const had = this.loaded.has(file) || this.errs.has(file);
    this.errs.delete(file);
    if (!this.loaded.has(file)) {
      if (had) this.emit('reload', { file, drivers: [], items: [], removed: true } satisfies ReloadEvent);
      return;
    }
    this.loaded.delete(file);
    this.deck.removeFileDrivers(file);
    for (const k of this.kinds) this.applyKind(k, file, []);
    await this.deck.settled();
    this.emit('reload', { file, drivers: [], items: [], removed: true } satisfies ReloadEvent);
  }

  private async startWatching(): Promise<void> {
    const dirs = this.dirs.filter((d) => existsSync(d));
    if (dirs.length === 0) return;
    const { watch } = await import('chokidar'); // only when watching (`lab serve --no-watch`, `lab run` never load it)
    if (this.closed) return; // closed while it loaded
    const w = watch(dirs, {
      ignoreInitial: true,
      depth: 1,
      ignored: (p: string) => /(^|[\\/])(node_modules|\.[^\\/]+)([\\/]|$)/.test(relative(dirname(p), p)) || p.endsWith('.map'),
      awaitWriteFinish: { stabilityThreshold: this.stabilityMs, pollInterval: Math.max(10, Math.min(50, this.stabilityMs / 4)) },
    });
    this.watcher = w;
    w.on('all', (_event: string, path: string) => this.onFsEvent(path));
    w.on('error', (e: unknown) => this.fail(dirs.join(', '), e));
    await new Promise<void>((res) => w.once('ready', () => res()));
  }

  /** Which plugin module a changed path belongs to, if any. */
  private pluginFor(path: string): string | null {
    const p = resolve(path);
    for (const dir of this.dirs) {
      const rel = relative(dir, p);
      if (!rel || rel.startsWith('..')) continue;
      const parts = rel.split(sep);
      if (parts.length === 1) {
        if (isPluginFileName(parts[0])) return p;
        // a package folder appeared or went away
        const known = [...this.loaded.keys(), ...this.errs.keys()].find((f) => dirname(f) === p);
        if (known) return known;
        return INDEX_FILES.map((f) => join(p, f)).find((f) => existsSync(f)) ?? null;
      }
      if (parts.length === 2) {
        const pkg = join(dir, parts[0]);
        if (INDEX_FILES.includes(parts[1])) return p;
        const index = INDEX_FILES.map((f) => join(pkg, f)).find((f) => existsSync(f) || this.loaded.has(f));
        return index ?? null;
      }
    }
    return null;
  }

  private onFsEvent(path: string): void {
    if (this.closed) return;
    const file = this.pluginFor(path);
    if (!file) return;
    const t = this.timers.get(file);
    if (t) clearTimeout(t);
    this.timers.set(
      file,
      setTimeout(() => {
        this.timers.delete(file);
        if (!this.closed) void this.enqueue(file);
      }, this.debounceMs),
    );
  }
}
