/**
 * The OpenAPI 3.1 document of labdeck's HTTP API, generated: it holds no route of its own.
 * - Each route is declared once, beside its handler (server/route.ts, DESIGN.md §14): method, path, section
 *   (tag), summary, who may call it, its path, query and body schemas (zod, turned into JSON Schema with
 *   `z.toJSONSchema`) and the statuses it answers. server/catalogue.ts lists them in order, from the route groups the app mounts, and passes them in.
 * - This file adds what every route of a kind answers (401 and 302 without login, 403 for admins only or a
 *   cross-site request, 400 for a malformed body, 413), the component schemas the declared answers refer to
 *   by name (`RunnerStatus`, `Record`, the workflow document, …), and the live deck: one direct-call body per
 *   instrument, `oneOf` its methods, from the drivers' own schemas.
 *
 * test/api/openapi.test.ts checks the document against the express app (every registered route is declared,
 * the statuses the routes really answer are documented). Paths are given under the `/app` mount; every one is
 * also served at `/`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { InstrumentSchema, JSONSchema } from '../core/contracts/index.js';
import { RESPONSE_SCHEMAS } from './response-schemas.js';
import { SAFETY_SCHEMAS, safetyFileSchema } from './safety-schemas.js';
import { projectRoot } from '../core/paths.js';
import { Step as WorkflowStep, Workflow } from '../core/workflow/model.js';
import { WORKFLOW_SCHEMAS } from './workflow-schemas.js';
import { bodyName, type BodyKind, type Route } from './route.js';
import { INSTRUMENT_ROUTES } from './routes/instruments.js';
import {
  error,
  redirect,
  ref,
  type HttpMethod,
  type MediaTypeObject,
  type OpenApiDocument,
  type OperationObject,
  type ParameterObject,
  type RequestBodyObject,
  type ResponseObject,
  type SchemaObject,
  type SecurityRequirement,
} from './api-doc.js';

export * from './api-doc.js';

export const MOUNT = '/app';

export interface BuildOptions {
  /** The routes to document: the app's catalogue (server/catalogue.ts), in its order. */
  routes: readonly Route[];
  /** The live deck (`runtime.deck.list()`); one direct-call body per instrument is generated from it. */
  instruments: InstrumentSchema[];
  /** Where the server is reached, without the mount: `http://127.0.0.1:8000`. */
  serverUrl: string;
  /**
   * A document for a visitor who is not logged in: the live deck is left out (the deck's schemas are only
   * shown to users), `instruments` is ignored and the description says how to get the full document.
   */
  public?: boolean;
}

/** Drop `additionalProperties: false`: a response may gain fields without breaking generated clients. */
function openSchema(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(openSchema);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k, x]) => !(k === 'additionalProperties' && x === false))
      .map(([k, x]) => [k, openSchema(x)]),
  );
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): SchemaObject {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as SchemaObject;
  return io === 'output' ? (openSchema(rest) as SchemaObject) : rest;
}

let fixedCache: Record<string, SchemaObject> | null = null;
/** The component schemas the declared answers refer to by name, converted once. */
function fixedSchemas(): Record<string, SchemaObject> {
  if (fixedCache) return fixedCache;
  const out: Record<string, SchemaObject> = {};
  for (const [name, s] of Object.entries(RESPONSE_SCHEMAS)) out[name] = jsonSchema(s, 'output');
  workflowSchemas(out);
  for (const [name, s] of Object.entries(SAFETY_SCHEMAS)) out[name] = jsonSchema(s, 'output');
  out.SafetyFile = safetyFileSchema() as SchemaObject;
  fixedCache = out;
  return out;
}

const MEDIA: Record<BodyKind, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
  text: 'text/plain',
};

/**
 * Workflows: the document schema comes from the zod model (core/workflow/model.ts), its recursive steps as
 * the component `Workflow.Step`; the answers that carry a document (zod too) refer to it.
 */
function workflowSchemas(out: Record<string, SchemaObject>) {
  const steps = z.registry<{ id: string }>();
  steps.add(WorkflowStep, { id: 'Step' });
  embed(z.toJSONSchema(Workflow, { io: 'input', unrepresentable: 'any', metadata: steps }) as JSONSchema, 'Workflow', out);
  // the answers that carry a document (server/workflow-schemas.ts) refer to it
  for (const [name, schema] of Object.entries(WORKFLOW_SCHEMAS)) {
    const js = z.toJSONSchema(schema, {
      io: 'output',
      unrepresentable: 'any',
      override: (ctx) => {
        if (ctx.zodSchema !== Workflow) return;
        for (const k of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[k];
        Object.assign(ctx.jsonSchema, ref('Workflow'));
      },
    }) as SchemaObject;
    // (the document's own recursive steps, left in $defs, are the component's: the reference replaces them)
    const { $schema: _drop, $defs: _inner, ...rest } = js;
    if (JSON.stringify(rest).includes('#/$defs/')) throw new Error(`The component ${name} refers to a definition of its own: declare it as a component`);
    out[name] = openSchema(rest) as SchemaObject;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Building operations.

const SESSION_OR_TOKEN: SecurityRequirement[] = [{ session: [] }, { bearer: [] }];

/** Add a response; when the status is already there, join the descriptions and the content. */
function addResponse(responses: Record<string, ResponseObject>, status: string, extra: ResponseObject) {
  const have = responses[status];
  if (!have) {
    responses[status] = extra;
    return;
  }
  responses[status] = {
    ...have,
    description: `${have.description}; or: ${extra.description}`,
    ...(have.content || extra.content ? { content: { ...extra.content, ...have.content } } : {}),
    ...(have.headers || extra.headers ? { headers: { ...extra.headers, ...have.headers } } : {}),
  };
}

/** A zod object's fields as documented parameters (`output`: as the route reads them, an id as an integer). */
function parameters(schema: z.ZodObject<z.ZodRawShape>, where: 'path' | 'query', io: 'input' | 'output'): ParameterObject[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const { description, ...rest } = jsonSchema(field as z.ZodType, io) as SchemaObject & { description?: string };
    const required = where === 'path' || !(field as z.ZodType).safeParse(undefined).success;
    return { name, in: where, ...(required ? { required: true } : {}), ...(description ? { description } : {}), schema: rest };
  });
}

/** The component name of a declared route's body. */

/** A declared route's body: its component (closed: unknown fields refused, but those it passes on) and media types. */
function requestBody(r: Route, schemas: Record<string, SchemaObject>): RequestBodyObject | undefined {
  if (!r.body) return undefined;
  const name = r.body.document ?? bodyName(r);
  if (!r.body.document) {
    const schema = jsonSchema(r.body.schema.strict(), 'input');
    // fields the route passes on: allowed by name pattern, every other unknown field still refused
    if (r.body.extra) schema.patternProperties = { [r.body.extra.source]: {} };
    schemas[name] = schema;
  }
  const kinds = r.body.kinds ?? ['json', 'form'];
  const optional = r.body.optional ?? r.body.schema.safeParse({}).success;
  // a plain-text body is one field's value (the console's code)
  const text = r.body.text ? (r.body.schema.shape[r.body.text] as z.ZodType | undefined) : undefined;
  const content: Record<string, MediaTypeObject> = {};
  for (const k of kinds) content[MEDIA[k]] = { schema: k === 'text' && text ? jsonSchema(text, 'input') : ref(name) };
  return { required: !optional, content, ...(r.body.description ? { description: r.body.description } : {}) };
}

/** The operation of a declared route: its own parameters, body and answers, and those every route of its kind has. */
function operation(r: Route, schemas: Record<string, SchemaObject>): OperationObject {
  const unsafe = r.method !== 'GET';
  const isPublic = r.access === 'public';
  const admin = r.access === 'admin';
  // path parameters as the route reads them (an id is an integer); a template the schema does not name is text
  const declared = r.params ? parameters(r.params, 'path', 'output') : [];
  const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map(([, name]): ParameterObject => declared.find((p) => p.name === name) ?? { name, in: 'path', required: true, schema: { type: 'string' } });
  const params = [...pathParams, ...(r.query ? parameters(r.query, 'query', 'input') : []), ...(r.docParameters ?? [])];
  const responses: Record<string, ResponseObject> = { ...r.responses };

  if (!isPublic) {
    addResponse(responses, '401', error('Not logged in (JSON), or an unknown or malformed bearer token'));
    addResponse(responses, '302', redirect('Not logged in (pages): to the login form, with `next` for a GET'));
  } else if (!r.bare) {
    addResponse(responses, '401', error('An unknown or malformed bearer token (a public route with no Authorization header does not need one)'));
  }
  if (admin) addResponse(responses, '403', error('Only an admin may do this'));
  if (unsafe && !r.bare) {
    addResponse(responses, '403', error('Cross-site request refused (cookie session with a foreign Origin or Sec-Fetch-Site)'));
    addResponse(responses, '400', error('The JSON body is malformed'));
    addResponse(responses, '413', error('The body is over the size limit (1 MB by default)'));
  }
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
  sorted.default = error('Anything else: 500 internal (the error is in the server log)');

  const op: OperationObject = {
    operationId: r.operationId,
    summary: r.summary,
    tags: [r.section],
    responses: sorted,
    security: isPublic ? (r.optionalLogin ? [{}, ...SESSION_OR_TOKEN] : []) : SESSION_OR_TOKEN,
  };
  if (r.description) op.description = r.description;
  if (params.length) op.parameters = params;
  const body = requestBody(r, schemas);
  if (body) op.requestBody = body;
  if (admin) op['x-labdeck-admin'] = true;
  return op;
}

// ---------------------------------------------------------------------------------------------------------
// The live deck: one `Call.<instrument>` schema per instrument, `oneOf` its methods.

/** A component name for any string (component keys allow letters, digits, `.`, `-` and `_`). */
const safeName = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/**
 * Put a plugin's JSON Schema into components/schemas under `name`. Local references (`#` for recursion,
 * `#/$defs/X`) are rewritten to components, because inside the document `#` means the document itself.
 */
function embed(schema: JSONSchema, name: string, schemas: Record<string, SchemaObject>) {
  const { $schema: _drop, $defs, definitions, ...root } = schema as SchemaObject & { $defs?: Record<string, SchemaObject>; definitions?: Record<string, SchemaObject> };
  const defs = { ...(definitions ?? {}), ...($defs ?? {}) };
  const fix = (r: string) => {
    if (r === '#') return `#/components/schemas/${name}`;
    const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(r);
    return m ? `#/components/schemas/${name}.${safeName(decodeURIComponent(m[1]))}` : r;
  };
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === '$ref' && typeof x === 'string' ? fix(x) : rewrite(x)]));
  };
  schemas[name] = rewrite(root) as SchemaObject;
  for (const [d, s] of Object.entries(defs)) schemas[`${name}.${safeName(d)}`] = rewrite(s) as SchemaObject;
}

/** Adds `Call.<instrument>`, `Call.<instrument>.<method>` and `Args.<instrument>.<method>`; returns the first's name. */
function addCallSchemas(inst: InstrumentSchema, schemas: Record<string, SchemaObject>): string {
  const call = `Call.${safeName(inst.name)}`;
  const mapping: Record<string, string> = {};
  for (const m of inst.methods) {
    const args = `Args.${safeName(inst.name)}.${safeName(m.name)}`;
    const variant = `${call}.${safeName(m.name)}`;
    embed(m.params, args, schemas);
    const needsArgs = Array.isArray(m.params.required) && m.params.required.length > 0;
    schemas[variant] = {
      type: 'object',
      title: `${inst.name}.${m.name}`,
      ...(m.description ? { description: m.description } : {}),
      properties: { method: { const: m.name }, args: ref(args) },
      required: needsArgs ? ['method', 'args'] : ['method'],
      'x-labdeck-safety': m.safety,
    };
    mapping[m.name] = `#/components/schemas/${variant}`;
  }
  schemas[call] = {
    title: `A call to ${inst.name}`,
    description: inst.description || `${inst.name} (${inst.driver})`,
    oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
    discriminator: { propertyName: 'method', mapping },
  };
  return call;
}

function liveDeck(instruments: InstrumentSchema[], doc: OpenApiDocument) {
  const schemas = doc.components.schemas;
  const named: SchemaObject[] = [];
  const mapping: Record<string, string> = {};
  for (const inst of instruments) {
    if (!inst.methods.length) continue; // a oneOf needs at least one alternative
    const call = addCallSchemas(inst, schemas);
    const withName = `CallAny.${safeName(inst.name)}`;
    schemas[withName] = { allOf: [{ type: 'object', properties: { instrument: { const: inst.name } }, required: ['instrument'] }, ref(call)] };
    named.push(ref(withName));
    mapping[inst.name] = `#/components/schemas/${withName}`;

    // the generic call route, for this instrument: its body is the instrument's own methods
    const route = {
      ...INSTRUMENT_ROUTES.call,
      section: 'Live deck',
      path: `/instruments/${inst.name}`,
      summary: `Call a method of ${inst.name}`,
      operationId: `call_${inst.name.replace(/[^A-Za-z0-9_]/g, '_')}`,
      params: undefined,
    } as unknown as Route;
    const op = operation(route, schemas);
    op.requestBody = { required: true, content: { [MEDIA.json]: { schema: ref(call) } } };
    op.description = `${inst.description || inst.driver}. Methods: ${inst.methods.map((m) => `${m.name} (${m.safety})`).join(', ')}. A form (method + one field per parameter) works too.`;
    op['x-labdeck-live'] = true;
    // A deck device named like one of the fixed routes (say `proxy`) must not replace that route's entry.
    const item = (doc.paths[`${MOUNT}/instruments/${encodeURIComponent(inst.name)}`] ??= {});
    item.post ??= op;
  }
  if (instruments.length) {
    doc.tags.push({ name: 'Live deck', description: "One operation per instrument of this lab's deck, with its methods' arguments." });
    // POST /instruments/ names the instrument in the body: a real oneOf, told apart by `instrument` (and the
    // declared fields, closed, around it)
    schemas.CallAnyBody = { ...schemas.CallAnyBody, oneOf: named, discriminator: { propertyName: 'instrument', mapping } };
  }
}

// ---------------------------------------------------------------------------------------------------------

let versionCache: string | null = null;
function version(): string {
  try {
    versionCache ??= (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    versionCache = '0.0.0';
  }
  return versionCache;
}

function description(opts: BuildOptions): string {
  return [
    'The HTTP API of labdeck, a laboratory instrument host.',
    '',
    `Every path is listed under the \`${MOUNT}\` mount; each is also served at \`/\` without it (\`${MOUNT}/instruments/\` and \`/instruments/\` are the same route).`,
    '',
    'One route answers a page and JSON: JSON when the `Accept` header prefers `application/json` or with `?format=json` (a request with a JSON body and no Accept preference gets JSON too); an HTML page otherwise.',
    '',
    'Authentication: the `labdeck.sid` session cookie (log in with POST /app/auth/login), or `Authorization: Bearer <token>` with a token made on the account page (POST /app/account/tokens). Without login, pages redirect (302) to the login form and JSON gets 401. State-changing requests with a cookie from another site (Origin or Sec-Fetch-Site) are refused with 403; token requests are not checked.',
    '',
    'Errors in JSON are `{ "error": { "code", "message", "details"? } }` (the `Error` schema); `details` names the offending fields.',
    '',
    opts.public
      ? 'This copy was served to a visitor who is not logged in: log in (or send a token) to get the live deck\'s per-instrument call bodies (`Call.<instrument>` schemas and the "Live deck" operations).'
      : 'The "Live deck" operations and the `Call.<instrument>` schemas describe this lab\'s deck as it was when the document was served; temporary devices connected later are not in it.',
  ].join('\n');
}

/** The OpenAPI 3.1 document for every declared route, plus the live deck unless `public`. */
export function buildOpenApi(opts: BuildOptions): OpenApiDocument {
  const ROUTES = opts.routes;
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: 'labdeck HTTP API', version: version(), description: description(opts) },
    servers: [{ url: opts.serverUrl.replace(/\/+$/, ''), description: 'This labdeck' }],
    tags: [...new Set(ROUTES.map((r) => r.section))].map((name) => ({ name })),
    security: SESSION_OR_TOKEN,
    paths: {},
    components: {
      schemas: { ...fixedSchemas() },
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'labdeck.sid', description: 'The session cookie set by POST /app/auth/login' },
        bearer: { type: 'http', scheme: 'bearer', description: 'An API token (lab_...) made on the account page' },
      },
    },
  };
  for (const route of ROUTES) {
    const item = (doc.paths[`${MOUNT}${route.path}`] ??= {});
    item[route.method.toLowerCase() as HttpMethod] = operation(route, doc.components.schemas);
  }
  if (!opts.public) liveDeck(opts.instruments, doc);
  return doc;
}

/** Follow a local `$ref` (`#/components/schemas/X`) inside the document; other values are returned as they are. */
export function resolveRef(doc: OpenApiDocument, schema: SchemaObject | undefined, depth = 0): SchemaObject | undefined {
  const r = schema?.$ref;
  if (typeof r !== 'string' || !r.startsWith('#/') || depth > 20) return schema;
  let node: unknown = doc;
  for (const part of r.slice(2).split('/')) {
    node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return resolveRef(doc, node as SchemaObject | undefined, depth + 1);
}
