/** Direct control: list, schemas, calls, per-user order and visibility, call records, console, proxy client. */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { InstrumentSchema, JSONSchema, MethodSchema } from '../../core/contracts/index.js';
import { coerceFormArgs } from '../../core/deck/form.js';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { done, type LabwareView, type MethodPrefs } from '../../core/operations/index.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { HTML, HX_REQUEST, empty, error, json, pageOrJson, ref, type ResponseObject } from '../api-doc.js';
import { asLabError, clientGone, isJson, render, statusOf, url } from '../http.js';
import { failed, redirectTo, respond } from '../respond.js';
import { handle, route, type FormAgain } from '../route.js';
import { routeGroup, type MountContext } from '../catalogue.js';
import { LabwarePanel } from '../views/labware.js';
import { CallResult, ConsoleOutput, InstrumentPage, InstrumentsPage, RecentCalls, TaskPage, stepJson, type CallOutcome } from '../views/instruments.js';

/**
 * Apply a user's saved order and visibility. Hidden is stored as the method name; "shown although the driver
 * hides it by default" as `!name`.
 */
export function personalise(inst: InstrumentSchema, prefs: MethodPrefs) {
  const pos = new Map(prefs.order.map((n, i) => [n, i]));
  const methods = inst.methods
    .map((m) => ({ ...m, hidden: prefs.hidden.includes(m.name) ? true : prefs.hidden.includes(`!${m.name}`) ? false : m.hidden }))
    .sort((a, b) => (pos.get(a.name) ?? 1e9 + a.order) - (pos.get(b.name) ?? 1e9 + b.order));
  return { ...inst, methods };
}

const isHtmx = (req: Request) => req.get('HX-Request') === 'true';

const CONSOLE_LANGUAGES = ['python', 'typescript', 'javascript'] as const;
/** The console speaks the deck's language unless the request names one. */
export const consoleLanguage = (runtime: Runtime) => (/\.(py|json)$/i.test(runtime.ops.settings.deckFile() ?? '') ? 'python' : 'typescript');

function method(inst: InstrumentSchema, name: string): MethodSchema {
  const m = inst.methods.find((x) => x.name === name);
  if (!m) {
    throw new LabError('not_found', `${inst.name} has no method "${name}"; it has ${inst.methods.map((x) => x.name).join(', ')}.`);
  }
  return m;
}

/**
 * The fields a page's form passes on beside its own: one per method parameter (or driver option), named like
 * it. A name with a dot or a bracket (`a.b`, `a[b]`) is no parameter's field: refused like any unknown field.
 */
export const PARAMETER_FIELD = /^[^.[\]]+$/;

/**
 * A form's parameter fields → arguments: each parameter typed by its schema, any other field as sent (the deck
 * checks the arguments against the method's own schema and names a field that is not a parameter).
 */
export function formArgs(params: JSONSchema, body: Record<string, unknown>, own: string[]): Record<string, unknown> {
  const fields = Object.fromEntries(Object.entries(body).filter(([k, v]) => !own.includes(k) && v !== undefined)) as Record<string, string | string[]>;
  const known = new Set(Object.keys((params.properties ?? {}) as Record<string, unknown>));
  return { ...Object.fromEntries(Object.entries(fields).filter(([k]) => !known.has(k))), ...coerceFormArgs(params, fields) };
}

const SECTION = 'Direct control';
const FORMAT = z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header');
const INSTRUMENT = z.string().describe('A device of the deck');
const ONE = z.object({ instrument: INSTRUMENT });
/** A call record's id: the steps table's ids are 64-bit, so they go past ID's 2^31-1. */
const STEP_ID = z
  .union([z.string().regex(/^\d{1,16}$/, 'must be a whole number'), z.int()])
  .transform(Number)
  .pipe(z.int().min(1, 'must be at least 1').max(Number.MAX_SAFE_INTEGER, `must be at most ${Number.MAX_SAFE_INTEGER}`));

/** The fields of a call, JSON or the page's form (`method` plus one field per parameter). */
const CALL_FIELDS = {
  method: z.string().min(1).describe('The method to call'),
  // any value reaches the handler, which says '"args" must be an object' (and a form's parameter named args is text)
  args: z.unknown().optional().meta({ type: 'object', additionalProperties: {}, description: "The method's arguments (default {})" }),
};
const CALL_FORM = 'A form works too: `method` plus one field per parameter, as text; typed by the method schema.';
const CALL_FAILED: Record<string, ResponseObject> = {
  404: error('No such instrument or method'),
  409: error('The instrument is held by a running task'),
  502: error('The instrument raised: the message, and task_id of the failed call'),
  503: error('The instrument is offline (its host process is down); in_doubt when it went during this call'),
};

export const INSTRUMENT_ROUTES = {
  list: route({
    method: 'GET',
    path: '/instruments/',
    section: SECTION,
    summary: 'All instruments',
    operationId: 'listInstruments',
    query: z.object({ format: FORMAT }),
    responses: { 200: pageOrJson('Every device of the deck', 'InstrumentList') },
  }),
  one: route({
    method: 'GET',
    path: '/instruments/{instrument}',
    section: SECTION,
    summary: 'An instrument: its methods and their schemas',
    operationId: 'getInstrument',
    params: ONE,
    query: z.object({ format: FORMAT }),
    responses: {
      200: pageOrJson('The control page, or the methods and their JSON Schemas', 'Instrument'),
      404: error('No such instrument'),
    },
  }),
  call: route({
    method: 'POST',
    path: '/instruments/{instrument}',
    section: SECTION,
    summary: 'Call a method: { method, args } (200 { task_id, output })',
    operationId: 'callMethod',
    description:
      'Validates the arguments against the method schema before the instrument is touched, waits its turn on the ' +
      'instrument, and records the call. Per-instrument bodies (for client generators) are in the "Live deck" ' +
      'operations and in the `Call.<instrument>` schemas of the document served to logged-in users.',
    params: ONE,
    docParameters: [HX_REQUEST],
    body: { name: 'CallBody', description: `JSON: { method, args }. ${CALL_FORM}`, schema: z.object(CALL_FIELDS), extra: PARAMETER_FIELD, extraKinds: ['form'] },
    responses: {
      200: pageOrJson('Done: the output and the id of the call record (or the page / an htmx fragment)', 'CallResult'),
      400: error('Invalid arguments: details name the field; the instrument was not called'),
      ...CALL_FAILED,
    },
  }),
  callNamed: route({
    method: 'POST',
    path: '/instruments/',
    section: SECTION,
    summary: 'Call a method, instrument named in the body',
    operationId: 'callMethodNamed',
    description: 'As POST /app/instruments/{instrument}, with the instrument named in the body.',
    docParameters: [HX_REQUEST],
    body: {
      name: 'CallAnyBody',
      description: `JSON: { instrument, method, args }. ${CALL_FORM.replace('`method`', '`instrument`, `method`')}`,
      schema: z.object({ instrument: z.string().min(1).describe('The device to call'), ...CALL_FIELDS }),
      extra: PARAMETER_FIELD,
      extraKinds: ['form'],
    },
    responses: {
      200: pageOrJson('Done: the output and the id of the call record', 'CallResult'),
      400: error('instrument or method missing, or invalid arguments (details name the field)'),
      ...CALL_FAILED,
    },
  }),
  calls: route({
    method: 'GET',
    path: '/instruments/{instrument}/calls',
    section: SECTION,
    summary: 'The latest recorded calls of an instrument',
    operationId: 'recentCalls',
    params: ONE,
    query: z.object({ format: FORMAT }),
    responses: {
      200: {
        description: 'The latest recorded calls of the instrument: an HTML fragment (the panel of its page), or JSON',
        content: { 'text/html': HTML, 'application/json': { schema: ref('CallList') } },
      },
      404: error('No such instrument'),
    },
  }),
  retry: route({
    method: 'POST',
    path: '/instruments/{instrument}/retry',
    section: SECTION,
    summary: 'Load a deck file instrument that failed again',
    operationId: 'retryInstrument',
    description:
      'An instrument of an `ivoryos-deck/1` file that failed at import, init or setup is listed offline with its stage; after the lab fixed it, this builds it again from the file as it is now. A form answers 302 to its page.',
    params: ONE,
    responses: {
      200: json('It loaded: the instrument, with its methods', 'Instrument'),
      302: empty('Back to the instrument page (a form)'),
      400: error('It still fails: the stage and the error'),
      404: error('No such instrument'),
      409: error('The instrument is loaded: nothing to retry'),
    },
  }),
  labware: route({
    method: 'GET',
    path: '/instruments/{instrument}/labware',
    section: SECTION,
    summary: "An instrument's worktable: labware, grids, contents, tips left",
    operationId: 'instrumentLabware',
    description:
      "Read from a driver that speaks ivoryOS's worktable protocol (`__ivoryos_labware__`, `__ivoryos_labware_state__`); `worktable: false` for any other instrument. Taken in turn with the instrument's calls, never recorded.",
    params: ONE,
    query: z.object({ format: FORMAT }),
    responses: {
      200: { description: 'The labware view: an HTML fragment (the panel of its page), or JSON', content: { 'text/html': HTML, 'application/json': { schema: ref('LabwareView') } } },
      404: error('No such instrument'),
      503: error('The instrument is offline'),
    },
  }),
  order: route({
    method: 'POST',
    path: '/instruments/{instrument}/actions/order',
    section: SECTION,
    summary: 'Save your method order (204)',
    operationId: 'saveOrder',
    description: 'Per user, stored in the database.',
    params: ONE,
    body: { name: 'OrderBody', kinds: ['json'], schema: z.object({ order: z.array(z.string()).describe('Method names, each at most once, in display order') }) },
    responses: {
      204: empty('Saved'),
      400: error('Not a list of method names, an unknown method, or a duplicate'),
      404: error('No such instrument'),
    },
  }),
  hidden: route({
    method: 'PATCH',
    path: '/instruments/{instrument}/actions/{function}',
    section: SECTION,
    summary: 'Hide or show a method for you',
    operationId: 'setHidden',
    description: 'Per user, stored in the database. Hidden methods stay callable.',
    params: z.object({ instrument: INSTRUMENT, function: z.string().describe('A method of the instrument') }),
    body: { name: 'HiddenBody', kinds: ['json'], schema: z.object({ hidden: z.boolean() }) },
    responses: {
      200: json('Saved', 'HiddenResult'),
      400: error('hidden is not a boolean'),
      404: error('No such instrument or method'),
    },
  }),
  task: route({
    method: 'GET',
    path: '/instruments/task/{task_id}',
    section: SECTION,
    summary: 'One recorded instrument call',
    operationId: 'getTask',
    client: {
      name: 'call_record',
      doc: 'The record of one instrument call (e.g. the task_id of a failed call): instrument, method, args, output, status, error (a traceback for Python drivers), log.',
    },
    params: z.object({ task_id: STEP_ID.describe('The id of a recorded call') }),
    query: z.object({ format: FORMAT }),
    responses: {
      200: pageOrJson('The call record', 'Step'),
      400: error('task_id is not a positive integer'),
      404: error('No such record'),
    },
  }),
  console: route({
    method: 'POST',
    path: '/instruments/console/execute',
    section: SECTION,
    summary: 'Run a JavaScript/TypeScript snippet against the deck',
    access: 'admin',
    operationId: 'consoleExecute',
    description:
      'Runs a Python snippet in the deck namespace (like a REPL), or a JavaScript/TypeScript one with `deck` in scope, within the console time limit. Admins only; every use is audit-logged.',
    docParameters: [HX_REQUEST],
    body: {
      name: 'ConsoleBody',
      kinds: ['json', 'form', 'text'],
      text: 'code',
      description: "The code as the raw body (text/plain, in the deck's language), or { code, language } (JSON, or the page's form).",
      schema: z.object({
        code: z
          .string()
          .refine((s) => s.trim() !== '', 'must not be empty')
          .meta({ minLength: 1 })
          .describe('A snippet. Python runs in the deck namespace (instruments by name); JavaScript/TypeScript get `deck.<instrument>.<method>(args)`'),
        language: z.enum(CONSOLE_LANGUAGES).optional().describe('Default: python when the deck is a Python script, else typescript'),
      }),
    },
    responses: {
      200: {
        description: 'Ran (success false when the snippet threw); an HTML fragment for htmx',
        content: { 'application/json': { schema: ref('ConsoleResult') }, 'text/html': HTML },
      },
      400: error('No code, or an unknown language'),
    },
  }),
  proxy: route({
    method: 'GET',
    path: '/instruments/proxy',
    section: SECTION,
    summary: 'Download a client for the live deck (?lang=python|typescript)',
    operationId: 'downloadClient',
    description: 'Generated from the live deck. The Python client uses the standard library only.',
    query: z.object({ lang: z.enum(['python', 'typescript']).default('python').describe('The client language (default python)') }),
    responses: {
      200: {
        description: 'The client file, as an attachment',
        headers: { 'Content-Disposition': { description: 'attachment; filename=...', schema: { type: 'string' } } },
        content: { 'text/x-python': { schema: { type: 'string' } }, 'text/plain': { schema: { type: 'string' } } },
      },
      400: error('lang is not python or typescript'),
    },
  }),
};

export function instrumentRoutes(runtime: Runtime, { catalogue }: Pick<MountContext, 'catalogue'>): Router {
  const r = Router();
  const { instruments: ops } = runtime.ops;
  const R = INSTRUMENT_ROUTES;
  /** The lab's instruments, in the deck's own order (its author's), then the instruments other labdecks drive (`host` says where). */
  const labList = () => ops.list();
  const known = (name: unknown): name is string => typeof name === 'string' && ops.has(name);

  const personalised = async (req: Request, name: string) => {
    const inst = ops.schema(name);
    // the lab's safety limits beside each method's form (the browser refuses out-of-limit input; the guard checks all)
    const limited = { ...inst, methods: inst.methods.map((m) => ({ ...m, params: runtime.ops.safety.limitedParams(inst.name, [inst.driver], m.name, m.params) })) };
    return personalise(limited, await ops.prefs(callerOf(req, 'app'), name));
  };

  handle(r, R.list, async (req, res) => {
    const instruments = labList();
    await respond(req, res, {
      json: () => ({
        instruments: instruments.map((i) => ({
          name: i.name,
          driver: i.driver,
          description: i.description,
          source: i.source,
          methods: i.methods.map((m) => m.name),
          ...(i.offline ? { offline: i.offline } : {}),
          ...(i.failure ? { failure: i.failure } : {}),
          ...(i.host ? { host: i.host } : {}),
        })),
      }),
      html: async () => <InstrumentsPage ctx={await ctxOf(req)} instruments={instruments} language={consoleLanguage(runtime)} deckChanged={runtime.ops.settings.deckChanged()} />,
    });
  });

  handle(r, R.proxy, async (req, res, { query: { lang } }) => {
    // loaded on first use: most labs never ask for a client
    const { generateProxy } = await import('../proxy.js');
    const base = `${req.protocol}://${req.get('host')}${url(req, '')}`;
    const { filename, content } = generateProxy(lang, ops.local(), { defaultBaseUrl: base, routes: catalogue.routes });
    res
      .attachment(filename)
      .type(lang === 'python' ? 'text/x-python' : 'text/plain')
      .send(content);
  });

  handle(r, R.task, async (req, res, { params: { task_id: id } }) => {
    const step = stepJson(await ops.record(id));
    await respond(req, res, { json: step, html: async () => <TaskPage ctx={await ctxOf(req)} step={step} /> });
  });

  handle(r, R.console, async (req, res, { body: { code, language = consoleLanguage(runtime) } }) => {
    // audited before the snippet runs (whatever it does, the audit log has it) and after
    const result = await ops.console(callerOf(req, 'app'), { code, language });
    if (isHtmx(req)) return render(res, <ConsoleOutput result={result} />);
    res.json(result);
  });

  const RECENT = 10;
  const recent = (name: string) => ops.recent(name, RECENT);

  /** The labware view beside an instrument's methods (none for an instrument without a worktable, or offline). */
  const labware = (name: string) => ops.labware(name).catch((e: unknown) => ({ worktable: true, error: asLabError(e).message }) as LabwareView);

  handle(r, R.one, async (req, res, { params: { instrument } }) => {
    const inst = await personalised(req, instrument);
    await respond(req, res, {
      json: inst,
      html: async () => <InstrumentPage ctx={await ctxOf(req)} instrument={inst} recent={await recent(inst.name)} labware={inst.offline ? undefined : await labware(inst.name)} />,
    });
  });

  handle(r, R.labware, async (req, res, { params }) => {
    const view = await ops.labware(params.instrument);
    await respond(req, res, { json: view, html: () => <LabwarePanel view={view} /> });
  });

  /** The latest recorded calls of an instrument (the page refreshes this panel after each call). */
  handle(r, R.calls, async (req, res, { params }) => {
    const inst = ops.schema(params.instrument);
    const steps = await recent(inst.name);
    await respond(req, res, { json: () => ({ calls: steps.map(stepJson) }), html: async () => <RecentCalls ctx={await ctxOf(req)} steps={steps} /> });
  });

  /** A call that failed, for a page: the instrument's page (an htmx fragment) with the message. */
  const callFailed = async (req: Request, res: Response, name: unknown, outcome: CallOutcome, err: LabError) => {
    outcome.error = { message: err.message, details: err.details, task_id: err.data?.task_id as number | undefined };
    const ctx = await ctxOf(req);
    if (isHtmx(req)) {
      if (outcome.error.task_id) res.set('HX-Trigger', 'labdeck-called');
      return render(res, <CallResult ctx={ctx} outcome={outcome} />, statusOf(err));
    }
    if (!known(name)) return render(res, <InstrumentsPage ctx={ctx} instruments={labList()} />, statusOf(err));
    return render(res, <InstrumentPage ctx={ctx} instrument={await personalised(req, name)} outcome={outcome} recent={await recent(name)} />, statusOf(err));
  };
  /** A form whose fields do not fit: the same answer as a call that failed. */
  const callAgain =
    (nameOf: (req: Request) => unknown): FormAgain =>
    (req, res, err) =>
      callFailed(req, res, nameOf(req), { method: typeof req.body?.method === 'string' ? req.body.method : '' }, err);

  /** Call a method: JSON { method, args } or a form (method + one field per parameter). */
  const call = async (req: Request, res: Response, name: string, body: Record<string, unknown>, own: string[]) => {
    const methodName = body.method as string;
    let outcome: CallOutcome = { method: methodName };
    try {
      let args: unknown;
      if (isJson(req)) {
        args = body.args ?? {};
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw new LabError('invalid_input', '"args" must be an object of parameter values.', [{ field: 'args', message: 'must be an object' }]);
        }
      } else {
        args = formArgs(method(ops.schema(name), methodName).params, body, own);
      }
      // a client gone before the call is dispatched (closed or half-closed): nothing is run, nobody is answered
      if (clientGone(req, res)) return;
      // made here, or by the labdeck that drives the instrument (its answer comes back; it records the call)
      const { task_id: taskId, output } = done(await ops.call(callerOf(req, 'app'), { instrument: name, method: methodName, args }));
      await respond(req, res, {
        json: { task_id: taskId, output },
        html: async () => {
          const unit = ops.resultUnit(name, methodName);
          outcome = { method: methodName, taskId, output, ...(unit ? { unit } : {}) };
          if (isHtmx(req)) {
            res.set('HX-Trigger', 'labdeck-called');
            return <CallResult ctx={await ctxOf(req)} outcome={outcome} />;
          }
          return <InstrumentPage ctx={await ctxOf(req)} instrument={await personalised(req, name)} outcome={outcome} recent={await recent(name)} />;
        },
      });
    } catch (e) {
      await failed(req, res, e, (err) => callFailed(req, res, name, outcome, err));
    }
  };
  handle(
    r,
    R.callNamed,
    (req, res, { body }) => call(req, res, body.instrument, body, ['instrument', 'method']),
    callAgain((req) => req.body?.instrument),
  );
  handle(
    r,
    R.call,
    (req, res, { params, body }) => call(req, res, params.instrument, body, ['method']),
    callAgain((req) => req.params.instrument),
  );

  handle(r, R.retry, async (req, res, { params }) => {
    let schema: InstrumentSchema;
    try {
      schema = await ops.retry(callerOf(req, 'app'), params.instrument);
    } catch (e) {
      if (!ops.has(params.instrument)) throw e;
      return failed(req, res, e, () => res.redirect(302, url(req, `/instruments/${encodeURIComponent(params.instrument)}`))); // the page shows the new stage and error
    }
    await redirectTo(req, res, url(req, `/instruments/${encodeURIComponent(params.instrument)}`), schema);
  });

  handle(r, R.order, async (req, res, { params, body: { order } }) => {
    await ops.setOrder(callerOf(req, 'app'), params.instrument, order);
    res.status(204).end();
  });

  handle(r, R.hidden, async (req, res, { params, body: { hidden } }) => {
    res.json(await ops.setHidden(callerOf(req, 'app'), params.instrument, params.function, hidden));
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const INSTRUMENTS_GROUP = routeGroup({ name: 'instruments', routes: INSTRUMENT_ROUTES, mount: instrumentRoutes });
