/**
 * The safety guard's routes (core/safety): the file and its problems (everyone reads, admins replace it), what
 * the guard would say of a call, and a person settling a state. Thin: the guard does the work.
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { Runtime } from '../../core/runtime.js';
import { LabError } from '../../core/errors.js';
import { callerOf } from '../caller.js';
import { ctxOf } from '../context.js';
import { error, json, pageOrJson, redirect } from '../api-doc.js';
import { render, statusOf, url } from '../http.js';
import { failed, redirectTo, respond } from '../respond.js';
import { handle, route } from '../route.js';
import { routeGroup } from '../catalogue.js';
import { SafetyPage } from '../views/safety.js';

const SECTION = 'Safety';

export const SAFETY_ROUTES = {
  show: route({
    method: 'GET',
    path: '/safety',
    section: SECTION,
    summary: 'The safety file (ivoryos-safety/1), its problems and the states now; the safety page for browsers',
    operationId: 'safety',
    query: z.object({
      format: z.enum(['json', 'html']).optional().describe('json or html: overrides the Accept header'),
      saved: z.string().optional().describe('Say that the file was saved (where saving it leads)'),
    }),
    responses: { 200: pageOrJson('The safety page, or { source, file, error, problems, config, states }', 'SafetyStatus') },
  }),
  replace: route({
    method: 'PUT',
    path: '/safety',
    section: SECTION,
    access: 'admin',
    summary: 'Replace the safety file (admins): the JSON body is the file; validated whole, audited with before and after',
    operationId: 'replaceSafety',
    body: { schema: z.looseObject({}), kinds: ['json'], document: 'SafetyFile' },
    responses: { 200: json('The guard with the new file', 'SafetyStatus'), 400: error('The file is not valid: each problem named by its path; the old file is kept') },
  }),
  save: route({
    method: 'POST',
    path: '/safety/file',
    section: SECTION,
    access: 'admin',
    summary: "The safety page's editor (admins): the file as JSON text",
    operationId: 'saveSafetyText',
    body: { schema: z.object({ text: z.string().max(1_000_000).describe('The safety file, JSON') }) },
    responses: { 200: json('The guard with the new file (JSON)', 'SafetyStatus'), 302: redirect('Back to the safety page (forms)'), 400: error('Not JSON, or not a valid file (each problem named)') },
  }),
  check: route({
    method: 'POST',
    path: '/safety/check',
    section: SECTION,
    summary: 'What the guard would say of a call, without making it: { allowed, problems }',
    operationId: 'safetyCheck',
    body: {
      schema: z.object({
        instrument: z.string().min(1).describe('An instrument of the deck'),
        method: z.string().min(1).describe('One of its methods'),
        args: z.record(z.string(), z.unknown()).optional().describe('The arguments (omitted ones are checked at their defaults)'),
      }),
      kinds: ['json'],
    },
    responses: {
      200: json('{ allowed, problems: [{ field, message, value, limit | rule }] }', 'SafetyVerdict'),
      400: error('Arguments that do not fit the method'),
      404: error('No such instrument or method'),
    },
  }),
  state: route({
    method: 'POST',
    path: '/safety/states/{name}',
    section: SECTION,
    summary: 'Say what a state is (a person settles one nothing has set, or that a call left unknown); an empty value marks it unknown',
    operationId: 'setSafetyState',
    params: z.object({ name: z.string().describe('A state of the safety file') }),
    body: { schema: z.object({ value: z.union([z.string(), z.number(), z.boolean(), z.null()]).describe("One of the state's values") }) },
    responses: {
      200: json('{ state, value | unknown, at, by }', 'SafetyState'),
      302: redirect('Back to the safety page (forms)'),
      400: error('Not one of its values, or a state read from its instrument'),
      404: error('No such state'),
    },
  }),
};

export function safetyRoutes(runtime: Runtime): Router {
  const r = Router();
  const safety = runtime.ops.safety;
  const R = SAFETY_ROUTES;
  const caller = (req: Request) => callerOf(req, 'app');

  const page = async (req: Request, res: Response, extra: { error?: LabError; notice?: string; text?: string } = {}, status = 200) =>
    render(res, <SafetyPage ctx={await ctxOf(req)} status={safety.current()} {...extra} />, status);

  handle(r, R.show, async (req, res, { query }) => {
    const status = await safety.status();
    await respond(req, res, {
      json: status,
      html: async () => <SafetyPage ctx={await ctxOf(req)} status={status} notice={query.saved !== undefined ? 'The safety file is saved.' : undefined} />,
    });
  });

  handle(r, R.replace, async (req, res) => {
    res.json(await safety.replace(caller(req), req.body));
  });

  handle(r, R.save, async (req, res, { body }) => {
    try {
      await redirectTo(req, res, url(req, '/safety?saved'), await safety.replaceText(caller(req), body.text));
    } catch (e) {
      await failed(req, res, e, (err) => page(req, res, { error: err, text: body.text }, statusOf(err)));
    }
  });

  handle(r, R.check, async (req, res, { body }) => {
    res.json(await safety.check(caller(req), body));
  });

  handle(r, R.state, async (req, res, { params, body }) => {
    try {
      const entry = await safety.setState(caller(req), params.name, body.value);
      await redirectTo(req, res, url(req, '/safety'), { state: params.name, ...entry });
    } catch (e) {
      await failed(req, res, e, (err) => page(req, res, { error: err }, statusOf(err)));
    }
  });

  return r;
}

/** The group: these routes, declared and mounted (server/catalogue.ts). */
export const SAFETY_GROUP = routeGroup({ name: 'safety', routes: SAFETY_ROUTES, mount: safetyRoutes });
