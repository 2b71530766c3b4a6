/**
 * The deck's shapes (core/deck/index.ts): what it takes, what it lists, a driver as it compiled it, a device as it
 * keeps one. Types and constants only.
 */
import type { InstrumentDriver, InstrumentSchema, JSONSchema, MethodDefinition, MethodSchema, Safety, ZodObjectAny } from '../contracts/index.js';
import type { StepWrites } from './recorder.js';
import type { Mutex } from './mutex.js';
import type { FailedInstrument, InstrumentFailure } from './deck-file.js';
import type { LabError } from '../errors.js';

/** A method without a declared safety level (DESIGN.md §16: the approval policy treats it as not read-only). */
export const DEFAULT_SAFETY: Safety = 'unknown';
/** How long a call waits for a busy instrument before giving up. */
export const DEFAULT_BUSY_TIMEOUT_MS = 30_000;

export const NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** The longest device name: it goes into paths and headers. */
export const MAX_NAME = 64;

/** Where a connectable driver comes from: a plugin file, an imported module, or a deck (its devices' drivers). */
export type DriverOrigin = 'plugin' | 'imported' | 'deck';

export interface DriverInfo {
  name: string;
  description: string;
  version: string;
  origin: DriverOrigin;
  /** The module the driver came from. */
  file: string;
  /** JSON Schema of the options (the connect form). */
  options: JSONSchema;
  /** True when the driver was introspected from a plain class. */
  inferred: boolean;
  /** Option fields whose type could not be inferred (any JSON). */
  inferredFields: string[];
}

export interface CallOptions {
  userId: number | null;
  /** The task holding locks; calls from it pass its own locks. */
  owner?: string;
  runId?: number | null;
  phase?: string | null;
  iteration?: number | null;
  stepIndex?: number | null;
  /**
   * The call's record, begun by the caller with this deck's recorder (a run's step: begun before the deck's own
   * checks, so a refused step has its record too); the deck completes it. Without it the deck begins one itself,
   * once the call has passed every check and the safety guard, just before the driver is touched.
   */
  recordId?: number;
  /** Told the record's id as soon as it exists, before the driver is touched (ivoryOS's call answered early). */
  onBegin?: (id: number) => void;
}

/**
 * Loads deck and driver modules of another language (Python): their instruments live in a host process and
 * reach the deck as drivers whose instances are handles (see core/hosts).
 */
export interface ForeignModules {
  /** Does this loader take the file (by extension)? */
  handles(file: string): boolean;
  /**
   * Run a deck file; `reserved`: names it may not use. Returns its instruments, each with its own driver, and
   * `drivers`: the classes they are instances of, which become connectable (the deck's own drivers).
   */
  loadDeck(file: string, reserved: string[]): Promise<{ file: string; devices: [string, InstrumentDriver][]; drivers?: InstrumentDriver[]; sources?: string[]; failed?: FailedInstrument[] }>;
  /** Build a failed instrument of a deck file again (see deck-file.ts). */
  retry?(file: string, name: string): Promise<InstrumentDriver>;
  /** Import a driver module; its classes become drivers. */
  loadModule(file: string): Promise<{ file: string; drivers: InstrumentDriver[] }>;
}

/**
 * What the deck asks before every call reaches a driver (the safety guard, core/safety): `enforce` throws to
 * refuse it, else returns a token that `finish` gets when the call ends.
 */
export interface CallGuard {
  enforce(call: {
    instrument: string;
    classes: readonly string[];
    method: string;
    args: Record<string, unknown>;
    params?: JSONSchema;
    userId: number | null;
    read(instrument: string, member: string): Promise<unknown>;
  }): Promise<unknown>;
  finish(token: unknown, ok: boolean, output: unknown): Promise<void>;
  /** The PC that drives the instrument (a lab agent) refused a call this guard let through (audited there). */
  refusedThere?(call: { instrument: string; method: string; args: Record<string, unknown>; userId: number | null }, error: LabError): Promise<void>;
}

/** Told of each call the guard refused or let through (core/notify's safety_blocked); must return at once. */
export interface GuardEvents {
  blocked(call: { instrument: string; method: string; args: Record<string, unknown>; userId: number | null; runId: number | null; error: unknown }): void;
  allowed(instrument: string, method: string): void;
}

export interface DeckOptions {
  /** Where call records are written (the store's `steps`; memoryRecords() or NO_RECORDS without a store): core/deck/recorder.ts. */
  records: StepWrites;
  foreign?: ForeignModules;
  /** How long a call waits for a busy instrument (default 30 s). */
  busyTimeoutMs?: number;
}

export interface CompiledMethod {
  schema: MethodSchema;
  params: ZodObjectAny;
  /** Accepted argument names; null when the schema takes any extra keys (catchall). */
  keys: Set<string> | null;
  run: MethodDefinition<unknown>['run'];
}

export interface DriverEntry {
  name: string;
  description: string;
  version: string;
  origin: DriverOrigin;
  file: string | null;
  driver: InstrumentDriver;
  optionsSchema: JSONSchema;
  inferred: boolean;
  inferredFields: string[];
  methods: Map<string, CompiledMethod>;
  methodSchemas: MethodSchema[];
}

export type Pending = DriverEntry | 'remove';

export interface Device {
  name: string;
  source: 'deck' | 'temporary';
  entry: DriverEntry;
  /** The driver a deck DeviceSpec brought itself (fallback when a plugin of that name goes away). */
  own: DriverEntry | null;
  /** Options as declared (re-validated by a replacement driver). */
  rawOptions: Record<string, unknown>;
  instance: unknown;
  schema: InstrumentSchema;
  mutex: Mutex;
  /** False for zero-config object devices: they cannot be re-created, so reloads leave them alone. */
  replaceable: boolean;
  pending: Pending | null;
  removed: boolean;
  /** Why it cannot be called now (its host is down), or null. */
  offline: string | null;
  /**
   * Its incarnation: when the instrument object was last made (created, re-created after a reload, or back
   * online after its host restarted or its agent reconnected). A step that started before it ran on an earlier one.
   */
  madeAt: Date;
  /** The agent (instrument PC) it lives on, for an agent's device. */
  host?: string;
  /** A deck file's instrument that did not load (deck-file.ts): offline until retried. */
  failure?: InstrumentFailure;
}
