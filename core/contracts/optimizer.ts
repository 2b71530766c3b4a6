/**
 * The optimizer plugin contract (contract version 1, DESIGN.md §3).
 *
 * An optimizer is data first, like an instrument driver: its configuration is a zod object (from which the
 * campaign page builds its form and `optimizer_schema` returns JSON Schema), its capabilities say which
 * parameter types and campaign shapes it handles, and `create()` makes one optimizer state per campaign:
 *
 *   suggest(n)     the next n parameter sets to measure (ask)
 *   observe(rows)  measured results, { params, values } (tell); suggestions not yet observed are pending
 *   snapshot()     a JSON summary for the campaign page (best so far, Pareto front, model surface ...)
 *
 * The `create` of a defined optimizer checks its arguments first (space, objectives, config, seed) and throws
 * LabError('invalid_input') naming the offending field, so the campaign code can call it with user input.
 */
import { z } from 'zod';
import { LabError, type ErrorDetail } from './errors.js';
import { CONTRACT_VERSION, ContractError, type JSONSchema, type ZodObjectAny } from './index.js';

export const OPTIMIZER_TAG = Symbol.for('labdeck.optimizer');

export type ParameterType = 'range' | 'int' | 'choice';
export const PARAMETER_TYPES: readonly ParameterType[] = ['range', 'int', 'choice'];

/** One dimension of the search space. `range` and `int` need `bounds` [lo, hi]; `choice` needs `choices`. */
export interface ParameterSpec {
  name: string;
  type: ParameterType;
  bounds?: [number, number];
  choices?: string[];
}

/** A measured quantity the campaign optimizes. */
export interface ObjectiveSpec {
  name: string;
  minimize: boolean;
}

/** One parameter set: a number for range/int parameters, a string for choice parameters. */
export type ParamValues = Record<string, number | string>;

/** One measured experiment: the parameters it ran with and the value of each objective. */
export interface Observation {
  params: ParamValues;
  values: Record<string, number>;
}

export interface OptimizerCapabilities {
  parameterTypes: ParameterType[];
  multiObjective: boolean;
  /** Can suggest more than one point at a time (batch_size > 1) without repeating itself. */
  batch: boolean;
  constraints: boolean;
}

/** Any JSON value (what snapshot() must return). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/** One optimizer state (one campaign). */
export interface OptimizerInstance {
  suggest(n: number): ParamValues[] | Promise<ParamValues[]>;
  observe(rows: Observation[]): void | Promise<void>;
  snapshot(): { [k: string]: JsonValue };
}

export interface OptimizerCreateArgs<C> {
  space: ParameterSpec[];
  objectives: ObjectiveSpec[];
  config: C;
  /** Integer seed: the same seed and the same observations give the same suggestions. */
  seed: number;
}

export interface OptimizerDefinition<C extends ZodObjectAny> {
  name: string;
  description: string;
  version?: string;
  /** The contract version the optimizer was written against; defaults to CONTRACT_VERSION. */
  contract?: number;
  config: C;
  capabilities: OptimizerCapabilities;
  create(args: OptimizerCreateArgs<z.infer<C>>): OptimizerInstance;
}

/** What the host calls: `create` takes unchecked input (config as given by the user, before defaults). */
export interface Optimizer<C extends ZodObjectAny = ZodObjectAny> extends Omit<OptimizerDefinition<C>, 'create'> {
  readonly [OPTIMIZER_TAG]: true;
  contract: number;
  create(args: {
    space: unknown;
    objectives: unknown;
    config?: unknown;
    seed?: unknown;
  }): OptimizerInstance;
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const RAW_CREATE = Symbol('labdeck.optimizer.rawCreate');

/** Check and tag an optimizer plugin. Throws a ContractError that names the offending part. */
export function defineOptimizer<C extends ZodObjectAny>(def: OptimizerDefinition<C>): Optimizer<C> {
  if (!def || typeof def !== 'object') throw new ContractError('defineOptimizer needs a definition object');
  if (typeof def.name !== 'string' || !NAME_RE.test(def.name)) {
    throw new ContractError(`optimizer name must match ${NAME_RE}, got ${JSON.stringify(def.name)}`);
  }
  const where = `optimizer "${def.name}"`;
  if (typeof def.description !== 'string' || !def.description.trim()) throw new ContractError(`${where}: description is required`);
  const contract = def.contract ?? CONTRACT_VERSION;
  if (contract !== CONTRACT_VERSION) {
    throw new ContractError(`${where}: written for contract ${contract}, this host speaks ${CONTRACT_VERSION}`);
  }
  if (!(def.config instanceof z.ZodObject)) throw new ContractError(`${where}: config must be a zod object (z.object({}) for none)`);
  try {
    z.toJSONSchema(def.config, { io: 'input', unrepresentable: 'any' });
  } catch (e) {
    throw new ContractError(`${where}: config cannot be described as JSON Schema: ${(e as Error).message}`);
  }
  const defaults = def.config.safeParse({});
  if (!defaults.success) {
    throw new ContractError(`${where}: config must accept {} (give every option a default or make it optional)`);
  }
  const caps = def.capabilities;
  if (!caps || typeof caps !== 'object') throw new ContractError(`${where}: capabilities are required`);
  if (!Array.isArray(caps.parameterTypes) || caps.parameterTypes.length === 0) {
    throw new ContractError(`${where}: capabilities.parameterTypes must list at least one of ${PARAMETER_TYPES.join(', ')}`);
  }
  for (const t of caps.parameterTypes) {
    if (!PARAMETER_TYPES.includes(t)) throw new ContractError(`${where}: capabilities.parameterTypes: unknown type ${JSON.stringify(t)}`);
  }
  if (new Set(caps.parameterTypes).size !== caps.parameterTypes.length) {
    throw new ContractError(`${where}: capabilities.parameterTypes lists a type twice`);
  }
  for (const k of ['multiObjective', 'batch', 'constraints'] as const) {
    if (typeof caps[k] !== 'boolean') throw new ContractError(`${where}: capabilities.${k} must be true or false`);
  }
  // re-defining an already defined optimizer checks it again without wrapping create twice
  const raw = ((def as unknown as Record<symbol, unknown>)[RAW_CREATE] ?? def.create) as OptimizerDefinition<C>['create'];
  if (typeof raw !== 'function') throw new ContractError(`${where}: create({ space, objectives, config, seed }) is required`);

  const capabilities: OptimizerCapabilities = {
    parameterTypes: [...caps.parameterTypes],
    multiObjective: caps.multiObjective,
    batch: caps.batch,
    constraints: caps.constraints,
  };
  const optimizer: Optimizer<C> = {
    ...def,
    contract,
    capabilities,
    [OPTIMIZER_TAG]: true as const,
    create(args) {
      const a = (args ?? {}) as Record<string, unknown>;
      const space = checkSpace(a.space, optimizer);
      const objectives = checkObjectives(a.objectives, optimizer, space);
      const config = checkConfig(a.config, optimizer);
      const seed = checkSeed(a.seed);
      const inst = raw({ space, objectives, config, seed });
      if (!inst || typeof inst.suggest !== 'function' || typeof inst.observe !== 'function' || typeof inst.snapshot !== 'function') {
        throw new ContractError(`${where}: create() must return { suggest, observe, snapshot }`);
      }
      return inst;
    },
  };
  Object.defineProperty(optimizer, RAW_CREATE, { value: raw, enumerable: true });
  return optimizer;
}

export function isOptimizer(x: unknown): x is Optimizer {
  return !!x && typeof x === 'object' && (x as Record<symbol, unknown>)[OPTIMIZER_TAG] === true;
}

/** What `POST /executions/optimizer_schema` returns for one optimizer. */
export interface OptimizerSchema {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the configuration object, defaults included. */
  config: JSONSchema;
  capabilities: OptimizerCapabilities;
}

export function optimizerSchema(def: Pick<Optimizer, 'name' | 'description' | 'config' | 'capabilities'>): OptimizerSchema {
  return {
    name: def.name,
    description: def.description,
    config: z.toJSONSchema(def.config, { io: 'input', unrepresentable: 'any' }) as JSONSchema,
    capabilities: { ...def.capabilities, parameterTypes: [...def.capabilities.parameterTypes] },
  };
}

/* ---------------------------------------------------------------- validation of user input */

const invalid = (message: string, details: ErrorDetail[]) => new LabError('invalid_input', message, details);
const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const PARAM_KEYS = new Set(['name', 'type', 'bounds', 'choices']);

/**
 * Check a search space (as parsed from JSON or the short text form) and return a clean copy. With `def`, the
 * parameter types must be among its capabilities. Throws LabError invalid_input listing every problem, each
 * naming its field (`parameters[1].bounds`).
 */
export function checkSpace(space: unknown, def?: { name: string; capabilities: OptimizerCapabilities }): ParameterSpec[] {
  if (!Array.isArray(space) || space.length === 0) {
    throw invalid('parameters: give at least one parameter', [{ field: 'parameters', message: 'a non-empty list of parameters is required' }]);
  }
  const details: ErrorDetail[] = [];
  const out: ParameterSpec[] = [];
  const seen = new Set<string>();
  space.forEach((p, i) => {
    const at = `parameters[${i}]`;
    const bad = (field: string, message: string) => details.push({ field: `${at}${field}`, message });
    if (!isObj(p)) return bad('', 'must be an object { name, type, bounds | choices }');
    for (const k of Object.keys(p)) if (!PARAM_KEYS.has(k)) bad(`.${k}`, `unknown key (expected ${[...PARAM_KEYS].join(', ')})`);
    const name = p.name;
    if (typeof name !== 'string' || !NAME_RE.test(name)) bad('.name', 'must be a name made of letters, digits, _ and -');
    else if (seen.has(name)) bad('.name', `"${name}" is used twice`);
    else seen.add(name);
    const type = p.type;
    if (typeof type !== 'string' || !PARAMETER_TYPES.includes(type as ParameterType)) {
      return bad('.type', `must be one of ${PARAMETER_TYPES.join(', ')}`);
    }
    if (def && !def.capabilities.parameterTypes.includes(type as ParameterType)) {
      return bad('.type', `the optimizer "${def.name}" does not handle ${type} parameters (it handles ${def.capabilities.parameterTypes.join(', ')})`);
    }
    if (type === 'choice') {
      if (p.bounds !== undefined) bad('.bounds', 'a choice parameter takes choices, not bounds');
      const ch = p.choices;
      if (!Array.isArray(ch) || ch.length === 0) return bad('.choices', 'must be a non-empty list of strings');
      if (ch.some((c) => typeof c !== 'string' || c === '')) return bad('.choices', 'every choice must be a non-empty string');
      if (new Set(ch).size !== ch.length) return bad('.choices', 'a choice is listed twice');
      out.push({ name: name as string, type: 'choice', choices: [...(ch as string[])] });
      return;
    }
    if (p.choices !== undefined) bad('.choices', `a ${type} parameter takes bounds, not choices`);
    const b = p.bounds;
    if (!Array.isArray(b) || b.length !== 2 || !b.every((v) => typeof v === 'number' && Number.isFinite(v))) {
      return bad('.bounds', 'must be [low, high], two finite numbers');
    }
    const [lo, hi] = b as [number, number];
    if (!(lo < hi)) return bad('.bounds', `low (${lo}) must be below high (${hi})`);
    if (type === 'int' && !(Number.isInteger(lo) && Number.isInteger(hi))) return bad('.bounds', 'an int parameter needs integer bounds');
    out.push({ name: name as string, type: type as ParameterType, bounds: [lo, hi] });
  });
  if (details.length) throw invalid(`Invalid parameters: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
  return out;
}

/**
 * Check the objectives and return a clean copy. With `def`, more than one objective needs a multi-objective
 * optimizer; with `space`, an objective may not share a parameter's name.
 */
export function checkObjectives(
  objectives: unknown,
  def?: { name: string; capabilities: OptimizerCapabilities },
  space?: ParameterSpec[],
): ObjectiveSpec[] {
  if (!Array.isArray(objectives) || objectives.length === 0) {
    throw invalid('objectives: give at least one objective', [{ field: 'objectives', message: 'a non-empty list of objectives is required' }]);
  }
  const details: ErrorDetail[] = [];
  const out: ObjectiveSpec[] = [];
  const seen = new Set<string>();
  const params = new Set((space ?? []).map((p) => p.name));
  objectives.forEach((o, i) => {
    const at = `objectives[${i}]`;
    if (!isObj(o)) return details.push({ field: at, message: 'must be an object { name, minimize }' });
    for (const k of Object.keys(o)) if (k !== 'name' && k !== 'minimize') details.push({ field: `${at}.${k}`, message: 'unknown key (expected name, minimize)' });
    const { name, minimize } = o;
    // an objective names a workflow output, which may pick a field of a saved value (`run.yield`) or a
    // position of a list (`run.0`, a Python method's tuple)
    if (typeof name !== 'string' || !name.split('.').every((part, i) => NAME_RE.test(part) || (i > 0 && /^\d+$/.test(part)))) {
      details.push({ field: `${at}.name`, message: 'must be a name made of letters, digits, _ and - (a.b for a field, a.0 for a position)' });
    }
    else if (seen.has(name)) details.push({ field: `${at}.name`, message: `"${name}" is used twice` });
    else if (params.has(name)) details.push({ field: `${at}.name`, message: `"${name}" is also a parameter` });
    else seen.add(name);
    if (typeof minimize !== 'boolean') details.push({ field: `${at}.minimize`, message: 'must be true or false' });
    if (typeof name === 'string' && typeof minimize === 'boolean') out.push({ name, minimize });
  });
  if (!details.length && def && out.length > 1 && !def.capabilities.multiObjective) {
    details.push({ field: 'objectives', message: `the optimizer "${def.name}" handles one objective only` });
  }
  if (details.length) throw invalid(`Invalid objectives: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
  return out;
}

/** Parse a configuration with the optimizer's zod schema (defaults applied); errors name `config.<key>`. */
export function checkConfig<C extends ZodObjectAny>(config: unknown, def: { name: string; config: C }): z.infer<C> {
  const r = def.config.safeParse(config ?? {});
  if (r.success) return r.data;
  const details = r.error.issues.map((iss) => ({
    field: ['config', ...iss.path.map(String)].join('.'),
    message: iss.message,
  }));
  throw invalid(`Invalid configuration of the optimizer "${def.name}": ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
}

/** The seed: an integer (default 0). */
export function checkSeed(seed: unknown): number {
  if (seed === undefined || seed === null) return 0;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) {
    throw invalid('seed must be an integer', [{ field: 'seed', message: 'must be an integer' }]);
  }
  return seed;
}

/** Check a batch size against the optimizer's capabilities. */
export function checkBatchSize(n: unknown, def: { name: string; capabilities: OptimizerCapabilities }): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
    throw invalid('batch_size must be a positive integer', [{ field: 'batch_size', message: 'must be an integer ≥ 1' }]);
  }
  if (n > 1 && !def.capabilities.batch) {
    throw invalid(`the optimizer "${def.name}" suggests one point at a time`, [{ field: 'batch_size', message: `the optimizer "${def.name}" does not support batches; use 1` }]);
  }
  return n;
}
