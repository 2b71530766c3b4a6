/**
 * The data of a run normalised for plotting (`GET /executions/data/{id}`): one entry per iteration of
 * `main` that started (in iteration order; the last phase record wins should an iteration have two), and
 * one series per parameter and output, aligned with `iterations` (`series[name][i]` belongs to
 * `iterations[i]`). Series hold finite numbers only: anything else (a string, a boolean, a missing value,
 * NaN) is null, which a plot draws as a gap. The outputs of an iteration with a skipped step are null too:
 * they are not data (the iteration is listed, with its status).
 *
 * Names: the parameters and outputs of the run's workflow snapshot, then any other key a phase recorded
 * (in the order first seen); the run's data CSV (core/files/rundata.ts) is built from this. A name that is a
 * parameter is not also an output. An output whose value is a dict (a driver's dict result) is spread into
 * one output per field, `cell.current_ma`, `cell.power_mw`, in its place.
 */
import { campaignOfRun } from '../campaign/record.js';
import type { PhaseRow, RunRow } from '../store/types.js';

export interface PlotIteration {
  /** 0-based, as recorded. */
  iteration: number;
  params: Record<string, unknown>;
  outputs: Record<string, unknown>;
  status: PhaseRow['status'];
}

export interface PlotData {
  run_id: number;
  workflow: string;
  parameters: string[];
  outputs: string[];
  iterations: PlotIteration[];
  series: Record<string, (number | null)[]>;
  /**
   * A campaign's best value so far of its first objective, aligned with `iterations`: from the warm start's
   * best, improved by each iteration that ended `ok` (a skipped or failed one is no observation).
   */
  best?: { objective: string; minimize: boolean; values: (number | null)[] };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The names a snapshot declares: its parameters' names and its outputs (any shape tolerated). */
function declared(snapshot: unknown): { parameters: string[]; outputs: string[] } {
  if (!isRecord(snapshot)) return { parameters: [], outputs: [] };
  const params = Array.isArray(snapshot.parameters) ? snapshot.parameters : [];
  const outs = Array.isArray(snapshot.outputs) ? snapshot.outputs : [];
  return {
    parameters: params.map((p) => (isRecord(p) ? p.name : undefined)).filter((n): n is string => typeof n === 'string'),
    // an output is a name, or { name, from } (reported under its name)
    outputs: outs.map((o) => (isRecord(o) ? o.name : o)).filter((n): n is string => typeof n === 'string'),
  };
}

/** How deep a dict result is spread into columns; deeper values stay one JSON cell. */
const FLATTEN_DEPTH = 4;

/**
 * An iteration's outputs with each dict value spread into one entry per field: `{ cell: { current_ma: 2 } }`
 * → `{ "cell.current_ma": 2 }` (nested dicts too, to FLATTEN_DEPTH), so a driver's dict result (the ivoryOS
 * norm) is a column per field in the data CSV and a series per field in the plot. Lists and empty dicts stay
 * as they are.
 */
export function flattenOutputs(outputs: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const put = (key: string, v: unknown, depth: number) => {
    if (isRecord(v) && Object.keys(v).length && depth < FLATTEN_DEPTH) for (const [k, x] of Object.entries(v)) put(`${key}.${k}`, x, depth + 1);
    else Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  };
  for (const [k, v] of Object.entries(outputs)) put(k, v, 0);
  return out;
}

/** The output names in order: each declared one, or in its place the fields it was spread into; then any other. */
function outputOrder(declaredNames: readonly string[], seen: readonly string[]): string[] {
  const out = new Set<string>();
  for (const d of declaredNames) {
    const fields = seen.filter((k) => k === d || k.startsWith(`${d}.`));
    for (const k of fields.length ? fields : [d]) out.add(k);
  }
  for (const k of seen) out.add(k);
  return [...out];
}

/** A plottable number, or null. */
export const plotValue = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function plotData(run: Pick<RunRow, 'id' | 'workflowName' | 'workflow'> & Partial<Pick<RunRow, 'parameters'>>, phases: readonly PhaseRow[]): PlotData {
  const names = declared(run.workflow);
  const parameters = new Set(names.parameters);
  const declaredOutputs = new Set(names.outputs);
  const seenOutputs = new Set<string>();

  const byIteration = new Map<number, PlotIteration>();
  for (const p of phases) {
    if (p.phase !== 'main' || p.iteration === null) continue;
    const params = isRecord(p.params) ? p.params : {};
    const outs = flattenOutputs(isRecord(p.outputs) ? p.outputs : {});
    for (const k of Object.keys(params)) if (!declaredOutputs.has(k)) parameters.add(k);
    for (const k of Object.keys(outs)) if (!parameters.has(k)) seenOutputs.add(k);
    byIteration.set(p.iteration, { iteration: p.iteration, params, outputs: outs, status: p.status });
  }
  const outputs = outputOrder(names.outputs, [...seenOutputs]);
  const iterations = [...byIteration.values()].sort((a, b) => a.iteration - b.iteration);
  const paramList = [...parameters];
  const outList = [...outputs].filter((o) => !parameters.has(o));
  // fromEntries defines own properties: a name like __proto__ stays a plain key
  const series = Object.fromEntries([
    ...paramList.map((n) => [n, iterations.map((it) => plotValue(it.params[n]))] as const),
    ...outList.map((n) => [n, iterations.map((it) => (it.status === 'skipped' ? null : plotValue(it.outputs[n])))] as const),
  ]);
  const data: PlotData = { run_id: run.id, workflow: run.workflowName, parameters: paramList, outputs: outList, iterations, series };
  const campaign = campaignOfRun(run.parameters);
  const objective = campaign?.objectives[0];
  if (campaign && objective) {
    let best = campaign.warm_start.best;
    const values = iterations.map((it) => {
      const v = it.status === 'ok' ? plotValue(it.outputs[objective.name]) : null;
      if (v !== null && (best === null || (objective.minimize ? v < best : v > best))) best = v;
      return best;
    });
    data.best = { objective: objective.name, minimize: objective.minimize, values };
  }
  return data;
}
