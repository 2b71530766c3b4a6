/**
 * The queue as the API shows it, declared once (issue 27 item 4): zod, from which the routes' answers are
 * typed (server/routes/executions.tsx `taskJson`) and the API document's `QueueTask`, `Queue` and `RunStarted`
 * components are made (server/response-schemas.ts), which the TypeScript client's types are written from.
 * Declared closed: the document opens it (a response may gain fields); the types are exact.
 */
import { z } from 'zod';

const ISO_DATE = z.string().describe('ISO 8601 date-time');

export const TASK_STATUSES = ['pending', 'running', 'interrupted', 'done', 'failed', 'stopped', 'aborted'] as const;

/** A queued task: GET /executions/queue lists the unfinished ones; GET /executions/queue/task/{id} gives one with its payload. */
export const QueueTaskSchema = z.object({
  id: z.int(),
  name: z.string(),
  kind: z.enum(['workflow', 'campaign']),
  status: z.enum(TASK_STATUSES),
  position: z.number(),
  workflow: z.string().nullable(),
  iterations: z.int().nullable(),
  run_id: z.int().nullable().describe('Its run record, once it has started'),
  created_by: z.int().nullable(),
  created_at: ISO_DATE,
  started_at: ISO_DATE.nullable(),
  ended_at: ISO_DATE.nullable(),
  payload: z.unknown().optional().describe('GET /app/executions/queue/task/{task_id} only: the workflow and its rows'),
});

/** GET /executions/queue: the unfinished tasks in order, and the runner's flags. */
export const QueueSchema = z.object({
  tasks: z.array(QueueTaskSchema),
  paused: z.boolean(),
  queue_held: z.boolean(),
  current_task_id: z.int().nullable(),
  running_task_ids: z.array(z.int()).describe('The tasks this labdeck runs now (several with lab serve --parallel N)'),
});

/** A task queued (POST /executions/config, /executions/campaign): its id, and whether it runs already. */
export const RunStartedSchema = z.object({ task_id: z.int(), status: z.enum(['queued', 'running']) });

export type QueueTaskJson = z.infer<typeof QueueTaskSchema>;
export type QueueJson = z.infer<typeof QueueSchema>;
export type RunStartedJson = z.infer<typeof RunStartedSchema>;
