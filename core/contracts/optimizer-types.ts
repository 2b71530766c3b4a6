/**
 * The optimizer contract's types and constants (contract version 1, DESIGN.md §3): the search space, objectives,
 * constraints, and what an optimizer plugin defines. The contract itself is in optimizer.ts.
 */
import type { z } from 'zod';
import type { ZodObjectAny } from './index.js';

export const OPTIMIZER_TAG = Symbol.for('labdeck.optimizer');

export type ParameterType = 'range' | 'int' | 'choice';
export const PARAMETER_TYPES: readonly ParameterType[] = ['range', 'int', 'choice'];

/**
 * One dimension of the search space. `range` and `int` need `bounds` [lo, hi] and may be searched on a log
 * scale (`log_scale`, bounds > 0) or on a grid (`step`: the values low + k·step); `choice` needs `choices`.
 * A `fixed` parameter (`value`, optionally checked against `bounds`) is not searched: the host takes it out
 * of the space the optimizer sees and adds its value to every suggestion.
 */
export interface ParameterSpec {
  name: string;
  type: ParameterType | 'fixed';
  bounds?: [number, number];
  choices?: string[];
  log_scale?: boolean;
  step?: number;
  value?: number | string;
}

/** A measured quantity the campaign optimizes; `weight` (> 0) scalarises several objectives. */
export interface ObjectiveSpec {
  name: string;
  minimize: boolean;
  weight?: number;
}

/**
 * A linear constraint on range parameters, Σ coefficients[name]·value  op  rhs (a `>=` is stored negated as
 * `<=`); `text` is how it was written. Fixed parameters are already moved to the right-hand side.
 */
export interface LinearConstraint {
  text: string;
  coefficients: Record<string, number>;
  op: '<=' | '==';
  rhs: number;
}

/** A limit on a measured output (`purity >= 0.9`): an observation beyond it is infeasible. */
export interface OutcomeConstraint {
  text: string;
  name: string;
  op: '<=' | '>=';
  bound: number;
}

/**
 * How closely suggestions meet linear constraints: the violation divided by the spread of the left-hand side
 * over the box (Σ |a_i|·(high_i − low_i)) is at most this.
 */
export const CONSTRAINT_TOLERANCE = 1e-9;

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
  /** Honours linear parameter constraints: every suggestion satisfies them. */
  constraints: boolean;
  /** Honours outcome constraints (default false). */
  outcomeConstraints?: boolean;
  /** Searches `log_scale` ranges on a log scale (default false). */
  logScale?: boolean;
  /** Suggests only the values of a `step` grid (default false). */
  steps?: boolean;
}

/** Any JSON value (what snapshot() must return). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/**
 * What an optimizer rebuilt from the records is told after observe(): the points handed out earlier (by an
 * instance before a restart, or added by a person) whose results are not in. `pending` points are being
 * measured: suggest() must not return them again, and a model treats them as it treats its own pending
 * suggestions. `discarded` points were given up without a result (an optimizer that counts its suggestions
 * counts them too).
 */
export interface RestoreArgs {
  pending: ParamValues[];
  discarded: ParamValues[];
}

/** One optimizer state (one campaign). */
export interface OptimizerInstance {
  suggest(n: number): ParamValues[] | Promise<ParamValues[]>;
  observe(rows: Observation[]): void | Promise<void>;
  snapshot(): { [k: string]: JsonValue };
  /**
   * Optional: the points handed out and not measured (RestoreArgs), told once after a rebuild. Without it the
   * host drops a suggestion that repeats a pending point and asks again.
   */
  restore?(r: RestoreArgs): void | Promise<void>;
}

export interface OptimizerCreateArgs<C> {
  /** The searched parameters (fixed ones are taken out). */
  space: ParameterSpec[];
  objectives: ObjectiveSpec[];
  config: C;
  /** Integer seed: the same seed and the same observations give the same suggestions. */
  seed: number;
  /** Linear constraints every suggestion must satisfy (empty unless capabilities.constraints). */
  constraints: LinearConstraint[];
  /** Limits on measured outputs; observations carry their values (empty unless capabilities.outcomeConstraints). */
  outcomeConstraints: OutcomeConstraint[];
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
    /** Linear constraints as strings (`x1 + 2*x2 <= 10`) or checked objects. */
    constraints?: unknown;
    /** Outcome constraints as strings (`purity >= 0.9`) or checked objects. */
    outcomeConstraints?: unknown;
  }): OptimizerInstance;
}

/** An optimizer's, a parameter's or an objective part's name. */
export const OPTIMIZER_NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
