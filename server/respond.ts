/**
 * One answer, HTML or JSON, from the same data (DESIGN.md §10, Datasette's way; issue 27 item 2). A route's
 * handler reads its data once and says both answers; which one the client gets is decided here, in one
 * place, instead of in a hand-written `wantsJson` branch in each handler:
 *
 * - `respond`: a view: the data as JSON for a script, the page for a browser;
 * - `redirectTo`: a form post that is done: a browser is sent on (302), a script gets JSON (or 204);
 * - `failed`: a post that failed: a script gets the error as JSON, as the error handler answers every
 *   error, a browser the form again with the message (or the error page).
 *
 * `wantsJson` itself is left to these and to the few places that answer before any route does (the error
 * handler, the 413 body cap, the login gate).
 */
import type { Request, Response } from 'express';
import type { ReactElement } from 'react';
import { asLabError, errorBody, isJson, logInternal, render, statusOf } from './http.js';
import type { LabError } from '../core/errors.js';

/** JSON when asked for with `?format=json` or an Accept header that prefers JSON; pages otherwise. */
export function wantsJson(req: Request): boolean {
  if (req.url.includes('?')) {
    // (without a query string there is no format: the query is not parsed for nothing)
    if (req.query.format === 'json') return true;
    if (req.query.format === 'html') return false;
  }
  const accept = req.headers.accept;
  if (accept === 'application/json') return true; // what scripts send: req.accepts would say json
  if (req.accepts(['html', 'json']) === 'json') return true;
  // No preference stated (curl, fetch, scripts): a JSON body means a script wants JSON back.
  return (!accept || accept === '*/*') && isJson(req);
}

/**
 * Who gets JSON: `asked` (the default): a client that asks for it (`wantsJson`); `unless-html`: every client
 * but one that asks for HTML (an upload: `curl -F` states no preference and sends no JSON body, and a
 * script it is; a browser's form asks for `text/html`).
 */
export type Prefer = 'asked' | 'unless-html';

/** Whether `req` gets the JSON answer under `prefer`. */
export function jsonFor(req: Request, prefer: Prefer = 'asked'): boolean {
  if (prefer === 'asked') return wantsJson(req);
  if (req.query.format === 'html') return false;
  return wantsJson(req) || !/text\/html/.test(req.get('accept') ?? '');
}

/** A value, or a function that reads it (called only for the answer that needs it). */
export type Lazy<T> = T | (() => T | Promise<T>);

const valueOf = async <T>(v: Lazy<T>): Promise<T> => (typeof v === 'function' ? await (v as () => T | Promise<T>)() : v);

export interface Answer {
  /** What a script gets, as JSON: the data (or a function that reads it, called only for JSON). */
  json: Lazy<unknown>;
  /** What a browser gets: the page (called only for a page; it may set headers of its own, like HX-Trigger). */
  html: () => ReactElement | Promise<ReactElement>;
  /** The status of both answers (default 200). */
  status?: number;
  /** The page's status, when it is not `status` (a form shown again says its error's status; the data is 200). */
  htmlStatus?: number;
  prefer?: Prefer;
}

/** A view: JSON for a script, the page for a browser, from the same data. */
export async function respond(req: Request, res: Response, answer: Answer): Promise<void> {
  if (jsonFor(req, answer.prefer)) {
    const body = await valueOf(answer.json);
    res.status(answer.status ?? 200).json(body);
    return;
  }
  render(res, await answer.html(), answer.htmlStatus ?? answer.status ?? 200);
}

export interface RedirectOptions {
  /** The JSON answer's status (default 200; 204: no body, `json` is not read). */
  status?: number;
  /** The redirect's status (default 302; 303 where a POST's answer is a page to GET). */
  redirect?: 301 | 302 | 303 | 307 | 308;
  /** The JSON answer's Location header (what a script's post made). */
  location?: string;
  prefer?: Prefer;
}

/** A form post that is done: a browser is sent on to `to`; a script gets `json` (or, with status 204, nothing). */
export async function redirectTo(req: Request, res: Response, to: string, json: Lazy<unknown>, opts: RedirectOptions = {}): Promise<void> {
  if (!jsonFor(req, opts.prefer)) return res.redirect(opts.redirect ?? 302, to);
  if (opts.status === 204) {
    res.status(204).end();
    return;
  }
  const body = await valueOf(json);
  if (opts.location !== undefined) res.location(opts.location);
  res.status(opts.status ?? 200).json(body);
}

/**
 * The JSON answer to an error, exactly as the error handler (server/app.tsx) gives it: the error's status,
 * Retry-After when it says one, `{ error: { code, message, details? }, …data }`.
 */
export function jsonError(res: Response, err: LabError): void {
  logInternal(err);
  if (res.headersSent) return;
  if (err.data?.retry_after) res.set('Retry-After', String(err.data.retry_after));
  res.status(statusOf(err)).json(errorBody(err));
}

/**
 * A post that failed with `e` (anything thrown: read as a LabError): a script gets the error as JSON, a
 * browser `again(err)` (the form again, with the message and its values; it says the status itself), or,
 * without `again`, the error page (the error goes on to the error handler).
 */
export async function failed(req: Request, res: Response, e: unknown, again?: (err: LabError) => unknown, prefer?: Prefer): Promise<void> {
  const err = asLabError(e);
  if (jsonFor(req, prefer)) return jsonError(res, err);
  if (!again) throw err;
  await again(err);
}
