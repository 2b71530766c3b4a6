/**
 * The Deck's registry of connectable drivers (plugins, imported modules, a deck's own drivers), each compiled
 * once into its methods' schemas, and what a new version of a driver does to the live devices built from it:
 * replaced (the old instance disposed first, then a new one with the same options), never under a task's lock
 * (the replacement waits for `unlock`). A layer of the Deck (index.ts) over devices.ts.
 */
import type { InstrumentDriver, MethodSchema, ZodObjectAny } from '../contracts/index.js';
import { LabError } from '../errors.js';
import { remoteInfo } from '../hosts/remote.js';
import { inferredInfo } from './introspect.js';
import { DeckDevices } from './devices.js';
import { DEFAULT_SAFETY, type CompiledMethod, type Device, type DriverEntry, type DriverInfo, type DriverOrigin, type Pending } from './types.js';
import { errorMessage, toJsonSchema } from './values.js';

export class DeckRegistry extends DeckDevices {
  private readonly compiled = new WeakMap<InstrumentDriver, DriverEntry>();
  private readonly ops = new Set<Promise<void>>();

  drivers(): DriverInfo[] {
    return [...this.registry.values()]
      .map((e) => ({
        name: e.name,
        description: e.description,
        version: e.version,
        origin: e.origin as DriverOrigin,
        file: e.file ?? '',
        options: e.optionsSchema,
        inferred: e.inferred,
        inferredFields: e.inferredFields,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /* ------------------------------------------------------------------ locks */

  lock(instruments: string[], owner: string): void {
    for (const i of instruments) this.checkLock(i, owner);
    for (const i of instruments) this.locks.set(i, owner);
  }

  unlock(owner: string): void {
    const freed: string[] = [];
    for (const [i, o] of this.locks) if (o === owner) freed.push(i);
    for (const i of freed) this.locks.delete(i);
    for (const i of freed) {
      const dev = this.devices.get(i);
      if (dev?.pending) this.schedule(dev);
    }
  }

  /** Which owner holds a lock on `instrument`, if any. */
  lockedBy(instrument: string): string | undefined {
    return this.locks.get(instrument);
  }

  /* ---------------------------------------------------------------- drivers */

  protected compile(driver: InstrumentDriver, origin: DriverEntry['origin'], file: string | null): DriverEntry {
    const cached = this.compiled.get(driver);
    if (cached && cached.origin === origin && cached.file === file) return cached;
    const info = inferredInfo(driver);
    const remote = remoteInfo(driver);
    const methods = new Map<string, CompiledMethod>();
    const methodSchemas: MethodSchema[] = [];
    Object.entries(driver.methods).forEach(([name, def], order) => {
      const params = def.params as ZodObjectAny;
      const catchall = params.def.catchall;
      const keys = !catchall || catchall._zod.def.type === 'never' ? new Set(Object.keys(params.shape)) : null;
      const mi = info?.methods[name];
      const rm = remote?.methods[name];
      const returns = rm ? rm.returns : def.returns ? toJsonSchema(def.returns, 'output') : undefined;
      const schema: MethodSchema = {
        name,
        description: def.description ?? '',
        safety: def.safety ?? DEFAULT_SAFETY,
        hidden: def.hidden ?? false,
        order,
        params: rm ? rm.params : toJsonSchema(params, 'input'),
        ...(returns ? { returns } : {}),
        ...(def.consumes?.length ? { consumes: def.consumes } : {}),
        inferred: rm?.inferred ?? mi?.inferred ?? false,
        inferredFields: rm?.inferredFields ?? mi?.fields ?? [],
      };
      methods.set(name, { schema, params, keys, run: def.run });
      methodSchemas.push(schema);
    });
    const entry: DriverEntry = {
      name: driver.name,
      description: driver.description ?? '',
      version: driver.version,
      origin,
      file,
      driver,
      optionsSchema: remote?.options ?? toJsonSchema(driver.options, 'input'),
      // a remote (Python) driver is inferred when any of it is: its options or a method not declared in full
      inferred: !!info || (!!remote && (remote.optionsFields.length > 0 || Object.values(remote.methods).some((m) => m.inferred))),
      inferredFields: remote?.optionsFields ?? info?.optionsFields ?? [],
      methods,
      methodSchemas,
    };
    this.compiled.set(driver, entry);
    return entry;
  }

  /**
   * Set the drivers a file provides (a plugin, or an imported API module), replacing what that file
   * provided before. Drivers that are new versions replace live devices built from them; drivers the file
   * no longer has are unregistered (see `retire`). Throws LabError conflict when another file already
   * provides a driver of the same name.
   */
  setFileDrivers(file: string, origin: DriverOrigin, drivers: InstrumentDriver[]): string[] {
    const names = new Set<string>();
    for (const d of drivers) {
      if (names.has(d.name)) throw new LabError('conflict', `${file} defines the driver "${d.name}" twice.`, [{ field: 'filepath', message: `duplicate driver ${d.name}` }]);
      names.add(d.name);
      const other = this.registry.get(d.name);
      if (other && other.file !== file) {
        throw new LabError('conflict', `The driver "${d.name}" is already provided by ${other.file ?? 'another module'}.`, [{ field: 'filepath', message: `driver ${d.name} exists` }]);
      }
    }
    const entries = drivers.map((d) => this.compile(d, origin, file));
    for (const e of entries) {
      const before = this.registry.get(e.name);
      this.registry.set(e.name, e);
      if (before === e) continue;
      for (const dev of this.devices.values()) {
        if (dev.replaceable && dev.entry.name === e.name && dev.entry !== e) this.replace(dev, e);
      }
    }
    for (const [name, e] of [...this.registry]) {
      if (e.file === file && !names.has(name)) this.retire(name);
    }
    this.emit('drivers');
    return [...names];
  }

  /** Forget every driver a file provided (the file was removed). */
  removeFileDrivers(file: string): void {
    this.setFileDrivers(file, 'plugin', []);
  }

  /**
   * A driver is gone. Deck devices that brought their own driver (a DeviceSpec) go back to it; other
   * devices of that driver keep running until they are free (unlocked), then are disposed and removed.
   */
  private retire(name: string): void {
    this.registry.delete(name);
    for (const dev of this.devices.values()) {
      if (dev.entry.name !== name || !dev.replaceable) continue;
      this.replace(dev, dev.own ?? 'remove');
    }
  }

  private replace(dev: Device, target: Pending): void {
    dev.pending = target;
    if (!this.locks.has(dev.name)) this.schedule(dev);
  }

  private schedule(dev: Device): void {
    const op = this.applyPending(dev).catch((e) => {
      this.emit('warning', { device: dev.name, message: errorMessage(e) });
    });
    this.ops.add(op);
    void op.finally(() => this.ops.delete(op));
  }

  private async applyPending(dev: Device): Promise<void> {
    await dev.mutex.acquire(); // wait for the call in flight
    try {
      const target = dev.pending;
      if (!target || dev.removed || this.locks.has(dev.name)) return; // done already, or locked meanwhile
      dev.pending = null;
      if (target === 'remove') {
        await this.disposeInstance(dev);
        dev.removed = true;
        this.devices.delete(dev.name);
        this.emit('change');
        return;
      }
      let options: Record<string, unknown>;
      try {
        options = this.parseOptions(target, dev.rawOptions, dev.name);
      } catch (e) {
        this.emit('warning', { device: dev.name, driver: target.name, message: `kept the previous version: ${errorMessage(e)}` });
        return;
      }
      const previous = dev.entry;
      await this.disposeInstance(dev);
      try {
        dev.instance = await target.driver.create(options, { name: dev.name });
        dev.entry = target;
      } catch (e) {
        this.emit('warning', { device: dev.name, driver: target.name, message: `the new version failed to start (${errorMessage(e)}); restarting the previous one` });
        try {
          dev.instance = await previous.driver.create(this.parseOptions(previous, dev.rawOptions, dev.name), { name: dev.name });
        } catch (e2) {
          dev.removed = true;
          this.devices.delete(dev.name);
          this.emit('warning', { device: dev.name, message: `removed: the previous version failed to start too (${errorMessage(e2)})` });
        }
      }
      dev.madeAt = new Date(); // disposed and made again
      dev.schema = this.schemaOf(dev);
      this.emit('change');
    } finally {
      dev.mutex.release();
    }
  }

  /** Wait until queued device replacements/removals are done (those not waiting for an unlock). */
  async settled(): Promise<void> {
    while (this.ops.size) await Promise.allSettled([...this.ops]);
  }
}
