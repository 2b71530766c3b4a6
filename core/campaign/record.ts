/**
 * What a campaign is, as queued and as recorded (DESIGN.md §3, §7): the task's payload, the run record's
 * `campaign` parameters, and what a measurement is to the optimizer (its observation, the outcome
 * constraints it meets, the stop_when limit it reaches). Pure: nothing here reads the store or runs anything.
 */
import { checkOutcomeConstraints, type Observation, type ObjectiveSpec, type OutcomeConstraint, type ParameterSpec } from '../contracts/index.js';
import type { TaskPayload } from '../runner/index.js';

export interface CampaignPayload extends TaskPayload {
  optimizer: string;
  config: Record<string, unknown>;
  seed: number;
  /** The search space, fixed parameters included (the optimizer adds their values to its suggestions). */
  space: ParameterSpec[];
  objectives: ObjectiveSpec[];
  /** Linear parameter constraints, as written (`x1 + 2*x2 <= 10`); every suggestion satisfies them. */
  constraints?: string[];
  /** Limits on outputs (`purity >= 0.9`), as written; observations carry these outputs. */
  outcome_constraints?: string[];
  /** The campaign ends early when a measurement meets one of these (`run.yield >= 0.95`). */
  stop_when?: string[];
  /** Iterations to run (measurements to make). */
  budget: number;
  batch_size: number;
  /** Values of the workflow's parameters that are not searched (their defaults unless given). */
  fixed: Record<string, unknown>;
  /** Warm-start observations from an uploaded history file. */
  existing: Observation[];
  existing_file: string | null;
}

export interface CampaignInput {
  workflow?: unknown;
  repeat?: unknown;
  optimizer_type?: unknown;
  existing_data?: unknown;
  parameters?: unknown;
  objectives?: unknown;
  parameter_constraints?: unknown;
  outcome_constraints?: unknown;
  stop_when?: unknown;
  batch_size?: unknown;
  seed?: unknown;
  config?: unknown;
  name?: unknown;
}

/** What a campaign's run record keeps as its parameters: the campaign as it was set up. */
export interface CampaignRecord {
  campaign: {
    optimizer: string;
    seed: number;
    budget: number;
    batch_size: number;
    space: ParameterSpec[];
    objectives: ObjectiveSpec[];
    constraints: string[];
    outcome_constraints: string[];
    stop_when: string[];
    fixed: Record<string, unknown>;
    config: Record<string, unknown>;
    /** The history file it started from: how many observations, and the best value of the first objective. */
    warm_start: { file: string | null; rows: number; best: number | null };
  };
}

/** The first of `limits` that a measurement's outputs meet, said in words, or null. */
export function limitMet(limits: OutcomeConstraint[], outputs: Record<string, unknown> | null): string | null {
  const c = limits.find((w) => {
    const v = outputs?.[w.name];
    return typeof v === 'number' && (w.op === '>=' ? v >= w.bound : v <= w.bound);
  });
  return c ? `${c.name} = ${String(outputs![c.name])} met stop_when "${c.text}"` : null;
}

/** Whether a measurement meets every outcome constraint of the campaign (it then counts for the best so far). */
export function meetsOutcomes(p: CampaignPayload, outputs: Record<string, unknown>): boolean {
  return checkOutcomeConstraints(p.outcome_constraints ?? [], 'outcome_constraints').every((c) => {
    const v = outputs[c.name];
    return typeof v === 'number' && (c.op === '>=' ? v >= c.bound : v <= c.bound);
  });
}

export function campaignRecord(p: CampaignPayload): CampaignRecord {
  const first = p.objectives[0];
  const values = p.existing
    .filter((o) => meetsOutcomes(p, o.values))
    .map((o) => o.values[first?.name ?? ''])
    .filter((v): v is number => typeof v === 'number');
  const best = values.length ? (first?.minimize ? Math.min(...values) : Math.max(...values)) : null;
  return {
    campaign: {
      optimizer: p.optimizer,
      seed: p.seed,
      budget: p.budget,
      batch_size: p.batch_size,
      space: p.space,
      objectives: p.objectives,
      constraints: p.constraints ?? [],
      outcome_constraints: p.outcome_constraints ?? [],
      stop_when: p.stop_when ?? [],
      fixed: p.fixed,
      config: p.config,
      warm_start: { file: p.existing_file, rows: p.existing.length, best },
    },
  };
}

/** A run record's campaign, when the run was one. */
export function campaignOfRun(parameters: unknown): CampaignRecord['campaign'] | null {
  const c = (parameters as Partial<CampaignRecord> | null)?.campaign;
  return c && typeof c === 'object' && typeof c.budget === 'number' ? c : null;
}

/** The outputs an observation carries: the objectives, then the outputs with outcome constraints. */
export function measuredNames(p: CampaignPayload): string[] {
  const names = p.objectives.map((o) => o.name);
  for (const c of checkOutcomeConstraints(p.outcome_constraints ?? [], 'outcome_constraints')) if (!names.includes(c.name)) names.push(c.name);
  return names;
}

/** A measurement as the optimizer is told it, or null when an output it carries is not a finite number. */
export function observation(p: CampaignPayload, params: Record<string, unknown>, outputs: Record<string, unknown> | null): Observation | null {
  const values: Record<string, number> = {};
  for (const name of measuredNames(p)) {
    const v = outputs?.[name];
    if (typeof v !== 'number' || !Number.isFinite(v)) return null;
    values[name] = v;
  }
  const x: Record<string, number | string> = {};
  for (const s of p.space) x[s.name] = params[s.name] as number | string;
  return { params: x, values };
}
