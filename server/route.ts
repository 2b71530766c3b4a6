/**
 * One declaration per route (DESIGN.md §14). A route says once, beside its handler: its method and path, its
 * section and summary, who may call it, its path, query and body schemas (zod: a form and a JSON body are read
 * with one schema), and its responses. From that one declaration:
 * - `handle` mounts the handler on a router: the caller's role is checked first, then the input is parsed,
 *   and a request that does not fit answers 400 naming each field, in the same shape for every route, before
 *   the handler runs; the handler gets the parsed, typed input;
 * - the API document (server/openapi.ts), the home page's route list and the generated clients read it, from
 *   the route groups the app mounts (server/catalogue.ts);
 * - its JSON answers' schemas are resolved from `responses`, and under test every JSON answer is checked
 *   against them (server/answer-check.ts).
 *
 * Bodies: an unknown field is refused by name (400), unless the route declares the fields it passes on
 * (`extra`: a pattern of field names, e.g. the instrument page's one field per method parameter). A form's
 * values are text: they are read into the schema's types first (numbers, booleans, lists of repeated keys).
 */
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { LabError, type ErrorDetail } from '../core/errors.js';
import { issueMessage } from '../core/deck/validate.js';
import { isJson } from './http.js';
import { failed } from './respond.js';
import { requireLogin } from './security.js';
import { answersOf, remember, type Answers } from './answer-check.js';
import type { ParameterObject, ResponseObject } from './api-doc.js';

export type Access = 'public' | 'login' | 'admin';
export type BodyKind = 'json' | 'form' | 'multipart' | 'text';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type AnyObject = z.ZodObject<z.ZodRawShape>;

export interface BodySpec<B extends AnyObject = AnyObject> {
  /** The fields, one schema for JSON and form bodies. */
  schema: B;
  /** The media types the route reads (json and form by default). */
  kinds?: BodyKind[];
  /** The component name in the API document (default: the operationId, capitalised, + `Body`). */
  name?: string;
  /** Field names passed on beyond the schema's (their values reach the handler as sent). */
  extra?: RegExp;
  /** The body kinds `extra` applies to (default: every kind); in the others an unknown field is refused. */
  extraKinds?: BodyKind[];
  /** A plain-text body (kind `text`) is the value of this field (the console's code). */
  text?: string;
  /** A JSON list as the whole body is the value of this field (a document that is a list: consumption rules). */
  list?: string;
  /** The body may be left out (an empty body reads as `{}`). Default: required when a field is. */
  optional?: boolean;
  description?: string;
  /**
   * The body is a document its handler checks whole (a workflow, against the live deck, naming each step
   * path), described by this component of the API document; `schema` then only says what shape it has.
   */
  document?: string;
}

/**
 * A route that is also a method of the generated clients (server/proxy.ts): `lab.records(keyword=…)` in
 * Python, `lab.records({ keyword })` in TypeScript. Its arguments are the route's path parameters, body fields
 * and the query fields named here, typed from their schemas; its documentation is the route's.
 */
export interface ClientSpec {
  /** The method's name in snake_case (Python); TypeScript writes it in camelCase. */
  name: string;
  /** What the method's documentation says (default: the route's summary and description). */
  doc?: string;
  /** Path parameters the clients call by another name (`{ workflow_id: 'run_id' }`). */
  rename?: Record<string, string>;
  /** The query fields the method takes (as keyword arguments, all optional). */
  query?: string[];
  /** Optional body fields Python also takes by position, after the required ones (`queue_run(w, rows)`). */
  positional?: string[];
  /**
   * Body fields the clients take as required although the route takes them optional (a campaign's `repeat`,
   * optional only for a manual campaign): a script's call keeps its positions when a field becomes optional.
   */
  required?: string[];
}

export interface RouteSpec<P extends AnyObject = AnyObject, Q extends AnyObject = AnyObject, B extends AnyObject = AnyObject> {
  method: Method;
  /** The path under the mount, OpenAPI style: `/workflows/{name}`. */
  path: string;
  /** The heading on the home page, the tag in the API document. */
  section: string;
  summary: string;
  /** Who may call it (default: any logged-in user). */
  access?: Access;
  operationId: string;
  description?: string;
  /** Path parameters (they arrive as text: use `idParam` for ids). */
  params?: P;
  /** Query parameters; others are ignored (links carry their own, like `format`). */
  query?: Q;
  body?: BodySpec<B>;
  /** More documented parameters the schemas do not carry (headers such as HX-Request). */
  docParameters?: ParameterObject[];
  /** The statuses this route answers itself (login, role, CSRF and body statuses are added for every route). */
  responses: Record<string, ResponseObject>;
  /** Served before authentication and body parsing (health, help, assets). */
  bare?: boolean;
  /** Public, but answers more to a logged-in user. */
  optionalLogin?: boolean;
  /** The route is a method of the generated clients. */
  client?: ClientSpec;
}

/** The name of a route's body in the API document and the generated clients: its own, or `<OperationId>Body`. */
export const bodyName = (r: RouteSpec): string => r.body?.name ?? `${r.operationId[0]!.toUpperCase()}${r.operationId.slice(1)}Body`;

export interface Route<P extends AnyObject = AnyObject, Q extends AnyObject = AnyObject, B extends AnyObject = AnyObject> extends RouteSpec<P, Q, B> {
  access: Access;
  /** `POST /workflows/{name}`: the key the document, the tests and the home page use. */
  key: string;
  /** The same path as express writes it: `/workflows/:name`. */
  expressPath: string;
  /** Its JSON answers' schemas by status, resolved from `responses` (server/answer-check.ts). */
  answers: Answers;
  /** The statuses it declares without a JSON body (a page, a redirect, an empty answer). */
  declared: string[];
}

/** Declare a route. */
export function route<P extends AnyObject = AnyObject, Q extends AnyObject = AnyObject, B extends AnyObject = AnyObject>(spec: RouteSpec<P, Q, B>): Route<P, Q, B> {
  const answers = answersOf(spec.responses, spec.body && !spec.body.document ? { [bodyName(spec as RouteSpec)]: spec.body.schema } : {});
  const declared = Object.keys(spec.responses).filter((s) => !(s in answers));
  return { ...spec, access: spec.access ?? 'login', key: `${spec.method} ${spec.path}`, expressPath: spec.path.replace(/\{(\w+)\}/g, ':$1'), answers, declared };
}

type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;
export interface Input<P, Q, B> {
  params: Out<P>;
  query: Out<Q>;
  body: Out<B> & Record<string, unknown>;
}

export type Handler<P, Q, B> = (req: Request, res: Response, input: Input<P, Q, B>) => unknown;

export type FormAgain = (req: Request, res: Response, err: LabError) => unknown;

export interface HandleOptions {
  /**
   * A page's form whose input does not fit is answered by this (the form again, with the message and the
   * values sent) instead of the error page; JSON clients get the error either way.
   */
  formAgain?: FormAgain;
  /** Reads a body express leaves alone (a multipart upload), after the role is checked, before the fields are. */
  receive?: (req: Request, res: Response) => Promise<void>;
}

/**
 * Mount `fn` for route `r` on `router`: login and role as the route declares them (whatever the router it is
 * mounted on, and wherever that router sits among the middleware), then input, then the handler (options: or
 * just `formAgain`).
 */
export function handle<P extends AnyObject, Q extends AnyObject, B extends AnyObject>(router: Router, r: Route<P, Q, B>, fn: Handler<P, Q, B>, options: HandleOptions | FormAgain = {}): void {
  const { formAgain, receive } = typeof options === 'function' ? { formAgain: options, receive: undefined } : options;
  const method = r.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  router[method](r.expressPath, async (req: Request, res: Response) => {
    if (r.access !== 'public' && !req.user) {
      // not logged in: pages to the login form (with `next`), JSON 401, as the login gate answers
      let refused: unknown;
      requireLogin(req, res, (e?: unknown) => void (refused = e));
      if (refused) throw refused;
      return;
    }
    if (r.access === 'admin' && req.user?.role !== 'admin') throw new LabError('forbidden', 'Only an admin may do this.');
    let input: Input<P, Q, B>;
    try {
      await receive?.(req, res);
      input = parseInput(r, req);
    } catch (e) {
      // a form's own input error: the form again (JSON clients get the error); anything else, the error handler's
      if (formAgain && e instanceof LabError) return failed(req, res, e, (err) => formAgain(req, res, err));
      throw e;
    }
    await fn(req, res, input);
  });
  // the express route just made serves `r`: its JSON answers are checked against `r` (server/answer-check.ts)
  const stack = (router as unknown as { stack: { route?: object }[] }).stack;
  const made = stack[stack.length - 1]?.route;
  if (made) remember(made, r);
}

// ---------------------------------------------------------------------------------------------------------
// Reading the input

/** An id in a path or body: digits, 1 to 2^31-1 (ids are 32-bit). */
export const ID = z
  .union([z.string().regex(/^\d{1,10}$/, 'must be a whole number'), z.int()])
  .transform(Number)
  .pipe(z.int().min(1, 'must be at least 1').max(2_147_483_647, 'must be at most 2147483647'));

/** Which kind of body the request carries, or null for none. */
function bodyKind(req: Request): BodyKind | null {
  const length = req.headers['content-length'];
  if (!req.headers['transfer-encoding'] && (length === undefined || length === '0')) return null;
  if (isJson(req)) return 'json';
  if (req.is('application/x-www-form-urlencoded')) return 'form';
  if (req.is('multipart/form-data')) return 'multipart';
  if (req.is('text/plain')) return 'text';
  return null;
}

const KIND_NAMES: Record<BodyKind, string> = { json: 'JSON', form: 'a form (application/x-www-form-urlencoded)', multipart: 'a multipart form', text: 'plain text' };

/** The schema under optional/nullable/default wrappers. */
function inner(s: z.ZodType): z.ZodType {
  let t = s as z.ZodType & { def: { type: string; innerType?: z.ZodType } };
  while (t.def.innerType && ['optional', 'nullable', 'default', 'prefault', 'catch'].includes(t.def.type)) t = t.def.innerType as typeof t;
  return t;
}

/** A form value (text, or a list for a repeated key) read into the type its field's schema wants. */
function formValue(schema: z.ZodType | undefined, v: unknown): unknown {
  if (!schema) return v;
  const t = inner(schema);
  const type = t.def.type;
  if (type === 'array') return Array.isArray(v) ? v : v === '' ? [] : [v];
  const one = Array.isArray(v) ? v[v.length - 1] : v; // a repeated key: the last one wins, as for a field
  if (typeof one !== 'string') return one;
  if (one === '' && schema.safeParse(undefined).success) return undefined; // an empty optional field
  if (type === 'number' || type === 'int') return /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(one) ? Number(one) : one;
  if (type === 'boolean') return one === 'true' || one === 'on' || one === '1' ? true : one === 'false' || one === 'off' || one === '0' || one === '' ? false : one;
  return one;
}

/** zod issues of one part of the input → details naming each field; an unknown field is named with the known ones. */
function details(issues: readonly z.core.$ZodIssue[], known: string[], where: string): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const issue of issues) {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        out.push({ field: path ? `${path}.${k}` : k, message: `is not a field of this request${known.length ? ` (its fields: ${known.join(', ')})` : ' (it takes none)'}` });
      }
      continue;
    }
    // a message written in the schema (`must be a whole number`) says it better than the generic one
    out.push({ field: path || where, message: /^(must|is) /.test(issue.message) ? issue.message : issueMessage(issue) });
  }
  return out;
}

function parsePart<S extends AnyObject>(schema: S, value: unknown, where: string, problems: ErrorDetail[]): z.output<S> | undefined {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  problems.push(...details(r.error.issues, Object.keys(schema.shape), where));
  return undefined;
}

/**
 * A body schema that refuses fields it does not declare, made once per schema: zod compiles a schema's
 * parser on its first use, and a `.strict()` copy made per request was compiled again for every call.
 */
const strictSchemas = new WeakMap<AnyObject, AnyObject>();
function strictOf<S extends AnyObject>(schema: S): S {
  let strict = strictSchemas.get(schema);
  if (!strict) strictSchemas.set(schema, (strict = schema.strict() as unknown as AnyObject));
  return strict as S;
}

/** The route's input, parsed; LabError invalid_input naming every field that does not fit. */
export function parseInput<P extends AnyObject, Q extends AnyObject, B extends AnyObject>(r: Route<P, Q, B>, req: Request): Input<P, Q, B> {
  const problems: ErrorDetail[] = [];
  const params = r.params ? parsePart(r.params, req.params, '(path)', problems) : {};
  const query = r.query ? parsePart(r.query, req.query, '(query)', problems) : {};
  let body: Record<string, unknown> = {};
  if (r.body) {
    const spec = r.body;
    const kinds = spec.kinds ?? ['json', 'form'];
    const kind = bodyKind(req);
    let raw: unknown = kind === 'text' && spec.text && typeof req.body === 'string' ? { [spec.text]: req.body } : kind ? req.body : undefined;
    if (spec.list && Array.isArray(raw)) raw = { [spec.list]: raw };
    if (kind && !kinds.includes(kind)) {
      problems.push({ field: '(body)', message: `must be ${kinds.map((k) => KIND_NAMES[k]).join(' or ')}, not ${KIND_NAMES[kind]}` });
    } else if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw))) {
      problems.push({ field: '(body)', message: 'must be an object of fields' });
    } else {
      const given = { ...((raw as Record<string, unknown> | undefined) ?? {}) };
      const passed: Record<string, unknown> = {};
      if (spec.extra && (!spec.extraKinds || (kind && spec.extraKinds.includes(kind)))) {
        for (const k of Object.keys(given)) {
          if (!(k in spec.schema.shape) && spec.extra.test(k)) {
            passed[k] = given[k];
            delete given[k];
          }
        }
      }
      const shape = spec.schema.shape as Record<string, z.ZodType>;
      // own fields only: a form field named `toString` or `constructor` has no schema (it is refused below)
      if (kind === 'form' || kind === 'multipart') for (const k of Object.keys(given)) given[k] = formValue(Object.hasOwn(shape, k) ? shape[k] : undefined, given[k]);
      const parsed = parsePart(spec.document ? spec.schema : strictOf(spec.schema), given, '(body)', problems);
      if (parsed) body = { ...passed, ...(parsed as Record<string, unknown>) };
    }
  }
  if (problems.length) {
    const text = problems.map((d) => `${d.field} ${d.message}`).join('; ');
    throw new LabError('invalid_input', `The request does not fit ${r.key}: ${text}`, problems);
  }
  return { params, query, body } as Input<P, Q, B>;
}

// ---------------------------------------------------------------------------------------------------------
// A route as a function of named arguments (the generated clients' methods, the MCP server's tools)

/** One argument: a path parameter, a body field, or a query field the route's `client` names. */
export interface RouteArg {
  /** The name on the wire. */
  wire: string;
  /** The name in a client (a path parameter may be renamed: `client.rename`). */
  name: string;
  in: 'path' | 'body' | 'query';
  schema: Record<string, unknown>;
  required: boolean;
}

function fieldsOf(schema: AnyObject, where: RouteArg['in'], only?: string[]): RouteArg[] {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const props = (js.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(js.required) ? (js.required as string[]) : []);
  return Object.entries(props)
    .filter(([name]) => !only || only.includes(name))
    .map(([name, s]) => ({ wire: name, name, in: where, schema: s, required: where === 'path' || (where === 'body' && required.has(name)) }));
}

/** A route's arguments, read from its declaration: path parameters, then body fields, then the client's query fields. */
export function routeArgs(r: Route): RouteArg[] {
  return [
    ...(r.params ? fieldsOf(r.params, 'path').map((a) => ({ ...a, name: r.client?.rename?.[a.wire] ?? a.wire })) : []),
    ...(r.body ? fieldsOf(r.body.schema, 'body') : []),
    ...(r.query && r.client?.query ? fieldsOf(r.query, 'query', r.client.query) : []),
  ];
}

/**
 * Named arguments (as `routeArgs` names them) read as the route reads a request: each part parsed with its
 * schema, an argument the route does not take refused by name; LabError invalid_input naming every field.
 */
export function parseArgs<P extends AnyObject, Q extends AnyObject, B extends AnyObject>(r: Route<P, Q, B>, args: Record<string, unknown>): Input<P, Q, B> {
  const known = routeArgs(r as unknown as Route);
  const parts: Record<RouteArg['in'], Record<string, unknown>> = { path: {}, body: {}, query: {} };
  const problems: ErrorDetail[] = [];
  for (const [k, v] of Object.entries(args)) {
    const a = known.find((x) => x.name === k);
    if (a) parts[a.in][a.wire] = v;
    else problems.push({ field: k, message: `is not an argument of this tool${known.length ? ` (its arguments: ${known.map((x) => x.name).join(', ')})` : ' (it takes none)'}` });
  }
  const params = r.params ? parsePart(r.params, parts.path, '(path)', problems) : {};
  const query = r.query ? parsePart(r.query, parts.query, '(query)', problems) : {};
  const body = r.body ? parsePart(r.body.document ? r.body.schema : strictOf(r.body.schema), parts.body, '(arguments)', problems) : {};
  if (problems.length) throw new LabError('invalid_input', `The arguments do not fit: ${problems.map((d) => `${d.field} ${d.message}`).join('; ')}`, problems);
  return { params, query, body } as Input<P, Q, B>;
}
