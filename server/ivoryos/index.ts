/**
 * ivoryOS compatibility (issue 15 item 1, DESIGN.md §13): a router mounted only at `/ivoryos` that answers
 * ivoryOS 1.6.11's routes as ivoryOS does, for `ivoryos-client` 0.2.x and the proxy file ivoryOS generates.
 * It speaks to labdeck's own runtime (accounts and sessions, the deck, the runner, the records); labdeck's API
 * at `/app` does not change. It also answers the older ivoryOS 1.0 routes the published `ivoryos-mcp` server
 * (0.1.8) calls (`/login`, `/backend_control`, `/api/…`, `/database`, `/edit_workflow`, `/experiment`,
 * `/workflow_runs`, `/workflow_steps`), on the same machinery. Every answer is JSON (ivoryOS answers JSON to a request that accepts any type,
 * which is what its clients send); errors are ivoryOS's `{ "success": false, "error": "…" }` with labdeck's status, and a field
 * that does not fit is named in `details`. What labdeck cannot do is answered as such, never pretended.
 */
import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { JSONSchema, MethodSchema, OptimizerSchema } from '../../core/contracts/index.js';
import { coerceFormArgs } from '../../core/deck/form.js';
import { isLabError, LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import type { Workflow } from '../../core/workflow/model.js';
import { workflowToPhases, workflowToPython } from '../../core/workflow/python.js';
import { done, type Caller, type QueuedTask, type RunControlName } from '../../core/operations/index.js';
import { callerOf } from '../caller.js';
import { asLabError, clientGone, logInternal, statusOf, url } from '../http.js';
import { bodyCap } from '../body-cap.js';
import { limitBytes } from '../body-cap.js';
import { handle } from '../route.js';
import { NEW_WORKFLOW } from '../routes/workflows.js';
import { authenticate, csrfGuard, crossSiteGet, hostGuard } from '../security.js';
import { STAND_INS, axCampaignInput, campaignInput, inIvoryosTerms, ivoryosSchema } from './campaign.js';
import { IVORYOS_ROUTES as R } from './routes.js';
import { DECK_PREFIX, deckName, flaskTime, groupedPhases, legacySteps, queueEntry, singleStep, snapshot, workflowInfo, workflowStep } from './shapes.js';

declare module '../session.js' {
  interface SessionData {
    /** The workflow this session selected with GET /ivoryos/library/<name>: ivoryOS's draft. */
    ivoryosWorkflow?: string;
  }
}

export interface IvoryosOptions {
  /** labdeck's session middleware: the same cookie and sessions as /app. */
  session: RequestHandler;
  /** As createApp's: the names labdeck answers to. */
  listen?: string;
  allowedHosts?: string[];
  bodyLimit?: string;
}

const invalid = (field: string, message: string) => new LabError('invalid_input', message, [{ field, message }]);

/**
 * `deck.pump` → `pump`, one of the lab's instruments (this deck's, or one another labdeck on the database
 * drives); anything else is refused naming the lab's instruments.
 */
function deviceOf(runtime: Runtime, name: string): string {
  const known = runtime.ops.instruments.list().map((i) => `${DECK_PREFIX}${i.name}`);
  const device = name.startsWith(DECK_PREFIX) ? name.slice(DECK_PREFIX.length) : null;
  if (device && runtime.ops.instruments.has(device)) return device;
  const hint = known.length ? `the deck has ${known.join(', ')}` : 'the deck is empty';
  throw invalid('instrument', device ? `No instrument "${name}": ${hint}.` : `Name instruments as ivoryOS does, "${DECK_PREFIX}<name>" (${hint}); got "${name}".`);
}

/** The effective JSON type of a parameter schema (a nullable one's other type). */
function typeOf(s: JSONSchema): unknown {
  const types = ([] as unknown[]).concat(s.type ?? []).filter((t) => t !== 'null');
  if (types.length === 1) return types[0];
  const branches = ((s.anyOf ?? s.oneOf) as JSONSchema[] | undefined)?.filter((b) => b.type !== 'null');
  return branches?.length === 1 ? typeOf(branches[0]!) : undefined;
}

/**
 * Keyword arguments as ivoryOS reads them: a text value of a number or boolean parameter is converted to its
 * type (`"2.5"` → 2.5, `"True"` → true); everything else reaches the method as sent, and the deck checks it.
 */
function keywordArgs(m: MethodSchema, given: Record<string, unknown>): Record<string, unknown> {
  const props = (m.params.properties ?? {}) as Record<string, JSONSchema>;
  const typed = Object.entries(given).filter(([k, v]) => typeof v === 'string' && props[k] && ['number', 'integer', 'boolean'].includes(String(typeOf(props[k]))));
  const converted = coerceFormArgs({ properties: Object.fromEntries(typed.map(([k]) => [k, props[k]!])) }, Object.fromEntries(typed) as Record<string, string>);
  return { ...given, ...converted };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function ivoryosRouter(runtime: Runtime, opts: IvoryosOptions): Router {
  const { instruments, runs, campaigns, records: runRecords, workflows } = runtime.ops;
  /** The request's caller through this door. */
  const who = (req: Request): Caller => callerOf(req, 'ivoryos');
  const r = Router();
  const limit = opts.bodyLimit ?? '1mb';
  /** The latest call made here, and how many are in flight: ivoryOS's runner status knows of single calls too. */
  let lastCall: number | null = null;
  let inFlight = 0;

  r.use(hostGuard({ listen: opts.listen, allowed: opts.allowedHosts }));
  r.use(bodyCap({ parsed: limitBytes(limit), multipart: limitBytes(limit) }));
  r.use(express.json({ limit }));
  r.use(express.urlencoded({ extended: false, limit, parameterLimit: 1000 }));
  r.use(authenticate(runtime, opts.session));
  r.use(csrfGuard());

  // ---------------------------------------------------------------- log in and out (labdeck's accounts)

  handle(r, R.loginForm, (req) => {
    throw new LabError('unauthenticated', `Log in by posting the form fields username and password to ${url(req, '/auth/login')}.`);
  });

  /** Log in with labdeck's accounts and session, then to /ivoryos/ (ivoryOS 1.6's POST /auth/login, 1.0's POST /login). */
  const logIn = async (req: Request, res: Response, username: string, password: string) => {
    if (!req.session) throw invalid('Authorization', 'This request carries an API token, which needs no log-in; send the form without the Authorization header to log in.');
    const user = await runtime.ops.accounts.login(username, password, req.ip);
    await new Promise<void>((resolve, reject) => req.session.regenerate((e) => (e ? reject(e) : resolve())));
    req.session.userId = user.id;
    // stored before the redirect is sent: a client may follow it before the response has ended
    await new Promise<void>((resolve, reject) => req.session.save((e) => (e ? reject(e) : resolve())));
    res.redirect(302, url(req, '/'));
  };
  handle(r, R.login, (req, res, { body: { username, password } }) => logIn(req, res, username, password));
  handle(r, R.legacyLogin, (req, res, { body: { username, password } }) => logIn(req, res, username, password));

  handle(r, R.logout, async (req, res) => {
    // the same session as /app: a link on another site must not end it (ivoryOS's clients send no such header)
    const from = crossSiteGet(req);
    if (from) throw new LabError('forbidden', `Log out from labdeck itself: a link or a form on another site cannot (${from}).`);
    if (req.session) await new Promise<void>((resolve, reject) => req.session.destroy((e) => (e ? reject(e) : resolve())));
    res.redirect(302, url(req, '/auth/login'));
  });

  // not logged in: to the login route, as Flask-Login does (the proxy file logs in again on a 302)
  r.use((req, res, next) => (req.user ? next() : res.redirect(302, url(req, '/auth/login'))));

  handle(r, R.home, (req, res) => {
    res.json({
      name: 'labdeck',
      compatible_with: 'ivoryOS 1.6.11 (ivoryos-client 0.2.x), and the older ivoryOS 1.0 routes that ivoryos-mcp 0.1.8 calls',
      user: req.user!.username,
      deck: deckName(runtime),
      workflow: req.session?.ivoryosWorkflow ?? null,
    });
  });

  // ---------------------------------------------------------------- direct control

  handle(r, R.instruments, (_req, res) => res.json(snapshot(instruments.list())));
  handle(r, R.backendSnapshot, (_req, res) => res.json(snapshot(instruments.list())));
  handle(r, R.instrument, (_req, res, { params }) => {
    deviceOf(runtime, params.instrument);
    res.json(snapshot(instruments.list()));
  });

  handle(r, R.task, async (_req, res, { params: { task_id: id } }) => {
    res.json(singleStep(await instruments.record(id, 'task_id')));
  });

  /** An instrument that is busy (a call in flight, or held by a running workflow): ivoryOS answers 200 "busy". */
  const busy = (res: Response, err: LabError) => res.json({ success: false, status: 'busy', output: err.message });

  /** A call to `deck.<name>` (hidden_name, hidden_wait, flat keyword arguments), as ivoryOS's control routes make it. */
  const call = async (req: Request, res: Response, instrument: string, body: { hidden_name: string; hidden_wait?: boolean | string } & Record<string, unknown>) => {
    const name = deviceOf(runtime, instrument);
    const { hidden_name: method, hidden_wait: waitField, ...given } = body;
    const m = instruments.schema(name).methods.find((x) => x.name === method);
    if (!m)
      throw invalid(
        'hidden_name',
        `${instrument} has no method "${method}"; it has ${instruments
          .schema(name)
          .methods.map((x) => x.name)
          .join(', ')}.`,
      );
    const args = keywordArgs(m, given);
    const caller = who(req);
    const wait = waitField === undefined || String(waitField).toLowerCase() === 'true';
    // a client gone before the call is dispatched (closed or half-closed): nothing is run, nobody is answered
    if (clientGone(req, res)) return;
    inFlight++;
    if (wait) {
      try {
        // made here, or by the labdeck that drives the instrument, as /app's calls are
        const { task_id: taskId, output } = done(await instruments.call(caller, { instrument: name, method, args }));
        lastCall = taskId;
        return res.json({ success: true, output, task_id: taskId });
      } catch (e) {
        const err = asLabError(e);
        if (err.data?.task_id) lastCall = err.data.task_id as number;
        // the method ran and raised: ivoryOS answers 200 with success false and the message as output
        if (err.code === 'instrument_error') return res.json({ success: false, output: err.message, task_id: err.data?.task_id });
        if (err.code === 'busy') return busy(res, err);
        throw err;
      } finally {
        inFlight--;
      }
    }
    // hidden_wait false: the record exists (end_time null) before the call runs; the call fills it in
    let started;
    try {
      started = await instruments.start(caller, { instrument: name, method, args });
    } catch (e) {
      inFlight--;
      const err = asLabError(e);
      if (err.code === 'busy') return busy(res, err);
      throw err;
    }
    void started.finished.finally(() => inFlight--);
    lastCall = started.task_id;
    res.json({ status: 'task started', task_id: started.task_id });
  };
  handle(r, R.call, (req, res, { params, body }) => call(req, res, params.instrument, body));
  handle(r, R.backendCall, (req, res, { params, body }) => call(req, res, params.instrument, body));

  // ---------------------------------------------------------------- the library and the selected workflow

  /** Workflow names, newest first, keyword matching the name (case-insensitive). */
  const library = async (keyword: string | undefined) => {
    const k = (keyword ?? '').toLowerCase();
    const rows = (await workflows.list()).filter((w) => w.name.toLowerCase().includes(k));
    return { workflows: rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).map((w) => w.name) };
  };

  handle(r, R.library, async (_req, res, { query }) => res.json(await library(query.keyword)));
  handle(r, R.database, async (_req, res, { query }) => res.json(await library(query.keyword)));
  handle(r, R.databaseDeck, async (req, res, { params: { deck_name }, query }) => {
    // labdeck has one deck: its workflows are that deck's; another deck has none here, and the answer says so
    const own = deckName(runtime);
    if (deck_name === own) return res.json(await library(query.keyword));
    res.json({ workflows: [], message: `labdeck has one deck, "${own ?? '(none)'}": GET ${url(req, own ? `/database/${own}` : '/database')} lists its workflows.` });
  });

  /** Select the workflow `name` for this session (ivoryOS's draft); answers it as ivoryOS's library does. */
  const select = async (req: Request, res: Response, name: string) => {
    const wf = await workflows.get(name);
    if (!wf) throw new LabError('not_found', `There is no workflow "${name}"; GET ${url(req, '/library')} lists them.`, [{ field: 'name', message: 'unknown workflow' }]);
    if (!req.session) throw invalid('Authorization', 'Selecting a workflow needs a session: log in with the form (POST /ivoryos/auth/login) instead of a token.');
    req.session.ivoryosWorkflow = wf.name;
    const first = await workflows.first(wf.name);
    let python: string | null = null;
    try {
      python = workflowToPython(wf.definition as Workflow, `${req.protocol}://${req.get('host')}/app/instruments/proxy?lang=python`);
    } catch (e) {
      if (!isLabError(e)) throw e; // a name that is not an identifier (an instrument "my-pump"): selectable, not writable as Python
    }
    res.json({
      script: {
        name: wf.name,
        deck: deckName(runtime),
        version: wf.version,
        author: wf.createdBy ? await runtime.ops.accounts.userName(wf.createdBy) : null,
        time_created: flaskTime(first?.createdAt ?? wf.createdAt),
        last_modified: flaskTime(wf.createdAt),
        script_dict: wf.definition,
      },
      // the workflow as a runnable script over labdeck's generated Python client (GET /app/workflows/{name}/python)
      python_script: python,
    });
  };
  handle(r, R.load, async (req, res, { params: { name }, query }) => {
    // ivoryos-client lists a deck's workflows with GET /library/<deck>?deck=<deck>: labdeck has one deck
    if (query.deck !== undefined && query.deck === name) return res.json(await library(query.keyword));
    await select(req, res, name);
  });
  handle(r, R.editWorkflow, (req, res, { params: { workflow_name } }) => select(req, res, workflow_name));

  // ---------------------------------------------------------------- execution

  /** The workflow this session selected (ivoryOS's draft), which `what` runs. */
  const selected = (req: Request, what: string) => {
    const workflow = req.session?.ivoryosWorkflow;
    if (!workflow) throw invalid('workflow', `No workflow is selected for ${what}: GET ${url(req, '/library/<name>')} selects one for this session, as ivoryOS's draft.`);
    return workflow;
  };

  /**
   * ivoryOS answers the run's id once it started; a task that waits its turn (queue paused or held, another
   * task running) has none yet.
   */
  const started = async (req: Request, task: QueuedTask) => {
    for (let i = 0; i < 250; i++) {
      const runId = (await runs.find(task.id))?.runId;
      if (runId) return { status: 'task started', task_id: runId, queue_id: task.id };
      const s = runs.status();
      if (s.paused || s.queue_held || (s.current_task && s.current_task.id !== task.id)) break;
      await sleep(20);
    }
    return { status: 'queued', task_id: null, queue_id: task.id, message: `"${task.name}" waits in the queue (GET ${url(req, '/executions/queue')}).` };
  };

  /** Queue the selected workflow over `kwargs` rows or `repeat` times (one iteration at a time). */
  const run = async (req: Request, res: Response, body: { kwargs?: Record<string, unknown>[]; repeat?: number; batch_size?: number }) => {
    const workflow = selected(req, 'a run');
    if (body.batch_size !== undefined && body.batch_size !== 1) {
      throw invalid('batch_size', `labdeck runs one iteration at a time: batch_size must be 1, got ${body.batch_size}.`);
    }
    if (body.kwargs !== undefined && body.repeat !== undefined) throw invalid('repeat', 'Give kwargs (one row per iteration) or repeat, not both.');
    // ivoryos-client 0.2.11's run_workflow_kwargs() with no rows sends kwargs: [] (0.2.10 sent nothing usable)
    if (body.kwargs !== undefined && body.kwargs.length === 0) {
      throw invalid('kwargs', 'kwargs has no rows: give one row of parameter values per iteration, or use run_workflow_repeat for a workflow without parameters.');
    }
    const { task } = done(
      await runs.submit(who(req), {
        workflow,
        config: body.kwargs,
        repeat: body.kwargs === undefined ? (body.repeat ?? 1) : undefined,
        rowLabel: (i) => `kwargs row ${i + 1}`,
      }),
    );
    res.json(await started(req, task));
  };
  handle(r, R.run, (req, res, { body }) => run(req, res, body));

  // ivoryOS 1.0's one run route (ivoryos-mcp): repeat (form or JSON), kwargs rows, or an Ax-style campaign
  handle(r, R.experiment, async (req, res, { body }) => {
    const { kwargs, parameters, objectives, parameter_constraints, batch_size } = body;
    const repeat = typeof body.repeat === 'number' ? body.repeat : undefined;
    if (parameters === undefined) {
      if (objectives !== undefined) throw invalid('parameters', 'A campaign needs parameters as well as objectives.');
      if (parameter_constraints?.length) throw invalid('parameter_constraints', 'Constraints belong to a campaign: give parameters and objectives too.');
      // rows run once each: a repeat beside them is refused by name, unless it is ivoryOS's empty "None"
      return run(req, res, { kwargs: kwargs ?? undefined, repeat, batch_size });
    }
    if (kwargs) throw invalid('kwargs', 'Give kwargs (rows to run) or parameters and objectives (a campaign), not both.');
    if (!objectives) throw invalid('objectives', 'A campaign needs objectives: [{ "name": "<an output of the workflow>", "minimize": true }].');
    if (repeat === undefined) throw invalid('repeat', 'A campaign needs repeat: the number of experiments it runs.');
    const schemaOf = (name: string) => campaigns.schemas().find((o) => o.name === name) ?? null;
    const { input, warnings, optimizer } = axCampaignInput({ parameters, objectives, parameter_constraints, repeat, batch_size }, selected(req, 'a campaign'), schemaOf);
    let task;
    try {
      ({ task } = done(await campaigns.start(who(req), input, { asked: 'ax' })));
    } catch (e) {
      throw inIvoryosTerms(asLabError(e), 'values');
    }
    res.json({ ...(await started(req, task)), optimizer, warnings });
  });

  handle(r, R.campaign, async (req, res, { body }) => {
    const schemaOf = (name: string) => campaigns.schemas().find((o) => o.name === name) ?? null;
    const { input, warnings, optimizer } = campaignInput(body, selected(req, 'a campaign'), schemaOf);
    let task;
    try {
      ({ task } = done(await campaigns.start(who(req), input, { asked: body.optimizer_type })));
    } catch (e) {
      throw inIvoryosTerms(asLabError(e));
    }
    res.json({ ...(await started(req, task)), optimizer, warnings });
  });

  handle(r, R.optimizerSchema, (_req, res, { body }) => {
    const asked = body?.optimizer_type;
    if (!asked) return res.json(Object.fromEntries(campaigns.schemas().map((s) => [s.name, ivoryosSchema(s)])));
    const name = STAND_INS[asked] ?? asked;
    const schema = ivoryosSchema(campaigns.schema(name) as OptimizerSchema);
    res.json(name === asked ? schema : { ...schema, answered_by: name, warning: `labdeck has no "${asked}" optimizer: this is its "${name}", which runs a campaign that asks for "${asked}".` });
  });

  /** The runner as ivoryOS's status routes see it: busy (tasks waiting and calls in flight count), the running run and the step in hand. */
  const runnerState = async () => {
    const s = runs.status();
    const running = s.current_task;
    const waiting = (await runs.queue()).tasks.some((t) => t.status === 'pending');
    const out: Record<string, unknown> = { busy: s.busy || waiting || inFlight > 0, paused: s.paused };
    let current: unknown = {};
    const run = running?.run_id ? await runRecords.find(running.run_id) : null;
    if (run) {
      const last = (await runRecords.steps(run.id)).at(-1);
      if (last) current = workflowStep(last, null);
      out.workflow_status = { workflow_info: workflowInfo(run, deckName(runtime)), runner_status: s };
    } else if (lastCall !== null) {
      const step = await instruments.record(lastCall).catch(() => null);
      if (step) current = singleStep(step);
    }
    out.current_task = current;
    return { out, run, current };
  };
  handle(r, R.status, async (_req, res) => res.json((await runnerState()).out));

  handle(r, R.legacyStatus, async (_req, res) => {
    const { out, run, current } = await runnerState();
    if (out.busy) return res.json({ busy: true, current_task: current, ...(run ? { workflow_status: out.workflow_status } : {}) });
    // idle: the latest thing done, a call made here or a run, whichever started last ({} for none yet)
    const [step, latest] = await Promise.all([lastCall === null ? null : instruments.record(lastCall).catch(() => null), runRecords.runs({ page: 1, perPage: 1 }).then((l) => l.rows[0] ?? null)]);
    const runFirst = latest && (!step || (latest.startedAt?.getTime() ?? 0) >= (step.startedAt?.getTime() ?? 0));
    res.json({ busy: false, last_task: runFirst ? workflowInfo(latest, deckName(runtime)) : step ? singleStep(step) : {} });
  });

  handle(r, R.queue, async (_req, res) => {
    res.json((await runs.queue()).tasks.filter((t) => t.status !== 'running').map(queueEntry));
  });

  // the controls go the way /app's go: to the labdeck that runs the task, with the same audit line
  const pauseResume = async (req: Request, res: Response) => {
    const s = done(await runs.control(who(req), 'pauseResume'));
    res.json({ status: 'ok', pause_status: s.paused ? 'Paused' : 'Resumed', state: s.state });
  };
  handle(r, R.pauseResume, pauseResume);
  handle(r, R.legacyPause, pauseResume);

  /** An abort: ivoryOS answers 200 whatever the state; labdeck too, saying what it did (nothing, when idle). */
  const abort = (act: RunControlName, done: string) => async (req: Request, res: Response) => {
    try {
      await runs.control(who(req), act);
      res.json({ status: 'ok', message: done });
    } catch (e) {
      const err = asLabError(e);
      if (err.code !== 'conflict') throw err;
      res.json({ status: 'ok', message: `${err.message} Nothing was aborted.` });
    }
  };
  const abortIteration = abort('abortNextIteration', 'The current iteration finishes; the rest are skipped, cleanup runs, and the queue goes on.');
  handle(r, R.abortIteration, abortIteration);
  handle(r, R.legacyAbortPending, abortIteration);
  const abortTask = abort(
    'abortNextTask',
    'The step in flight finishes; no further step runs, cleanup runs, and the queue is held until POST /ivoryos/executions/pause-resume (or /ivoryos/api/pause) releases it.',
  );
  handle(r, R.abortTask, abortTask);
  handle(r, R.legacyAbortCurrent, abortTask);

  // ---------------------------------------------------------------- records

  const records = async (_req: Request, res: Response, keyword: string | undefined) => {
    const data: Record<string, { workflow_name: string; start_time: string | null }> = {};
    for (let page = 1; ; page++) {
      const { rows, total } = await runRecords.runs({ keyword, page, perPage: 1000 });
      for (const run of rows) data[run.id] = { workflow_name: run.name, start_time: flaskTime(run.startedAt) };
      if (rows.length === 0 || page * 1000 >= total) break;
    }
    res.json({ workflow_data: data });
  };
  handle(r, R.records, (req, res, { query }) => records(req, res, query.keyword));
  handle(r, R.workflowRuns, (req, res, { query }) => records(req, res, query.keyword));

  handle(r, R.record, async (_req, res, { params: { workflow_id: id } }) => {
    const { run, phases, steps } = await runRecords.run(id);
    res.json({ workflow_info: workflowInfo(run, deckName(runtime)), phases: groupedPhases(phases, steps), csv_file_name: null });
  });

  handle(r, R.workflowSteps, async (_req, res, { params: { workflow_id: id } }) => {
    const { run, phases, steps } = await runRecords.run(id);
    // ivoryOS 1.0's shape, and labdeck's phases beside it: each iteration's parameters and outputs
    res.json({ workflow_info: workflowInfo(run, deckName(runtime)), steps: legacySteps(id, steps), phases: groupedPhases(phases, steps) });
  });

  // ---------------------------------------------------------------- workflows as Python

  /** Python (ivoryOS's prep, script and cleanup texts) read into a labdeck workflow, saved, and selected for this session. */
  const savePython = async (req: Request, fields: { workflow_name?: string | null; script?: string | null; prep?: string | null; cleanup?: string | null }) => {
    const { workflow_name, script, prep, cleanup } = fields;
    const name = workflow_name?.trim() || undefined;
    const parts = { prep: prep ?? '', script: script ?? '', cleanup: cleanup ?? '' };
    const wf = await workflows.fromPython({ parts, ...(name ? { name } : {}) });
    if (wf.name === NEW_WORKFLOW) throw invalid('workflow_name', `"${NEW_WORKFLOW}" is reserved (it is the address of labdeck's builder): choose another name.`);
    // ivoryOS replaces the draft: a name in use gets a new version; the session's draft is this workflow
    const row = await workflows.save(who(req), wf);
    if (req.session) req.session.ivoryosWorkflow = row.name;
    return row;
  };
  handle(r, R.submitPython, async (req, res, { body }) => {
    const row = await savePython(req, body);
    res.json({ success: true, workflow_name: row.name, version: row.version, message: `Saved as the labdeck workflow "${row.name}" (version ${row.version}) and selected for this session.` });
  });

  // ivoryOS 1.0 (ivoryos-mcp): the draft as Python functions, and a draft submitted as Python (saved as a new version)
  handle(r, R.getScript, async (req, res) => {
    const name = selected(req, 'GET /api/get_script');
    const wf = await workflows.get(name);
    if (!wf) throw new LabError('not_found', `The selected workflow "${name}" is gone; GET ${url(req, '/database')} lists the workflows.`, [{ field: 'workflow', message: 'unknown workflow' }]);
    res.json(workflowToPhases(wf.definition as Workflow));
  });
  handle(r, R.putScript, async (req, res, { body }) => {
    const row = await savePython(req, body);
    res.json(workflowToPhases(row.definition as Workflow));
  });

  // ---------------------------------------------------------------- the rest

  r.use((req, _res, next) =>
    next(new LabError('not_found', `labdeck does not answer ${req.method} ${req.originalUrl} as ivoryOS (docs/ivoryos.md lists what it answers; labdeck's own API is at /app).`)),
  );
  r.use((e: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const err = asLabError(e);
    logInternal(err);
    if (res.headersSent) return;
    if (err.data?.retry_after) res.set('Retry-After', String(err.data.retry_after));
    res.status(statusOf(err)).json({ success: false, error: err.message, ...(err.details?.length ? { details: err.details } : {}) });
  });
  return r;
}
