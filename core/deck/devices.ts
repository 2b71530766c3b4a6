/**
 * The deck's devices: what is on it (by name), how a device is made from a driver entry, named, connected,
 * marked offline and disposed, and the state every layer of the Deck shares (the devices, the driver
 * registry's map, the task locks). The bottom layer of the Deck (index.ts): registry.ts, loader.ts and call.ts
 * build on it in turn.
 */
import { EventEmitter } from 'node:events';
import type { InstrumentDriver, InstrumentSchema } from '../contracts/index.js';
import { LabError } from '../errors.js';
import { Mutex } from './mutex.js';
import { CallRecorder } from './recorder.js';
import { invalid, issueDetails } from './validate.js';
import { sentence } from '../text.js';
import { DEFAULT_BUSY_TIMEOUT_MS, MAX_NAME, NAME_RE, type DeckOptions, type Device, type DriverEntry, type ForeignModules } from './types.js';
import { errorMessage, ownerText } from './values.js';

export class DeckDevices extends EventEmitter {
  /** The one writer of this deck's call records (core/deck/recorder.ts); the runner records its steps with it too. */
  readonly recorder: CallRecorder;
  protected readonly busyTimeoutMs: number;
  protected readonly devices = new Map<string, Device>();
  protected readonly registry = new Map<string, DriverEntry>();
  protected readonly locks = new Map<string, string>();
  protected readonly abort = new AbortController();
  protected readonly foreign: ForeignModules | undefined;

  constructor(opts: DeckOptions) {
    super();
    this.recorder = new CallRecorder(opts.records);
    this.foreign = opts.foreign;
    this.busyTimeoutMs = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  }

  /* ---------------------------------------------------------------- reading */

  list(): InstrumentSchema[] {
    return [...this.devices.values()].map((d) => d.schema);
  }

  has(name: string): boolean {
    return this.devices.has(name);
  }

  schema(name: string): InstrumentSchema {
    return this.device(name).schema;
  }

  protected device(name: string): Device {
    const d = this.devices.get(name);
    if (d) return d;
    const known = [...this.devices.keys()];
    throw new LabError('not_found', `No instrument "${name}"; ${known.length ? `the deck has ${known.join(', ')}` : 'the deck is empty'}.`, [{ field: 'instrument', message: 'unknown instrument' }]);
  }

  protected checkOnline(dev: Device): void {
    if (dev.offline !== null) throw new LabError('unavailable', `${dev.name} is offline: ${sentence(dev.offline)}`, undefined, { instrument: dev.name });
  }

  /** When an instrument's object was last made (its incarnation, see Device.madeAt); null for no such device. */
  madeAt(name: string): Date | null {
    return this.devices.get(name)?.madeAt ?? null;
  }

  /**
   * Mark devices offline (`reason`) or back online (null). Used for instruments whose host process went
   * away; their calls answer 503 until then.
   */
  setOffline(names: string[], reason: string | null): void {
    let changed = false;
    for (const n of names) {
      const dev = this.devices.get(n);
      if (!dev || dev.offline === reason) continue;
      // back online: its host made it again (a Python host restarted, an agent reconnected)
      if (reason === null) dev.madeAt = new Date();
      dev.offline = reason;
      dev.schema = this.schemaOf(dev);
      changed = true;
    }
    if (changed) this.emit('change');
  }

  /** Names of the devices whose driver passes `test` (e.g. the ones a host process holds). */
  devicesWhere(test: (driver: InstrumentDriver) => boolean): string[] {
    return [...this.devices.values()].filter((d) => test(d.entry.driver)).map((d) => d.name);
  }

  protected checkLock(instrument: string, owner: string | undefined): void {
    const holder = this.locks.get(instrument);
    if (holder !== undefined && holder !== owner) {
      throw new LabError('busy', `${instrument} is in use by ${ownerText(holder)}.`, undefined, { instrument, owner: holder });
    }
  }

  protected async disposeInstance(dev: Device): Promise<void> {
    try {
      await dev.entry.driver.dispose?.(dev.instance);
    } catch (e) {
      this.emit('warning', { device: dev.name, message: `dispose failed: ${errorMessage(e)}` });
    }
  }

  protected parseOptions(entry: DriverEntry, raw: Record<string, unknown>, device: string): Record<string, unknown> {
    const r = entry.driver.options.safeParse(raw ?? {});
    if (r.success) return r.data as Record<string, unknown>;
    throw invalid(`Invalid options for ${device} (${entry.name})`, issueDetails(r.error.issues));
  }

  protected schemaOf(dev: Device): InstrumentSchema {
    return {
      name: dev.name,
      driver: dev.entry.name,
      description: dev.entry.description,
      source: dev.source,
      methods: dev.entry.methodSchemas,
      ...(dev.offline !== null ? { offline: dev.offline } : {}),
      ...(dev.host ? { host: dev.host } : {}),
      ...(dev.failure ? { failure: { stage: dev.failure.stage, error: dev.failure.error, ...(dev.failure.detail ? { detail: dev.failure.detail } : {}) } } : {}),
    };
  }

  protected addDevices(created: Device[]): string[] {
    for (const d of created) this.devices.set(d.name, d);
    this.emit('change');
    return created.map((d) => d.name);
  }

  /** Names a deck module may give its devices: identifiers, not reserved, not taken. */
  protected checkNewNames(names: string[], file: string): void {
    const bad = names.filter((n) => !NAME_RE.test(n));
    if (bad.length) throw new LabError('invalid_input', `Device names must be identifiers: ${bad.join(', ')}.`, [{ field: 'filepath', message: 'bad device name' }]);
    const reserved = names.filter((n) => this.reserved.has(n));
    if (reserved.length) {
      throw new LabError(
        'invalid_input',
        `${reserved.join(', ')} ${reserved.length > 1 ? 'are names' : 'is a name'} the web app uses for its own pages; rename ${reserved.length > 1 ? 'these devices' : 'the device'} in ${file}.`,
        reserved.map((n) => ({ field: n, message: 'reserved name' })),
      );
    }
    const taken = names.filter((n) => this.devices.has(n));
    if (taken.length) {
      throw new LabError(
        'conflict',
        `The deck already has ${taken.join(', ')}; rename the device${taken.length > 1 ? 's' : ''} in ${file}.`,
        taken.map((n) => ({ field: n, message: 'name taken' })),
      );
    }
  }

  protected async createDevice(name: string, source: Device['source'], entry: DriverEntry, own: DriverEntry | null, rawOptions: Record<string, unknown>, replaceable: boolean): Promise<Device> {
    const options = this.parseOptions(entry, rawOptions, name);
    let instance: unknown;
    try {
      instance = await entry.driver.create(options, { name });
    } catch (e) {
      if (e instanceof LabError && e.code === 'invalid_input') throw e;
      throw new LabError('instrument_error', `Could not start ${name} (${entry.name}): ${errorMessage(e)}`, undefined, { device: name });
    }
    const dev: Device = {
      name,
      source,
      entry,
      own,
      rawOptions: { ...rawOptions },
      instance,
      schema: undefined as never,
      mutex: new Mutex(),
      replaceable,
      pending: null,
      removed: false,
      offline: null,
      madeAt: new Date(),
    };
    dev.schema = this.schemaOf(dev);
    return dev;
  }

  /** Names a front end reserved for itself (see reserve). */
  protected readonly reserved = new Set<string>();

  /**
   * Names a front end needs for itself (the web app's `/instruments/new`, `/task`, …): devices may not take
   * them. A device that already has one is reported.
   */
  reserve(names: Iterable<string>): void {
    const clash = [...names].filter((n) => this.devices.has(n));
    for (const n of names) this.reserved.add(n);
    if (clash.length) {
      throw new LabError(
        'invalid_input',
        `The deck has a device named ${clash.map((n) => `"${n}"`).join(', ')}, which the web app uses for its own pages: rename it in the deck module.`,
        clash.map((n) => ({ field: n, message: 'reserved name' })),
      );
    }
  }

  /** Connect a new temporary device from a registered driver. */
  async connect(driver: string, deviceName: string, options: Record<string, unknown>): Promise<InstrumentSchema> {
    const entry = this.registry.get(driver);
    if (!entry) {
      const known = [...this.registry.keys()];
      throw new LabError('not_found', `No driver "${driver}"; ${known.length ? `known drivers: ${known.join(', ')}` : 'no drivers are loaded'}.`, [{ field: 'driver', message: 'unknown driver' }]);
    }
    if (typeof deviceName !== 'string' || !NAME_RE.test(deviceName) || deviceName.length > MAX_NAME) {
      throw new LabError('invalid_input', `device_name must be a name like "pump_2" (letters, digits, _ and -, at most ${MAX_NAME}), got ${JSON.stringify(deviceName.slice?.(0, 80) ?? deviceName)}.`, [
        { field: 'device_name', message: 'invalid name' },
      ]);
    }
    if (this.reserved.has(deviceName)) {
      throw new LabError('invalid_input', `"${deviceName}" is a name the web app uses for its own pages; choose another device_name.`, [{ field: 'device_name', message: 'reserved name' }]);
    }
    if (this.devices.has(deviceName)) {
      throw new LabError('conflict', `The deck already has a device named "${deviceName}".`, [{ field: 'device_name', message: 'name taken' }]);
    }
    const dev = await this.createDevice(deviceName, 'temporary', entry, null, options ?? {}, true);
    if (this.devices.has(deviceName)) {
      // connected concurrently under the same name while this one was starting
      await this.disposeInstance(dev);
      throw new LabError('conflict', `The deck already has a device named "${deviceName}".`, [{ field: 'device_name', message: 'name taken' }]);
    }
    this.devices.set(deviceName, dev);
    this.emit('change');
    return dev.schema;
  }
}
