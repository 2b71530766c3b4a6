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
 *   restore(r)     optional: after a rebuild (observe() told the measurements), the points handed out before
 *                  and not measured: `pending` (never to be suggested again; a model treats them as pending)
 *                  and `discarded` (given up, with no result)
 *
 * The `create` of a defined optimizer checks its arguments first (space, objectives, config, seed) and throws
 * LabError('invalid_input') naming the offending field, so the campaign code can call it with user input.
 */
import { z } from 'zod';
import { CONTRACT_VERSION, ContractError } from './base.js';
import type { JSONSchema, ZodObjectAny } from './index.js';
import { checkConfig, checkConstraints, checkObjectives, checkOutcomeConstraints, checkSeed, checkSpace } from './optimizer-checks.js';
import {
  OPTIMIZER_NAME_RE as NAME_RE,
  OPTIMIZER_TAG,
  PARAMETER_TYPES,
  type Optimizer,
  type OptimizerCapabilities,
  type OptimizerDefinition,
  type ParamValues,
  type RestoreArgs,
} from './optimizer-types.js';

export * from './optimizer-types.js';
export * from './optimizer-checks.js';

// Symbol.for: a plugin loaded in its own module instance defines its optimizers with another copy of this module
const RAW_CREATE = Symbol.for('labdeck.optimizer.rawCreate');

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
  for (const k of ['outcomeConstraints', 'logScale', 'steps'] as const) {
    if (caps[k] !== undefined && typeof caps[k] !== 'boolean') throw new ContractError(`${where}: capabilities.${k} must be true or false when given`);
  }
  // re-defining an already defined optimizer checks it again without wrapping create twice
  const raw = ((def as unknown as Record<symbol, unknown>)[RAW_CREATE] ?? def.create) as OptimizerDefinition<C>['create'];
  if (typeof raw !== 'function') throw new ContractError(`${where}: create({ space, objectives, config, seed }) is required`);

  const capabilities: OptimizerCapabilities = {
    parameterTypes: [...caps.parameterTypes],
    multiObjective: caps.multiObjective,
    batch: caps.batch,
    constraints: caps.constraints,
    outcomeConstraints: caps.outcomeConstraints ?? false,
    logScale: caps.logScale ?? false,
    steps: caps.steps ?? false,
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
      const constraints = checkConstraints(a.constraints, space, optimizer);
      const outcomeConstraints = checkOutcomeConstraints(a.outcomeConstraints, 'outcome_constraints', optimizer);
      const config = checkConfig(a.config, optimizer);
      const seed = checkSeed(a.seed);
      const searched = space.filter((p) => p.type !== 'fixed');
      const inst = raw({ space: searched, objectives, config, seed, constraints, outcomeConstraints });
      if (!inst || typeof inst.suggest !== 'function' || typeof inst.observe !== 'function' || typeof inst.snapshot !== 'function') {
        throw new ContractError(`${where}: create() must return { suggest, observe, snapshot }`);
      }
      if (searched.length === space.length) return inst;
      // fixed parameters: the optimizer never sees them, every suggestion carries their value
      const fixed = Object.fromEntries(space.filter((p) => p.type === 'fixed').map((p) => [p.name, p.value!]));
      const withFixed = (points: ParamValues[]) => points.map((p) => ({ ...p, ...fixed }));
      return {
        suggest: (n) => {
          const out = inst.suggest(n);
          return out instanceof Promise ? out.then(withFixed) : withFixed(out);
        },
        observe: (rows) => inst.observe(rows),
        snapshot: () => inst.snapshot(),
        ...(inst.restore ? { restore: (r: RestoreArgs) => inst.restore!(r) } : {}),
      };
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
    capabilities: {
      ...def.capabilities,
      parameterTypes: [...def.capabilities.parameterTypes],
      outcomeConstraints: def.capabilities.outcomeConstraints ?? false,
      logScale: def.capabilities.logScale ?? false,
      steps: def.capabilities.steps ?? false,
    },
  };
}
