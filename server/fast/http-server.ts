/**
 * The HTTP server `lab serve` answers on: Node's, with a request and a response class that declare up front
 * every field Express, its helpers and labdeck add to them while answering a request.
 *
 * Why (issue 16): Node's request and response objects already carry 20-30 fields, and answering a call
 * added about a dozen more (the router's `params`, `route` and matched pattern, the body, the session, the
 * user, `locals`, the status…). Added one at a time, they took each object through a chain of V8 hidden
 * classes (maps), and no two requests or responses ended a call with the same one (`%HaveSameMap`), so the
 * code that reads and writes them, Node's own included, kept falling off its fast paths. Declared here, the
 * fields are part of the objects from the start, and every call's request and response end it with one
 * hidden class each. A no-op instrument call under 32 clients went from about 0.18 to 0.065 ms of CPU
 * (`npm run bench foundation`); the router's symbol alone was a third of that. A field added elsewhere still
 * works, only slower again: test/api/http-server.test.ts names any that the calls, pages and errors add.
 * Part of the fast path (./switch.ts): off, the server makes Node's own request and response objects.
 */
import { IncomingMessage, ServerResponse, createServer, type RequestListener, type Server } from 'node:http';
// the router keeps the matched pattern under a symbol of its own (for tracing): the copy Express uses, which
// is labdeck's too (package.json: a build that cannot find it fails, and the test names a symbol it misses)
import { matchedRoute } from 'router/lib/symbols.js';
import { capConnections, connectionLimits, serverTimeouts, type ConnectionLimits } from '../connection-limits.js';
import { fastPath } from './switch.js';

/** The router's record of the errors it has reported to tracing, on a request that met one (a registered symbol). */
const publishedErrors: unique symbol = Symbol.for('router.tracing.publishedErrors');

export class LabRequest extends IncomingMessage {
  // labdeck's (server/security.ts, server/session.ts)
  user: unknown = undefined;
  authVia: unknown = undefined;
  agentToken: unknown = undefined;
  session: unknown = undefined;
  sessionID: unknown = undefined;
  // Express, its router, body parsers and parseurl
  res: unknown = undefined;
  next: unknown = undefined;
  baseUrl: unknown = undefined;
  originalUrl: unknown = undefined;
  params: unknown = undefined;
  route: unknown = undefined;
  body: unknown = undefined;
  _parsedUrl: unknown = undefined;
  _parsedOriginalUrl: unknown = undefined;
  [matchedRoute]: unknown = undefined;
  [publishedErrors]: unknown = undefined;
  // Node's EventEmitter count, inherited (0) until the first listener: made the request's own, same value
  _eventsCount = (this as { _eventsCount?: number })._eventsCount ?? 0;
}

export class LabResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {
  // Express (`res.locals`) and on-finished
  locals: unknown = undefined;
  __onFinished: unknown = undefined;
  // Node's, inherited (200, none) until the head is written: made the response's own, same values
  statusCode = (this as ServerResponse).statusCode;
  statusMessage = (this as ServerResponse).statusMessage;
}

/**
 * An HTTP server for `app` (an Express app) whose requests and responses are the classes above (with the
 * fast path off, Node's own), holding at most `limits`' connections and waiting at most its times for a
 * request (server/connection-limits.ts), whichever way the switch is.
 */
export function createHttpServer(app: RequestListener, limits: ConnectionLimits = {}, fast = fastPath()): Server & { connections: ReturnType<typeof capConnections> } {
  const l = connectionLimits(limits);
  const classes = fast ? { IncomingMessage: LabRequest, ServerResponse: LabResponse } : {};
  const server = createServer({ ...classes, ...serverTimeouts(l) }, app);
  return Object.assign(server, { connections: capConnections(server, l) });
}
