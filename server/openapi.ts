/**
 * The OpenAPI 3.1 document of labdeck's HTTP API, built from three sources so it cannot drift far:
 * - `ROUTES` (server/catalogue.ts): which routes exist, their summary, section (tag), admin/public flags;
 * - `OPERATIONS` below: what each route takes and the statuses it really answers (read from the route code
 *   and the API tests; test/api/openapi.test.ts checks both lists against the express app);
 * - the live deck: one direct-call body per instrument, `oneOf` its methods, from the drivers' own schemas.
 *
 * The fixed bodies are small zod schemas turned into JSON Schema with `z.toJSONSchema`. Paths are given under
 * the `/app` mount; every one is also served at `/`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { InstrumentSchema, JSONSchema } from '../core/contracts/index.js';
import { ERROR_CODES, type ErrorCode } from '../core/errors.js';
import { projectRoot } from '../core/paths.js';
import { Step as WorkflowStep, Workflow } from '../core/workflow/model.js';
import { routes, type RouteInfo } from './catalogue.js';
import type { Route } from './route.js';
import { declaredRoutes } from './routes/declared.js';
import { INSTRUMENT_ROUTES } from './routes/instruments.js';
import {
  FORMAT,
  error,
  json,
  page,
  pageOrJson,
  query,
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
// Fixed schemas (zod → JSON Schema). Request bodies are converted for input, responses for output.

const ISO_DATE = z.string().describe('ISO 8601 date-time');

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
  status: z.enum(['ok', 'error', 'running', 'in-doubt', 'skipped']),
  error: z.string().nullable(),
  user_id: z.int().nullable(),
  started_at: ISO_DATE,
  ended_at: ISO_DATE.nullable(),
  duration_ms: z.number().nullable(),
});

const REQUEST = {
  RunBody: z.object({
    workflow: z.string().min(1).describe('A saved workflow (GET /app/workflows)'),
    config: z.array(z.record(z.string(), z.unknown())).optional().describe('One object of parameter values per iteration'),
    repeat: z.int().min(1).optional().describe('Or: this many iterations with the parameter defaults'),
    name: z.string().max(200).optional().describe('Display name of the task (default "<workflow> × n")'),
    config_file: z.string().optional().describe('Or: the filename of an uploaded config CSV (POST /app/files/batch-configs)'),
  }),
  RunForm: z
    .looseObject({ workflow: z.string(), repeat: z.string().optional(), name: z.string().optional(), config_file: z.string().optional() })
    .describe('The page\'s form: `rows[i][param]` fields, `repeat`, or `config_file`'),
  QueueIdBody: z.object({ id: z.int().min(1).describe('A queued task') }),
  ReorderBody: z.object({ id: z.int().min(1), direction: z.enum(['up', 'down', 'top', 'bottom']) }),
  RenameBody: z.object({ id: z.int().min(1), new_name: z.string().min(1).max(200) }),
} as const;

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
  status: z.enum(['ok', 'error', 'running', 'in-doubt', 'skipped']),
  error: z.string().nullable(),
  started_at: ISO_DATE,
  ended_at: ISO_DATE.nullable(),
  duration_ms: z.number().nullable(),
});

const RESPONSE = {
  Error: z
    .looseObject({
      error: z.object({
        code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
        message: z.string().describe('For the person who has to act on it'),
        details: z.array(z.object({ field: z.string().optional(), message: z.string() })).optional().describe('The offending fields'),
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
      z.object({ id: z.int(), name: z.string(), prefix: z.string(), created_at: ISO_DATE, last_used_at: ISO_DATE.nullable() }),
    ),
    signup_open: z.boolean(),
    users: z.array(User).optional().describe('Every account (admins only)'),
  }),
  TokenCreated: z.object({ token: z.string().describe('Shown once: send it as "Authorization: Bearer <token>"'), id: z.int(), name: z.string() }),
  SignupState: z.object({ signup_open: z.boolean() }),
  ManagedUser,
  UserList: z.object({ users: z.array(ManagedUser).describe('Every account that is not deleted, oldest first') }),
  UserChanged: z.object({ user: ManagedUser.describe('The account as it is now') }),
  InstrumentList: z.object({
    instruments: z.array(
      z.object({ name: z.string(), driver: z.string(), description: z.string(), source: z.enum(['deck', 'temporary']), methods: z.array(z.string()) }),
    ),
  }),
  Instrument: z
    .object({
      name: z.string(),
      driver: z.string(),
      description: z.string(),
      source: z.enum(['deck', 'temporary']),
      methods: z.array(MethodSchemaZ).describe('In your saved order'),
    })
    .describe('An instrument and its methods, with your order and hidden flags'),
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
  RunStarted: z.object({ task_id: z.int(), status: z.enum(['queued', 'running']) }),
  OptimizerSchemas: z.looseObject({ name: z.string().optional(), config: z.unknown().optional(), capabilities: z.unknown().optional(), optimizers: z.array(z.unknown()).optional() }).describe('One optimizer, or { optimizers: [...] }'),
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
  QueueList: z.looseObject({ tasks: z.array(z.looseObject({ id: z.int(), name: z.string(), status: z.string() })), paused: z.boolean().optional(), queue_held: z.boolean().optional() }),
  RunnerStatus: z.looseObject({
    busy: z.boolean(),
    state: z.enum(['idle', 'running', 'paused', 'failed', 'stopping']),
    paused: z.boolean(),
    queue_held: z.boolean(),
    current_task: z.looseObject({ id: z.int(), name: z.string() }).nullable(),
    progress: z.object({ phase: z.string().nullable(), iteration: z.int(), iterations: z.int(), step: z.int(), steps: z.int() }),
    store_error: z.string().nullable().describe('Why no task can start now: the database cannot be written (full or read-only disk)'),
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
/** The fixed component schemas, converted once. */
function fixedSchemas(): Record<string, SchemaObject> {
  if (fixedCache) return fixedCache;
  const out: Record<string, SchemaObject> = {};
  for (const [name, s] of Object.entries(REQUEST)) out[name] = jsonSchema(s, 'input');
  for (const [name, s] of Object.entries(RESPONSE)) out[name] = jsonSchema(s, 'output');
  workflowSchemas(out);
  fixedCache = out;
  return out;
}

export type ComponentName = keyof typeof REQUEST | keyof typeof RESPONSE;

// ---------------------------------------------------------------------------------------------------------
// Response and body helpers.

type BodyKind = 'json' | 'form' | 'multipart' | 'text';
const MEDIA: Record<BodyKind, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
  text: 'text/plain',
};
function body(parts: Partial<Record<BodyKind, ComponentName | SchemaObject>>, required = true, description?: string): RequestBodyObject {
  const content: Record<string, MediaTypeObject> = {};
  for (const [kind, schema] of Object.entries(parts) as [BodyKind, ComponentName | SchemaObject][]) {
    content[MEDIA[kind]] = { schema: typeof schema === 'string' ? ref(schema) : schema };
  }
  return { required, content, ...(description ? { description } : {}) };
}

const PATH_PARAMS: Record<string, { description: string; schema: SchemaObject }> = {
  instrument: { description: 'A device of the deck (or, under /instruments/new/, a driver)', schema: { type: 'string' } },
  function: { description: 'A method of the instrument', schema: { type: 'string' } },
  task_id: { description: 'An integer id: of a recorded call under /instruments, of a queued task under /executions', schema: { type: 'integer', minimum: 1 } },
  id: { description: 'The integer id of an API token', schema: { type: 'integer', minimum: 1 } },
  user_id: { description: 'The integer id of an account (GET /app/account/users)', schema: { type: 'integer', minimum: 1 } },
  file: { description: 'A file name', schema: { type: 'string' } },
  name: { description: 'A workflow name', schema: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_-]*$' } },
  workflow_id: { description: 'The integer id of a run record (GET /app/executions/records)', schema: { type: 'integer', minimum: 1 } },
  filename: { description: 'The generated name of an uploaded CSV (cfg-….csv, hist-….csv), or run-<id>.csv for the data of a run', schema: { type: 'string' } },
};

// ---------------------------------------------------------------------------------------------------------
// What each route takes and answers. Statuses added for every route of a kind (login, admin, CSRF, body
// parsing) are added by `operation()`; these are the route's own.

export interface OperationSpec {
  operationId: string;
  description?: string;
  parameters?: ParameterObject[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject>;
  /** Served before authentication and body parsing (health, help, logo, assets): no 401, 400 or 413 of those. */
  bare?: boolean;
  /** Public, but answers more to a logged-in user (the API docs). */
  optionalLogin?: boolean;
}


/**
 * An asset that does not exist falls through to the rest of the app like any unknown path: behind the
 * login gate, so a visitor who is not logged in gets 401/302 and only a user gets the 404.
 */
const UNKNOWN_FILE: Record<string, ResponseObject> = {
  404: error('No such file (for everyone: assets are public)'),
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

export const OPERATIONS: Record<string, OperationSpec> = {
  'GET /static/{file}': {
    operationId: 'staticFile',
    bare: true,
    responses: {
      200: { description: 'The file', content: { '*/*': { schema: { type: 'string' } } } },
      ...UNKNOWN_FILE,
    },
  },
  'GET /static/app.js': {
    operationId: 'appScript',
    bare: true,
    responses: { 200: { description: 'The script', content: { 'text/javascript': { schema: { type: 'string' } } } } },
  },
  'GET /executions/config': {
    operationId: 'executionPage',
    parameters: [FORMAT, query('workflow', 'The workflow to show first')],
    responses: { 200: page('The execution page: start a run, the live runner, the queue (JSON: workflows and status)') },
  },
  'POST /executions/config': {
    operationId: 'startRun',
    description: 'Validates the workflow against the live deck and every row against its parameters, then queues the task.',
    requestBody: body({ json: 'RunBody', form: 'RunForm' }),
    responses: {
      200: pageOrJson('Queued: the task id and whether it is already running', 'RunStarted'),
      400: error('Bad workflow, rows or repeat: details name the row and column, or the step path'),
      404: error('No such workflow'),
    },
  },
  'GET /executions/status': { operationId: 'runnerStatus', responses: { 200: json('Busy flag, state, flags, current task and progress', 'RunnerStatus') } },
  'GET /executions/current_task': { operationId: 'currentTask', responses: { 200: json('The running task with its payload, or null', 'CurrentTask') } },
  'GET /executions/queue': { operationId: 'queue', responses: { 200: json('Unfinished tasks in order, and the runner flags', 'QueueList') } },
  'GET /executions/queue/task/{task_id}': {
    operationId: 'queuedTask',
    responses: { 200: json('The task with its full payload', 'QueueTask'), 400: error('task_id is not a positive integer'), 404: error('No such task') },
  },
  'POST /executions/queue/delete': {
    operationId: 'deleteTask',
    requestBody: body({ json: 'QueueIdBody' }),
    responses: { 200: json('Deleted', 'Deleted'), 400: error('id is not a positive integer'), 403: error('Queued by another user: only they or an admin may delete it'), 404: error('No such task'), 409: error('The task is running, interrupted or finished') },
  },
  'POST /executions/queue/reorder': {
    operationId: 'reorderTask',
    requestBody: body({ json: 'ReorderBody' }),
    responses: { 200: json('The queue in its new order', 'QueueList'), 400: error('Bad id or direction'), 404: error('No such task'), 409: error('The task is running, interrupted or finished') },
  },
  'POST /executions/queue/task/rename': {
    operationId: 'renameTask',
    requestBody: body({ json: 'RenameBody' }),
    responses: { 200: json('The renamed task', 'QueueTask'), 400: error('Bad id, or new_name empty or over 200 characters'), 403: error('Queued by another user: only they or an admin may rename it'), 404: error('No such task') },
  },
  'POST /executions/pause-resume': {
    operationId: 'pauseResume',
    description: 'Failed step: skip it. Pause step: continue. Interrupted task: go on after its in-doubt step. Held queue: release. Otherwise toggle the pause flag.',
    responses: { 200: json('The status after', 'RunnerStatus') },
  },
  'POST /executions/pause': {
    operationId: 'pause',
    description: 'Sets the pause flag while a task runs: no new step (and no new task) starts; a call in flight finishes. Written in the run\'s log. Never skips a failed step or continues a pause step (POST /executions/pause-resume does, by the state).',
    responses: { 200: json('The status after (state running until the step in flight ends, then paused)', 'RunnerStatus'), 409: error('Nothing runs, it is paused already, or it waits for a decision: the state is in the message') },
  },
  'POST /executions/resume': {
    operationId: 'resume',
    description: 'Clears the pause flag of a running task: it goes on. Written in the run\'s log.',
    responses: { 200: json('The status after', 'RunnerStatus'), 409: error('No task is paused (a held queue is released with POST /executions/release)') },
  },
  'POST /executions/continue': {
    operationId: 'continuePauseStep',
    description: 'A `pause` step waits for the operator: it is done, go on with the next step.',
    responses: { 200: json('The status after', 'RunnerStatus'), 409: error('No pause step waits') },
  },
  'POST /executions/skip': {
    operationId: 'skip',
    description: 'Leave the failed step out and go on: its record, its iteration and the run say it was skipped, and the iteration\'s outputs are not data. For a task interrupted by a stop of labdeck: go on after its in-doubt step.',
    responses: { 200: json('The status after', 'RunnerStatus'), 409: error('No failed step (and no interrupted task)') },
  },
  'POST /executions/release': {
    operationId: 'release',
    description: 'The queue was held (after abort next-task, or the pause flag set while idle): let it start tasks again.',
    responses: { 200: json('The status after', 'RunnerStatus'), 409: error('The queue is not held, a task runs, or an interrupted task waits for a decision') },
  },
  'POST /executions/retry': {
    operationId: 'retry',
    responses: { 200: json('The status after', 'RunnerStatus'), 409: error('No failed step (and no interrupted task): the state is in the message') },
  },
  'POST /executions/abort/next-iteration': {
    operationId: 'abortNextIteration',
    responses: { 200: json('Stopping after this iteration', 'RunnerStatus'), 409: error('Nothing is running') },
  },
  'POST /executions/abort/next-task': {
    operationId: 'abortNextTask',
    responses: { 200: json('Aborting after the in-flight step; the queue is held', 'RunnerStatus'), 409: error('Nothing is running') },
  },
  'GET /executions/events': {
    operationId: 'events',
    description: 'Server-sent events: hello (the status), status, step, iteration, log, queue, run. Each `data` is JSON.',
    responses: { 200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } } },
  },
  'GET /static/vendor/{file}': {
    operationId: 'vendorFile',
    bare: true,
    responses: {
      200: { description: 'The file', content: { '*/*': { schema: { type: 'string' } } } },
      ...UNKNOWN_FILE,
    },
  },
};

export const routeKey = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;

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

function operation(route: RouteInfo, spec: OperationSpec | undefined): OperationObject {
  const method = route.method.toUpperCase();
  const unsafe = method !== 'GET' && method !== 'HEAD';
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map(
    ([, name]): ParameterObject => ({ name, in: 'path', required: true, ...(PATH_PARAMS[name] ?? { schema: { type: 'string' } }) }),
  );
  const parameters = [...pathParams, ...(spec?.parameters ?? [])];
  const responses: Record<string, ResponseObject> = { ...(spec?.responses ?? { 200: { description: 'OK' } }) };
  const bare = spec?.bare ?? false;

  if (!route.public) {
    addResponse(responses, '401', error('Not logged in (JSON), or an unknown or malformed bearer token'));
    addResponse(responses, '302', redirect('Not logged in (pages): to the login form, with `next` for a GET'));
  } else if (!bare) {
    addResponse(responses, '401', error('An unknown or malformed bearer token (a public route with no Authorization header does not need one)'));
  }
  if (route.admin) addResponse(responses, '403', error('Only an admin may do this'));
  if (unsafe && !bare) {
    addResponse(responses, '403', error('Cross-site request refused (cookie session with a foreign Origin or Sec-Fetch-Site)'));
    addResponse(responses, '400', error('The JSON body is malformed'));
    addResponse(responses, '413', error('The body is over the size limit (1 MB by default)'));
  }
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  sorted.default = error('Anything else: 500 internal (the error is in the server log)');

  const op: OperationObject = {
    operationId: spec?.operationId ?? `${method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+/g, '_')}`,
    summary: route.summary,
    tags: [route.section],
    responses: sorted,
    security: route.public ? (spec?.optionalLogin ? [{}, ...SESSION_OR_TOKEN] : []) : SESSION_OR_TOKEN,
  };
  if (spec?.description) op.description = spec.description;
  if (parameters.length) op.parameters = parameters;
  if (spec?.requestBody) op.requestBody = spec.requestBody;
  if (route.admin) op['x-labdeck-admin'] = true;
  if (!spec) op['x-labdeck-undocumented'] = true;
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

    const generic = declaredSpec(INSTRUMENT_ROUTES.call as unknown as Route, schemas);
    const route: RouteInfo = { section: 'Live deck', method: 'POST', path: `/instruments/${inst.name}`, summary: `Call a method of ${inst.name}` };
    const op = operation(route, { ...generic, operationId: `call_${inst.name.replace(/[^A-Za-z0-9_]/g, '_')}`, requestBody: body({ json: ref(call) }) });
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

/** A zod object's fields as documented query parameters. */
function queryParameters(schema: z.ZodObject<z.ZodRawShape>): ParameterObject[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const { description, ...rest } = jsonSchema(field as z.ZodType, 'input') as SchemaObject & { description?: string };
    return { name, in: 'query', ...((field as z.ZodType).safeParse(undefined).success ? {} : { required: true }), ...(description ? { description } : {}), schema: rest };
  });
}

/** The component name of a declared route's body. */
const bodyName = (r: Route) => r.body?.name ?? `${r.operationId[0]!.toUpperCase()}${r.operationId.slice(1)}Body`;

/** What a declared route says about itself, in the shape the legacy OPERATIONS entries have. */
function declaredSpec(r: Route, schemas: Record<string, SchemaObject>): OperationSpec {
  const parameters = [...(r.query ? queryParameters(r.query) : []), ...(r.docParameters ?? [])];
  let requestBody: RequestBodyObject | undefined;
  if (r.body) {
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
    requestBody = body(Object.fromEntries(kinds.map((k) => [k, k === 'text' && text ? jsonSchema(text, 'input') : name])), !optional, r.body.description);
  }
  return {
    operationId: r.operationId,
    ...(r.description ? { description: r.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: r.responses,
    ...(r.bare ? { bare: true } : {}),
    ...(r.optionalLogin ? { optionalLogin: true } : {}),
  };
}

/** The OpenAPI 3.1 document for every route (`routes()`), plus the live deck unless `public`. */
export function buildOpenApi(opts: BuildOptions): OpenApiDocument {
  const ROUTES = routes();
  const declared = new Map(declaredRoutes().map((r) => [r.key, r]));
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
    const path = `${MOUNT}${route.path}`;
    const item = (doc.paths[path] ??= {});
    const own = declared.get(routeKey(route));
    item[route.method.toLowerCase() as HttpMethod] = operation(route, own ? declaredSpec(own, doc.components.schemas) : OPERATIONS[routeKey(route)]);
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
