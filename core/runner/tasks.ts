/**
 * What a queued task carries (its payload) and where its iterations come from: a workflow's config rows or
 * repeat count, or another kind's iteration source (a campaign's optimizer, core/campaign).
 */
import type { PhaseRow, QueueTaskRow } from '../store/types.js';
import type { Workflow } from '../workflow/model.js';

/** What every task carries: the workflow as validated when it was queued. */
export interface TaskPayload {
  workflow: string;
  version: number;
  definition: Workflow;
}

/** A workflow task: one row of parameters per iteration. */
export interface WorkflowPayload extends TaskPayload {
  /** One parameter row per iteration (a config), or */
  rows?: Record<string, unknown>[];
  /** the same row `times` times (a repeat: stored as a count, whatever its size). */
  repeat?: { times: number; row: Record<string, unknown> };
}

/** The iterations of a workflow task: its config rows, or its repeat. */
export function workflowIterations(p: WorkflowPayload): IterationSource {
  if (p.repeat) {
    const { times, row } = p.repeat;
    return { total: times, params: async () => ({ ...row }) };
  }
  return rowsSource(p.rows ?? []);
}

/** What a run record keeps of its parameters: the config rows, or a repeat's row and count. */
export function runParameters(p: WorkflowPayload): unknown {
  return p.repeat ? { repeat: p.repeat.times, row: p.repeat.row } : (p.rows ?? []);
}

/** A run record's parameters read back: a repeat's count and row, or null for config rows. */
export function repeatOfRun(parameters: unknown): { repeat: number; row: Record<string, unknown> } | null {
  const r = parameters as { repeat?: unknown; row?: unknown } | null;
  return r && typeof r === 'object' && typeof r.repeat === 'number' && r.row && typeof r.row === 'object' ? { repeat: r.repeat, row: r.row as Record<string, unknown> } : null;
}

/**
 * Where a task's iterations come from: a list of rows, or an optimizer that suggests each next one. The
 * runner asks for iteration i's parameters in order and reports each finished iteration's outputs.
 */
export interface IterationSource {
  /** How many iterations (for progress, and the loop's end). */
  readonly total: number;
  /** Parameters of iteration i; `recorded`: what that iteration ran with before a crash (reuse them). */
  params(i: number, recorded: Record<string, unknown> | undefined): Promise<Record<string, unknown>>;
  /** Iteration i finished; outputs are the workflow's outputs. */
  measured?(i: number, params: Record<string, unknown>, outputs: Record<string, unknown>): Promise<void>;
  /**
   * A problem with the value a main step saved as `name`, or null. With a problem the step fails (its record
   * says why) and the operator decides, as for any failed step: a campaign's objective that is not a number.
   */
  checkSaved?(name: string, value: unknown): string | null;
}

/** Makes the iteration source of a task kind other than `workflow` (campaigns); `done`: finished iterations of a resumed run. */
export type SourceFactory = ((ctx: { task: QueueTaskRow; runId: number; payload: TaskPayload; done: PhaseRow[]; log: (message: string) => Promise<void> }) => Promise<IterationSource>) & {
  /** What the run record keeps as its parameters (a campaign: how it was set up); null when absent. */
  runParameters?: (payload: TaskPayload) => unknown;
};

const rowsSource = (rows: Record<string, unknown>[]): IterationSource => ({ total: rows.length, params: async (i) => rows[i] });
