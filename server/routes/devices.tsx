/** Temporary devices: import a driver module or a deck module from a server path, connect new devices. */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { MAX_NAME } from '../../core/operations/index.js';
import { LabError } from '../../core/errors.js';
import type { Runtime } from '../../core/runtime.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { error, json, pageOrJson, redirect } from '../api-doc.js';
import { render, statusOf, url } from '../http.js';
import { failed, redirectTo, respond } from '../respond.js';
import { handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { ConnectPage, NewDevicePage } from '../views/devices.js';
import { PARAMETER_FIELD, formArgs } from './instruments.js';

/** Names the instrument routes use for themselves: a device with one of them could not be reached. */
export const RESERVED_NAMES = new Set(['new', 'task', 'console', 'proxy']);
const NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const DEVICE_NAME = `must be a name like "pump_2" (letters, digits, _ and -, at most ${MAX_NAME} characters)`;

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

const SECTION = 'Temporary devices';
const FORMAT = z.object({ format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header') });
const DRIVER = z.object({ instrument: z.string().describe('A driver (GET /app/instruments/new/)') });
const IMPORT_BODY = {
  name: 'ImportBody',
  // a blank path reaches the handler, which says so (and audits the failed import)
  schema: z.object({ filepath: z.string().meta({ minLength: 1 }).describe('Path of a .py, .ts or .js module on the server machine') }),
};

export const DEVICE_ROUTES = {
  drivers: route({
    method: 'GET',
    path: '/instruments/new/',
    section: SECTION,
    summary: 'Connect a new device: the drivers you can use',
    operationId: 'listDrivers',
    query: FORMAT.extend({ imported: z.string().max(4096).optional().describe('A module just imported: the page says what it added') }),
    responses: { 200: pageOrJson('The drivers you can connect a device of, and the import forms', 'DriverList') },
  }),
  driver: route({
    method: 'GET',
    path: '/instruments/new/{instrument}',
    section: SECTION,
    summary: 'The form to connect a device of one driver',
    operationId: 'getDriver',
    params: DRIVER,
    query: FORMAT,
    responses: { 200: pageOrJson("The connect form, or the driver and its options' JSON Schema", 'Driver'), 404: error('No such driver') },
  }),
  connect: route({
    method: 'POST',
    path: '/instruments/new/{instrument}',
    section: SECTION,
    summary: 'Connect a device: device_name + options (302)',
    access: 'admin',
    operationId: 'connectDevice',
    description: 'Adds a temporary device (until the server stops). Audit-logged.',
    params: DRIVER,
    body: {
      name: 'ConnectBody',
      description: 'JSON: { device_name, kwargs }. A form: device_name plus one field per driver option, as text.',
      schema: z.object({
        device_name: z.string().regex(NAME_RE, DEVICE_NAME).max(MAX_NAME, DEVICE_NAME).describe(`The new device's name (at most ${MAX_NAME} characters); not new, task, console or proxy`),
        // any value reaches the handler, which says '"kwargs" must be an object' (and a form's option named kwargs is text)
        kwargs: z.unknown().optional().meta({ type: 'object', additionalProperties: {}, description: "The driver's options (its JSON Schema: GET /app/instruments/new/{instrument})" }),
      }),
      extra: PARAMETER_FIELD,
      extraKinds: ['form'],
    },
    responses: {
      302: redirect("Connected: to the new instrument's page"),
      400: error('Bad device_name, or invalid options (details name the field)'),
      404: error('No such driver'),
      409: error('A device of that name exists'),
      502: error('The driver failed to start the device'),
    },
  }),
  importModule: route({
    method: 'POST',
    path: '/instruments/new/module',
    section: SECTION,
    summary: 'Import a driver module from a server path (302)',
    access: 'admin',
    operationId: 'importModule',
    description: 'Imports a driver module; its drivers become connectable. Audit-logged.',
    body: IMPORT_BODY,
    responses: {
      200: json('JSON: what the import added (its drivers)', 'Imported'),
      302: redirect('A form: imported, to GET /app/instruments/new/, which says what it added'),
      400: error("No filepath, or the module cannot be loaded (the loader's message)"),
      409: error('A driver of the same name comes from another module'),
    },
  }),
  importDeck: route({
    method: 'POST',
    path: '/instruments/new/deck-python',
    section: SECTION,
    summary: 'Import a deck module from a server path (302)',
    access: 'admin',
    operationId: 'importDeck',
    description: 'Imports a deck module; its devices join the deck. Audit-logged.',
    body: IMPORT_BODY,
    responses: {
      200: json('JSON: what the import added (its instruments, and their classes as drivers)', 'Imported'),
      302: redirect('A form: imported, back to the previous page (Referer); from the Connect page, or without a Referer, to it, saying what was added'),
      400: error("No filepath, or the module cannot be loaded (the loader's message)"),
      409: error('The deck already has a device of one of its names'),
      502: error('A device failed to start'),
    },
  }),
};

export function deviceRoutes(runtime: Runtime): Router {
  const r = Router();
  const { devices } = runtime.ops;
  const R = DEVICE_ROUTES;
  const driver = (name: string) => {
    const d = devices.drivers().find((x) => x.name === name);
    if (!d)
      throw new LabError(
        'not_found',
        `No driver "${name}"; known drivers: ${
          devices
            .drivers()
            .map((x) => x.name)
            .join(', ') || 'none'
        }.`,
      );
    return d;
  };

  handle(r, R.drivers, async (req, res, { query }) => {
    const drivers = devices.drivers();
    await respond(req, res, {
      json: { drivers },
      html: async () => {
        const imported = query.imported ? { file: query.imported, ...devices.addedBy(query.imported) } : undefined;
        return <NewDevicePage ctx={await ctxOf(req)} drivers={drivers} imported={imported} />;
      },
    });
  });

  /** The import forms' page again, with the message. */
  const importAgain = async (req: Request, res: Response, err: LabError, filepath: string) =>
    render(res, <NewDevicePage ctx={await ctxOf(req)} drivers={devices.drivers()} error={err} filepath={filepath} />, statusOf(err));
  const importFormAgain = (req: Request, res: Response, err: LabError) => importAgain(req, res, err, typeof req.body?.filepath === 'string' ? req.body.filepath : '');

  const importRoute =
    (kind: 'module' | 'deck') =>
    async (req: Request, res: Response, { body }: { body: { filepath: string } }) => {
      const filepath = body.filepath.trim();
      try {
        // audited, imported or refused (`import.<kind>.failed` with the message)
        const added = await devices.import(callerOf(req, 'app'), kind, body.filepath);
        // the Connect page says what the import added; another page the deck form was sent from gets its page back
        const connect = url(req, '/instruments/new/');
        const to = kind === 'module' ? connect : back(req, connect);
        await redirectTo(req, res, to === connect ? `${connect}?imported=${encodeURIComponent(added.file)}` : to, added);
      } catch (e) {
        await failed(req, res, e, (err) => importAgain(req, res, err, filepath));
      }
    };
  handle(r, R.importModule, importRoute('module'), importFormAgain);
  handle(r, R.importDeck, importRoute('deck'), importFormAgain);

  handle(r, R.driver, async (req, res, { params }) => {
    const d = driver(params.instrument);
    await respond(req, res, { json: d, html: async () => <ConnectPage ctx={await ctxOf(req)} driver={d} /> });
  });

  /** The connect form again, with the message and the name typed. */
  const connectAgain = async (req: Request, res: Response, err: LabError) => {
    const d = driver(req.params.instrument as string);
    const deviceName = req.body?.device_name;
    render(res, <ConnectPage ctx={await ctxOf(req)} driver={d} error={err} deviceName={typeof deviceName === 'string' ? deviceName : ''} />, statusOf(err));
  };

  handle(
    r,
    R.connect,
    async (req, res, { params, body }) => {
      const d = driver(params.instrument);
      const deviceName = body.device_name;
      try {
        let options: Record<string, unknown>;
        if (req.is('application/json')) {
          const kw = body.kwargs ?? {};
          if (typeof kw !== 'object' || kw === null || Array.isArray(kw)) {
            throw new LabError('invalid_input', '"kwargs" must be an object of option values.', [{ field: 'kwargs', message: 'must be an object' }]);
          }
          options = kw as Record<string, unknown>;
        } else {
          options = formArgs(d.options, body, ['device_name']);
        }
        await devices.connect(callerOf(req, 'app'), d.name, deviceName, options);
        res.redirect(302, url(req, `/instruments/${encodeURIComponent(deviceName)}`));
      } catch (e) {
        await failed(req, res, e, (err) => connectAgain(req, res, err));
      }
    },
    connectAgain,
  );
  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const DEVICES_GROUP = routeGroup({ name: 'devices', routes: DEVICE_ROUTES, mount: deviceRoutes });
