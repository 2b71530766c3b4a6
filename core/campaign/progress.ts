/**
 * A campaign's progress plot (issue 31), for its own page (`GET /executions/campaigns/{id}/plot`): every
 * measured point with who suggested it (the optimizer or a person) and who measured it, and the best value
 * so far of the first objective. A manual campaign's points stand at their `n`; a robot campaign's own
 * iterations at theirs, and the points measured by hand after them (the rows of the campaign's table).
 * Pure: it reads the campaign's view, nothing else.
 */
import type { ObjectiveSpec, ParamValues } from '../contracts/index.js';
import { campaignRecord, meetsOutcomes, type CampaignPayload } from './record.js';
import type { CampaignView, PointView } from './manual.js';

export interface ProgressPoint {
  /** Where it stands: its row in the campaign's table (a manual campaign: its n). */
  x: number;
  n: number;
  params: Record<string, unknown>;
  values: Record<string, number | null>;
  /** `optimizer:<name>` or `person:<username>`. */
  suggested_by: string;
  /** `person:<username>`, or `run:<id>` for a robot campaign's own iterations. */
  measured_by: string | null;
  measured_at: string | null;
}

export interface CampaignPlot {
  campaign: { campaign_id: number; name: string; execution: 'manual' | 'robot'; workflow: string; optimizer: string; counts: CampaignView['counts'] };
  parameters: CampaignView['parameters'];
  objectives: ObjectiveSpec[];
  /** The history the campaign started from (drawn before the first point). */
  warm_start: { params: ParamValues; values: Record<string, number> }[];
  /** The measured points, in the table's order. */
  points: ProgressPoint[];
  /** The best value of the first objective after each measured point that meets the outcome constraints, from the warm start's best. */
  best_so_far: { x: number; n: number; value: number }[];
}

export function campaignPlot(p: CampaignPayload, v: CampaignView): CampaignPlot {
  const first = p.objectives[0];
  const points: ProgressPoint[] = [];
  const best: CampaignPlot['best_so_far'] = [];
  let bestValue: number | null = campaignRecord(p).campaign.warm_start.best;
  const rows: PointView[] = [...v.iterations, ...v.points];
  rows.forEach((row, i) => {
    if (row.state !== 'measured' || !row.results) return;
    const x = i + 1;
    const values = Object.fromEntries(v.measures.map((m) => [m, typeof row.results![m] === 'number' && Number.isFinite(row.results![m]) ? row.results![m] : null]));
    points.push({ x, n: row.n, params: row.parameters, values, suggested_by: row.suggested_by, measured_by: row.measured_by, measured_at: row.measured_at });
    const value = first ? values[first.name] : null;
    // a measurement that misses an outcome constraint is no candidate for the best, whatever its value
    if (typeof value === 'number' && meetsOutcomes(p, row.results) && (bestValue === null || (first!.minimize ? value < bestValue : value > bestValue))) bestValue = value;
    if (bestValue !== null) best.push({ x, n: row.n, value: bestValue });
  });
  return {
    campaign: { campaign_id: v.campaign_id, name: v.name, execution: v.execution, workflow: v.workflow, optimizer: v.optimizer, counts: v.counts },
    parameters: v.parameters,
    objectives: p.objectives,
    warm_start: p.existing.map((o) => ({ params: o.params, values: o.values })),
    points,
    best_so_far: best,
  };
}
