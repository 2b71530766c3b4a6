/** Direct control: list, schemas, calls, per-user order and visibility, call records, console, proxy client. */
import { Router, type Request, type Response } from 'express';
import type { InstrumentSchema, MethodSchema } from '../../core/contracts/index.js';
import { runConsole } from '../../core/console.js';
import { coerceFormArgs } from '../../core/deck/index.js';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import type { MethodPrefs } from '../../core/store/types.js';
import { ctxOf } from '../context.js';
import { asLabError, errorBody, intParam, render, requireAdmin, statusOf, url, wantsJson } from '../http.js';
import { generateProxy } from '../proxy.js';
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

const CONSOLE_LANGUAGES = ['python', 'typescript', 'javascript'];
/** The console speaks the deck's language unless the request names one. */
export const consoleLanguage = (runtime: Runtime) => (runtime.deckFile?.endsWith('.py') ? 'python' : 'typescript');

function method(inst: InstrumentSchema, name: string): MethodSchema {
  const m = inst.methods.find((x) => x.name === name);
  if (!m) {
    throw new LabError('not_found', `${inst.name} has no method "${name}"; it has ${inst.methods.map((x) => x.name).join(', ')}.`);
  }
  return m;
}

export function instrumentRoutes(runtime: Runtime): Router {
  const r = Router();
  const { deck, store } = runtime;

  const personalised = async (req: Request, name: string) =>
    personalise(deck.schema(name), await store.prefs.get(req.user!.id, name));

  r.get('/instruments/', async (req, res) => {
    const instruments = deck.list();
    if (wantsJson(req)) {
      return res.json({
        instruments: instruments.map((i) => ({ name: i.name, driver: i.driver, description: i.description, source: i.source, methods: i.methods.map((m) => m.name), ...(i.offline ? { offline: i.offline } : {}) })),
      });
    }
    render(res, <InstrumentsPage ctx={await ctxOf(req)} instruments={instruments} language={consoleLanguage(runtime)} />);
  });

  r.get('/instruments/proxy', (req, res) => {
    const lang = req.query.lang ?? 'python';
    if (lang !== 'python' && lang !== 'typescript') {
      throw new LabError('invalid_input', `lang must be "python" or "typescript", got ${JSON.stringify(lang)}`, [{ field: 'lang', message: 'python or typescript' }]);
    }
    const base = `${req.protocol}://${req.get('host')}${url(req, '')}`;
    const { filename, content } = generateProxy(lang, deck.list(), { defaultBaseUrl: base });
    res.attachment(filename).type(lang === 'python' ? 'text/x-python' : 'text/plain').send(content);
  });

  r.get('/instruments/task/:task_id', async (req, res) => {
    const id = intParam(req.params.task_id, 'task_id', Number.MAX_SAFE_INTEGER); // steps ids are 64-bit
    const step = await store.steps.get(id);
    if (!step) throw new LabError('not_found', `There is no task ${id}.`);
    const json = stepJson(step);
    if (wantsJson(req)) return res.json(json);
    render(res, <TaskPage ctx={await ctxOf(req)} step={json} />);
  });

  r.post('/instruments/console/execute', async (req, res) => {
    requireAdmin(req);
    const body = req.body;
    const code = typeof body === 'string' ? body : body?.code;
    const language = typeof body === 'object' && body?.language ? body.language : consoleLanguage(runtime);
    if (typeof code !== 'string' || !code.trim()) {
      throw new LabError('invalid_input', 'Send the code as the raw body (text/plain) or as { "code": "..." }.', [{ field: 'code', message: 'required' }]);
    }
    if (!CONSOLE_LANGUAGES.includes(language)) {
      throw new LabError('invalid_input', `language must be ${CONSOLE_LANGUAGES.map((l) => `"${l}"`).join(', ')}; got ${JSON.stringify(language)}`, [{ field: 'language', message: CONSOLE_LANGUAGES.join(', ') }]);
    }
    const userId = req.user!.id;
    const timeoutMs = runtime.consoleTimeoutMs;
    // written before the snippet runs: whatever it does, the audit log has it
    await runtime.audit(userId, 'console.execute', { code, language });
    const result =
      language === 'python'
        ? await runtime.python.console(code, timeoutMs)
        : await runConsole(code, {
            language,
            timeoutMs,
            deck: { list: () => deck.list(), call: (i, m, a) => deck.call(i, m, a, { userId }) },
          });
    await runtime.audit(userId, 'console.result', { success: result.success, error: result.error });
    if (isHtmx(req)) return render(res, <ConsoleOutput result={result} />);
    res.json(result);
  });

  const RECENT = 10;
  const recent = (name: string) => store.steps.recent(name, RECENT);

  r.get('/instruments/:instrument', async (req, res) => {
    const inst = await personalised(req, req.params.instrument);
    if (wantsJson(req)) return res.json(inst);
    render(res, <InstrumentPage ctx={await ctxOf(req)} instrument={inst} recent={await recent(inst.name)} />);
  });

  /** The latest recorded calls of an instrument (the page refreshes this panel after each call). */
  r.get('/instruments/:instrument/calls', async (req, res) => {
    const inst = deck.schema(req.params.instrument);
    const steps = await recent(inst.name);
    if (wantsJson(req)) return res.json({ calls: steps.map(stepJson) });
    render(res, <RecentCalls ctx={await ctxOf(req)} steps={steps} />);
  });

  /** Call a method: JSON { method, args } or a form (method + one field per parameter). */
  const call = async (req: Request, res: Response, name: unknown) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const methodName = body.method;
    let outcome: CallOutcome = { method: typeof methodName === 'string' ? methodName : '' };
    try {
      if (typeof name !== 'string' || !name) {
        throw new LabError('invalid_input', 'Name the instrument in the path or as "instrument" in the body.', [{ field: 'instrument', message: 'required' }]);
      }
      if (typeof methodName !== 'string' || !methodName) {
        throw new LabError('invalid_input', 'Say which method to call: "method" is required.', [{ field: 'method', message: 'required' }]);
      }
      let args: unknown;
      if (req.is('application/json')) {
        args = body.args ?? {};
        if (typeof args !== 'object' || args === null || Array.isArray(args)) {
          throw new LabError('invalid_input', '"args" must be an object of parameter values.', [{ field: 'args', message: 'must be an object' }]);
        }
      } else {
        const m = method(deck.schema(name), methodName);
        const fields = Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'method' && k !== 'instrument')) as Record<string, string | string[]>;
        args = coerceFormArgs(m.params, fields);
      }
      const { taskId, output } = await deck.call(name, methodName, args, { userId: req.user!.id });
      if (wantsJson(req)) return res.json({ task_id: taskId, output });
      outcome = { method: methodName, taskId, output };
      if (isHtmx(req)) {
        res.set('HX-Trigger', 'labdeck-called');
        return render(res, <CallResult ctx={await ctxOf(req)} outcome={outcome} />);
      }
      return render(res, <InstrumentPage ctx={await ctxOf(req)} instrument={await personalised(req, name)} outcome={outcome} recent={await recent(name)} />);
    } catch (e) {
      const err = asLabError(e);
      if (wantsJson(req)) return res.status(statusOf(err)).json(errorBody(err));
      outcome.error = { message: err.message, details: err.details, task_id: err.data?.task_id as number | undefined };
      const ctx = await ctxOf(req);
      if (isHtmx(req)) {
        if (outcome.error.task_id) res.set('HX-Trigger', 'labdeck-called');
        return render(res, <CallResult ctx={ctx} outcome={outcome} />, statusOf(err));
      }
      if (typeof name !== 'string' || !deck.has(name)) return render(res, <InstrumentsPage ctx={ctx} instruments={deck.list()} />, statusOf(err));
      return render(res, <InstrumentPage ctx={ctx} instrument={await personalised(req, name)} outcome={outcome} recent={await recent(name)} />, statusOf(err));
    }
  };
  r.post('/instruments/', (req, res) => call(req, res, req.body?.instrument));
  r.post('/instruments/:instrument', (req, res) => call(req, res, req.params.instrument));

  r.post('/instruments/:instrument/actions/order', async (req, res) => {
    const inst = deck.schema(req.params.instrument);
    const order = req.body?.order;
    if (!Array.isArray(order) || !order.every((x) => typeof x === 'string')) {
      throw new LabError('invalid_input', 'Send { "order": ["method", ...] }: a list of method names.', [{ field: 'order', message: 'must be a list of method names' }]);
    }
    const names = new Set(inst.methods.map((m) => m.name));
    const unknown = order.filter((n) => !names.has(n));
    if (unknown.length) {
      throw new LabError('invalid_input', `${inst.name} has no method ${unknown.map((n) => `"${n}"`).join(', ')}.`, unknown.map((n) => ({ field: 'order', message: `unknown method ${n}` })));
    }
    if (new Set(order).size !== order.length) throw new LabError('invalid_input', 'A method appears twice in "order".', [{ field: 'order', message: 'duplicate' }]);
    await store.prefs.setOrder(req.user!.id, inst.name, order);
    res.status(204).end();
  });

  r.patch('/instruments/:instrument/actions/:function', async (req, res) => {
    const inst = deck.schema(req.params.instrument);
    const m = method(inst, req.params.function);
    const hidden = req.body?.hidden;
    if (typeof hidden !== 'boolean') {
      throw new LabError('invalid_input', 'Send { "hidden": true } or { "hidden": false }.', [{ field: 'hidden', message: 'must be true or false' }]);
    }
    const userId = req.user!.id;
    // Store the user's choice explicitly, so a method the driver hides by default can be shown too.
    await store.prefs.setHidden(userId, inst.name, m.name, hidden);
    await store.prefs.setHidden(userId, inst.name, `!${m.name}`, !hidden);
    res.json({ instrument: inst.name, method: m.name, hidden });
  });

  return r;
}
