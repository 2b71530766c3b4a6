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
import { DeckCalls } from './call.js';

export { coerceFormArgs } from './form.js';
export { introspectClass, introspectObject } from './introspect.js';
export { CallRecorder, memoryRecords, NO_RECORDS, type CallEnd, type CallStart, type StepWrites } from './recorder.js';

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

/**
 * The Deck in layers, one seam a file, each over the one before: devices.ts (the devices and the state they
 * share), registry.ts (the drivers and their replacement), loader.ts (decks, modules, agents), call.ts (calls).
 */
export class Deck extends DeckCalls {
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
