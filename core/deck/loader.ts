/**
 * Loading into the Deck: deck modules (their exports become devices), API modules (their drivers become
 * connectable), decks in another language (their host keeps the instances), a deck file's instruments that
 * failed and their retry, and the instruments another PC serves (`lab agent`). A layer of the Deck (index.ts)
 * over registry.ts.
 */
import { isDeviceSpec, type InstrumentDriver, type InstrumentSchema } from '../contracts/index.js';
import { LabError } from '../errors.js';
import { findDrivers, loadModule } from '../plugins/loader.js';
import { introspectObject, moduleSource, sourceOrder } from './introspect.js';
import { failureReason, type FailedInstrument, type InstrumentFailure } from './deck-file.js';
import { DeckRegistry } from './registry.js';
import { NAME_RE, type Device, type ForeignModules } from './types.js';
import { errorMessage } from './values.js';
import { classDriverOf, deviceExports } from './exports.js';

export class DeckLoader extends DeckRegistry {
  /**
   * Instruments another PC serves (`lab agent`, DESIGN.md §11): each becomes a device of this deck, named as
   * the agent names it, calls going to the agent. Refused whole when a name is taken or reserved.
   */
  async addAgentDevices(agent: string, devices: [string, InstrumentDriver][]): Promise<string[]> {
    this.checkNewNames(
      devices.map(([n]) => n),
      `the agent ${agent}`,
    );
    const created: Device[] = [];
    for (const [name, driver] of devices) {
      const dev = await this.createDevice(name, 'deck', this.compile(driver, 'deck', `agent:${agent}`), null, {}, false);
      dev.host = agent;
      dev.schema = this.schemaOf(dev);
      created.push(dev);
    }
    return this.addDevices(created);
  }

  /** An agent's device takes what the agent describes now (it connected again): calls validate against that. */
  replaceAgentDriver(name: string, driver: InstrumentDriver): void {
    const dev = this.devices.get(name);
    if (!dev?.host) return;
    dev.entry = this.compile(driver, 'deck', `agent:${dev.host}`);
    dev.madeAt = new Date();
    dev.schema = this.schemaOf(dev);
    this.emit('change');
  }

  /** Forget devices (an agent's, when what it serves changed); their calls in flight finish first. */
  removeAgentDevices(names: string[]): void {
    let changed = false;
    for (const n of names) changed = this.devices.delete(n) || changed;
    if (changed) this.emit('change');
  }

  /* --------------------------------------------------------- decks, devices */

  /** The startup deck module: its exports become devices (source 'deck'). */
  loadDeck(file: string): Promise<string[]> {
    return this.addDeckModule(file, 'deck');
  }

  /** A deck module imported at run time: its exports become temporary devices. */
  importDeck(file: string): Promise<string[]> {
    return this.addDeckModule(file, 'temporary');
  }

  /** An API module: its drivers (defineInstrument results and plain classes) become connectable. */
  async importModule(file: string): Promise<string[]> {
    const foreign = this.foreign?.handles(file);
    const mod = foreign ? null : await loadModule(file);
    const loaded = mod ? { file: mod.file, drivers: findDrivers(mod, 'always') } : await this.foreign!.loadModule(file);
    if (loaded.drivers.length === 0) {
      const what = foreign ? 'define classes with public methods' : 'export defineInstrument(...) results or classes with public methods';
      throw new LabError('invalid_input', `No instrument drivers found in ${loaded.file}: ${what}.`, [{ field: 'filepath', message: 'no instrument drivers found' }], { file: loaded.file });
    }
    return this.setFileDrivers(loaded.file, 'imported', loaded.drivers);
  }

  private async addDeckModule(file: string, source: Device['source']): Promise<string[]> {
    if (this.foreign?.handles(file)) return this.addForeignDeck(file, source);
    const mod = await loadModule(file);
    const src = moduleSource(mod.file);
    const exported = deviceExports(mod.exports, mod.file);
    const order = sourceOrder(
      exported.map(([n]) => n),
      src,
    );
    const found = order.map((n) => exported.find(([k]) => k === n)!);
    if (found.length === 0) {
      throw new LabError(
        'invalid_input',
        `No instruments found in ${mod.file}: export devices made with driver.with(options), or objects with methods.`,
        [{ field: 'filepath', message: 'no instruments found' }],
        { file: mod.file },
      );
    }
    this.checkNewNames(
      found.map(([n]) => n),
      mod.file,
    );
    const created: Device[] = [];
    /** The drivers of the deck's devices no plugin provides: connectable too. */
    const deckDrivers: InstrumentDriver[] = [];
    try {
      for (const [name, value] of found) {
        if (isDeviceSpec(value)) {
          const own = this.compile(value.driver, 'deck', mod.file);
          const entry = this.registry.get(value.driver.name) ?? own;
          if (entry === own && !deckDrivers.includes(value.driver)) deckDrivers.push(value.driver);
          created.push(await this.createDevice(name, source, entry, own, value.options, true));
        } else {
          const driver = introspectObject(value as object, { source: src });
          const entry = this.compile(driver, 'deck', mod.file);
          created.push(await this.createDevice(name, source, entry, null, {}, false));
          const cls = classDriverOf(value, src);
          if (cls && !deckDrivers.some((d) => d.name === cls.name)) deckDrivers.push(cls);
        }
      }
    } catch (e) {
      for (const d of created) await this.disposeInstance(d);
      if (e instanceof LabError) throw e;
      throw new LabError('invalid_input', `Cannot load ${mod.file}: ${errorMessage(e)}`, [{ field: 'filepath', message: errorMessage(e) }], { file: mod.file });
    }
    const names = this.addDevices(created);
    this.addDeckDrivers(mod.file, deckDrivers);
    return names;
  }

  /**
   * A deck's own drivers (of its devices) become connectable, so Connect device offers another of what the
   * deck has. A driver of the same name from elsewhere (a plugin) keeps its place: it is connectable already.
   */
  private addDeckDrivers(file: string, drivers: InstrumentDriver[]): void {
    const fresh = drivers.filter((d, i) => drivers.findIndex((x) => x.name === d.name) === i && (this.registry.get(d.name)?.file ?? file) === file);
    if (fresh.length) this.setFileDrivers(file, 'deck', fresh);
  }

  /** The modules each deck file loaded of its own (a Python deck's files under its folder), by deck file. */
  private readonly sources = new Map<string, string[]>();

  /** A deck file and its own modules: what to watch for a change that needs the deck loaded again. */
  sourcesOf(file: string): string[] {
    return [file, ...(this.sources.get(file) ?? [])];
  }

  /** What a deck or driver module put in the lab: its devices and the drivers it made connectable (an import's answer). */
  addedBy(file: string): { instruments: string[]; drivers: string[] } {
    return {
      instruments: [...this.devices.values()].filter((d) => (d.own ?? d.entry).file === file).map((d) => d.name),
      drivers: [...this.registry.values()].filter((e) => e.file === file).map((e) => e.name),
    };
  }

  /** The file (as resolved when loaded) an import of `kind` that answered `names` came from; `given` when unknown. */
  fileOf(kind: 'module' | 'deck', names: string[], given: string): string {
    const d = kind === 'deck' ? this.devices.get(names[0]) : undefined;
    return (kind === 'module' ? this.registry.get(names[0])?.file : d && (d.own ?? d.entry).file) ?? given;
  }

  /** A deck in another language: its host runs it and keeps the instances; each becomes a device here. */
  private async addForeignDeck(file: string, source: Device['source']): Promise<string[]> {
    let loaded: Awaited<ReturnType<ForeignModules['loadDeck']>>;
    try {
      loaded = await this.foreign!.loadDeck(file, [...this.devices.keys(), ...this.reserved]);
    } catch (e) {
      // names the host refused: say why as for any deck (reserved by the web app, or taken)
      const names = e instanceof LabError ? e.data?.names : undefined;
      if (Array.isArray(names)) this.checkNewNames(names as string[], file);
      throw e;
    }
    const created: Device[] = [];
    try {
      for (const [name, driver] of loaded.devices) {
        created.push(await this.createDevice(name, source, this.compile(driver, 'deck', loaded.file), null, {}, false));
      }
      for (const f of loaded.failed ?? []) {
        if (typeof f.name === 'string' && NAME_RE.test(f.name) && !this.reserved.has(f.name) && !this.devices.has(f.name)) created.push(await this.failedDevice(f, source, loaded.file));
        else this.emit('warning', { device: String(f.name), message: `${loaded.file}: ${f.failure.stage} failed: ${f.failure.error}` });
      }
      if (created.length === 0) {
        throw new LabError(
          'invalid_input',
          `No instruments found in ${loaded.file}: create instances of your driver classes at the top level of the script.`,
          [{ field: 'filepath', message: 'no instruments found' }],
          { file: loaded.file },
        );
      }
      this.checkNewNames(
        created.map((d) => d.name),
        loaded.file,
      );
    } catch (e) {
      for (const d of created) await this.disposeInstance(d); // the host made them: forget them there too
      throw e;
    }
    const names = this.addDevices(created);
    this.addDeckDrivers(loaded.file, loaded.drivers ?? []);
    this.sources.set(loaded.file, loaded.sources ?? []);
    return names;
  }

  /** A deck file's instrument that did not load: listed, offline with its stage and error, until retried. */
  private async failedDevice(f: FailedInstrument, source: Device['source'], file: string): Promise<Device> {
    const dev = await this.createDevice(f.name, source, this.compile(f.driver, 'deck', file), null, {}, false);
    dev.failure = f.failure;
    dev.offline = failureReason(f.failure);
    dev.schema = this.schemaOf(dev);
    return dev;
  }

  /**
   * Build a deck file's failed instrument again (after the lab fixed its driver, cable or entry): on success
   * it is online with its methods; a failure keeps it offline with the new stage and error (and throws).
   */
  async retryInstrument(name: string): Promise<InstrumentSchema> {
    const dev = this.device(name);
    if (!dev.failure) throw new LabError('conflict', `${name} is loaded; only an instrument of a deck file that failed to load can be retried.`, [{ field: 'instrument', message: 'not failed' }]);
    if (!this.foreign?.retry) throw new LabError('unavailable', `${name} cannot be retried: no loader for ${dev.failure.file}.`);
    let driver: InstrumentDriver;
    try {
      driver = await this.foreign.retry(dev.failure.file, name);
    } catch (e) {
      const data = e instanceof LabError ? e.data : undefined;
      if (typeof data?.stage === 'string' && typeof data.failed === 'string') {
        dev.failure = { ...dev.failure, stage: data.stage as InstrumentFailure['stage'], error: data.failed, ...(typeof data.detail === 'string' ? { detail: data.detail } : {}) };
        this.setOffline([name], failureReason(dev.failure));
      }
      throw e;
    }
    dev.entry = this.compile(driver, 'deck', dev.failure.file);
    dev.instance = await driver.create({}, { name });
    dev.failure = undefined;
    dev.offline = null;
    dev.schema = this.schemaOf(dev);
    this.emit('change');
    return dev.schema;
  }
}
