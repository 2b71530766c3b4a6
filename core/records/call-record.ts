/**
 * A call record as the API answers it (GET /app/instruments/task/{task_id}, an instrument's recent calls),
 * declared once (issue 27 item 4): zod, from which its type is inferred and the API document's `Step`
 * component is made (server/response-schemas.ts), with the one function that builds it from a stored record.
 */
import { z } from 'zod';
import type { StepRow } from '../store/types.js';

const ISO_DATE = z.string().describe('ISO 8601 date-time');

export const STEP_STATUSES = ['ok', 'error', 'running', 'in-doubt', 'skipped', 'blocked'] as const satisfies readonly StepRow['status'][];

export const CallRecordSchema = z.object({
  task_id: z.int().describe('The record of the call: GET /app/instruments/task/{task_id}'),
  run_id: z.int().nullable().describe('The run it is a step of; null for a direct call'),
  instrument: z.string(),
  method: z.string(),
  args: z.unknown().optional(),
  output: z.unknown().optional(),
  status: z.enum(STEP_STATUSES).describe('running from just before the driver is touched until the call ends (a labdeck stopped during it leaves it in-doubt)'),
  error: z.string().nullable(),
  user_id: z.int().nullable(),
  started_at: ISO_DATE,
  ended_at: ISO_DATE.nullable().describe('null while it runs'),
  duration_ms: z.number().nullable(),
  log: z.string().nullable().optional().describe("What the instrument printed or logged during the call (Python drivers' print() and logging)"),
});

export type CallRecordJson = z.infer<typeof CallRecordSchema>;

/** The call record of a stored step, as the API answers it. */
export function callRecord(s: StepRow): CallRecordJson {
  return {
    task_id: s.id,
    run_id: s.runId,
    instrument: s.instrument,
    method: s.method,
    args: s.args,
    output: s.output,
    status: s.status,
    error: s.error,
    user_id: s.userId,
    started_at: s.startedAt.toISOString(),
    ended_at: s.endedAt ? s.endedAt.toISOString() : null,
    duration_ms: s.endedAt ? s.endedAt.getTime() - s.startedAt.getTime() : null,
    log: s.log,
  };
}
