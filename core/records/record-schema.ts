/**
 * A run record as the API answers it (GET /app/executions/records, one record), declared once (issue 27
 * item 4): zod, from which records.ts's types are inferred and the API document's `RecordList`, `Record` and
 * their parts are made (server/response-schemas.ts). Declared closed: the document opens it (a response may
 * gain fields); the types are exact. A campaign's set-up is typed by its own module and shown unknown.
 */
import { z } from 'zod';
import type { CampaignRecord } from '../campaign/record.js';
import type { LogRow, PhaseRow, RunStatus } from '../store/types.js';
import { STEP_STATUSES } from './call-record.js';

const ISO_DATE = z.string().describe('ISO 8601 date-time');
const RUN_STATUSES = ['running', 'completed', 'failed', 'stopped', 'aborted', 'interrupted'] as const satisfies readonly RunStatus[];
const PHASE_STATUSES = ['running', 'ok', 'error', 'skipped', 'stopped'] as const satisfies readonly PhaseRow['status'][];
const LOG_LEVELS = ['info', 'warn', 'error'] as const satisfies readonly LogRow['level'][];

/** A run record in the records list, and the head of one record. */
export const RecordSummarySchema = z.object({
  id: z.int(),
  name: z.string(),
  workflow: z.string().describe('The workflow name'),
  workflow_version: z.int().nullable(),
  status: z.enum(RUN_STATUSES),
  skipped_steps: z.int().describe('Failed steps the operator skipped: their iterations are marked skipped and are not data'),
  error: z.string().nullable(),
  task_id: z.int().nullable(),
  user_id: z.int().nullable(),
  user: z.string().nullable().describe('Who queued the run; null for a headless run'),
  started_at: ISO_DATE,
  ended_at: ISO_DATE.nullable(),
  duration_ms: z.number().nullable(),
  iterations: z.int().nullable().describe('Iterations planned (parameter rows)'),
});

export const RecordListSchema = z.object({
  records: z.array(RecordSummarySchema).describe('Newest first'),
  page: z.int(),
  per_page: z.int(),
  total: z.int().describe('Records matching the keyword'),
  pages: z.int().describe('Pages of results (0 when none)'),
});

/** One step of a run record (its call record is GET /app/instruments/task/{task_id}). */
export const RecordStepSchema = z.object({
  task_id: z.int().describe('The call record: GET /app/instruments/task/{task_id}'),
  index: z.int().nullable().describe('0-based count of executed steps in the phase run'),
  path: z.string().nullable().describe('Where the step is in the workflow (main[1].steps[0]); null when an earlier `if` makes it unknown'),
  instrument: z.string(),
  method: z.string(),
  args: z.unknown(),
  output: z.unknown(),
  status: z.enum(STEP_STATUSES),
  error: z.string().nullable(),
  started_at: ISO_DATE,
  ended_at: ISO_DATE.nullable(),
  duration_ms: z.number().nullable(),
  bound_ms: z
    .number()
    .nullable()
    .describe(
      "The watchdog's overdue bound for the call when it started, learned from the earlier calls of its instrument and method (docs/notifications.md); null for an input step or before min_samples calls",
    ),
  overdue: z.boolean().describe('It ran longer than that bound'),
});

export const RecordPhaseSchema = z.object({
  id: z.int().nullable(),
  phase: z.string().describe('prep, main or cleanup'),
  iteration: z.int().nullable().describe('0-based iteration of main; null for prep and cleanup'),
  status: z.enum(PHASE_STATUSES).nullable(),
  params: z.unknown(),
  outputs: z.unknown(),
  started_at: ISO_DATE.nullable(),
  ended_at: ISO_DATE.nullable(),
  duration_ms: z.number().nullable(),
  steps: z.array(RecordStepSchema),
  steps_complete: z.boolean().describe('false when the steps were cut at the limit at or before this phase'),
});

export const RecordLogSchema = z.object({ at: ISO_DATE, level: z.enum(LOG_LEVELS), message: z.string() });

/** One run record: its head, the workflow and rows it ran, its phases with their steps, its log. */
export const RecordDetailSchema = RecordSummarySchema.extend({
  definition: z.unknown().describe('The workflow document as it was when the run started'),
  parameters: z.unknown().describe('The parameter rows, one per iteration'),
  repeat: z.int().nullable().describe('How many times a repeat ran its row; null for a run over config rows'),
  campaign: z.custom<CampaignRecord['campaign']>().nullable().describe("A campaign's set-up (optimizer, seed, space, objectives, fixed values, warm start); null for a workflow run"),
  phases: z.array(RecordPhaseSchema),
  logs: z.array(RecordLogSchema),
  steps_shown: z.int().describe('Step records in `phases` (at most 10,000: the steps CSV has all)'),
  steps_truncated: z.boolean(),
});

export type RecordSummary = z.infer<typeof RecordSummarySchema>;
export type RecordList = z.infer<typeof RecordListSchema>;
export type RecordStep = z.infer<typeof RecordStepSchema>;
export type RecordPhase = z.infer<typeof RecordPhaseSchema>;
export type RecordLog = z.infer<typeof RecordLogSchema>;
export type RecordDetail = z.infer<typeof RecordDetailSchema>;
