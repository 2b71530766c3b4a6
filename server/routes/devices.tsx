/** Temporary devices: import a driver module or a deck module from a server path, connect new devices. */
import { Router, type Request } from 'express';
import { MAX_NAME, coerceFormArgs } from '../../core/deck/index.js';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { ctxOf } from '../context.js';
import { asLabError, render, requireAdmin, statusOf, url, wantsJson } from '../http.js';
import { ConnectPage, NewDevicePage } from '../views/devices.js';

/** Names the instrument routes use for themselves: a device with one of them could not be reached. */
export const RESERVED_NAMES = new Set(['new', 'task', 'console', 'proxy']);
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function filepathOf(req: Request): string {
  const p = req.body?.filepath;
  if (typeof p !== 'string' || !p.trim()) {
    throw new LabError('invalid_input', 'filepath is required: the path of a .py, .ts or .js module on the server.', [{ field: 'filepath', message: 'required' }]);
  }
  return p.trim();
}

/** Go back where the form was, when that is inside this app. */
function back(req: Request, fallback: string): string {
  const ref = req.get('Referer');
  if (ref) {
    try {
      const u = new URL(ref);
      if (u.host === req.get('host')) return u.pathname + u.search;
    } catch {
      /* not a URL: use the fallback */
    }
  }
  return fallback;
}

export function deviceRoutes(runtime: Runtime): Router {
  const r = Router();
  const { deck } = runtime;
  const driver = (name: string) => {
    const d = deck.drivers().find((x) => x.name === name);
    if (!d) throw new LabError('not_found', `No driver "${name}"; known drivers: ${deck.drivers().map((x) => x.name).join(', ') || 'none'}.`);
    return d;
  };

  r.get('/instruments/new/', async (req, res) => {
    if (wantsJson(req)) return res.json({ drivers: deck.drivers() });
    render(res, <NewDevicePage ctx={await ctxOf(req)} drivers={deck.drivers()} />);
  });

  const importRoute = (kind: 'module' | 'deck') => async (req: Request, res: import('express').Response) => {
    requireAdmin(req);
    let filepath = '';
    try {
      filepath = filepathOf(req);
      const names = kind === 'module' ? await deck.importModule(filepath) : await deck.importDeck(filepath);
      await runtime.audit(req.user!.id, `import.${kind}`, { filepath, names });
      res.redirect(302, kind === 'module' ? url(req, '/instruments/new/') : back(req, url(req, '/instruments/')));
    } catch (e) {
      const err = asLabError(e);
      await runtime.audit(req.user!.id, `import.${kind}.failed`, { filepath, error: err.message });
      if (wantsJson(req)) throw err;
      render(res, <NewDevicePage ctx={await ctxOf(req)} drivers={deck.drivers()} error={err} filepath={filepath} />, statusOf(err));
    }
  };
  r.post('/instruments/new/module', importRoute('module'));
  r.post('/instruments/new/deck-python', importRoute('deck'));

  r.get('/instruments/new/:instrument', async (req, res) => {
    const d = driver(req.params.instrument);
    if (wantsJson(req)) return res.json(d);
    render(res, <ConnectPage ctx={await ctxOf(req)} driver={d} />);
  });

  r.post('/instruments/new/:instrument', async (req, res) => {
    requireAdmin(req);
    const d = driver(req.params.instrument);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const deviceName = body.device_name;
    try {
      if (typeof deviceName !== 'string' || !NAME_RE.test(deviceName) || deviceName.length > MAX_NAME) {
        throw new LabError('invalid_input', `device_name must be a name like "pump_2" (letters, digits, _ and -, at most ${MAX_NAME} characters).`, [
          { field: 'device_name', message: 'invalid name' },
        ]);
      }
      let options: Record<string, unknown>;
      if (req.is('application/json')) {
        const kw = body.kwargs ?? {};
        if (typeof kw !== 'object' || kw === null || Array.isArray(kw)) {
          throw new LabError('invalid_input', '"kwargs" must be an object of option values.', [{ field: 'kwargs', message: 'must be an object' }]);
        }
        options = kw as Record<string, unknown>;
      } else {
        const fields = Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'device_name')) as Record<string, string | string[]>;
        options = coerceFormArgs(d.options, fields);
      }
      await deck.connect(d.name, deviceName, options);
      await runtime.audit(req.user!.id, 'device.connect', { driver: d.name, device: deviceName, options });
      res.redirect(302, url(req, `/instruments/${encodeURIComponent(deviceName)}`));
    } catch (e) {
      const err = asLabError(e);
      if (wantsJson(req)) throw err;
      render(res, <ConnectPage ctx={await ctxOf(req)} driver={d} error={err} deviceName={typeof deviceName === 'string' ? deviceName : ''} />, statusOf(err));
    }
  });
  return r;
}
