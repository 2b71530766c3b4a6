/**
 * The routes labdeck answers at `/ivoryos`, as ivoryOS 1.6.11 answers them for `ivoryos-client` 0.2.x and the
 * proxy file ivoryOS generates, and the older ivoryOS 1.0 routes the `ivoryos-mcp` server (0.1.8) calls
 * (docs/ivoryos.md has the table). Declared with labdeck's `route()` (DESIGN.md
 * §14) but kept in their own list: they are another system's API, so labdeck's API document, home page and
 * generated clients (made from the app's route groups, server/catalogue.ts) do not show them (docs/ivoryos.md
 * does), and their answers, in ivoryOS's shapes, are not checked against labdeck's (server/answer-check.ts).
 */
import { z } from 'zod';
import { json, redirect, type ResponseObject } from '../api-doc.js';
import { ID, route } from '../route.js';

const SECTION = 'ivoryOS compatibility';

/** ivoryOS's error body: `{ "success": false, "error": "…" }` (labdeck adds `details` naming the field). */
const fail = (description: string): ResponseObject => json(description, 'IvoryosError');
const ok = (description: string): ResponseObject => json(description, 'IvoryosResult');

/** A whole number, as JSON or as the text ivoryos-client sends (`"repeat": "3"`). */
const COUNT = z
  .union([
    z.int().min(1, 'must be at least 1'),
    z
      .string()
      .regex(/^\s*\d+\s*$/, 'must be a whole number')
      .transform(Number),
  ])
  .pipe(z.int().min(1, 'must be at least 1'));

/** `repeat` as ivoryos-mcp posts it: a whole number, or `"None"` when the tool was given none (once). */
const REPEAT = z.union([COUNT, z.literal('None'), z.null()]);
const ROWS = z.array(z.record(z.string(), z.unknown()));

/** The older section: ivoryOS's routes before 1.6 that the published `ivoryos-mcp` server calls (docs/ivoryos.md). */
const MCP_SECTION = 'ivoryOS compatibility (ivoryos-mcp)';

export const IVORYOS_ROUTES = {
  home: route({
    method: 'GET',
    path: '/',
    section: SECTION,
    summary: 'Who is logged in, and what this compatibility layer is (200 when logged in: clients test their session with it)',
    operationId: 'ivoryosHome',
    responses: { 200: ok('The lab, the deck and the user'), 302: redirect('Not logged in: to the login route') },
  }),
  loginForm: route({
    method: 'GET',
    path: '/auth/login',
    section: SECTION,
    summary: 'No login page here: says how to log in (401)',
    operationId: 'ivoryosLoginForm',
    access: 'public',
    responses: { 401: fail('How to log in') },
  }),
  login: route({
    method: 'POST',
    path: '/auth/login',
    section: SECTION,
    summary: "Log in with labdeck's accounts (form: username, password); 302 to /ivoryos/ with the session cookie",
    operationId: 'ivoryosLogin',
    access: 'public',
    body: { schema: z.object({ username: z.string(), password: z.string() }) },
    responses: { 302: redirect('Logged in'), 401: fail('Wrong username or password'), 429: fail('Too many failed logins') },
  }),
  logout: route({
    method: 'GET',
    path: '/auth/logout',
    section: SECTION,
    summary: 'Log out (302 to the login route; 403 from a link on another site)',
    operationId: 'ivoryosLogout',
    access: 'public',
    responses: { 302: redirect('Logged out'), 403: fail('A link or page on another site (Sec-Fetch-Site, Origin or Referer): nobody is logged out') },
  }),
  instruments: route({
    method: 'GET',
    path: '/instruments',
    section: SECTION,
    summary: 'The deck snapshot: { "deck.<name>": { method: { signature, docstring } } }',
    operationId: 'ivoryosInstruments',
    responses: { 200: ok('The snapshot') },
  }),
  instrument: route({
    method: 'GET',
    path: '/instruments/{instrument}',
    section: SECTION,
    summary: 'The deck snapshot (as ivoryOS, whichever instrument is named; an unknown one is refused)',
    operationId: 'ivoryosInstrument',
    params: z.object({ instrument: z.string() }),
    responses: { 200: ok('The snapshot'), 400: fail('Not a deck.<name> of the deck') },
  }),
  call: route({
    method: 'POST',
    path: '/instruments/{instrument}',
    section: SECTION,
    summary: 'Call deck.<name>: hidden_name, hidden_wait and the keyword arguments as flat fields',
    operationId: 'ivoryosCall',
    params: z.object({ instrument: z.string() }),
    body: {
      schema: z.object({
        hidden_name: z.string().min(1).describe('The method'),
        hidden_wait: z
          .union([z.boolean(), z.enum(['true', 'false', 'True', 'False'])])
          .optional()
          .describe('false: run in the background and answer the task id at once'),
      }),
      // every other field is a keyword argument of the method (the deck names one that is not)
      extra: /^[^.[\]]+$/,
    },
    responses: {
      200: ok('{ success, output } (wait), { status: "task started", task_id } (no wait), or { success: false, status: "busy" }'),
      400: fail('Not a deck.<name>, an unknown method, or arguments that do not fit (named)'),
      503: fail('The instrument is offline'),
    },
  }),
  task: route({
    method: 'GET',
    path: '/instruments/task/{task_id}',
    section: SECTION,
    summary: 'One call record as ivoryOS SingleStep (end_time null while it runs)',
    operationId: 'ivoryosTask',
    params: z.object({
      task_id: z
        .union([z.string().regex(/^\d{1,15}$/, 'must be a whole number'), z.int()])
        .transform(Number)
        .pipe(z.int().min(1, 'must be at least 1')),
    }),
    responses: { 200: ok('The record'), 404: fail('No such task') },
  }),
  library: route({
    method: 'GET',
    path: '/library',
    section: SECTION,
    summary: 'Workflow names: { workflows: [...] } (keyword filters by name)',
    operationId: 'ivoryosLibrary',
    query: z.object({ keyword: z.string().optional(), deck: z.string().optional(), deck_name: z.string().optional() }),
    responses: { 200: ok('The names') },
  }),
  load: route({
    method: 'GET',
    path: '/library/{name}',
    section: SECTION,
    summary: "Select a workflow for this session (ivoryOS's draft): { script, python_script }",
    operationId: 'ivoryosLoad',
    params: z.object({ name: z.string() }),
    query: z.object({ keyword: z.string().optional(), deck: z.string().optional() }),
    responses: { 200: ok('Selected'), 404: fail('No such workflow') },
  }),
  run: route({
    method: 'POST',
    path: '/executions/config',
    section: SECTION,
    summary: 'Run the selected workflow: { kwargs: [rows] } or { repeat } (batch_size 1 only)',
    operationId: 'ivoryosRun',
    body: {
      kinds: ['json'],
      optional: true,
      schema: z.object({
        kwargs: z.array(z.record(z.string(), z.unknown())).optional().describe('One row of parameter values per iteration'),
        repeat: COUNT.optional().describe('Iterations of a workflow without rows (default 1)'),
        batch_size: COUNT.optional().describe('Iterations run together: labdeck runs one at a time, so only 1'),
      }),
    },
    responses: {
      200: ok('{ status: "task started", task_id: run id } or { status: "queued", queue_id }'),
      400: fail('No workflow selected, rows that do not fit (named), or a batch_size labdeck cannot run'),
    },
  }),
  status: route({
    method: 'GET',
    path: '/executions/status',
    section: SECTION,
    summary: 'busy, paused, current_task and workflow_status { workflow_info, runner_status }',
    operationId: 'ivoryosStatus',
    responses: { 200: ok('The runner') },
  }),
  queue: route({
    method: 'GET',
    path: '/executions/queue',
    section: SECTION,
    summary: 'The tasks waiting to run',
    operationId: 'ivoryosQueue',
    responses: { 200: ok('A list, next first') },
  }),
  pauseResume: route({
    method: 'POST',
    path: '/executions/pause-resume',
    section: SECTION,
    summary: 'labdeck\'s one pause button: { status: "ok", pause_status: "Paused" | "Resumed" }',
    operationId: 'ivoryosPauseResume',
    responses: { 200: ok('Done') },
  }),
  abortIteration: route({
    method: 'POST',
    path: '/executions/abort/next-iteration',
    section: SECTION,
    summary: 'Finish the current iteration, skip the rest',
    operationId: 'ivoryosAbortIteration',
    responses: { 200: ok('{ status: "ok" } and a message saying what it did (nothing, when nothing runs)') },
  }),
  abortTask: route({
    method: 'POST',
    path: '/executions/abort/next-task',
    section: SECTION,
    summary: 'Finish the step in flight, run no further step; labdeck then holds the queue',
    operationId: 'ivoryosAbortTask',
    responses: { 200: ok('{ status: "ok" } and a message saying what it did') },
  }),
  records: route({
    method: 'GET',
    path: '/executions/records',
    section: SECTION,
    summary: 'Run records: { workflow_data: { id: { workflow_name, start_time } } }',
    operationId: 'ivoryosRecords',
    query: z.object({ keyword: z.string().optional() }),
    responses: { 200: ok('The records') },
  }),
  record: route({
    method: 'GET',
    path: '/executions/records/{workflow_id}',
    section: SECTION,
    summary: 'One run: { workflow_info, phases: { prep, script: { i: [...] }, cleanup }, csv_file_name }',
    operationId: 'ivoryosRecord',
    params: z.object({ workflow_id: ID }),
    responses: { 200: ok('The run'), 404: fail('No such run') },
  }),
  submitPython: route({
    method: 'POST',
    path: '/draft/submit_python',
    section: SECTION,
    summary: "Submit a workflow as Python (ivoryOS's prep, script and cleanup texts): saved as a labdeck workflow and selected as this session's draft",
    operationId: 'ivoryosSubmitPython',
    body: {
      schema: z.object({
        workflow_name: z.string().optional().describe("The workflow's name (default: the main function's)"),
        script: z.string().default('').describe('The main function (its arguments are the parameters), or its body'),
        prep: z.string().default('').describe('The prep function, or its body'),
        cleanup: z.string().default('').describe('The cleanup function, or its body'),
      }),
    },
    responses: {
      200: ok('{ success: true, workflow_name, version, message }'),
      400: fail('Python outside the subset (the message names the field and line), or calls that do not fit the deck (details name each step)'),
    },
  }),
  campaign: route({
    method: 'POST',
    path: '/executions/campaign',
    section: SECTION,
    summary: "Run a campaign over the selected workflow in ivoryOS's format; ax and baybe are run by labdeck's gp, and warnings say so",
    operationId: 'ivoryosCampaign',
    body: {
      kinds: ['json'],
      schema: z.object({
        optimizer_type: z.string().min(1).describe("gp, random, sobol (labdeck's), or ax / baybe (run by gp)"),
        parameters: z
          .array(z.record(z.string(), z.unknown()))
          .min(1)
          .describe('{ name, type: range | choice | fixed, value_type, bounds: [low, high] | [low, high, step] | [choices], value, log_scale }'),
        objectives: z.array(z.record(z.string(), z.unknown())).min(1).describe('{ name, minimize (default true), weight }: outputs of the workflow'),
        repeat: COUNT.describe('Experiments the campaign runs'),
        batch_size: COUNT.optional(),
        steps: z
          .strictObject({
            step_1: z.strictObject({ model: z.string().optional(), num_samples: z.int().min(1, 'must be at least 1').optional() }).optional(),
            step_2: z.strictObject({ model: z.string().optional(), num_samples: z.int().optional() }).optional(),
          })
          .nullish()
          .describe("step_1.num_samples: gp's initial (Sobol) points; the models named are not used, and warnings say so"),
        parameter_constraints: z.array(z.string()).nullish().describe('Linear: ["x1 + x2 <= 10"]'),
        outcome_constraints: z.array(z.string()).nullish().describe('Limits on outputs: ["purity >= 0.9"]'),
        early_stop: z.array(z.string()).nullish().describe('End early when a measurement meets one: ["run.yield >= 0.95"]'),
        existing_data: z.string().nullish().describe('A history file uploaded to labdeck (POST /app/files/execution-data) to start from'),
        additional_params: z.record(z.string(), z.unknown()).nullish().describe('None in labdeck: empty or left out'),
        seed: z.int().optional().describe('Makes the suggestions repeatable'),
      }),
    },
    responses: {
      200: ok('{ status: "task started", task_id: run id, queue_id, optimizer, warnings } or { status: "queued", … }'),
      400: fail('No workflow selected, or a field that does not fit (named)'),
      404: fail('No such optimizer or history file'),
    },
  }),
  optimizerSchema: route({
    method: 'POST',
    path: '/executions/optimizer_schema',
    section: SECTION,
    summary: "labdeck's optimizers in ivoryOS's schema shape: one ({ optimizer_type }) or all ({ name: schema })",
    operationId: 'ivoryosOptimizerSchema',
    body: { kinds: ['json'], optional: true, schema: z.object({ optimizer_type: z.string().nullish() }) },
    responses: { 200: ok("The schema (ax and baybe: gp's, with a warning)"), 404: fail('No such optimizer') },
  }),

  // ---------------------------------------------------------------- ivoryOS 1.0's routes, for ivoryos-mcp
  legacyLogin: route({
    method: 'POST',
    path: '/login',
    section: MCP_SECTION,
    summary: "ivoryOS 1.0's login (form: username, password), as POST /auth/login: 302 to /ivoryos/ with the session cookie",
    operationId: 'ivoryosLegacyLogin',
    access: 'public',
    body: { schema: z.object({ username: z.string(), password: z.string() }) },
    responses: { 302: redirect('Logged in'), 401: fail('Wrong username or password'), 429: fail('Too many failed logins') },
  }),
  backendSnapshot: route({
    method: 'GET',
    path: '/backend_control',
    section: MCP_SECTION,
    summary: 'The deck snapshot, as GET /instruments: { "deck.<name>": { method: { signature, docstring } } }',
    operationId: 'ivoryosBackendSnapshot',
    responses: { 200: ok('The snapshot') },
  }),
  backendCall: route({
    method: 'POST',
    path: '/backend_control/{instrument}',
    section: MCP_SECTION,
    summary: 'Call deck.<name> as POST /instruments/<instrument> does: hidden_name, hidden_wait and flat keyword arguments (form values read by the parameter types)',
    operationId: 'ivoryosBackendCall',
    params: z.object({ instrument: z.string() }),
    body: {
      schema: z.object({
        hidden_name: z.string().min(1).describe('The method'),
        hidden_wait: z
          .union([z.boolean(), z.enum(['true', 'false', 'True', 'False'])])
          .optional()
          .describe('False: run in the background and answer the task id at once'),
      }),
      extra: /^[^.[\]]+$/,
    },
    responses: {
      200: ok('{ status: "task started", task_id } (no wait), { success, output, task_id } (wait), or { success: false, status: "busy" }'),
      400: fail('Not a deck.<name>, an unknown method, or arguments that do not fit (named)'),
      503: fail('The instrument is offline'),
    },
  }),
  legacyStatus: route({
    method: 'GET',
    path: '/api/status',
    section: MCP_SECTION,
    summary: 'The runner: { busy: false, last_task } or { busy: true, current_task, workflow_status? }',
    operationId: 'ivoryosLegacyStatus',
    responses: { 200: ok('The runner') },
  }),
  legacyPause: route({
    method: 'POST',
    path: '/api/pause',
    section: MCP_SECTION,
    summary: 'labdeck\'s one pause button, as POST /executions/pause-resume: { status: "ok", pause_status }',
    operationId: 'ivoryosLegacyPause',
    responses: { 200: ok('Done') },
  }),
  legacyAbortPending: route({
    method: 'POST',
    path: '/api/abort_pending',
    section: MCP_SECTION,
    summary: 'Finish the current iteration, skip the rest (as POST /executions/abort/next-iteration)',
    operationId: 'ivoryosLegacyAbortPending',
    responses: { 200: ok('{ status: "ok", message }') },
  }),
  legacyAbortCurrent: route({
    method: 'POST',
    path: '/api/abort_current',
    section: MCP_SECTION,
    summary: 'Finish the step in flight, run no further step; labdeck then holds the queue (as POST /executions/abort/next-task)',
    operationId: 'ivoryosLegacyAbortCurrent',
    responses: { 200: ok('{ status: "ok", message }') },
  }),
  database: route({
    method: 'GET',
    path: '/database',
    section: MCP_SECTION,
    summary: 'Workflow names: { workflows: [...] } (keyword filters by name)',
    operationId: 'ivoryosDatabase',
    query: z.object({ keyword: z.string().optional() }),
    responses: { 200: ok('The names') },
  }),
  databaseDeck: route({
    method: 'GET',
    path: '/database/{deck_name}',
    section: MCP_SECTION,
    summary: "A deck's workflow names: labdeck's deck has them all; another deck has none, and the answer says which deck labdeck has",
    operationId: 'ivoryosDatabaseDeck',
    params: z.object({ deck_name: z.string() }),
    query: z.object({ keyword: z.string().optional() }),
    responses: { 200: ok('The names') },
  }),
  editWorkflow: route({
    method: 'GET',
    path: '/edit_workflow/{workflow_name}',
    section: MCP_SECTION,
    summary: "Select a workflow for this session (ivoryOS's draft), as GET /library/<name>: { script, python_script }",
    operationId: 'ivoryosEditWorkflow',
    params: z.object({ workflow_name: z.string() }),
    responses: { 200: ok('Selected'), 404: fail('No such workflow') },
  }),
  getScript: route({
    method: 'GET',
    path: '/api/get_script',
    section: MCP_SECTION,
    summary: 'The selected workflow as ivoryOS compiles its draft: { prep, script, cleanup } Python functions (phases with steps)',
    operationId: 'ivoryosGetScript',
    responses: { 200: ok('The functions'), 400: fail('No workflow selected') },
  }),
  putScript: route({
    method: 'POST',
    path: '/api/get_script',
    section: MCP_SECTION,
    summary: 'Save a workflow written as Python (as POST /draft/submit_python) and select it; answers it compiled, { prep, script, cleanup }',
    operationId: 'ivoryosPutScript',
    body: {
      kinds: ['json'],
      schema: z.object({
        workflow_name: z.string().nullish().describe("The workflow's name (default: the main function's)"),
        script: z.string().nullish().describe('The main function (its arguments are the parameters), or its body'),
        prep: z.string().nullish().describe('The prep function, or its body'),
        cleanup: z.string().nullish().describe('The cleanup function, or its body'),
      }),
    },
    responses: {
      200: ok('The saved workflow as { prep, script, cleanup } functions'),
      400: fail('Python outside the subset (the message names the field and line), or calls that do not fit the deck (details name each step)'),
    },
  }),
  experiment: route({
    method: 'POST',
    path: '/experiment',
    section: MCP_SECTION,
    summary:
      "Run the selected workflow: form or JSON { repeat }, JSON { kwargs: [rows] }, or an Ax-style campaign { parameters, objectives, parameter_constraints, repeat } (run by labdeck's gp, and warnings say so)",
    operationId: 'ivoryosExperiment',
    body: {
      optional: true,
      schema: z.object({
        repeat: REPEAT.optional().describe('Iterations (rows and campaigns: experiments); "None" or left out: once'),
        kwargs: ROWS.nullish().describe('One row of parameter values per iteration'),
        batch_size: COUNT.optional().describe('Iterations run together: labdeck runs one at a time, so only 1'),
        parameters: ROWS.optional().describe('Ax parameters: { name, type: range | choice | fixed, bounds, values, value, value_type, log_scale, is_ordered }'),
        objectives: ROWS.optional().describe('{ name, minimize (default true), weight }: outputs of the workflow'),
        parameter_constraints: z.array(z.string()).nullish().describe('Linear: ["x1 + x2 <= 10"]'),
      }),
    },
    responses: {
      200: ok('{ status: "task started", task_id: run id, queue_id } or { status: "queued", … }; a campaign adds optimizer and warnings'),
      400: fail('No workflow selected, rows or a campaign that do not fit (named), or a batch_size labdeck cannot run'),
    },
  }),
  workflowRuns: route({
    method: 'GET',
    path: '/workflow_runs',
    section: MCP_SECTION,
    summary: 'Run records, as GET /executions/records: { workflow_data: { id: { workflow_name, start_time } } }',
    operationId: 'ivoryosWorkflowRuns',
    query: z.object({ keyword: z.string().optional() }),
    responses: { 200: ok('The records') },
  }),
  workflowSteps: route({
    method: 'GET',
    path: '/workflow_steps/{workflow_id}',
    section: MCP_SECTION,
    summary: "One run as ivoryOS 1.0 answers it: { workflow_info, steps: { prep, script: { i: [...] }, cleanup } }, plus labdeck's phases (parameters and outputs)",
    operationId: 'ivoryosWorkflowSteps',
    params: z.object({ workflow_id: ID }),
    responses: { 200: ok('The run'), 404: fail('No such run') },
  }),
};
