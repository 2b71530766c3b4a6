/**
 * labdeck's MCP server (DESIGN.md §13), on the official SDK, at `/app/mcp` (Streamable HTTP, stateless, one
 * JSON answer per request) for an agent with an MCP token (`labmcp_…`); `lab mcp` bridges a desktop
 * assistant's stdio to it.
 *
 * Its tools are made for each request from what the lab has then:
 * - one per instrument method of the live deck, named `<instrument>_<method>`, its input schema the method's
 *   own, its description and hints from its safety level and the approval policy;
 * - the runner's, each declared with the route it stands for: its input schema and validation are that
 *   route's (server/route.ts `routeArgs`, `parseArgs`), its work done by the runtime as the route does it.
 * Calls, runs and campaigns go through core/approvals: what the policy marks waits for a person. Every tool
 * call is written to the audit log with the token that made it.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Router } from 'express';
import { z } from 'zod';
import { levelsFor, stateOf } from '../../core/approvals/index.js';
import { parseListQuery } from '../../core/records/index.js';
import type { ApprovalRow, Caller, MaybeRequest, RunControlName } from '../../core/operations/index.js';
import type { Runtime } from '../../core/runtime.js';
import type { Workflow } from '../../core/workflow/model.js';
import { error, json } from '../api-doc.js';
import { LabError } from '../../core/errors.js';
import { asLabError } from '../http.js';
import { handle, parseArgs, route, routeArgs, type Route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { APPROVAL_ROUTES } from '../routes/approvals.js';
import { ATTENTION_ROUTES } from '../routes/attention.js';
import { campaignInput, CAMPAIGN_ROUTES } from '../routes/campaigns.js';
import { EXECUTION_ROUTES } from '../routes/executions.js';
import { RECORD_ROUTES } from '../routes/records.js';
import { WORKFLOW_ROUTES } from '../routes/workflows.js';
import { MCP_PATH } from '../security.js';
import { callerOf } from '../caller.js';

const VERSION = '0.1.0';

/**
 * The MCP SDK (with ajv and its JSON-schema tooling, ~200 modules) is loaded by the first MCP request, not at
 * start-up: most labs never get one, and `lab serve` is ready sooner without it (issue 16 item 5).
 */
let sdkLoad: ReturnType<typeof loadSdk> | undefined;
const sdk = () => (sdkLoad ??= loadSdk());
async function loadSdk() {
  const [server, http, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Server: server.Server,
    StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
  };
}
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** What the assistant reads first. */
const INSTRUCTIONS =
  "labdeck runs this lab's instruments. Each instrument method is a tool `<instrument>_<method>`; the `lab_` tools read the runner's status, the workflows and " +
  'the run records, queue runs and campaigns, pause, resume and abort. Read-only and idempotent calls run at once. A call the lab marks as needing approval ' +
  "(hazardous ones by default), every run and every campaign wait for a person in labdeck's approval inbox: the tool answers with a request id; call " +
  'lab_approval with it (and wait_seconds) to learn whether it was approved and what came of it, or why it was rejected. Everything you do is audited.';

/** A runner tool: the route it stands for, and what it does with that route's parsed arguments. */
interface RunnerTool {
  name: string;
  route: Route;
  title: string;
  annotations: Tool['annotations'];
  run(input: { params: Record<string, unknown>; query: Record<string, unknown>; body: Record<string, unknown> }, agent: Caller): Promise<unknown>;
}

/** An MCP tool result: the answer as JSON text (and structured), or the error with what to fix. */
const ok = (value: unknown, text?: string): CallToolResult => ({
  content: [{ type: 'text', text: text ? `${text}\n${JSON.stringify(value, null, 2)}` : JSON.stringify(value, null, 2) }],
  ...(value && typeof value === 'object' && !Array.isArray(value) ? { structuredContent: value as Record<string, unknown> } : {}),
});
const failed = (e: LabError): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: JSON.stringify({ error: { code: e.code, message: e.message, ...(e.details?.length ? { details: e.details } : {}) }, ...(e.data ?? {}) }, null, 2) }],
});

/** A request as the agent sees it: its state, and once approved and run, the outcome; rejected: the reason. */
function requestJson(a: ApprovalRow) {
  const state = stateOf(a);
  return {
    approval_id: a.id,
    state,
    summary: a.summary,
    expires_at: a.expiresAt.toISOString(),
    ...(a.reason ? { reason: a.reason } : {}),
    ...(a.outcome !== null ? { outcome: a.outcome } : {}),
    next:
      state === 'pending'
        ? `Waiting for a person in labdeck's approval inbox. Call lab_approval with approval_id ${a.id} (wait_seconds up to 55) to learn the decision.`
        : state === 'approved' && a.outcome === null
          ? `Approved; it is running. Call lab_approval with approval_id ${a.id} again for its outcome.`
          : state === 'rejected'
            ? 'Rejected by a person: it will not run. Their reason is above.'
            : state === 'expired'
              ? 'Nobody decided in time: it will never run. Ask again if it is still wanted.'
              : 'Done: the outcome is above.',
  };
}

/** An operation's outcome as the agent reads it: the value, or the request that waits for a person. */
const answer = <T>(o: MaybeRequest<T>): T | ReturnType<typeof requestJson> => ('request' in o ? requestJson(o.request) : o.done);

function runnerTools(runtime: Runtime): RunnerTool[] {
  const { runs, workflows, campaigns, records, approvals } = runtime.ops;
  /** A declared route as the tools read it (its own schema types do not matter here). */
  const at = (r: unknown) => r as Route;
  const read = { readOnlyHint: true, openWorldHint: false };
  const taskOf = (body: Record<string, unknown>) => (typeof body.task_id === 'number' ? body.task_id : undefined);
  const control = (name: string, title: string, r: unknown, which: RunControlName): RunnerTool => ({
    name,
    route: at(r),
    title,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    run: async ({ body }, agent) => answer(await runs.control(agent, which, taskOf(body))),
  });
  const tools: RunnerTool[] = [
    { name: 'lab_status', route: at(EXECUTION_ROUTES.status), title: 'Runner status', annotations: read, run: async () => runs.status() },
    {
      name: 'lab_workflows',
      route: at(WORKFLOW_ROUTES.list),
      title: 'Saved workflows',
      annotations: read,
      run: async () => ({
        workflows: (await workflows.list()).map((w) => {
          const d = w.definition as Workflow;
          return { name: w.name, version: w.version, description: d.description ?? '', parameters: d.parameters, outputs: d.outputs ?? [] };
        }),
      }),
    },
    {
      name: 'lab_queue_workflow',
      route: at(EXECUTION_ROUTES.start),
      title: 'Queue a run (a person approves it first)',
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      run: async ({ body }, agent) =>
        answer(
          await runs.submit(agent, {
            workflow: body.workflow,
            config: body.config,
            repeat: body.repeat,
            configFile: typeof body.config_file === 'string' ? body.config_file : undefined,
            name: body.name,
          }),
        ),
    },
    {
      name: 'lab_start_campaign',
      route: at(CAMPAIGN_ROUTES.start),
      title: 'Start an optimization campaign (a person approves it first)',
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      run: async ({ body }, agent) =>
        answer(
          await campaigns.start(
            agent,
            campaignInput(body, () => null),
          ),
        ),
    },
    // what waits for a person: an agent may read it, never answer an input (there is no tool for POST /executions/input)
    { name: 'lab_attention', route: at(ATTENTION_ROUTES.list), title: 'What waits for a person across the lab', annotations: read, run: async () => ({ items: await runtime.ops.attention.list() }) },
    { name: 'lab_records', route: at(RECORD_ROUTES.list), title: 'Run records', annotations: read, run: ({ query }) => records.list(parseListQuery(query)) },
    { name: 'lab_record', route: at(RECORD_ROUTES.one), title: 'One run record', annotations: read, run: ({ params }) => records.detail(params.workflow_id as number) },
    {
      name: 'lab_approval',
      route: at(APPROVAL_ROUTES.one),
      title: 'What became of a request',
      annotations: read,
      run: async ({ params, query }, agent) => requestJson(await approvals.get(agent, params.id as number, query.wait ? (query.wait as number) * 1000 : undefined)),
    },
    control('lab_pause', 'Pause the runner', EXECUTION_ROUTES.pause, 'pause'),
    {
      // a person's pause is undone only by a person: then the resume waits in the approval inbox
      name: 'lab_resume',
      route: at(EXECUTION_ROUTES.resume),
      title: 'Resume the runner (a person approves it first when a person paused it)',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      run: async ({ body }, agent) => answer(await runs.control(agent, 'resume', taskOf(body))),
    },
    control('lab_abort', 'Abort the run (after the step in flight; cleanup runs)', EXECUTION_ROUTES.abortNextTask, 'abortNextTask'),
    control('lab_stop_after_iteration', 'Stop the run after this iteration', EXECUTION_ROUTES.abortNextIteration, 'abortNextIteration'),
  ];
  return tools;
}

/** Arguments a tool calls by another name than its route (`lab_approval`'s `approval_id` is the route's `id`). */
const RENAMES: Record<string, Record<string, string>> = { lab_approval: { id: 'approval_id', wait: 'wait_seconds' } };

/** The route a runner tool stands for, as a function of named arguments: its path and body fields, and its query fields but `format`. */
const asFunction = (t: RunnerTool): Route => ({ ...t.route, client: { name: t.name, query: t.route.query ? Object.keys(t.route.query.shape).filter((k) => k !== 'format') : [] } });

/** A tool's input schema: its route's arguments. */
function inputSchema(t: RunnerTool): Tool['inputSchema'] {
  const args = routeArgs(asFunction(t));
  const rename = RENAMES[t.name] ?? {};
  return {
    type: 'object',
    properties: Object.fromEntries(args.map((a) => [rename[a.name] ?? a.name, a.schema])),
    required: args.filter((a) => a.required).map((a) => rename[a.name] ?? a.name),
  };
}

/** The lab's methods as tools (this deck's, and those other labdecks on the database drive): `<instrument>_<method>`, their parameters' schema, hints from their safety. */
async function instrumentTools(runtime: Runtime, taken: Set<string>): Promise<{ tool: Tool; instrument: string; method: string }[]> {
  const policy = await runtime.ops.approvals.policy();
  const out: { tool: Tool; instrument: string; method: string }[] = [];
  for (const inst of runtime.ops.instruments.list()) {
    for (const m of inst.methods) {
      if (m.hidden) continue;
      let name = `${inst.name}_${m.name}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
      for (let i = 2; taken.has(name); i++) name = `${name.slice(0, 60)}_${i}`;
      if (!TOOL_NAME.test(name)) continue;
      taken.add(name);
      // the level the lab's safety file gives it (`levels`), else the driver's; undeclared is `unknown`
      const level = runtime.ops.safety.levelOf(inst.name, [inst.driver], m.name) ?? m.safety;
      const approval = levelsFor(policy, inst.name).includes(level);
      const where = inst.host ? ` on the PC ${inst.host}` : '';
      out.push({
        instrument: inst.name,
        method: m.name,
        tool: {
          name,
          title: `${inst.name}.${m.name}`,
          description:
            `${m.description || `${m.name} of ${inst.name}`} (${inst.name}, a ${inst.driver}${where}; safety: ${level}` +
            `${approval ? '; each call waits for a person to approve it: the answer is a request id for lab_approval' : ''})` +
            `${inst.offline ? ` — offline now: ${inst.offline}` : ''}`,
          inputSchema: { ...m.params, type: 'object' } as Tool['inputSchema'],
          annotations: {
            title: `${inst.name}.${m.name}`,
            readOnlyHint: level === 'readonly',
            idempotentHint: level === 'readonly' || level === 'idempotent',
            destructiveHint: level === 'hazardous' || level === 'unknown',
            openWorldHint: true,
          },
        },
      });
    }
  }
  return out;
}

/** One MCP server for one request of one agent (stateless: nothing is kept between requests). */
export async function mcpServer(runtime: Runtime, agent: Caller): Promise<Server> {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema } = await sdk();
  const server = new Server({ name: 'labdeck', version: VERSION, title: 'labdeck' }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const runner = runnerTools(runtime);
  const tools = async () => {
    const inst = await instrumentTools(runtime, new Set(runner.map((t) => t.name)));
    return { runner, inst };
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const { runner: r, inst } = await tools();
    // an instrument PC that is not connected offers no tools (a call by name still answers why: offline)
    const away = new Set(runtime.ops.agents.list().flatMap((a) => (a.connected ? [] : a.instruments)));
    return {
      tools: [
        ...r.map((t): Tool => ({
          name: t.name,
          title: t.title,
          description: t.route.client?.doc ?? [t.route.summary, t.route.description].filter(Boolean).join('. '),
          inputSchema: inputSchema(t),
          annotations: { title: t.title, ...t.annotations },
        })),
        ...inst.filter((t) => !away.has(t.instrument)).map((t) => t.tool),
      ],
    };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: given = {} } = request.params;
    let result: CallToolResult;
    let said: unknown;
    try {
      const r = runner.find((t) => t.name === name);
      if (r) {
        const rename = Object.fromEntries(Object.entries(RENAMES[name] ?? {}).map(([k, v]) => [v, k]));
        const args = Object.fromEntries(Object.entries(given).map(([k, v]) => [rename[k] ?? k, v]));
        const input = parseArgs(asFunction(r), args);
        const value = await r.run(input as Parameters<RunnerTool['run']>[0], agent);
        said = value && typeof value === 'object' && 'approval_id' in value ? { approval: (value as { approval_id: number }).approval_id } : 'ok';
        result = ok(value);
      } else {
        const t = (await tools()).inst.find((x) => x.tool.name === name);
        if (!t) throw new LabError('not_found', `There is no tool "${name}": list the tools again (the deck may have changed).`, [{ field: 'name', message: 'unknown tool' }]);
        const outcome = await runtime.ops.instruments.call(agent, { instrument: t.instrument, method: t.method, args: given });
        if ('done' in outcome) {
          const { task_id, output } = outcome.done;
          said = { task_id };
          result = ok({ task_id, output });
        } else {
          said = { approval: outcome.request.id };
          result = ok(requestJson(outcome.request));
        }
      }
    } catch (e) {
      const err = asLabError(e);
      said = { error: err.code, message: err.message };
      result = failed(err);
    }
    await runtime.ops.agents.toolCalled(agent, name, given, said);
    return result;
  });
  return server;
}

/** A JSON-RPC 2.0 message, whole: a request or notification (method, params), or a response (result or error). */
const JSON_RPC = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional().describe("A request's id (a notification has none)"),
  method: z.string().optional().describe('initialize, tools/list, tools/call, ping, notifications/…'),
  params: z.record(z.string(), z.unknown()).optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});
const MCP_ERRORS = {
  401: error('No MCP token, or an unknown or revoked one'),
  403: error('Not an MCP token: make one on your account page with scope mcp'),
};

export const MCP_ROUTES = {
  post: route({
    method: 'POST',
    path: MCP_PATH,
    section: 'Agents',
    summary: "labdeck's MCP server (Streamable HTTP): the deck's methods and the runner as tools, with an approval inbox for what needs a person",
    operationId: 'mcp',
    description:
      'For AI assistants: authenticate with `Authorization: Bearer labmcp_…` (an MCP token, POST /app/account/tokens with scope mcp). ' +
      'Stateless: each POST carries one JSON-RPC message and is answered in JSON. Desktop assistants that speak stdio use `lab mcp --server URL --token TOKEN`. See docs/agents.md.',
    body: { name: 'McpMessage', kinds: ['json'], schema: JSON_RPC, description: 'One JSON-RPC 2.0 message of the Model Context Protocol' },
    responses: { 200: json('The JSON-RPC answer', 'McpMessage'), 202: { description: 'A notification or response was received (no answer)' }, ...MCP_ERRORS },
  }),
  get: route({
    method: 'GET',
    path: MCP_PATH,
    section: 'Agents',
    summary: 'No server-sent event stream: the MCP server is stateless (405)',
    operationId: 'mcpStream',
    responses: { 405: error('Only POST is served'), ...MCP_ERRORS },
  }),
};

export function mcpRoutes(runtime: Runtime): Router {
  const r = Router();
  handle(r, MCP_ROUTES.post, async (req, res) => {
    if (req.authVia !== 'mcp' || !req.agentToken) {
      throw new LabError(
        'forbidden',
        'The MCP server takes an MCP token (Authorization: Bearer labmcp_…): make one on your account page with scope "mcp". It opens this and nothing else, so the agent cannot go around the approval inbox.',
      );
    }
    const { StreamableHTTPServerTransport } = await sdk();
    const server = await mcpServer(runtime, callerOf(req, 'mcp'));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  handle(r, MCP_ROUTES.get, (req) => {
    if (req.authVia !== 'mcp') throw new LabError('forbidden', 'The MCP server takes an MCP token (Authorization: Bearer labmcp_…).');
    throw new LabError('method_not_allowed', 'The MCP server is stateless: it answers POSTs (JSON) and opens no event stream.');
  });
  return r;
}

/** The group: the MCP endpoint's routes, declared and mounted (server/catalogue.ts). */
export const MCP_GROUP = routeGroup({ name: 'mcp', routes: MCP_ROUTES, mount: mcpRoutes });
