/**
 * The deck: the live instrument instances (the deck module's devices plus temporary ones connected at run
 * time), their method schemas, and calls into them with validation, per-instrument serialisation, task
 * locks and one step record per call.
 *
 * It also holds the registry of connectable drivers (plugins and imported modules). When a driver is
 * registered again (a plugin file changed), live devices built from it are replaced: the old instance is
 * disposed first, then a new one is created with the same options. A device locked by a task is never
 * replaced under it: the replacement waits for `unlock`.
 *
 * Events: 'change' (the instrument set or a device's schema changed), 'drivers' (the driver registry
 * changed), 'log' ({ instrument, method, message } from ctx.log), 'warning' ({ device?, driver?, message }:
 * a replacement that could not be done as asked; never thrown).
 */
import { EventEmitter } from 'node:events';
import { isDeviceSpec, type CallContext, type InstrumentDriver, type InstrumentSchema, type MethodSchema, type Safety, type ZodObjectAny } from '../contracts/index.js';
import { LabError, isStoreFault } from '../errors.js';
import type { NewStep } from '../store/types.js';
import { findDrivers, loadModule } from '../plugins/loader.js';
import { LABWARE_VIEW, remoteInfo, type LabwareView, type RemoteHandle } from '../hosts/remote.js';
import { inferredInfo, introspectObject, moduleSource, sourceOrder } from './introspect.js';
import { Mutex } from './mutex.js';
import { invalid, issueDetails } from './validate.js';
import { sentence } from '../text.js';
import { failureReason, type FailedInstrument, type InstrumentFailure } from './deck-file.js';

export { coerceFormArgs } from './form.js';
export { introspectClass, introspectObject } from './introspect.js';

export {
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_SAFETY,
  MAX_NAME,
  type CallGuard,
  type CallOptions,
  type DeckOptions,
  type DriverInfo,
  type DriverOrigin,
  type ForeignModules,
  type GuardEvents,
} from './types.js';
import { DEFAULT_BUSY_TIMEOUT_MS, DEFAULT_SAFETY, MAX_NAME, NAME_RE, type CallGuard, type CallOptions, type CompiledMethod, type DeckOptions, type Device, type DriverEntry, type DriverInfo, type DriverOrigin, type ForeignModules, type GuardEvents, type Pending } from './types.js';
import { CallLog, errorMessage, failureRecord, ownerText, toJsonSchema, toJsonValue } from './values.js';
import { classDriverOf, deviceExports } from './exports.js';

export class Deck extends EventEmitter {
  private readonly recordStep: DeckOptions['recordStep'];
  private readonly busyTimeoutMs: number;
  private readonly devices = new Map<string, Device>();
  private readonly registry = new Map<string, DriverEntry>();
  private readonly locks = new Map<string, string>();
  private readonly compiled = new WeakMap<InstrumentDriver, DriverEntry>();
  private readonly ops = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly foreign: ForeignModules | undefined;
  /** The safety guard every call passes (set by the runtime). */
  guard: CallGuard | null = null;
  /** Told of the guard's verdicts (set by the runtime: core/notify/safety.ts). */
  guardEvents: GuardEvents | null = null;
  /** A method's level as the lab's safety file sets it (`levels`), or undefined (set by the runtime). */
  levelOf: ((instrument: string, classes: readonly string[], method: string) => Safety | undefined) | null = null;

  constructor(opts: DeckOptions) {
    super();
    this.recordStep = opts.recordStep;
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

  private device(name: string): Device {
    const d = this.devices.get(name);
    if (d) return d;
    const known = [...this.devices.keys()];
    throw new LabError(
      'not_found',
      `No instrument "${name}"; ${known.length ? `the deck has ${known.join(', ')}` : 'the deck is empty'}.`,
      [{ field: 'instrument', message: 'unknown instrument' }],
    );
  }

  /* ------------------------------------------------------------------ calls */

  async call(instrument: string, method: string, args: unknown, opts: CallOptions): Promise<{ taskId: number; output: unknown }> {
    const dev = this.device(instrument);
    if (dev.failure) this.checkOnline(dev); // a deck file's instrument that did not load: 503 with its stage
    let entry = dev.entry;
    let m = this.method(dev, method);
    this.checkOnline(dev);
    this.checkLock(instrument, opts.owner);
    let parsed = this.validate(instrument, method, m, args);

    // an agent's instrument queues no caller: one call its PC does not answer would hold them all (issue 26)
    if (dev.host !== undefined && !dev.mutex.tryAcquire()) throw new LabError('busy', `${instrument} is busy with another call (on the PC ${dev.host}): try again when it is done.`);
    if (dev.host === undefined && !dev.mutex.tryAcquire() && !(await dev.mutex.acquire(this.busyTimeoutMs))) {
      throw new LabError('busy', `${instrument} is busy: an earlier call did not finish within ${Math.round(this.busyTimeoutMs / 1000)} s.`);
    }
    let output: unknown;
    let failure: unknown;
    let ok = false;
    const printed = new CallLog();
    let startedAt = new Date();
    let guardToken: unknown = null;
    try {
      // while we waited: the device may have gone, been re-created from a new driver, or been locked
      if (dev.removed) this.device(instrument);
      this.checkOnline(dev);
      this.checkLock(instrument, opts.owner);
      if (dev.entry !== entry) {
        entry = dev.entry;
        m = this.method(dev, method);
        parsed = this.validate(instrument, method, m, args);
      }
      // the safety guard, the last thing before the driver: a refusal reaches no driver and leaves no step
      if (this.guard) {
        try {
          guardToken = await this.guard.enforce(this.guardedCall(dev, method, m, parsed, opts.userId));
        } catch (e) {
          this.guardEvents?.blocked({ instrument, method, args: parsed, userId: opts.userId, runId: opts.runId ?? null, error: e });
          throw e;
        }
        this.guardEvents?.allowed(instrument, method);
      }
      const ctx: CallContext = {
        signal: this.abort.signal,
        log: (message: string) => {
          const text = String(message);
          printed.add(text);
          this.emit('log', { instrument, method, message: text });
        },
      };
      startedAt = new Date();
      try {
        output = toJsonValue(await m.run(dev.instance, parsed, ctx));
        ok = true;
      } catch (e) {
        failure = e;
      }
    } finally {
      dev.mutex.release();
    }
    const endedAt = new Date();
    if (guardToken !== null) await this.guard!.finish(guardToken, ok, output).catch(() => undefined); // a state not stored is not the call's failure
    // the instrument refused the arguments before acting on them (a remote host's own checks): no record
    if (!ok && failure instanceof LabError && failure.code === 'invalid_input') throw failure;
    // refused by the safety guard of the PC that drives it (a lab agent): it reached no driver, so no record either
    if (!ok && failure instanceof LabError && (failure.code === 'safety' || failure.code === 'safety_file')) {
      await this.guard?.refusedThere?.({ instrument, method, args: parsed, userId: opts.userId }, failure).catch(() => undefined);
      throw failure;
    }
    const inDoubt = !ok && (failure as { inDoubt?: boolean } | null)?.inDoubt === true;
    const step: NewStep = {
      runId: opts.runId ?? null,
      phase: opts.phase ?? null,
      iteration: opts.iteration ?? null,
      stepIndex: opts.stepIndex ?? null,
      instrument,
      method,
      args: parsed,
      output: ok ? output : null,
      status: ok ? 'ok' : inDoubt ? 'in-doubt' : 'error',
      error: ok ? null : failureRecord(failure),
      userId: opts.userId,
      startedAt,
      endedAt,
      log: printed.text(),
    };
    let taskId: number;
    try {
      taskId = await (opts.record ?? this.recordStep)(step);
    } catch (e) {
      // the instrument acted, but its record is not stored: say so, and give no id for it
      if (!isStoreFault(e)) throw e;
      const what = ok ? `ran (output ${JSON.stringify(output)?.slice(0, 200)})` : `failed (${errorMessage(failure)})`;
      throw new LabError(e.code, `${instrument}.${method} ${what}, but its record could not be written. ${e.message}`, undefined, { instrument, method, ...e.data });
    }
    if (inDoubt) {
      throw new LabError(
        'unavailable',
        `${instrument} went offline during ${method}: ${sentence(errorMessage(failure))} The call may or may not have reached the instrument: it is recorded as in-doubt (task ${taskId}) and is not sent again by itself.`,
        undefined,
        { task_id: taskId, instrument, method, in_doubt: true },
      );
    }
    if (!ok) {
      if (failure instanceof LabError && failure.code === 'unavailable') throw new LabError('unavailable', failure.message, undefined, { task_id: taskId, instrument, method });
      throw new LabError('instrument_error', errorMessage(failure), undefined, { task_id: taskId, instrument, method });
    }
    return { taskId, output };
  }

  /**
   * Check a call without making it: the instrument and method exist and the arguments fit (the same errors a
   * call gives). Returns the arguments as the method would get them, and the method's safety level.
   */
  check(instrument: string, method: string, args: unknown): { args: Record<string, unknown>; safety: Safety } {
    const dev = this.device(instrument);
    const m = this.method(dev, method);
    const declared = dev.schema.methods.find((x) => x.name === method)?.safety ?? DEFAULT_SAFETY;
    // the safety file's `levels` set a method's level without touching its driver
    const safety = this.levelOf?.(instrument, [dev.entry.name], method) ?? declared;
    return { args: this.validate(instrument, method, m, args), safety };
  }

  /** One call as the guard sees it; its readings go through the deck (the called instrument's lock is held already). */
  private guardedCall(dev: Device, method: string, m: CompiledMethod, args: Record<string, unknown>, userId: number | null): Parameters<CallGuard['enforce']>[0] {
    return {
      instrument: dev.name,
      classes: [dev.entry.name],
      method,
      args,
      params: m.schema.params,
      userId,
      read: (instrument, member) => this.readMember(instrument, member, dev),
    };
  }

  /** A call as the guard would see it, without making it (`POST /safety/check`): validated, defaults filled in. */
  guardedCallFor(instrument: string, method: string, args: unknown, userId: number | null): Parameters<CallGuard['enforce']>[0] {
    const dev = this.device(instrument);
    const m = this.method(dev, method);
    return { ...this.guardedCall(dev, method, m, this.validate(instrument, method, m, args), userId), read: (i, member) => this.readMember(i, member, null) };
  }

  /** A reading for a safety rule: a method of `instrument` that takes no arguments, unrecorded, unguarded. */
  private async readMember(instrument: string, member: string, calling: Device | null): Promise<unknown> {
    const dev = this.device(instrument);
    const m = this.method(dev, member);
    this.checkOnline(dev);
    const parsed = this.validate(instrument, member, m, {});
    const ctx: CallContext = { signal: this.abort.signal, log: () => undefined };
    if (dev === calling) return toJsonValue(await m.run(dev.instance, parsed, ctx));
    if (!dev.mutex.tryAcquire() && !(await dev.mutex.acquire(this.busyTimeoutMs))) throw new Error(`${instrument} is busy`);
    try {
      return toJsonValue(await m.run(dev.instance, parsed, ctx));
    } finally {
      dev.mutex.release();
    }
  }

  /**
   * The labware view of an instrument whose driver has a worktable (ivoryOS's `__ivoryos_labware__` and
   * `__ivoryos_labware_state__`, read by its Python host): each labware's grid, what each position holds, tips
   * left. `{ worktable: false }` for any other instrument. Unrecorded and unguarded (it moves nothing), taken in
   * turn with the instrument's calls.
   */
  async labware(instrument: string): Promise<LabwareView> {
    const dev = this.device(instrument);
    const handle = dev.instance as Partial<RemoteHandle> | null;
    if (dev.failure || !remoteInfo(dev.entry.driver) || !handle?.host || typeof handle.name !== 'string') return { worktable: false };
    this.checkOnline(dev);
    if (!dev.mutex.tryAcquire() && !(await dev.mutex.acquire(this.busyTimeoutMs))) throw new LabError('busy', `${instrument} is busy: its labware can be read once its call is done.`);
    try {
      const view = toJsonValue(await handle.host.call(handle.name, LABWARE_VIEW, {}));
      return view && typeof view === 'object' && !Array.isArray(view) ? (view as LabwareView) : { worktable: false };
    } finally {
      dev.mutex.release();
    }
  }

  private method(dev: Device, method: string): CompiledMethod {
    const m = dev.entry.methods.get(method);
    if (m) return m;
    throw new LabError(
      'not_found',
      `${dev.name} has no method "${method}"; it has ${[...dev.entry.methods.keys()].join(', ')}.`,
      [{ field: 'method', message: 'unknown method' }],
    );
  }

  private checkOnline(dev: Device): void {
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

  private checkLock(instrument: string, owner: string | undefined): void {
    const holder = this.locks.get(instrument);
    if (holder !== undefined && holder !== owner) {
      throw new LabError('busy', `${instrument} is in use by ${ownerText(holder)}.`, undefined, { instrument, owner: holder });
    }
  }

  private validate(instrument: string, method: string, m: CompiledMethod, args: unknown): Record<string, unknown> {
    const what = `Invalid arguments for ${instrument}.${method}`;
    const a = args ?? {};
    if (typeof a !== 'object' || Array.isArray(a)) {
      throw invalid(what, [{ field: '(arguments)', message: 'must be an object of parameter values' }]);
    }
    const unknown: string[] = [];
    if (m.keys) for (const k in a) if (!m.keys.has(k)) unknown.push(k);
    const r = m.params.safeParse(a);
    if (r.success && unknown.length === 0) return r.data as Record<string, unknown>;
    const details = r.success ? [] : issueDetails(r.error.issues);
    const expected = m.keys ? [...m.keys].join(', ') || 'none' : '';
    for (const k of unknown) details.push({ field: k, message: `is not a parameter of ${instrument}.${method} (parameters: ${expected})` });
    throw invalid(what, details);
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

  private compile(driver: InstrumentDriver, origin: DriverEntry['origin'], file: string | null): DriverEntry {
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
        throw new LabError('conflict', `The driver "${d.name}" is already provided by ${other.file ?? 'another module'}.`, [
          { field: 'filepath', message: `driver ${d.name} exists` },
        ]);
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

  private async disposeInstance(dev: Device): Promise<void> {
    try {
      await dev.entry.driver.dispose?.(dev.instance);
    } catch (e) {
      this.emit('warning', { device: dev.name, message: `dispose failed: ${errorMessage(e)}` });
    }
  }

  /** Wait until queued device replacements/removals are done (those not waiting for an unlock). */
  async settled(): Promise<void> {
    while (this.ops.size) await Promise.allSettled([...this.ops]);
  }

  private parseOptions(entry: DriverEntry, raw: Record<string, unknown>, device: string): Record<string, unknown> {
    const r = entry.driver.options.safeParse(raw ?? {});
    if (r.success) return r.data as Record<string, unknown>;
    throw invalid(`Invalid options for ${device} (${entry.name})`, issueDetails(r.error.issues));
  }

  private schemaOf(dev: Device): InstrumentSchema {
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

  /**
   * Instruments another PC serves (`lab agent`, DESIGN.md §11): each becomes a device of this deck, named as
   * the agent names it, calls going to the agent. Refused whole when a name is taken or reserved.
   */
  async addAgentDevices(agent: string, devices: [string, InstrumentDriver][]): Promise<string[]> {
    this.checkNewNames(devices.map(([n]) => n), `the agent ${agent}`);
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
      throw new LabError('invalid_input', `No instrument drivers found in ${loaded.file}: ${what}.`, [
        { field: 'filepath', message: 'no instrument drivers found' },
      ], { file: loaded.file });
    }
    return this.setFileDrivers(loaded.file, 'imported', loaded.drivers);
  }

  private async addDeckModule(file: string, source: Device['source']): Promise<string[]> {
    if (this.foreign?.handles(file)) return this.addForeignDeck(file, source);
    const mod = await loadModule(file);
    const src = moduleSource(mod.file);
    const exported = deviceExports(mod.exports, mod.file);
    const order = sourceOrder(exported.map(([n]) => n), src);
    const found = order.map((n) => exported.find(([k]) => k === n)!);
    if (found.length === 0) {
      throw new LabError(
        'invalid_input',
        `No instruments found in ${mod.file}: export devices made with driver.with(options), or objects with methods.`,
        [{ field: 'filepath', message: 'no instruments found' }],
        { file: mod.file },
      );
    }
    this.checkNewNames(found.map(([n]) => n), mod.file);
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
        throw new LabError('invalid_input', `No instruments found in ${loaded.file}: create instances of your driver classes at the top level of the script.`, [
          { field: 'filepath', message: 'no instruments found' },
        ], { file: loaded.file });
      }
      this.checkNewNames(created.map((d) => d.name), loaded.file);
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

  private addDevices(created: Device[]): string[] {
    for (const d of created) this.devices.set(d.name, d);
    this.emit('change');
    return created.map((d) => d.name);
  }

  /** Names a deck module may give its devices: identifiers, not reserved, not taken. */
  private checkNewNames(names: string[], file: string): void {
    const bad = names.filter((n) => !NAME_RE.test(n));
    if (bad.length) throw new LabError('invalid_input', `Device names must be identifiers: ${bad.join(', ')}.`, [{ field: 'filepath', message: 'bad device name' }]);
    const reserved = names.filter((n) => this.reserved.has(n));
    if (reserved.length) {
      throw new LabError('invalid_input', `${reserved.join(', ')} ${reserved.length > 1 ? 'are names' : 'is a name'} the web app uses for its own pages; rename ${reserved.length > 1 ? 'these devices' : 'the device'} in ${file}.`, reserved.map((n) => ({ field: n, message: 'reserved name' })));
    }
    const taken = names.filter((n) => this.devices.has(n));
    if (taken.length) {
      throw new LabError('conflict', `The deck already has ${taken.join(', ')}; rename the device${taken.length > 1 ? 's' : ''} in ${file}.`, taken.map((n) => ({ field: n, message: 'name taken' })));
    }
  }

  private async createDevice(
    name: string,
    source: Device['source'],
    entry: DriverEntry,
    own: DriverEntry | null,
    rawOptions: Record<string, unknown>,
    replaceable: boolean,
  ): Promise<Device> {
    const options = this.parseOptions(entry, rawOptions, name);
    let instance: unknown;
    try {
      instance = await entry.driver.create(options, { name });
    } catch (e) {
      if (e instanceof LabError && e.code === 'invalid_input') throw e;
      throw new LabError('instrument_error', `Could not start ${name} (${entry.name}): ${errorMessage(e)}`, undefined, { device: name });
    }
    const dev: Device = { name, source, entry, own, rawOptions: { ...rawOptions }, instance, schema: undefined as never, mutex: new Mutex(), replaceable, pending: null, removed: false, offline: null, madeAt: new Date() };
    dev.schema = this.schemaOf(dev);
    return dev;
  }

  /** Connect a new temporary device from a registered driver. */
  private readonly reserved = new Set<string>();

  /**
   * Names a front end needs for itself (the web app's `/instruments/new`, `/task`, …): devices may not take
   * them. A device that already has one is reported.
   */
  reserve(names: Iterable<string>): void {
    const clash = [...names].filter((n) => this.devices.has(n));
    for (const n of names) this.reserved.add(n);
    if (clash.length) {
      throw new LabError('invalid_input', `The deck has a device named ${clash.map((n) => `"${n}"`).join(', ')}, which the web app uses for its own pages: rename it in the deck module.`, clash.map((n) => ({ field: n, message: 'reserved name' })));
    }
  }

  async connect(driver: string, deviceName: string, options: Record<string, unknown>): Promise<InstrumentSchema> {
    const entry = this.registry.get(driver);
    if (!entry) {
      const known = [...this.registry.keys()];
      throw new LabError('not_found', `No driver "${driver}"; ${known.length ? `known drivers: ${known.join(', ')}` : 'no drivers are loaded'}.`, [
        { field: 'driver', message: 'unknown driver' },
      ]);
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

  /** Dispose every instance (awaiting each driver's dispose) and empty the deck. */
  async close(): Promise<void> {
    this.abort.abort();
    await this.settled();
    const devs = [...this.devices.values()];
    this.devices.clear();
    for (const d of devs) {
      d.removed = true;
      await this.disposeInstance(d);
    }
    if (devs.length) this.emit('change');
  }
}
