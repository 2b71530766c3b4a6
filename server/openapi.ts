/**
 * The OpenAPI 3.1 document of labdeck's HTTP API, generated: it holds no route of its own.
 * - Each route is declared once, beside its handler (server/route.ts, DESIGN.md §14): method, path, section
 *   (tag), summary, who may call it, its path, query and body schemas (zod, turned into JSON Schema with
 *   `z.toJSONSchema`) and the statuses it answers. server/catalogue.ts lists them in order.
 * - This file adds what every route of a kind answers (401 and 302 without login, 403 for admins only or a
 *   cross-site request, 400 for a malformed body, 413), the component schemas the declared answers refer to
 *   by name (`RunnerStatus`, `Record`, the workflow document, …), and the live deck: one direct-call body per
 *   instrument, `oneOf` its methods, from the drivers' own schemas.
 *
 * test/api/openapi.test.ts checks the document against the express app (every registered route is declared,
 * the statuses the routes really answer are documented). Paths are given under the `/app` mount; every one is
 * also served at `/`.
 */
import { RESOURCE_SCHEMAS } from './resource-schemas.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { InstrumentSchema, JSONSchema } from '../core/contracts/index.js';
import { ERROR_CODES, type ErrorCode } from '../core/errors.js';
import { SAFETY_SCHEMAS, safetyFileSchema } from './safety-schemas.js';
import { projectRoot } from '../core/paths.js';
import { Step as WorkflowStep, Workflow } from '../core/workflow/model.js';
import { allRoutes } from './catalogue.js';
import { bodyName, type BodyKind, type Route } from './route.js';
import { INSTRUMENT_ROUTES } from './routes/instruments.js';
import {
  error,
  redirect,
  ref,
  type HttpMethod,
  type MediaTypeObject,
  type OpenApiDocument,
  type OperationObject,
  type ParameterObject,
  type RequestBodyObject,
  type ResponseObject,
  type SchemaObject,
  type SecurityRequirement,
} from './api-doc.js';

export * from './api-doc.js';

export const MOUNT = '/app';

export interface BuildOptions {
  /** The live deck (`runtime.deck.list()`); one direct-call body per instrument is generated from it. */
  instruments: InstrumentSchema[];
  /** Where the server is reached, without the mount: `http://127.0.0.1:8000`. */
  serverUrl: string;
  /**
   * A document for a visitor who is not logged in: the live deck is left out (the deck's schemas are only
   * shown to users), `instruments` is ignored and the description says how to get the full document.
   */
  public?: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// Component schemas of the answers (zod → JSON Schema, read as output: a response may gain fields). The
// declared bodies are converted where their routes are (read as input, closed).

const ISO_DATE = z.string().describe('ISO 8601 date-time');
const OFFLINE = z.string().optional().describe('Why it cannot be called now (its host process or agent is down, or another labdeck drives it)');
const FAILURE = z
  .object({ stage: z.string().describe('config, import, init (its constructor) or setup (its calls)'), error: z.string(), detail: z.string().optional().describe('The traceback') })
  .optional()
  .describe('An instrument of a deck file (ivoryos-deck/1) that did not load; POST /app/instruments/{instrument}/retry after fixing it');
const HOST = z.string().optional().describe('The PC it lives on: its lab agent, or another labdeck on the database that drives it (calls go there)');

const User = z.object({ id: z.int(), username: z.string(), role: z.enum(['admin', 'operator']) });
const ManagedUser = User.extend({
  disabled: z.boolean().describe('Cannot log in; its API tokens are refused'),
  created_at: ISO_DATE,
});
const MethodSchemaZ = z.looseObject({
  name: z.string(),
  description: z.string(),
  safety: z.enum(['readonly', 'idempotent', 'hazardous']),
  hidden: z.boolean().describe('Hidden for you (collapsed on the page; still callable)'),
  order: z.int().describe("Position in the driver's declaration order"),
  params: z.record(z.string(), z.unknown()).describe('JSON Schema of the args object'),
  returns: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of the output, when declared'),
  inferred: z.boolean().describe('The schema was inferred from plain code'),
  inferredFields: z.array(z.string()),
});

const Driver = z.object({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  origin: z.string(),
  file: z.string().describe('The module the driver came from'),
  options: z.record(z.string(), z.unknown()).describe('JSON Schema of the options (the connect form)'),
  inferred: z.boolean(),
  inferredFields: z.array(z.string()),
});

const Step = z.object({
  task_id: z.int(),
  run_id: z.int().nullable(),
  instrument: z.string(),
  method: z.string(),
  args: z.unknown().optional(),
  output: z.unknown().optional(),
  status: z.enum(['ok', 'error', 'running', 'in-doubt', 'skipped', 'blocked']),
  error: z.string().nullable(),
  user_id: z.int().nullable(),
  started_at: ISO_DATE,
  ended_at: ISO_DATE.nullable(),
  duration_ms: z.number().nullable(),
});

/** A run record in the records list (GET /executions/records), and the head of one record. */
const RecordSummary = z.looseObject({
  id: z.int(),
  name: z.string(),
  workflow: z.string().describe('The workflow name'),
  workflow_version: z.int().nullable(),
  status: z.enum(['running', 'completed', 'failed', 'stopped', 'aborted', 'interrupted']),
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
const RecordStep = z.looseObject({
  task_id: z.int().describe('The call record: GET /app/instruments/task/{task_id}'),
  index: z.int().nullable().describe('0-based count of executed steps in the phase run'),
  path: z.string().nullable().describe('Where the step is in the workflow (main[1].steps[0]); null when an earlier `if` makes it unknown'),
  instrument: z.string(),
  method: z.string(),
  args: z.unknown().optional(),
  output: z.unknown().optional(),
  status: z.enum(['ok', 'error', 'running', 'in-doubt', 'skipped', 'blocked']),
  error: z.string().nullable(),
  started_at: ISO_DATE,
  ended_at: ISO_DATE.nullable(),
  duration_ms: z.number().nullable(),
  bound_ms: z.number().nullable().describe("The watchdog's overdue bound for the call when it started, learned from the earlier calls of its instrument and method (docs/notifications.md); null for an input step or before min_samples calls"),
  overdue: z.boolean().describe('It ran longer than that bound'),
});

/** The runner as GET /executions/status (and the controls) answer it. */
const RunnerStatus = z.looseObject({
  busy: z.boolean(),
  state: z.enum(['idle', 'running', 'paused', 'waiting_input', 'failed', 'stopping']),
  paused: z.boolean(),
  queue_held: z.boolean(),
  current_task: z.looseObject({ id: z.int(), name: z.string() }).nullable(),
  progress: z.object({ phase: z.string().nullable(), iteration: z.int(), iterations: z.int(), step: z.int(), steps: z.int() }),
  store_error: z.string().nullable().describe('Why no task can start now: the database cannot be written (full or read-only disk)'),
  timing: z
    .looseObject({
      steps: z.array(z.looseObject({ step_id: z.int(), run_id: z.int(), path: z.string(), expected_end: ISO_DATE.nullable(), overdue: z.boolean() })),
      runs: z.array(z.looseObject({ run_id: z.int(), eta: z.object({ earliest: ISO_DATE, latest: ISO_DATE, samples: z.int() }).nullable() })),
    })
    .optional()
    .describe("The watchdog's view (docs/notifications.md): each running call step's expected end (null until its instrument and method have enough records) and each run's ETA (P10-P90 of past runs of its workflow)"),
  interrupted: z
    .looseObject({
      task_id: z.int(),
      run_id: z.int().nullable(),
      step: z.looseObject({ id: z.int(), phase: z.string().nullable(), iteration: z.int().nullable(), index: z.int().nullable(), instrument: z.string(), method: z.string() }).nullable().describe('Its in-doubt step'),
      remade: z.array(z.string()).optional().describe("Instruments of the in-doubt step's iteration made again since the iteration began (a restart, a Python host restarted, a reload, an agent reconnected): a retry of the step alone would mix two instruments' measurements"),
      retry: z.enum(['step', 'iteration']).optional().describe('What POST /executions/retry does: re-run the in-doubt step, or (a campaign whose instruments were made again) the whole iteration from its first step'),
    })
    .nullable()
    .optional()
    .describe('A task cut off by a stop of labdeck (or a store failure), waiting for a decision'),
  elsewhere: z
    .array(
      z.object({
        task_id: z.int(),
        name: z.string(),
        run_id: z.int().nullable(),
        host: z.string(),
        state: z.enum(['running', 'paused', 'waiting_input', 'failed', 'stopping']).optional(),
        paused: z.boolean().optional(),
        progress: z.object({ phase: z.string().nullable(), iteration: z.int(), iterations: z.int(), step: z.int(), steps: z.int() }).optional(),
        failed_step: z.looseObject({ path: z.string(), error: z.string() }).nullable().optional(),
        waiting: z.looseObject({ path: z.string(), message: z.string() }).nullable().optional(),
      }),
    )
    .describe('Tasks other labdecks on this database are running, with their state and progress as those labdecks relay them (PostgreSQL); the run controls here act on them there'),
  running: z
    .array(
      z.looseObject({
        id: z.int(),
        name: z.string(),
        run_id: z.int().nullable(),
        state: z.enum(['running', 'paused', 'failed', 'stopping']),
        paused: z.boolean(),
        progress: z.object({ phase: z.string().nullable(), iteration: z.int(), iterations: z.int(), step: z.int(), steps: z.int() }),
        instruments: z.array(z.string()).describe('The instruments it leases while it runs'),
      }),
    )
    .describe('Every task this labdeck runs, in the order they started (current_task and the fields above are the first); with several, the controls take task_id'),
  parallel: z.int().describe('How many tasks on disjoint instruments this labdeck runs at once (lab serve --parallel N; default 1)'),
});

const RESPONSE = {
  Error: z
    .looseObject({
      error: z.object({
        code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
        message: z.string().describe('For the person who has to act on it'),
        details: z.array(z.object({ field: z.string().optional(), message: z.string(), limit: z.unknown().optional().describe('safety: the limit broken'), rule: z.string().optional().describe('safety: the rule broken'), value: z.unknown().optional().describe('safety: the value') })).optional().describe('The offending fields'),
      }),
      task_id: z.int().optional().describe('502 from an instrument call: the record of the failed call'),
      retry_after: z.number().optional().describe('429: seconds to wait (also the Retry-After header)'),
    })
    .describe('Every JSON error. Some add top-level fields (task_id, retry_after, instrument, owner).'),
  Health: z.object({ ok: z.literal(true), instruments: z.int().describe('Devices on the deck') }),
  RouteList: z.object({
    routes: z.array(
      z.object({
        method: z.string(),
        path: z.string(),
        summary: z.string(),
        section: z.string(),
        admin: z.boolean().optional(),
        public: z.boolean().optional(),
      }),
    ),
  }),
  Account: z.object({
    user: User,
    tokens: z.array(
      z.object({ id: z.int(), name: z.string(), prefix: z.string(), scope: z.enum(['user', 'agent']), created_at: ISO_DATE, last_used_at: ISO_DATE.nullable() }),
    ),
    signup_open: z.boolean(),
    users: z.array(User).optional().describe('Every account (admins only)'),
  }),
  TokenCreated: z.object({ token: z.string().describe('Shown once: send it as "Authorization: Bearer <token>" (an agent token: to lab agent --token)'), id: z.int(), name: z.string(), scope: z.enum(['user', 'agent']) }),
  SignupState: z.object({ signup_open: z.boolean() }),
  ManagedUser,
  UserList: z.object({ users: z.array(ManagedUser).describe('Every account that is not deleted, oldest first') }),
  UserChanged: z.object({ user: ManagedUser.describe('The account as it is now') }),
  InstrumentList: z.object({
    instruments: z.array(
      z.object({ name: z.string(), driver: z.string(), description: z.string(), source: z.enum(['deck', 'temporary']), methods: z.array(z.string()), offline: OFFLINE, failure: FAILURE, host: HOST }),
    ),
  }),
  Instrument: z
    .object({
      name: z.string(),
      driver: z.string(),
      description: z.string(),
      source: z.enum(['deck', 'temporary']),
      methods: z.array(MethodSchemaZ).describe('In your saved order'),
      offline: OFFLINE,
      failure: FAILURE,
      host: HOST,
    })
    .describe('An instrument and its methods, with your order and hidden flags'),
  LabwareView: z
    .object({
      worktable: z.boolean().describe('false: the instrument has no worktable (no __ivoryos_labware__), or it could not be read (error)'),
      deck: z.object({ name: z.string().optional(), kind: z.string().optional(), label: z.string().optional() }).optional(),
      labware: z
        .array(
          z.object({
            name: z.string(),
            label: z.string(),
            category: z.string().nullable(),
            site: z.string().nullable(),
            grid: z.array(z.array(z.string())).describe('Position names, rows of columns'),
            contents: z.record(z.string(), z.record(z.string(), z.unknown())).describe('What a position holds: { volume_ul, liquids }, or { tip } on a tip rack'),
            tips_left: z.int().optional(),
          }),
        )
        .optional(),
      sites: z.array(z.string()).optional(),
      editable: z.boolean().optional(),
      catalog: z.boolean().optional(),
      error: z.string().optional(),
    })
    .describe("An instrument's worktable (ivoryOS's worktable protocol): its labware, grids, contents and tips left"),
  CallResult: z.object({ task_id: z.int().describe('The record of this call: GET /app/instruments/task/{task_id}'), output: z.unknown().optional() }),
  HiddenResult: z.object({ instrument: z.string(), method: z.string(), hidden: z.boolean() }),
  Step,
  CallList: z.object({ calls: z.array(Step).describe('Newest first') }),
  ConsoleResult: z.object({
    success: z.boolean(),
    result: z.unknown().optional().describe('The value of the last expression, JSON-safe'),
    stdout: z.string(),
    error: z.string().nullable(),
  }),
  Driver,
  DriverList: z.object({ drivers: z.array(Driver) }),
  Imported: z.object({
    file: z.string().describe('The module imported, as the server resolved it'),
    instruments: z.array(z.string()).describe('The instruments it added to the deck'),
    drivers: z.array(z.string()).describe('The drivers it made connectable (its classes; a deck: the classes of its instruments)'),
  }),
  RunStarted: z.object({ task_id: z.int(), status: z.enum(['queued', 'running']) }),
  AttentionList: z.object({
    items: z.array(z.looseObject({ kind: z.string(), title: z.string(), action: z.string(), link: z.string(), url: z.string() })).describe('What waits for a person: kind (input, pause, failed_step, interrupted, approval, held_queue, host_offline, safety), what, what to do, where'),
    count: z.int(),
  }),
  InputGiven: z.object({ task_id: z.int(), value: z.unknown().describe('The value as it was saved (a number input: a number)'), status: RunnerStatus }),
  OptimizerSchemas: z.looseObject({ name: z.string().optional(), config: z.unknown().optional(), capabilities: z.unknown().optional(), optimizers: z.array(z.unknown()).optional() }).describe('One optimizer, or { optimizers: [...] }'),
  CampaignPoint: z.looseObject({
    n: z.int(),
    parameters: z.record(z.string(), z.unknown()),
    state: z.enum(['pending', 'measured', 'discarded']),
    results: z.record(z.string(), z.number()).nullable(),
    reason: z.string().nullable(),
    suggested_by: z.string().describe('optimizer:<name> or person:<username>'),
    measured_by: z.string().nullable().describe('person:<username> (run:<id> for a robot campaign\'s own iterations)'),
  }),
  CampaignPoints: z.object({ points: z.array(z.looseObject({ n: z.int(), parameters: z.record(z.string(), z.unknown()), state: z.string() })) }),
  Campaign: z.looseObject({
    campaign_id: z.int(),
    name: z.string(),
    execution: z.enum(['manual', 'robot']),
    measures: z.array(z.string()),
    counts: z.object({ pending: z.int(), measured: z.int(), discarded: z.int() }),
    points: z.array(z.looseObject({ n: z.int(), state: z.string() })),
  }),
  CampaignList: z.object({ campaigns: z.array(z.looseObject({ campaign_id: z.int(), name: z.string(), execution: z.string() })) }),
  ResultsUploaded: z.object({ measured: z.array(z.int()), discarded: z.array(z.int()), unchanged: z.array(z.int()) }),
  CampaignStarted: z.union([z.object({ task_id: z.int(), status: z.enum(['queued', 'running']) }), z.object({ campaign_id: z.int() }).describe('execution: manual')]),
  LatestPlot: z.looseObject({
    campaign: z.looseObject({ task_id: z.int(), name: z.string(), optimizer: z.string(), status: z.string() }),
    objectives: z.array(z.object({ name: z.string(), minimize: z.boolean() })),
    points: z.array(z.looseObject({ iteration: z.int().nullable(), params: z.record(z.string(), z.unknown()), values: z.record(z.string(), z.number().nullable()) })),
    best_so_far: z.array(z.object({ iteration: z.int(), value: z.number() })),
    model: z.unknown().describe("The optimizer's snapshot (model surface, Pareto front) while it is in memory, else null"),
  }),
  QueueTask: z.looseObject({
    id: z.int(),
    name: z.string(),
    kind: z.enum(['workflow', 'campaign']),
    status: z.enum(['pending', 'running', 'interrupted', 'done', 'failed', 'stopped', 'aborted']),
    position: z.number(),
    workflow: z.string().nullable(),
    iterations: z.int().nullable(),
    run_id: z.int().nullable(),
    payload: z.unknown().optional().describe('GET /app/executions/queue/task/{task_id} only: the workflow and its rows'),
  }),
  QueueList: z.looseObject({
    tasks: z.array(z.looseObject({ id: z.int(), name: z.string(), status: z.string() })),
    paused: z.boolean().optional(),
    queue_held: z.boolean().optional(),
    running_task_ids: z.array(z.int()).optional().describe('The tasks this labdeck runs now (several with lab serve --parallel N)'),
  }),
  RunnerStatus,
  Approval: z.looseObject({
    id: z.int(),
    kind: z.enum(['call', 'run', 'campaign', 'resume']),
    state: z.enum(['pending', 'approved', 'rejected', 'expired']),
    summary: z.string().describe('What would happen, in one line'),
    request: z.unknown().describe('What the agent sent'),
    plan: z.unknown().describe('What runs when approved: the call with its arguments, or the task with its workflow and rows or space'),
    user: z.string().nullable().describe('The account the agent acts as'),
    token: z.object({ id: z.int().nullable(), name: z.string() }).describe('The MCP token that asked'),
    created_at: ISO_DATE,
    expires_at: ISO_DATE,
    decided_by: z.string().nullable(),
    decided_at: ISO_DATE.nullable(),
    reason: z.string().nullable(),
    outcome: z.unknown().describe('Once approved and run: { task_id, output? } or { error }; null before'),
  }),
  ApprovalInbox: z.looseObject({
    pending: z.array(z.looseObject({ id: z.int(), state: z.string() })).describe('Waiting for a decision, newest first'),
    done: z.array(z.looseObject({ id: z.int(), state: z.string() })).describe('The latest decided or expired ones'),
    policy: z.looseObject({ default: z.array(z.string()), instruments: z.record(z.string(), z.array(z.string())) }),
  }),
  Notifications: z.looseObject({
    settings: z.looseObject({}).describe('The settings document, secrets left out (secret_set / password_set say whether one is stored)'),
    health: z.array(z.looseObject({ channel: z.string(), waiting: z.int(), failing: z.int(), dead: z.boolean(), last_error: z.string().nullable() })).describe("Each channel's deliveries"),
    attention: z.array(z.looseObject({ id: z.string(), event: z.string(), state: z.string() })).describe('What waits for a person now'),
    recent: z.array(z.looseObject({ id: z.string(), event: z.string(), state: z.string() })).describe('The latest events and resolutions'),
  }),
  NotificationSettings: z.looseObject({
    channels: z.array(z.looseObject({ name: z.string(), kind: z.enum(['webhook', 'email', 'slack']), events: z.array(z.string()).optional() })),
    watchdog: z.looseObject({ factor: z.number(), mad_factor: z.number(), floor_s: z.number(), min_samples: z.int() }).optional(),
    lab: z.string().optional(),
    base_url: z.string().optional(),
  }),
  NotificationTested: z.object({ channel: z.string(), sent: z.literal(true) }),
  NotificationSubscription: z.looseObject({ subscription: z.object({ email: z.string(), events: z.array(z.string()) }).nullable(), events: z.array(z.string()) }),
  RunSetup: z.object({
    workflows: z.array(z.object({ name: z.string(), version: z.int() })).describe('The saved workflows'),
    status: RunnerStatus,
  }),
  CurrentTask: z.looseObject({ current_task: z.looseObject({ id: z.int() }).nullable(), state: z.string() }),
  Deleted: z.looseObject({ deleted: z.union([z.int(), z.string()]) }),
  RecordList: z.object({
    records: z.array(RecordSummary).describe('Newest first'),
    page: z.int(),
    per_page: z.int(),
    total: z.int().describe('Records matching the keyword'),
    pages: z.int().describe('Pages of results (0 when none)'),
  }),
  Record: RecordSummary.extend({
    definition: z.unknown().optional().describe('The workflow document as it was when the run started'),
    parameters: z.unknown().optional().describe('The parameter rows, one per iteration'),
    phases: z.array(
      z.looseObject({
        id: z.int().nullable(),
        phase: z.string().describe('prep, main or cleanup'),
        iteration: z.int().nullable().describe('0-based iteration of main; null for prep and cleanup'),
        status: z.enum(['running', 'ok', 'error', 'skipped', 'stopped']).nullable(),
        params: z.unknown().optional(),
        outputs: z.unknown().optional(),
        started_at: ISO_DATE.nullable(),
        ended_at: ISO_DATE.nullable(),
        duration_ms: z.number().nullable(),
        steps: z.array(RecordStep),
        steps_complete: z.boolean().describe('false when the steps were cut at the limit at or before this phase'),
      }),
    ),
    logs: z.array(z.object({ at: ISO_DATE, level: z.enum(['info', 'warn', 'error']), message: z.string() })),
    steps_shown: z.int().describe('Step records in `phases` (at most 10,000: the steps CSV has all)'),
    steps_truncated: z.boolean(),
  }),
  PlotData: z.object({
    run_id: z.int(),
    workflow: z.string(),
    parameters: z.array(z.string()).describe('Parameter names'),
    outputs: z.array(z.string()).describe('Output names'),
    iterations: z.array(
      z.object({
        iteration: z.int().describe('0-based'),
        params: z.record(z.string(), z.unknown()),
        outputs: z.record(z.string(), z.unknown()),
        status: z.enum(['running', 'ok', 'error', 'skipped', 'stopped']),
      }),
    ),
    series: z.record(z.string(), z.array(z.number().nullable())).describe('Per parameter and output, one value per entry of `iterations`: numbers only, anything else null'),
  }),
  ...RESOURCE_SCHEMAS,
};

/** Drop `additionalProperties: false`: a response may gain fields without breaking generated clients. */
function openSchema(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(openSchema);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).filter(([k, x]) => !(k === 'additionalProperties' && x === false)).map(([k, x]) => [k, openSchema(x)]));
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): SchemaObject {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as SchemaObject;
  return io === 'output' ? (openSchema(rest) as SchemaObject) : rest;
}

let fixedCache: Record<string, SchemaObject> | null = null;
/** The component schemas the declared answers refer to by name, converted once. */
function fixedSchemas(): Record<string, SchemaObject> {
  if (fixedCache) return fixedCache;
  const out: Record<string, SchemaObject> = {};
  for (const [name, s] of Object.entries(RESPONSE)) out[name] = jsonSchema(s, 'output');
  workflowSchemas(out);
  for (const [name, s] of Object.entries(SAFETY_SCHEMAS)) out[name] = jsonSchema(s, 'output');
  out.SafetyFile = safetyFileSchema() as SchemaObject;
  fixedCache = out;
  return out;
}

const MEDIA: Record<BodyKind, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
  text: 'text/plain',
};

/**
 * Workflows: the document schema comes from the zod model (core/workflow/model.ts), its recursive steps as
 * the component `Workflow.Step`; the answers that carry a document refer to it.
 */
function workflowSchemas(out: Record<string, SchemaObject>) {
  const steps = z.registry<{ id: string }>();
  steps.add(WorkflowStep, { id: 'Step' });
  embed(z.toJSONSchema(Workflow, { io: 'input', unrepresentable: 'any', metadata: steps }) as JSONSchema, 'Workflow', out);
  const str = { type: 'string' };
  const head = {
    name: str,
    version: { type: 'integer', minimum: 1, description: 'Every save makes a new version; the latest is the current one' },
    updated_at: { type: 'string', description: 'ISO 8601 date-time: when this version was saved' },
    updated_by: { type: ['string', 'null'], description: 'Who saved it (null: unknown)' },
  };
  out.WorkflowSaved = { type: 'object', properties: { name: str, version: head.version, workflow: ref('Workflow') }, required: ['name', 'version', 'workflow'] };
  out.WorkflowVersion = { type: 'object', properties: { ...head, workflow: ref('Workflow') }, required: ['name', 'version', 'workflow'] };
  out.WorkflowList = {
    type: 'object',
    properties: {
      workflows: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            ...head,
            description: str,
            parameters: (((out.Workflow as SchemaObject).properties as Record<string, SchemaObject>).parameters ?? { type: 'array' }),
            outputs: { type: 'array', items: str },
            instruments: { type: 'array', items: str, description: 'The instruments its steps call' },
            steps: { type: 'object', description: 'Top-level steps per phase', properties: { prep: { type: 'integer' }, main: { type: 'integer' }, cleanup: { type: 'integer' } } },
            broken: {
              type: 'array',
              description: 'What the current deck breaks in it (empty: it fits the deck): each step and field, and the deck change that did it',
              items: {
                type: 'object',
                properties: {
                  field: { ...str, description: 'The field (main[0].args.to)' },
                  message: str,
                  step: { ...str, description: 'The step (main[0])' },
                  call: { ...str, description: 'The call the step makes (mover.move_sample)' },
                  change: { ...str, description: 'What changed in the deck (argument to renamed to target)' },
                  deck_version: { type: 'integer', description: 'The deck version that changed it (GET /app/deck/versions/{id})' },
                },
                required: ['field', 'message', 'step'],
              },
            },
          },
          required: ['name', 'version'],
        },
      },
    },
    required: ['workflows'],
  };
  out.WorkflowBuilder = {
    type: 'object',
    description: "What the builder page embeds: the document (an empty one for a new workflow) and the deck's methods",
    properties: {
      name: { type: ['string', 'null'] },
      version: { type: ['integer', 'null'] },
      workflow: ref('Workflow'),
      instruments: { type: 'array', items: { type: 'object', properties: { name: str, driver: str, description: str, methods: { type: 'array', items: { type: 'object' } } } } },
      urls: { type: 'object', properties: { list: str, base: str, run: str } },
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Building operations.

const SESSION_OR_TOKEN: SecurityRequirement[] = [{ session: [] }, { bearer: [] }];

/** Add a response; when the status is already there, join the descriptions and the content. */
function addResponse(responses: Record<string, ResponseObject>, status: string, extra: ResponseObject) {
  const have = responses[status];
  if (!have) {
    responses[status] = extra;
    return;
  }
  responses[status] = {
    ...have,
    description: `${have.description}; or: ${extra.description}`,
    ...(have.content || extra.content ? { content: { ...extra.content, ...have.content } } : {}),
    ...(have.headers || extra.headers ? { headers: { ...extra.headers, ...have.headers } } : {}),
  };
}

/** A zod object's fields as documented parameters (`output`: as the route reads them, an id as an integer). */
function parameters(schema: z.ZodObject<z.ZodRawShape>, where: 'path' | 'query', io: 'input' | 'output'): ParameterObject[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const { description, ...rest } = jsonSchema(field as z.ZodType, io) as SchemaObject & { description?: string };
    const required = where === 'path' || !(field as z.ZodType).safeParse(undefined).success;
    return { name, in: where, ...(required ? { required: true } : {}), ...(description ? { description } : {}), schema: rest };
  });
}

/** The component name of a declared route's body. */

/** A declared route's body: its component (closed: unknown fields refused, but those it passes on) and media types. */
function requestBody(r: Route, schemas: Record<string, SchemaObject>): RequestBodyObject | undefined {
  if (!r.body) return undefined;
  const name = r.body.document ?? bodyName(r);
  if (!r.body.document) {
    const schema = jsonSchema(r.body.schema.strict(), 'input');
    // fields the route passes on: allowed by name pattern, every other unknown field still refused
    if (r.body.extra) schema.patternProperties = { [r.body.extra.source]: {} };
    schemas[name] = schema;
  }
  const kinds = r.body.kinds ?? ['json', 'form'];
  const optional = r.body.optional ?? r.body.schema.safeParse({}).success;
  // a plain-text body is one field's value (the console's code)
  const text = r.body.text ? (r.body.schema.shape[r.body.text] as z.ZodType | undefined) : undefined;
  const content: Record<string, MediaTypeObject> = {};
  for (const k of kinds) content[MEDIA[k]] = { schema: k === 'text' && text ? jsonSchema(text, 'input') : ref(name) };
  return { required: !optional, content, ...(r.body.description ? { description: r.body.description } : {}) };
}

/** The operation of a declared route: its own parameters, body and answers, and those every route of its kind has. */
function operation(r: Route, schemas: Record<string, SchemaObject>): OperationObject {
  const unsafe = r.method !== 'GET';
  const isPublic = r.access === 'public';
  const admin = r.access === 'admin';
  // path parameters as the route reads them (an id is an integer); a template the schema does not name is text
  const declared = r.params ? parameters(r.params, 'path', 'output') : [];
  const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map(([, name]): ParameterObject => declared.find((p) => p.name === name) ?? { name, in: 'path', required: true, schema: { type: 'string' } });
  const params = [...pathParams, ...(r.query ? parameters(r.query, 'query', 'input') : []), ...(r.docParameters ?? [])];
  const responses: Record<string, ResponseObject> = { ...r.responses };

  if (!isPublic) {
    addResponse(responses, '401', error('Not logged in (JSON), or an unknown or malformed bearer token'));
    addResponse(responses, '302', redirect('Not logged in (pages): to the login form, with `next` for a GET'));
  } else if (!r.bare) {
    addResponse(responses, '401', error('An unknown or malformed bearer token (a public route with no Authorization header does not need one)'));
  }
  if (admin) addResponse(responses, '403', error('Only an admin may do this'));
  if (unsafe && !r.bare) {
    addResponse(responses, '403', error('Cross-site request refused (cookie session with a foreign Origin or Sec-Fetch-Site)'));
    addResponse(responses, '400', error('The JSON body is malformed'));
    addResponse(responses, '413', error('The body is over the size limit (1 MB by default)'));
  }
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  sorted.default = error('Anything else: 500 internal (the error is in the server log)');

  const op: OperationObject = {
    operationId: r.operationId,
    summary: r.summary,
    tags: [r.section],
    responses: sorted,
    security: isPublic ? (r.optionalLogin ? [{}, ...SESSION_OR_TOKEN] : []) : SESSION_OR_TOKEN,
  };
  if (r.description) op.description = r.description;
  if (params.length) op.parameters = params;
  const body = requestBody(r, schemas);
  if (body) op.requestBody = body;
  if (admin) op['x-labdeck-admin'] = true;
  return op;
}

// ---------------------------------------------------------------------------------------------------------
// The live deck: one `Call.<instrument>` schema per instrument, `oneOf` its methods.

/** A component name for any string (component keys allow letters, digits, `.`, `-` and `_`). */
const safeName = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/**
 * Put a plugin's JSON Schema into components/schemas under `name`. Local references (`#` for recursion,
 * `#/$defs/X`) are rewritten to components, because inside the document `#` means the document itself.
 */
function embed(schema: JSONSchema, name: string, schemas: Record<string, SchemaObject>) {
  const { $schema: _drop, $defs, definitions, ...root } = schema as SchemaObject & { $defs?: Record<string, SchemaObject>; definitions?: Record<string, SchemaObject> };
  const defs = { ...(definitions ?? {}), ...($defs ?? {}) };
  const fix = (r: string) => {
    if (r === '#') return `#/components/schemas/${name}`;
    const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(r);
    return m ? `#/components/schemas/${name}.${safeName(decodeURIComponent(m[1]))}` : r;
  };
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === '$ref' && typeof x === 'string' ? fix(x) : rewrite(x)]));
  };
  schemas[name] = rewrite(root) as SchemaObject;
  for (const [d, s] of Object.entries(defs)) schemas[`${name}.${safeName(d)}`] = rewrite(s) as SchemaObject;
}

/** Adds `Call.<instrument>`, `Call.<instrument>.<method>` and `Args.<instrument>.<method>`; returns the first's name. */
function addCallSchemas(inst: InstrumentSchema, schemas: Record<string, SchemaObject>): string {
  const call = `Call.${safeName(inst.name)}`;
  const mapping: Record<string, string> = {};
  for (const m of inst.methods) {
    const args = `Args.${safeName(inst.name)}.${safeName(m.name)}`;
    const variant = `${call}.${safeName(m.name)}`;
    embed(m.params, args, schemas);
    const needsArgs = Array.isArray(m.params.required) && m.params.required.length > 0;
    schemas[variant] = {
      type: 'object',
      title: `${inst.name}.${m.name}`,
      ...(m.description ? { description: m.description } : {}),
      properties: { method: { const: m.name }, args: ref(args) },
      required: needsArgs ? ['method', 'args'] : ['method'],
      'x-labdeck-safety': m.safety,
    };
    mapping[m.name] = `#/components/schemas/${variant}`;
  }
  schemas[call] = {
    title: `A call to ${inst.name}`,
    description: inst.description || `${inst.name} (${inst.driver})`,
    oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'method', mapping },
  };
  return call;
}

function liveDeck(instruments: InstrumentSchema[], doc: OpenApiDocument) {
  const schemas = doc.components.schemas;
  const named: SchemaObject[] = [];
  const mapping: Record<string, string> = {};
  for (const inst of instruments) {
    if (!inst.methods.length) continue; // a oneOf needs at least one alternative
    const call = addCallSchemas(inst, schemas);
    const withName = `CallAny.${safeName(inst.name)}`;
    schemas[withName] = { allOf: [{ type: 'object', properties: { instrument: { const: inst.name } }, required: ['instrument'] }, ref(call)] };
    named.push(ref(withName));
    mapping[inst.name] = `#/components/schemas/${withName}`;

    // the generic call route, for this instrument: its body is the instrument's own methods
    const route = { ...INSTRUMENT_ROUTES.call, section: 'Live deck', path: `/instruments/${inst.name}`, summary: `Call a method of ${inst.name}`, operationId: `call_${inst.name.replace(/[^A-Za-z0-9_]/g, '_')}`, params: undefined } as unknown as Route;
    const op = operation(route, schemas);
    op.requestBody = { required: true, content: { [MEDIA.json]: { schema: ref(call) } } };
    op.description = `${inst.description || inst.driver}. Methods: ${inst.methods.map((m) => `${m.name} (${m.safety})`).join(', ')}. A form (method + one field per parameter) works too.`;
    op['x-labdeck-live'] = true;
    // A deck device named like one of the fixed routes (say `proxy`) must not replace that route's entry.
    const item = (doc.paths[`${MOUNT}/instruments/${encodeURIComponent(inst.name)}`] ??= {});
    item.post ??= op;
  }
  if (instruments.length) {
    doc.tags.push({ name: 'Live deck', description: "One operation per instrument of this lab's deck, with its methods' arguments." });
    // POST /instruments/ names the instrument in the body: a real oneOf, told apart by `instrument` (and the
    // declared fields, closed, around it)
    schemas.CallAnyBody = { ...schemas.CallAnyBody, oneOf: named, discriminator: { propertyName: 'instrument', mapping } };
  }
}

// ---------------------------------------------------------------------------------------------------------

let versionCache: string | null = null;
function version(): string {
  try {
    versionCache ??= (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    versionCache = '0.0.0';
  }
  return versionCache;
}

function description(opts: BuildOptions): string {
  return [
    'The HTTP API of labdeck, a laboratory instrument host.',
    '',
    `Every path is listed under the \`${MOUNT}\` mount; each is also served at \`/\` without it (\`${MOUNT}/instruments/\` and \`/instruments/\` are the same route).`,
    '',
    'One route answers a page and JSON: JSON when the `Accept` header prefers `application/json` or with `?format=json` (a request with a JSON body and no Accept preference gets JSON too); an HTML page otherwise.',
    '',
    'Authentication: the `labdeck.sid` session cookie (log in with POST /app/auth/login), or `Authorization: Bearer <token>` with a token made on the account page (POST /app/account/tokens). Without login, pages redirect (302) to the login form and JSON gets 401. State-changing requests with a cookie from another site (Origin or Sec-Fetch-Site) are refused with 403; token requests are not checked.',
    '',
    'Errors in JSON are `{ "error": { "code", "message", "details"? } }` (the `Error` schema); `details` names the offending fields.',
    '',
    opts.public
      ? "This copy was served to a visitor who is not logged in: log in (or send a token) to get the live deck's per-instrument call bodies (`Call.<instrument>` schemas and the \"Live deck\" operations)."
      : "The \"Live deck\" operations and the `Call.<instrument>` schemas describe this lab's deck as it was when the document was served; temporary devices connected later are not in it.",
  ].join('\n');
}

/** The OpenAPI 3.1 document for every declared route, plus the live deck unless `public`. */
export function buildOpenApi(opts: BuildOptions): OpenApiDocument {
  const ROUTES = allRoutes();
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: 'labdeck HTTP API', version: version(), description: description(opts) },
    servers: [{ url: opts.serverUrl.replace(/\/+$/, ''), description: 'This labdeck' }],
    tags: [...new Set(ROUTES.map((r) => r.section))].map((name) => ({ name })),
    security: SESSION_OR_TOKEN,
    paths: {},
    components: {
      schemas: { ...fixedSchemas() },
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'labdeck.sid', description: 'The session cookie set by POST /app/auth/login' },
        bearer: { type: 'http', scheme: 'bearer', description: 'An API token (lab_...) made on the account page' },
      },
    },
  };
  for (const route of ROUTES) {
    const item = (doc.paths[`${MOUNT}${route.path}`] ??= {});
    item[route.method.toLowerCase() as HttpMethod] = operation(route, doc.components.schemas);
  }
  if (!opts.public) liveDeck(opts.instruments, doc);
  return doc;
}

/** Follow a local `$ref` (`#/components/schemas/X`) inside the document; other values are returned as they are. */
export function resolveRef(doc: OpenApiDocument, schema: SchemaObject | undefined, depth = 0): SchemaObject | undefined {
  const r = schema?.$ref;
  if (typeof r !== 'string' || !r.startsWith('#/') || depth > 20) return schema;
  let node: unknown = doc;
  for (const part of r.slice(2).split('/')) {
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return resolveRef(doc, node as SchemaObject | undefined, depth + 1);
}
