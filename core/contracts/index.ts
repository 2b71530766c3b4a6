/**
 * The public plugin API of labdeck (contract version 1).
 *
 * An instrument driver is data first: its options and each method's parameters are zod schemas, from
 * which labdeck generates the web forms, validates every call, and documents the instrument. Plugin
 * authors import only from this module.
 */
import { z } from 'zod';

import { CONTRACT_VERSION, ContractError } from './base.js';

export { z };
export { CONTRACT_VERSION, ContractError };

/** How dangerous a method is to call: shown in the UI, and used to ask for confirmation. */
/**
 * A method's safety level: `readonly` (reads, changes nothing), `idempotent` (changes something, the same call
 * twice leaves the same state), `hazardous` (moves, heats, doses: a person may have to approve it), and
 * `unknown` for a method nobody declared (the approval policy treats it as not read-only).
 */
export type Safety = 'readonly' | 'idempotent' | 'hazardous' | 'unknown';
/** The levels a driver may declare (`unknown` is what nobody declared). */
export type DeclaredSafety = Exclude<Safety, 'unknown'>;

export type ZodObjectAny = z.ZodObject<z.ZodRawShape>;

/** Context handed to every method run: a narrow view of the host, never the host itself. */
export interface CallContext {
  /** Aborted when the host shuts down or the caller gives up; long methods should honour it. */
  signal: AbortSignal;
  /** A log line: written to the run's log when the call is a workflow step (a `log` event of the deck otherwise). */
  log(message: string): void;
}

/** A value a consumption declaration takes from the call: the argument of that name. */
export interface ArgRef {
  arg: string;
}

/**
 * What one call of a method uses, makes or moves (issue 32): `{ resource: 'tips' }` (one tip per call),
 * `{ resource: { arg: 'source' }, amount: { arg: 'volume_ml' } }` (the volume of the liquid its `source`
 * argument names), `{ resource: { arg: 'sample' }, to: { arg: 'target' } }` (a sample moved). Resources are
 * the lab's, by name (GET /app/resources); the lab's consumption rules for the same method win over it.
 */
export interface Consumption {
  /** The resource by name, or the argument whose value names it. */
  resource: string | ArgRef;
  /** How much one call uses (default 1; negative: it makes that much), or the argument that says. */
  amount?: number | ArgRef;
  /** Moves the resource there (a sample to `plate1:A1`) instead of using it up, or the argument that says where. */
  to?: string | ArgRef;
}

const isArgRef = (v: unknown): v is ArgRef => !!v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && typeof (v as ArgRef).arg === 'string';

/**
 * Why a method's consumption declaration does not fit (null when it does): a list of Consumption, each
 * `{ arg }` naming one of the method's `params`. Shared by defineInstrument and the hosts of other languages.
 */
export function consumptionProblem(consumes: unknown, params: readonly string[]): string | null {
  if (!Array.isArray(consumes)) return 'consumes must be a list of { resource, amount?, to? }';
  if (consumes.length > 32) return 'consumes has more than 32 entries';
  for (const [i, c] of consumes.entries()) {
    const at = `consumes[${i}]`;
    if (!c || typeof c !== 'object' || Array.isArray(c)) return `${at} must be an object { resource, amount?, to? }`;
    const extra = Object.keys(c).find((k) => !['resource', 'amount', 'to'].includes(k));
    if (extra !== undefined) return `${at} has the unknown field ${JSON.stringify(extra.slice(0, 40))} (resource, amount, to)`;
    const e = c as Record<string, unknown>;
    for (const k of ['resource', 'amount', 'to'] as const) {
      const v = e[k];
      if (v === undefined && k !== 'resource') continue;
      if (isArgRef(v)) {
        if (!params.includes(v.arg)) return `${at}.${k} names the argument ${JSON.stringify(v.arg.slice(0, 64))}, which the method does not have`;
        continue;
      }
      const fits = k === 'amount' ? typeof v === 'number' && Number.isFinite(v) : typeof v === 'string' && v.length > 0 && v.length <= 200;
      if (!fits) return `${at}.${k} must be ${k === 'amount' ? 'a number' : 'a name'} or { "arg": "<parameter>" }`;
    }
    if (e.to !== undefined && e.amount !== undefined) return `${at} has both amount and to: a declaration uses a resource or moves it`;
  }
  return null;
}

export interface MethodDefinition<I, P extends ZodObjectAny = ZodObjectAny> {
  description?: string;
  params: P;
  returns?: z.ZodType;
  safety?: DeclaredSafety;
  /** What each call uses, makes or moves of the lab's resources (the lab's consumption rules win over it). */
  consumes?: Consumption[];
  /** Hidden methods are collapsed in the control page (still callable). */
  hidden?: boolean;
  run(instance: I, args: z.infer<P>, ctx: CallContext): unknown;
}

export interface InstrumentDefinition<O extends ZodObjectAny, I> {
  name: string;
  version: string;
  description?: string;
  /** The contract version the driver was written against; defaults to CONTRACT_VERSION. */
  contract?: number;
  options: O;
  /** Make an instance; `device.name` is the name it will have in the deck. */
  create(options: z.infer<O>, device?: { name: string }): I | Promise<I>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  methods: Record<string, MethodDefinition<I, any>>;
  dispose?(instance: I): void | Promise<void>;
}

export const INSTRUMENT_TAG = Symbol.for('labdeck.instrument');
export const DEVICE_TAG = Symbol.for('labdeck.device');

/** A driver: the checked definition, plus `with(options)` to declare a deck device using it. */
export interface InstrumentDriver<O extends ZodObjectAny = ZodObjectAny, I = unknown> extends InstrumentDefinition<O, I> {
  readonly [INSTRUMENT_TAG]: true;
  contract: number;
  /** Declare a device of this driver for a deck module: `export const pump = pumpDriver.with({ rate: 2 })`. */
  with(options?: Partial<z.input<O>>): DeviceSpec;
}

/** What a deck module exports for a device made from a driver; the host creates the instance. */
export interface DeviceSpec {
  readonly [DEVICE_TAG]: true;
  driver: InstrumentDriver;
  options: Record<string, unknown>;
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** A method's parameter name: an identifier in Python and TypeScript alike. */
const PARAM_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Check and tag an instrument driver. Throws a ContractError that names the offending part. */
export function defineInstrument<O extends ZodObjectAny, I>(def: InstrumentDefinition<O, I>): InstrumentDriver<O, I> {
  if (!def || typeof def !== 'object') throw new ContractError('defineInstrument needs a definition object');
  if (typeof def.name !== 'string' || !NAME_RE.test(def.name)) {
    throw new ContractError(`instrument name must match ${NAME_RE}, got ${JSON.stringify(def.name)}`);
  }
  const where = `instrument "${def.name}"`;
  if (typeof def.version !== 'string' || !def.version) throw new ContractError(`${where}: version is required`);
  const contract = def.contract ?? CONTRACT_VERSION;
  if (contract !== CONTRACT_VERSION) {
    throw new ContractError(`${where}: written for contract ${contract}, this host speaks ${CONTRACT_VERSION}`);
  }
  if (!(def.options instanceof z.ZodObject)) throw new ContractError(`${where}: options must be a zod object`);
  if (typeof def.create !== 'function') throw new ContractError(`${where}: create(options) is required`);
  if (!def.methods || typeof def.methods !== 'object' || Object.keys(def.methods).length === 0) {
    throw new ContractError(`${where}: at least one method is required`);
  }
  for (const [m, method] of Object.entries(def.methods)) {
    if (!NAME_RE.test(m)) throw new ContractError(`${where}: method name ${JSON.stringify(m)} is not an identifier`);
    if (!(method?.params instanceof z.ZodObject)) {
      throw new ContractError(`${where}: method "${m}" params must be a zod object (z.object({}) for none)`);
    }
    if (typeof method.run !== 'function') throw new ContractError(`${where}: method "${m}" has no run()`);
    // parameter names are written into exported scripts as keyword arguments: identifiers only
    const bad = Object.keys(method.params.shape).find((p) => !PARAM_RE.test(p));
    if (bad !== undefined) throw new ContractError(`${where}: method "${m}" has the parameter name ${JSON.stringify(bad.slice(0, 64))}, which is not an identifier (letters, digits and _)`);
    if (method.safety && !['readonly', 'idempotent', 'hazardous'].includes(method.safety)) {
      throw new ContractError(`${where}: method "${m}" safety must be readonly, idempotent or hazardous`);
    }
    if (method.consumes !== undefined) {
      const problem = consumptionProblem(method.consumes, Object.keys(method.params.shape));
      if (problem) throw new ContractError(`${where}: method "${m}" ${problem}`);
    }
    try {
      z.toJSONSchema(method.params, { io: 'input', unrepresentable: 'any' });
    } catch (e) {
      throw new ContractError(`${where}: method "${m}" params cannot be described as JSON Schema: ${(e as Error).message}`);
    }
  }
  const driver = {
    ...def,
    contract,
    [INSTRUMENT_TAG]: true as const,
    with(options: Partial<z.input<O>> = {}): DeviceSpec {
      return { [DEVICE_TAG]: true, driver: driver as unknown as InstrumentDriver, options: { ...options } };
    },
  };
  return driver;
}

export function isInstrumentDriver(x: unknown): x is InstrumentDriver {
  return !!x && typeof x === 'object' && (x as Record<symbol, unknown>)[INSTRUMENT_TAG] === true;
}

export function isDeviceSpec(x: unknown): x is DeviceSpec {
  return !!x && typeof x === 'object' && (x as Record<symbol, unknown>)[DEVICE_TAG] === true;
}

/** A JSON Schema object (draft 2020-12), as produced by z.toJSONSchema. */
export type JSONSchema = Record<string, unknown>;

/** The interface schema of one method, as the UI, the validator, the proxy generator and the docs see it. */
export interface MethodSchema {
  name: string;
  description: string;
  safety: Safety;
  hidden: boolean;
  /** Position in the driver's declaration order (the default display order). */
  order: number;
  /** JSON Schema of the arguments object (type "object", properties, required). */
  params: JSONSchema;
  returns?: JSONSchema;
  /** What each call uses, makes or moves, as the driver declared it (absent: nothing declared). */
  consumes?: Consumption[];
  /** True when the schema was inferred from plain code (zero-config), not declared. */
  inferred: boolean;
  /** Parameter names whose types were guessed or could not be inferred (shown as such in the UI). */
  inferredFields: string[];
}

export interface InstrumentSchema {
  name: string;
  driver: string;
  description: string;
  /** `deck` for devices of the loaded deck, `temporary` for devices connected at run time. */
  source: 'deck' | 'temporary';
  methods: MethodSchema[];
  /** Why the instrument cannot be called now (its host process is down); absent while it is online. */
  offline?: string;
  /** The PC it lives on (its `lab agent` name, or the labdeck on the database that drives it); absent for this labdeck's own deck's. */
  host?: string;
  /** An instrument of a deck file (`ivoryos-deck/1`) that did not load: the stage that failed and its error. */
  failure?: { stage: string; error: string; detail?: string };
}

export * from './optimizer.js';
export * from './errors.js';
