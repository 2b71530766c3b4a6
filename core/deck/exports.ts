/**
 * How the deck reads a deck module's exports (core/deck/index.ts, the loader's part): which are devices, and
 * the class of a class instance as a connectable driver.
 */
import { basename, extname } from 'node:path';
import { isDeviceSpec, isInstrumentDriver, type InstrumentDriver } from '../contracts/index.js';
import { introspectClass, isClass, looksLikeDevice } from './introspect.js';
import { isPlainObject } from './util.js';

/**
 * The devices a deck module exports: DeviceSpecs (`driver.with(...)`) and objects with public methods,
 * as named exports or as the properties of a default-exported plain object. Drivers, classes, schemas
 * and data are not devices.
 */
export function deviceExports(exports: Record<string, unknown>, file: string): [string, unknown][] {
  const isDevice = (v: unknown) => isDeviceSpec(v) || (!isInstrumentDriver(v) && !hasLabTag(v) && looksLikeDevice(v));
  const out: [string, unknown][] = [];
  const seen = new Set<unknown>();
  const push = (k: string, v: unknown) => {
    if (seen.has(v)) return;
    seen.add(v);
    out.push([k, v]);
  };
  for (const [k, v] of Object.entries(exports)) if (k !== 'default' && isDevice(v)) push(k, v);
  const def = exports.default;
  if (def && typeof def === 'object') {
    const values = isPlainObject(def) ? Object.entries(def) : [];
    if (values.some(([, v]) => isDevice(v))) {
      for (const [k, v] of values) if (isDevice(v)) push(k, v);
    } else if (isDevice(def)) {
      push(basename(file, extname(file)).replace(/[^A-Za-z0-9_-]/g, '_'), def);
    }
  }
  return out;
}

export function hasLabTag(v: unknown): boolean {
  return !!v && typeof v === 'object' && Object.getOwnPropertySymbols(v).some((s) => Symbol.keyFor(s)?.startsWith('labdeck.') && s !== Symbol.for('labdeck.device'));
}

/** The class of a deck's class instance as a connectable driver (a second one like it), or null (a plain object, no public method). */
export function classDriverOf(value: unknown, source: string | null): InstrumentDriver | null {
  const ctor = (value as { constructor?: unknown }).constructor;
  if (!isClass(ctor)) return null;
  try {
    return introspectClass(ctor, { source });
  } catch {
    return null;
  }
}
