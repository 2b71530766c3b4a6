/**
 * The API document cannot drift from what the handlers send (issue 27 item 2). Each route declares its
 * answers by status (server/route.ts `responses`), a JSON one by the name of its component schema
 * (`json('…', 'RunnerStatus')`); the names are zod schemas (server/response-schemas.ts, the safety and
 * workflow ones), the same the API document is made from. `route()` resolves them once, beside the
 * declaration (`Route.answers`).
 *
 * With the check on (the app option `checkAnswers`, on by default under NODE_ENV=test, so the API suite
 * proves the document), every JSON answer a route's request gets is checked against the route's declared
 * schema for its status before it is sent: an error (4xx, 5xx) against `Error`, a success against its
 * status's component. A mismatch is logged and answered as a 500 naming the route, the status and each
 * field that does not fit, so the test that made the request fails.
 */
import type { Express, Request, Response } from 'express';
import type { z } from 'zod';
import { Workflow } from '../core/workflow/model.js';
import type { ResponseObject } from './api-doc.js';
import { RESPONSE_SCHEMAS } from './response-schemas.js';
import { SAFETY_SCHEMAS } from './safety-schemas.js';
import { WORKFLOW_SCHEMAS } from './workflow-schemas.js';

/** Every component an answer may name, as zod. */
const ANSWER_SCHEMAS: Record<string, z.ZodType> = { ...RESPONSE_SCHEMAS, ...SAFETY_SCHEMAS, ...WORKFLOW_SCHEMAS, Workflow };

/** What a route declares it answers in JSON, per status: the zod schema, or null (JSON not described by a zod component). */
export type Answers = Record<string, z.ZodType | null>;

/**
 * The JSON answers of a route's declared responses (a status without a JSON body is left out); `own`: the
 * route's own components (its body, when an answer is what was sent: the policy as stored).
 */
export function answersOf(responses: Record<string, ResponseObject>, own: Record<string, z.ZodType> = {}): Answers {
  const known = { ...ANSWER_SCHEMAS, ...own };
  const out: Answers = {};
  for (const [status, resp] of Object.entries(responses)) {
    const media = resp.content?.['application/json'];
    if (!media) continue;
    const ref = typeof media.schema.$ref === 'string' ? media.schema.$ref.split('/').pop()! : null;
    // a component with no zod schema (ivoryOS's, described in docs/ivoryos.md) or an inline schema: not checked
    out[status] = ref && Object.hasOwn(known, ref) ? known[ref]! : null;
  }
  return out;
}

interface Checked {
  key: string;
  answers: Answers;
  /** Statuses declared without a JSON body. */
  declared: string[];
}

/** Why `body`, sent with `status`, does not fit what the route declares; null when it fits. */
export function answerProblem(route: Checked, status: number, body: unknown): string | null {
  const s = String(status);
  let schema: z.ZodType | null | undefined;
  if (status >= 400) schema = ANSWER_SCHEMAS.Error;
  else if (s in route.answers) schema = route.answers[s];
  else if (route.declared.includes(s)) return `${route.key} answered ${s} with JSON, but declares that status without a JSON body`;
  else return `${route.key} answered ${s}, a status it does not declare`;
  if (!schema) return null;
  // what the client reads: a Date as its ISO text, an undefined field left out
  const r = schema.safeParse(body === undefined ? undefined : JSON.parse(JSON.stringify(body)));
  if (r.success) return null;
  const issues = r.error.issues.slice(0, 5).map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`);
  return `${route.key} answered ${s} with JSON that does not fit its declared schema: ${issues.join('; ')}${r.error.issues.length > 5 ? ` (and ${r.error.issues.length - 5} more)` : ''}`;
}

/** The declaration of each express route `handle` registered (express's `req.route` is the key). */
const declarations = new WeakMap<object, Checked>();

/** Remember that the express route `expressRoute` serves `route` (called by `handle`). */
export function remember(expressRoute: object, route: Checked): void {
  declarations.set(expressRoute, route);
}

/** The declaration an express route was registered for by `handle`, if it was. */
export const declarationOf = (expressRoute: object): unknown => declarations.get(expressRoute);

/**
 * Check every JSON answer `app` sends for one of `routes` against that route's declaration. The check sits on
 * the app's response prototype and finds the declaration from the matched express route (`req.route`), so
 * no request or response gains a field (the fast path's objects keep their shape). The ivoryOS mount's routes
 * answer in ivoryOS's shapes, described in docs/ivoryos.md, and are not in `routes`.
 */
export function checkAnswers(app: Express, routes: ReadonlySet<object>): void {
  const proto = app.response as Response;
  const send = proto.json;
  proto.json = function json(this: Response, body: unknown) {
    const route = declarations.get((this.req as Request | undefined)?.route as object);
    const problem = route && routes.has(route) ? answerProblem(route, this.statusCode, body) : null;
    if (!problem) return send.call(this, body);
    console.error(`labdeck: an answer does not fit the API document: ${problem}`);
    this.status(500);
    return send.call(this, { error: { code: 'internal', message: `The answer does not fit the API document: ${problem}` } });
  };
}
