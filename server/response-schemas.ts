/**
 * The component schemas of the API's answers, by name (`RunnerStatus`, `Record`, `Error`, …): zod, turned into
 * JSON Schema by server/openapi.ts (read as output, so a response may gain fields).
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../core/errors.js';
import { CallRecordSchema } from '../core/records/call-record.js';
import { RecordDetailSchema, RecordListSchema } from '../core/records/record-schema.js';
import { RunnerStatusSchema } from '../core/runner/status-schema.js';
import { QueueSchema, QueueTaskSchema, RunStartedSchema } from '../core/runner/queue-schema.js';
import { RESOURCE_SCHEMAS } from './resource-schemas.js';

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
  safety: z.enum(['readonly', 'idempotent', 'hazardous', 'unknown']).describe('unknown: the driver declares none (a call by an agent then waits for a person under the default approval policy)'),
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

// a call record, a run record and the runner's status: declared once, in core, with the code that builds them
const Step = CallRecordSchema;

/** The runner as GET /executions/status (and the controls) answer it; GET /executions/status adds the watchdog's `timing`. */
const RunnerStatus = RunnerStatusSchema.extend({
  timing: z
    .looseObject({
      steps: z.array(z.looseObject({ step_id: z.int(), run_id: z.int(), path: z.string(), expected_end: ISO_DATE.nullable(), overdue: z.boolean() })),
      runs: z.array(z.looseObject({ run_id: z.int(), eta: z.object({ earliest: ISO_DATE, latest: ISO_DATE, samples: z.int() }).nullable() })),
    })
    .optional()
    .describe(
      "The watchdog's view (docs/notifications.md): each running call step's expected end (null until its instrument and method have enough records) and each run's ETA (P10-P90 of past runs of its workflow)",
    ),
});

export const RESPONSE_SCHEMAS = {
  Error: z
    .looseObject({
      error: z.object({
        code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
        message: z.string().describe('For the person who has to act on it'),
        details: z
          .array(
            z.object({
              field: z.string().optional(),
              message: z.string(),
              limit: z.unknown().optional().describe('safety: the limit broken'),
              rule: z.string().optional().describe('safety: the rule broken'),
              value: z.unknown().optional().describe('safety: the value'),
            }),
          )
          .optional()
          .describe('The offending fields'),
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
    tokens: z.array(z.object({ id: z.int(), name: z.string(), prefix: z.string(), scope: z.enum(['user', 'agent', 'mcp']), created_at: ISO_DATE, last_used_at: ISO_DATE.nullable() })),
    signup_open: z.boolean(),
    users: z.array(User).optional().describe('Every account (admins only)'),
  }),
  TokenCreated: z.object({
    token: z.string().describe('Shown once: send it as "Authorization: Bearer <token>" (an agent token: to lab agent --token)'),
    id: z.int(),
    name: z.string(),
    agent_name: z.string().optional().describe('An agent token: the name its lab agent serves under'),
    scope: z.enum(['user', 'agent', 'mcp']),
  }),
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
  RunStarted: RunStartedSchema,
  AttentionList: z.object({
    items: z
      .array(z.looseObject({ kind: z.string(), title: z.string(), action: z.string(), link: z.string(), url: z.string() }))
      .describe('What waits for a person: kind (input, pause, failed_step, interrupted, approval, held_queue, host_offline, safety), what, what to do, where'),
    count: z.int(),
  }),
  InputGiven: z.object({ task_id: z.int(), value: z.unknown().describe('The value as it was saved (a number input: a number)'), status: RunnerStatus }),
  OptimizerSchemas: z
    .looseObject({ name: z.string().optional(), config: z.unknown().optional(), capabilities: z.unknown().optional(), optimizers: z.array(z.unknown()).optional() })
    .describe('One optimizer, or { optimizers: [...] }'),
  CampaignPoint: z.looseObject({
    n: z.int(),
    parameters: z.record(z.string(), z.unknown()),
    state: z.enum(['pending', 'measured', 'discarded']),
    results: z.record(z.string(), z.number()).nullable(),
    reason: z.string().nullable(),
    suggested_by: z.string().describe('optimizer:<name> or person:<username>'),
    measured_by: z.string().nullable().describe("person:<username> (run:<id> for a robot campaign's own iterations)"),
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
  CampaignPlot: z.looseObject({
    campaign: z.looseObject({ campaign_id: z.int(), name: z.string(), execution: z.enum(['manual', 'robot']), optimizer: z.string() }),
    objectives: z.array(z.object({ name: z.string(), minimize: z.boolean() })),
    warm_start: z.array(z.looseObject({ params: z.record(z.string(), z.unknown()), values: z.record(z.string(), z.number()) })),
    points: z
      .array(
        z.looseObject({
          x: z.int(),
          n: z.int(),
          params: z.record(z.string(), z.unknown()),
          values: z.record(z.string(), z.number().nullable()),
          suggested_by: z.string(),
          measured_by: z.string().nullable(),
        }),
      )
      .describe("The measured points in the table's order; x: the row (a manual campaign: n)"),
    best_so_far: z.array(z.object({ x: z.int(), n: z.int(), value: z.number() })),
  }),
  LatestPlot: z.looseObject({
    campaign: z.looseObject({ task_id: z.int(), name: z.string(), optimizer: z.string(), status: z.string() }),
    objectives: z.array(z.object({ name: z.string(), minimize: z.boolean() })),
    points: z.array(z.looseObject({ iteration: z.int().nullable(), params: z.record(z.string(), z.unknown()), values: z.record(z.string(), z.number().nullable()) })),
    best_so_far: z.array(z.object({ iteration: z.int(), value: z.number() })),
    model: z.unknown().describe("The optimizer's snapshot (model surface, Pareto front) while it is in memory, else null"),
  }),
  QueueTask: QueueTaskSchema.loose(),
  Queue: QueueSchema.extend({ tasks: z.array(QueueTaskSchema.loose()) }).loose(),
  QueueList: z.looseObject({ tasks: z.array(QueueTaskSchema.loose()) }).describe('The queue in its new order (the tasks only)'),
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
  RecordList: RecordListSchema,
  Record: RecordDetailSchema,
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
