/**
 * The TypeScript client (labdeck-client.ts): the global fetch, no dependencies. Its runtime (the errors, the
 * answer types, the sender, waiting for a run) is a real TypeScript file beside this one
 * (typescript-runtime.ts); this writes around it the runner's route methods and one typed method per
 * instrument method.
 */
import type { InstrumentSchema, JSONSchema } from '../../core/contracts/index.js';
import type { Route } from '../route.js';
import { buildOpenApi } from '../openapi.js';
import { camel, clientRoutes, described, header, paramsOf, schemaTypes, unique, TS_FROM_DOCUMENT, type Arg, type ProxyOptions, type RouteMethod } from './common.js';
import { tsRuntime } from './runtimes.js';

const TS_IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** An object key: bare when it is an identifier, else a string literal. */
const tsKey = (name: string) => (TS_IDENT.test(name) ? name : JSON.stringify(name));
/** A key in an object literal value: `__proto__` there would set the prototype, so it is computed. */
const tsValueKey = (name: string) => (name === '__proto__' ? `[${JSON.stringify(name)}]` : tsKey(name));
/** Text inside a JSDoc block: `*\/` cannot end it early. */
const jsDocText = (s: string) => s.replace(/\*\//g, '*\\/').replace(/\r\n?|[\u2028\u2029]/g, '\n');

function pascal(name: string): string {
  const p = name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
  return /^[A-Za-z]/.test(p) ? p : `X${p}`;
}

function tsType(s: JSONSchema, depth = 0): string {
  if (!s || typeof s !== 'object' || depth > 4) return 'unknown';
  if (Array.isArray(s.enum)) {
    const ok = s.enum.length > 0 && s.enum.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
    return ok ? s.enum.map((v) => JSON.stringify(v)).join(' | ') : 'unknown';
  }
  if ('const' in s && (s.const === null || ['string', 'number', 'boolean'].includes(typeof s.const))) return JSON.stringify(s.const);
  const union = (s.anyOf ?? s.oneOf) as JSONSchema[] | undefined;
  const parts = Array.isArray(union) ? union.map((u) => tsType(u, depth + 1)) : schemaTypes(s).map((t) => tsType({ ...s, type: t }, depth + 1));
  if (parts.length > 1) return parts.includes('unknown') ? 'unknown' : [...new Set(parts)].join(' | ');
  switch (s.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = s.items ? tsType(s.items as JSONSchema, depth + 1) : 'unknown';
      return `Array<${item}>`;
    }
    case 'object': {
      const props = s.properties as Record<string, JSONSchema> | undefined;
      if (!props || Object.keys(props).length === 0) return 'Record<string, unknown>';
      const req = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      return `{ ${Object.entries(props)
        .map(([k, v]) => `${tsKey(k)}${req.has(k) ? '' : '?'}: ${tsType(v, depth + 1)}`)
        .join('; ')} }`;
    }
    default:
      return 'unknown';
  }
}

/**
 * A type of the API document's schema `s` (its `$ref`s read from `schemas`), its object fields one a line with
 * their descriptions; an object open to more fields (`additionalProperties`) says so.
 */
function docType(s: JSONSchema, schemas: Record<string, JSONSchema>, indent: string, depth = 0): string {
  if (!s || typeof s !== 'object' || depth > 16) return 'unknown';
  if (typeof s.$ref === 'string') return docType(schemas[s.$ref.split('/').pop()!] as JSONSchema, schemas, indent, depth + 1);
  if (Array.isArray(s.enum) || 'const' in s) return tsType(s);
  const union = (s.anyOf ?? s.oneOf) as JSONSchema[] | undefined;
  if (Array.isArray(union)) {
    const parts = [...new Set(union.map((u) => docType(u, schemas, indent, depth + 1)))];
    return parts.includes('unknown') ? 'unknown' : parts.join(' | ');
  }
  const types = schemaTypes(s);
  if (types.length > 1) return [...new Set(types.map((t) => docType({ ...s, type: t }, schemas, indent, depth + 1)))].join(' | ');
  if (s.type === 'array') return `Array<${s.items ? docType(s.items as JSONSchema, schemas, indent, depth + 1) : 'unknown'}>`;
  if (s.type !== 'object') return tsType(s);
  const props = Object.entries((s.properties ?? {}) as Record<string, JSONSchema>);
  const open = s.additionalProperties !== undefined && s.additionalProperties !== false;
  if (props.length === 0) return 'Record<string, unknown>';
  const req = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const inner = `${indent}  `;
  const lines = props.flatMap(([k, v]) => [
    ...(typeof v.description === 'string' && v.description ? jsDoc([v.description], inner) : []),
    `${inner}${tsKey(k)}${req.has(k) ? '' : '?'}: ${docType(v, schemas, inner, depth + 1)};`,
  ]);
  return ['{', ...lines, ...(open ? [`${inner}[field: string]: unknown;`] : []), `${indent}}`].join('\n');
}

const documentCache = new WeakMap<readonly Route[], string[]>();
/** The answer types written from the API document the server serves (TS_FROM_DOCUMENT), and their parts. */
function documentTypes(routes: readonly Route[]): string[] {
  const known = documentCache.get(routes);
  if (known) return known;
  const schemas = buildOpenApi({ routes, instruments: [], serverUrl: 'http://labdeck', public: true }).components.schemas as Record<string, JSONSchema>;
  const out: string[] = ['', '// ---- the answer types, from the API document the server serves (its components) ----'];
  for (const [name, component] of Object.entries(TS_FROM_DOCUMENT)) {
    const s = schemas[component];
    if (!s) throw new Error(`The API document has no component ${component} (the TypeScript client's ${name})`);
    const doc = typeof s.description === 'string' && s.description ? s.description : `The API document's ${component}.`;
    out.push('', ...jsDoc([doc], ''), `export type ${name} = ${docType(s, schemas, '')};`);
  }
  out.push(
    '',
    '/** One task the server runs: the controls take its id as task_id while several run. */',
    "export type RunningTask = RunnerStatus['running'][number];",
    '/** The step that failed, while the run waits for an operator. */',
    "export type FailedStep = NonNullable<RunnerStatus['failed_step']>;",
    '/** A run record as the list shows it: GET /executions/records. */',
    "export type RunSummary = RecordList['records'][number];",
    '/** Where a queued task is: pending, running, interrupted, done, failed, stopped or aborted. */',
    "export type TaskStatus = QueuedTask['status'];",
  );
  documentCache.set(routes, out);
  return out;
}

function jsDoc(lines: string[], indent: string): string[] {
  const body = jsDocText(lines.join('\n')).split('\n');
  return [`${indent}/**`, ...body.map((l) => `${indent} *${l ? ` ${l}` : ''}`), `${indent} */`];
}

/** The body and query types of the route methods, RunnerRoutes, and runnerRoutes(send) (TypeScript). */
function tsRouteMethods(methods: RouteMethod[]): string[] {
  const types: string[] = [];
  const members: string[] = [];
  const values: string[] = [];
  const fields = (args: Arg[], indent: string) =>
    args.flatMap((a) => [...(described(a) ? jsDoc([described(a)], indent) : []), `${indent}${tsKey(a.wire)}${a.required ? '' : '?'}: ${tsType(a.schema)};`]);
  for (const m of methods) {
    const params = m.pathArgs.map((a) => `${camel(a.name)}: ${tsType(a.schema)}`);
    const path = m.pathArgs.reduce((p, a) => p.replace(`{${a.wire}}`, `\${encodeURIComponent(String(${camel(a.name)}))}`), m.path);
    let body = '';
    if (m.body?.length) {
      const optional = m.body.every((a) => !a.required);
      types.push('', ...jsDoc([`What ${m.method} ${m.path} takes.`], ''), `export interface ${m.bodyName} {`, ...fields(m.body, '  '), '}');
      params.push(`options${optional ? '?' : ''}: ${m.bodyName}`);
      body = optional ? ', options ?? {}' : ', options';
    } else if (m.body) body = ', {}';
    let query = '';
    if (m.query.length) {
      params.push(`query?: { ${m.query.map((a) => `${tsKey(a.wire)}?: ${tsType(a.schema)}`).join('; ')} }`);
      query = ' + queryString(query)';
    }
    const names = params.map((p) => p.split(/\??:/)[0]);
    members.push(...jsDoc([`${m.doc} (${m.method} ${m.path})`], '  '), `  ${camel(m.name)}(${params.join(', ')}): Promise<${m.returns}>;`);
    values.push(`    ${camel(m.name)}: (${names.join(', ')}) => send(${JSON.stringify(m.method)}, \`${path}\`${query}${body}) as Promise<${m.returns}>,`);
  }
  return [
    ...types,
    '',
    "/** The runner's routes: runs, campaigns, the queue, the records and the controls (from labdeck's route declarations). */",
    'export interface RunnerRoutes {',
    ...members,
    '}',
    '',
    'function runnerRoutes(send: Send): RunnerRoutes {',
    '  return {',
    ...values,
    '  };',
    '}',
  ];
}
/** The Runner methods on the Lab object: an instrument with one of these names is `lab.<name>_`. */
const tsLabNames = (methods: RouteMethod[]) => ['waitForRun', ...methods.map((m) => camel(m.name))];
/** Type names the runtime declares. */
const tsTypeNames = () => [...tsRuntime().matchAll(/^(?:export )?(?:class|interface|type) ([A-Za-z]+)/gm)].map((m) => m[1]);

export function typescript(instruments: InstrumentSchema[], opts: ProxyOptions): string {
  const methods = clientRoutes(opts.routes);
  const out: string[] = [
    ...header('typescript', instruments, opts),
    '',
    `export const DEFAULT_BASE_URL = ${JSON.stringify(opts.defaultBaseUrl)};`,
    tsRuntime(),
    ...documentTypes(opts.routes),
    ...tsRouteMethods(methods),
  ];
  const typeNames = new Set(['Lab', 'RunnerRoutes', 'RunningTask', 'FailedStep', 'RunSummary', 'TaskStatus', ...Object.keys(TS_FROM_DOCUMENT), ...tsTypeNames(), ...methods.map((m) => m.bodyName)]);
  const keys = new Set(tsLabNames(methods));
  const labType: string[] = [];
  const labValue: string[] = [];
  const renamed: string[] = [];
  for (const inst of instruments) {
    const methodTypes: string[] = [];
    const methodValues: string[] = [];
    for (const m of [...inst.methods].sort((a, b) => a.order - b.order)) {
      const params = paramsOf(m);
      const argsType = unique(`${pascal(inst.name)}${pascal(m.name)}Args`, typeNames);
      out.push(
        '',
        ...jsDoc([`Arguments of ${inst.name}.${m.name}.`], ''),
        `export interface ${argsType} {`,
        ...params.flatMap((p) => {
          const desc = typeof p.schema.description === 'string' ? p.schema.description : '';
          const dflt = p.hasDefault ? `@default ${JSON.stringify(p.schema.default)}` : '';
          const doc = [desc, dflt].filter(Boolean);
          return [...(doc.length ? jsDoc(doc, '  ') : []), `  ${tsKey(p.name)}${p.required ? '' : '?'}: ${tsType(p.schema)};`];
        }),
        '}',
      );
      const optional = params.every((p) => !p.required);
      const ret = m.returns ? tsType(m.returns) : 'unknown';
      const doc = [m.description || `Call ${inst.name}.${m.name}.`];
      if (m.safety === 'hazardous') doc.push('', 'Hazardous: this moves hardware or consumes material.');
      methodTypes.push(...jsDoc(doc, '    '), `    ${tsKey(m.name)}(args${optional ? '?' : ''}: ${argsType}): Promise<${ret}>;`);
      methodValues.push(`      ${tsValueKey(m.name)}: (args${optional ? '?' : ''}: ${argsType}) => call(${JSON.stringify(inst.name)}, ${JSON.stringify(m.name)}, args) as Promise<${ret}>,`);
    }
    const key = unique(inst.name, keys);
    if (key !== inst.name) renamed.push(`The instrument '${inst.name}' is lab.${key}: ${inst.name} is a Runner method.`);
    labType.push(...jsDoc([inst.description || `The ${inst.name} instrument.`], '  '), `  ${tsKey(key)}: {`, ...methodTypes, '  };');
    labValue.push(`    ${tsValueKey(key)}: {`, ...methodValues, '    },');
  }
  out.push(
    '',
    ...jsDoc(
      [
        'The lab: one property per instrument, one method per instrument method; and the runner: queue a run of a',
        'workflow (queueRun) or a campaign (startCampaign), wait for it (waitForRun), the status, queue and records.',
        ...(renamed.length ? ['', ...renamed] : []),
      ],
      '',
    ),
    'export interface Lab extends Runner {',
    ...labType,
    '}',
    '',
    '/** A client for the deck at `baseUrl` (e.g. http://127.0.0.1:8000/app), authenticated by an API token. */',
    'export function createLab(baseUrl: string = DEFAULT_BASE_URL, token?: string): Lab {',
    '  const send = makeSend(baseUrl, token);',
    '  const call = makeCall(send);',
    '  return {',
    '    ...makeRunner(send),',
    ...labValue,
    '  };',
    '}',
    '',
  );
  return out.join('\n');
}
