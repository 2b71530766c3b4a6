/**
 * The latest campaign's plot (`GET /executions/latest_plot`, DESIGN.md §7): its measurements (warm-start
 * rows first, then the run's iterations, then the points measured by hand), the best so far of its first
 * objective, and the optimizer's model while it is in memory.
 */
import { checkOutcomeConstraints, type ObjectiveSpec, type ParameterSpec } from '../contracts/index.js';
import type { PhaseRow, QueueTaskRow, Store } from '../store/types.js';
import { campaignRecord, limitMet, measuredNames, meetsOutcomes, type CampaignPayload } from './record.js';
import type { Live } from './run.js';

export interface PlotPoint {
  iteration: number;
  params: Record<string, unknown>;
  values: Record<string, number | null>;
  /** `optimizer:<name>` or `person:<username>` (issue 31); absent for warm-start rows. */
  suggested_by?: string;
  /** `run:<id>` (the campaign's workflow) or `person:<username>` (measured by hand). */
  measured_by?: string;
}

export interface LatestPlot {
  /** `stopped_early`: the measurement that met stop_when, in words (the campaign ran no further), or null. */
  campaign: {
    task_id: number;
    run_id: number | null;
    campaign_id?: number | null;
    name: string;
    workflow: string;
    optimizer: string;
    status: string;
    budget: number;
    batch_size: number;
    stopped_early?: string | null;
  };
  parameters: ParameterSpec[];
  objectives: ObjectiveSpec[];
  /** Measurements of this campaign, in order; warm-start rows come first with iteration null, points measured by hand last (iteration null, `n`). */
  points: (Omit<PlotPoint, 'iteration'> & { iteration: number | null; n?: number })[];
  /** Best value of the first objective after each measurement (the campaign's own iterations) that meets the outcome constraints. */
  best_so_far: { iteration: number; value: number }[];
  /** The optimizer's own view (model surface, Pareto front, …), when it is still in memory. */
  model: unknown;
}

/** A campaign task's measurements, best so far and model (`live`: the campaign in memory, when it is this one). */
export async function latestPlot(store: Store, task: QueueTaskRow, live: Live | null): Promise<LatestPlot> {
  const p = task.payload as CampaignPayload;
  const phases: PhaseRow[] = task.runId ? (await store.phases.list(task.runId)).filter((ph) => ph.phase === 'main') : [];
  const first = p.objectives[0];
  const points: LatestPlot['points'] = p.existing.map((o) => ({ iteration: null, params: o.params, values: o.values }));
  const best: LatestPlot['best_so_far'] = [];
  // the warm start's best counts: a campaign that found nothing better shows the level it started from
  let bestValue: number | null = campaignRecord(p).campaign.warm_start.best;
  let stopped: string | null = null;
  const stopWhen = checkOutcomeConstraints(p.stop_when ?? [], 'stop_when');
  for (const ph of phases.sort((a, b) => (a.iteration ?? 0) - (b.iteration ?? 0))) {
    if (ph.status !== 'ok') continue;
    const outputs = (ph.outputs ?? {}) as Record<string, unknown>;
    const values = Object.fromEntries(measuredNames(p).map((name) => [name, typeof outputs[name] === 'number' ? (outputs[name] as number) : null]));
    points.push({
      iteration: ph.iteration ?? 0,
      params: Object.fromEntries(p.space.map((s) => [s.name, (ph.params as Record<string, unknown>)[s.name]])),
      values,
      suggested_by: `optimizer:${p.optimizer}`,
      measured_by: `run:${task.runId}`,
    });
    const v = values[first.name];
    // a measurement that misses an outcome constraint is no candidate for the best, whatever its value
    if (typeof v === 'number' && meetsOutcomes(p, outputs) && (bestValue === null || (first.minimize ? v < bestValue : v > bestValue))) bestValue = v;
    if (bestValue !== null) best.push({ iteration: ph.iteration ?? 0, value: bestValue });
    stopped ??= limitMet(stopWhen, outputs);
  }
  // points measured by hand (issue 31): after the campaign's own iterations, with who suggested and measured them
  const record = await store.campaigns.ofTask(task.id);
  for (const x of record ? await store.campaigns.points(record.id) : []) {
    if (x.state !== 'measured' || !x.results) continue;
    points.push({
      iteration: null,
      n: x.n,
      params: x.parameters,
      values: Object.fromEntries(measuredNames(p).map((name) => [name, x.results![name] ?? null])),
      suggested_by: x.suggestedBy,
      measured_by: x.measuredBy ?? undefined,
    });
  }
  return {
    campaign: {
      task_id: task.id,
      run_id: task.runId,
      campaign_id: record?.id ?? null,
      name: task.name,
      workflow: p.workflow,
      optimizer: p.optimizer,
      status: task.status,
      budget: p.budget,
      batch_size: p.batch_size,
      stopped_early: stopped,
    },
    parameters: p.space,
    objectives: p.objectives,
    points,
    best_so_far: best,
    model: live?.taskId === task.id ? live.instance.snapshot() : null,
  };
}
