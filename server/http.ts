/**
 * Small HTTP helpers shared by every route: the one URL helper, rendering, error mapping (content negotiation,
 * one answer as HTML or JSON, is server/respond.ts).
 * Datasette's rule: one view answers HTML and JSON, and every link is built from the mount the request came
 * in on, so `/app` never appears in route code.
 */
import type { NextFunction, Request, Response } from 'express';
import type { ReactElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { ERROR_CODES, LabError, isLabError, storeFailure, type ErrorDetail } from '../core/errors.js';
import type { PublicUser } from '../core/accounts/index.js';
import { sentence } from '../core/text.js';

declare module 'express-serve-static-core' {
  interface Request {
    user?: PublicUser;
    /**
     * How this request was authenticated: a session cookie (CSRF applies), a bearer token, or an MCP token
     * (`labmcp_…`, an AI agent: it opens /app/mcp and nothing else).
     */
    authVia?: 'session' | 'token' | 'mcp';
    /** The MCP token an agent's request came with (audited with everything it does). */
    agentToken?: { id: number; name: string };
  }
}
declare module './session.js' {
  interface SessionData {
    userId: number;
    flash?: string;
  }
}

/**
 * Whether the request carries a JSON body: `req.is('application/json')`, answered without parsing the header
 * when it is exactly that (as scripts send it), with type-is's test for a body.
 */
export function isJson(req: Request): boolean {
  const h = req.headers;
  if (h['content-type'] === 'application/json') return h['transfer-encoding'] !== undefined || !Number.isNaN(Number(h['content-length']));
  return !!req.is('application/json');
}

/** A link inside the app, relative to the mount (`/app` or `/`) the request came in on. */
export function url(req: Request, path: string): string {
  const base = req.baseUrl.replace(/\/$/, '');
  return `${base}${path.startsWith('/') ? path : `/${path}`}`;
}

export function render(res: Response, element: ReactElement, status = 200) {
  res
    .status(status)
    .type('html')
    .send(`<!doctype html>${renderToStaticMarkup(element)}`);
}

export function statusOf(err: LabError): number {
  return ERROR_CODES[err.code] ?? 500;
}

export function errorBody(err: LabError) {
  const body: { code: string; message: string; details?: ErrorDetail[] } = { code: err.code, message: err.message };
  if (err.details?.length) body.details = err.details;
  return { error: body, ...(err.data ?? {}) };
}

/**
 * Whether the client of `req` is gone (it closed, or half-closed, its connection: Node then ends the
 * response too), so nobody can read an answer. An instrument call is not dispatched for such a request (a
 * call already dispatched finishes and is recorded: only one not started yet is dropped).
 */
export function clientGone(req: Request, res: Response): boolean {
  const socket = req.socket;
  return res.closed || !socket || socket.destroyed || socket.writableEnded;
}

/** Turn anything thrown into a LabError (unknown errors become a 500 whose message hides internals). */
export function asLabError(err: unknown): LabError {
  if (isLabError(err)) return err;
  const e = err as { name?: string; type?: string; status?: number; statusCode?: number; message?: string; code?: string; field?: string };
  // body-parser and multer errors carry their own kind
  if (e?.type === 'entity.too.large' || e?.code === 'LIMIT_FILE_SIZE') {
    return new LabError('payload_too_large', 'The request body or file is too large.');
  }
  if (e?.type === 'entity.parse.failed') return new LabError('invalid_input', `The JSON body is malformed: ${e.message}`);
  // multer hands on the parser's own errors (a malformed multipart body) with `storageErrors` attached
  const multipart = /^(Multipart: |Unexpected end of (form|multipart)|Malformed part header)/.test(String(e?.message ?? ''));
  if ((multipart || Array.isArray((err as { storageErrors?: unknown } | null)?.storageErrors)) && e?.name !== 'MulterError') {
    return new LabError('invalid_input', `The upload is not a well-formed multipart form: ${sentence(String(e?.message ?? 'unreadable'))}`);
  }
  if (e?.name === 'MulterError') {
    return new LabError('invalid_input', `Bad upload: ${e.message}${e.field ? ` (field "${e.field}")` : ''}.`, e.field ? [{ field: e.field, message: e.message ?? 'bad upload' }] : undefined);
  }
  // a database driver's error that reached here raw (not through the store's statements): 503 or 507 with a
  // reason, not a 500 (a permission error may be anything's, and is left to the 500 below)
  if (e?.code !== 'EACCES' && e?.code !== 'EPERM') {
    const stored = storeFailure(err, "labdeck's database or data folder");
    if (stored !== err) return stored as LabError;
  }
  const status = e?.status ?? e?.statusCode;
  if (status === 404) return new LabError('not_found', 'Not found.');
  if (status && status >= 400 && status < 500) return new LabError('invalid_input', e.message ?? 'Bad request.');
  // the original goes to the server log now, whatever the route then does with the 500
  const internal = Object.assign(new LabError('internal', 'Something went wrong inside labdeck; the error is in the server log.'), { cause: err });
  logInternal(internal);
  return internal;
}

const logged = new WeakSet<LabError>();
/** Write an internal error to the server log once: the original error when it was wrapped. */
export function logInternal(err: LabError): void {
  if (err.code !== 'internal' || logged.has(err)) return;
  logged.add(err);
  console.error((err as { cause?: unknown }).cause ?? err);
}

export const wrap = (fn: (req: Request, res: Response, next: NextFunction) => unknown) => (req: Request, res: Response, next: NextFunction) => Promise.resolve(fn(req, res, next)).catch(next);

/** The largest id a table gives out (PostgreSQL `integer`; the steps table's bigint ids pass a larger `max`). */
export const MAX_ID = 2_147_483_647;

/** Parse a path or body value as an id from 1 to `max`, or answer 400 naming the field. */
export function intParam(value: unknown, field: string, max = MAX_ID): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new LabError('invalid_input', `${field} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`, [{ field, message: `must be a whole number from 1 to ${max}` }]);
  }
  return n;
}

export function requireAdmin(req: Request) {
  if (req.user?.role !== 'admin') throw new LabError('forbidden', 'Only an admin may do this.');
}
