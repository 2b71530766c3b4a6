/**
 * The runner's status, declared once (issue 27 item 4): zod, from which the runner's types are inferred
 * (`RunnerStatus`, `RunningTask`, `ElsewhereTask`, `WaitingInput`, `IterationDoubt`, `z.infer`) and the API
 * document's `RunnerStatus` component is made (server/response-schemas.ts), so what status.ts builds and what
 * the document says are the same declaration. Declared closed: the document opens it (a response may gain
 * fields); the types are exact. Imports no module of the runner.
 */
import { z } from 'zod';
import { InputSchema } from '../workflow/input.js';
import { PHASES } from '../workflow/model.js';

const ISO_DATE = z.string().describe('ISO 8601 date-time');
const PHASE = z.enum(PHASES);

export const RUNNER_STATES = ['idle', 'running', 'paused', 'waiting_input', 'failed', 'stopping'] as const;
const TASK_STATE = z.enum(RUNNER_STATES).exclude(['idle']);

const Progress = z.object({ phase: PHASE.nullable(), iteration: z.int(), iterations: z.int(), step: z.int(), steps: z.int() });
const FailedStep = z.object({ phase: PHASE, iteration: z.int().nullable(), path: z.string(), error: z.string() }).describe('The step that failed, while the runner waits for the operator');
const Waiting = z.object({ path: z.string(), message: z.string() }).describe('A `pause` step waiting for the operator');

/** An `input` step waiting for a person's value (POST /executions/input; core/runner/input.ts). */
export const WaitingInputSchema = z
  .object({
    task_id: z.int(),
    run_id: z.int(),
    path: z.string(),
    prompt: z.string(),
    save_as: z.string(),
    schema: InputSchema,
    expects: z.string().describe('The schema in words: `a number from 0 to 14 (pH)`'),
    step_id: z.int(),
    since: ISO_DATE,
  })
  .describe("An `input` step waiting for a person's value (POST /app/executions/input)");

/** One task this labdeck runs now. */
export const RunningTaskSchema = z.object({
  id: z.int(),
  name: z.string(),
  kind: z.string(),
  run_id: z.int().nullable(),
  workflow: z.string(),
  started_at: ISO_DATE.nullable(),
  state: TASK_STATE,
  paused: z.boolean().describe('Its pause flag: no new step of it starts'),
  progress: Progress,
  failed_step: FailedStep.nullable(),
  waiting: Waiting.nullable(),
  input: WaitingInputSchema.nullable(),
  instruments: z.array(z.string()).describe('The instruments it leases while it runs'),
});

/** A task another labdeck runs: which, where, and (PostgreSQL) its state and progress as that labdeck relayed them. */
export const ElsewhereTaskSchema = z.object({
  task_id: z.int(),
  name: z.string(),
  run_id: z.int().nullable(),
  host: z.string(),
  state: TASK_STATE.optional(),
  paused: z.boolean().optional(),
  progress: Progress.optional(),
  failed_step: FailedStep.nullable().optional(),
  waiting: Waiting.nullable().optional(),
  input: WaitingInputSchema.nullable().optional(),
});

/** What a retry of an interrupted task's in-doubt step would mix (core/runner/iteration.ts). */
export const IterationDoubtSchema = z.object({
  remade: z
    .array(z.string())
    .describe(
      "Instruments of the in-doubt step's iteration made again since the iteration began (a restart, a Python host restarted, a reload, an agent reconnected): a retry of the step alone would mix two instruments' measurements",
    ),
  retry: z
    .enum(['step', 'iteration'])
    .describe('What POST /executions/retry does: re-run the in-doubt step, or (a campaign whose instruments were made again) the whole iteration from its first step'),
});

/** The runner as GET /executions/status (and the controls) answer it. */
export const RunnerStatusSchema = z.object({
  busy: z.boolean(),
  state: z.enum(RUNNER_STATES),
  paused: z.boolean(),
  queue_held: z.boolean(),
  current_task: z.object({ id: z.int(), name: z.string(), kind: z.string(), run_id: z.int().nullable(), workflow: z.string(), started_at: ISO_DATE.nullable() }).nullable(),
  progress: Progress,
  failed_step: FailedStep.nullable(),
  waiting: Waiting.nullable(),
  input: WaitingInputSchema.nullable(),
  interrupted: z
    .object({
      task_id: z.int(),
      run_id: z.int().nullable(),
      step: z
        .object({ id: z.int(), phase: z.string().nullable(), iteration: z.int().nullable(), index: z.int().nullable(), instrument: z.string(), method: z.string() })
        .nullable()
        .describe('Its in-doubt step'),
      ...IterationDoubtSchema.shape,
    })
    .nullable()
    .describe('A task cut off by a stop of labdeck (or a store failure), waiting for a decision'),
  store_error: z.string().nullable().describe('Why no task can start now: the database cannot be written (full or read-only disk)'),
  elsewhere: z
    .array(ElsewhereTaskSchema)
    .describe('Tasks other labdecks on this database are running, with their state and progress as those labdecks relay them (PostgreSQL); the run controls here act on them there'),
  running: z.array(RunningTaskSchema).describe('Every task this labdeck runs, in the order they started (current_task and the fields above are the first); with several, the controls take task_id'),
  parallel: z.int().describe('How many tasks on disjoint instruments this labdeck runs at once (lab serve --parallel N; default 1)'),
});

export type RunnerState = (typeof RUNNER_STATES)[number];
export type RunnerStatus = z.infer<typeof RunnerStatusSchema>;
export type RunningTaskStatus = z.infer<typeof RunningTaskSchema>;
export type ElsewhereTask = z.infer<typeof ElsewhereTaskSchema>;
export type WaitingInput = z.infer<typeof WaitingInputSchema>;
export type IterationDoubt = z.infer<typeof IterationDoubtSchema>;
