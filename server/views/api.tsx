/**
 * The API page: the OpenAPI document rendered readably, grouped by tag. Each operation shows its method, path,
 * summary and statuses at a glance; opening it shows parameters, request body fields and responses.
 */
import type { ReactNode } from 'react';
import { resolveRef, type OpenApiDocument, type OperationObject, type ParameterObject, type SchemaObject } from '../openapi.js';
import { Alert, Layout, type ViewCtx } from './layout.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const METHOD_CLASS: Record<string, string> = {
  get: 'text-bg-primary',
  post: 'text-bg-success',
  put: 'text-bg-warning',
  patch: 'text-bg-warning',
  delete: 'text-bg-danger',
};

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-');

function statusClass(status: string): string {
  if (status.startsWith('2')) return 'text-bg-success';
  if (status.startsWith('3')) return 'text-bg-info';
  if (status.startsWith('4')) return 'text-bg-warning';
  return 'text-bg-danger';
}

/** A short type label: `string`, `"dose"`, `light | dark`, `number[]`, `any`. */
function typeLabel(doc: OpenApiDocument, schema: SchemaObject | undefined, depth = 0): string {
  const s = resolveRef(doc, schema);
  if (!s || depth > 4) return 'any';
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v) => String(v)).join(' | ');
  const alts = (s.oneOf ?? s.anyOf) as SchemaObject[] | undefined;
  if (Array.isArray(alts)) return alts.map((a) => typeLabel(doc, a, depth + 1)).join(' | ');
  const type = s.type;
  if (Array.isArray(type)) return type.join(' | ');
  if (type === 'array') return `${typeLabel(doc, s.items as SchemaObject | undefined, depth + 1)}[]`;
  if (type === 'string' && s.contentMediaType) return 'file';
  if (typeof type === 'string') return type;
  return s.properties ? 'object' : 'any';
}

/** The description of a field with its constraints: `Volume, mL (> 0, ≤ 50, default 1)`. */
function describe(s: SchemaObject): string {
  const c: string[] = [];
  if (s.minimum !== undefined) c.push(`≥ ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) c.push(`> ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined && Math.abs(Number(s.maximum)) < 1e15) c.push(`≤ ${s.maximum}`);
  if (s.exclusiveMaximum !== undefined) c.push(`< ${s.exclusiveMaximum}`);
  if (s.minLength !== undefined) c.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined) c.push(`at most ${s.maxLength} characters`);
  if (s.pattern !== undefined) c.push(`matches ${s.pattern}`);
  if (s.default !== undefined) c.push(`default ${JSON.stringify(s.default)}`);
  const text = typeof s.description === 'string' ? s.description : '';
  return c.length ? `${text}${text ? ' ' : ''}(${c.join(', ')})` : text;
}

interface Row {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** The fields of an object schema, nested objects flattened as `args.volume_ml`. */
function fieldRows(doc: OpenApiDocument, schema: SchemaObject | undefined, prefix = '', depth = 0): Row[] {
  const s = resolveRef(doc, schema);
  if (!s || depth > 3) return [];
  if (Array.isArray(s.allOf)) return (s.allOf as SchemaObject[]).flatMap((part) => fieldRows(doc, part, prefix, depth));
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const rows: Row[] = [];
  for (const [name, raw] of Object.entries((s.properties ?? {}) as Record<string, SchemaObject>)) {
    const p = resolveRef(doc, raw) ?? {};
    rows.push({ name: prefix + name, type: typeLabel(doc, raw), required: required.has(name), description: describe(p) });
    if (p.properties && Object.keys(p.properties).length) rows.push(...fieldRows(doc, p, `${prefix}${name}.`, depth + 1));
  }
  return rows;
}

function FieldTable({ rows }: { rows: Row[] }) {
  if (!rows.length) return <p className="small text-body-secondary mb-1">No fields.</p>;
  return (
    <table className="table table-sm small mb-2">
      <tbody>
        {rows.map((r) => (
          <tr key={r.name}>
            <td className="text-nowrap">
              <code>{r.name}</code>
              {r.required ? (
                <span className="text-danger" title="required">
                  {' '}
                  *
                </span>
              ) : null}
            </td>
            <td className="text-nowrap text-body-secondary">{r.type}</td>
            <td>{r.description}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A body schema: a field table, or one table per alternative of a oneOf / anyOf. */
function SchemaView({ doc, schema }: { doc: OpenApiDocument; schema: SchemaObject }) {
  const s = resolveRef(doc, schema) ?? {};
  const alts = (s.oneOf ?? s.anyOf) as SchemaObject[] | undefined;
  if (Array.isArray(alts)) {
    return (
      <div>
        {typeof s.description === 'string' ? <p className="small mb-1">{s.description}</p> : null}
        <p className="small mb-1">One of:</p>
        <ul className="list-unstyled ms-3 mb-1">
          {alts.map((alt, i) => {
            const a = resolveRef(doc, alt) ?? {};
            const title = typeof a.title === 'string' ? a.title : typeLabel(doc, alt);
            return (
              <li key={i}>
                <strong className="small">{title}</strong>
                {typeof a.description === 'string' ? <span className="small text-body-secondary"> — {a.description}</span> : null}
                <FieldTable rows={fieldRows(doc, alt)} />
              </li>
            );
          })}
        </ul>
      </div>
    );
  }
  if (s.type === 'string') return <p className="small mb-1">The raw body, as text{typeof s.description === 'string' ? `: ${s.description}` : ''}.</p>;
  return (
    <>
      {typeof s.description === 'string' ? <p className="small mb-1">{s.description}</p> : null}
      <FieldTable rows={fieldRows(doc, s)} />
    </>
  );
}

function Parameters({ doc, params }: { doc: OpenApiDocument; params: ParameterObject[] }) {
  return (
    <>
      <h4 className="h6 mt-2">Parameters</h4>
      <table className="table table-sm small mb-2">
        <tbody>
          {params.map((p) => (
            <tr key={`${p.in}:${p.name}`}>
              <td className="text-nowrap">
                <code>{p.name}</code>
                {p.required ? (
                  <span className="text-danger" title="required">
                    {' '}
                    *
                  </span>
                ) : null}
              </td>
              <td className="text-nowrap text-body-secondary">
                {p.in} · {typeLabel(doc, p.schema)}
              </td>
              <td>{p.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function Operation({ doc, method, path, op }: { doc: OpenApiDocument; method: string; path: string; op: OperationObject }) {
  const statuses = Object.keys(op.responses).filter((s) => s !== 'default');
  const isPublic = Array.isArray(op.security) && (op.security.length === 0 || op.security.some((r) => Object.keys(r).length === 0));
  return (
    <details className="border rounded mb-2 api-op" id={op.operationId}>
      <summary className="px-2 py-1">
        <span className={`badge ${METHOD_CLASS[method] ?? 'text-bg-secondary'} me-2`}>{method.toUpperCase()}</span>
        <code className="me-2">{path}</code>
        <span>{op.summary}</span>
        {op['x-labdeck-admin'] ? <span className="badge text-bg-warning ms-1">admin</span> : null}
        {isPublic ? <span className="badge text-bg-light border ms-1">public</span> : null}
        <span className="ms-2">
          {statuses.map((s) => (
            <span key={s} className={`badge ${statusClass(s)} ms-1`}>
              {s}
            </span>
          ))}
        </span>
      </summary>
      <div className="px-2 pb-2">
        {op.description ? <p className="small mb-1">{op.description}</p> : null}
        {op.parameters?.length ? <Parameters doc={doc} params={op.parameters} /> : null}
        {op.requestBody ? (
          <>
            <h4 className="h6 mt-2">Request body{op.requestBody.required ? '' : ' (optional)'}</h4>
            {Object.entries(op.requestBody.content).map(([type, media]) => (
              <div key={type}>
                <div className="small text-body-secondary">
                  <code>{type}</code>
                </div>
                <SchemaView doc={doc} schema={media.schema} />
              </div>
            ))}
          </>
        ) : null}
        <h4 className="h6 mt-2">Responses</h4>
        <table className="table table-sm small mb-0">
          <tbody>
            {Object.entries(op.responses).map(([status, r]) => (
              <tr key={status}>
                <td className="text-nowrap">
                  <span className={`badge ${statusClass(status)}`}>{status}</span>
                </td>
                <td>
                  {r.description}
                  {r.headers ? <span className="text-body-secondary"> · header {Object.keys(r.headers).join(', ')}</span> : null}
                </td>
                <td className="text-nowrap text-body-secondary">
                  {Object.entries(r.content ?? {}).map(([type, media]) => {
                    const name = typeof media.schema.$ref === 'string' ? media.schema.$ref.split('/').pop() : null;
                    return (
                      <div key={type}>
                        <code>{type}</code>
                        {name ? ` ${name}` : null}
                      </div>
                    );
                  })}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

export function ApiPage({ ctx, doc, live }: { ctx: ViewCtx; doc: OpenApiDocument; live: boolean }): ReactNode {
  const u = ctx.url;
  const ops = Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((m) => ({ path, method: m, op: item[m]! })));
  const tags = doc.tags.map((t) => t.name).filter((t) => ops.some((o) => o.op.tags.includes(t)));
  return (
    <Layout ctx={ctx} title="HTTP API">
      <h1 className="h3">HTTP API</h1>
      <div className="col-lg-9">
        <p>
          Every route of labdeck, with what it takes and the statuses it answers. Paths are shown under <code>/app</code>; each is also served at <code>/</code>. Pages and JSON come from the same
          routes: send <code>Accept: application/json</code> or add <code>?format=json</code> for JSON. Scripts authenticate with <code>Authorization: Bearer &lt;token&gt;</code> (make one on your{' '}
          <a href={u('/account')}>account page</a>). JSON errors are <code>{'{"error":{"code","message","details"?}}'}</code>.
        </p>
        <p>
          The machine-readable document: <a href={u('/openapi.json')}>openapi.json</a> (OpenAPI {doc.openapi}, version {doc.info.version}). Feed it to a client generator, or download a ready client
          for the deck: <a href={u('/instruments/proxy?lang=python')}>Python</a>, <a href={u('/instruments/proxy?lang=typescript')}>TypeScript</a>.
        </p>
        {live ? null : (
          <Alert kind="info">
            <a href={u(`/auth/login?next=${encodeURIComponent(u('/api'))}`)}>Log in</a> to see the call bodies of each instrument of this lab's deck.
          </Alert>
        )}
      </div>
      <nav className="mb-3 small" aria-label="Sections">
        {tags.map((t) => (
          <a key={t} className="me-3" href={`#tag-${slug(t)}`}>
            {t}
          </a>
        ))}
      </nav>
      {tags.map((t) => (
        <section key={t} id={`tag-${slug(t)}`} className="mb-4">
          <h2 className="h5">{t}</h2>
          {doc.tags.find((x) => x.name === t)?.description ? <p className="small text-body-secondary">{doc.tags.find((x) => x.name === t)!.description}</p> : null}
          {ops
            .filter((o) => o.op.tags.includes(t))
            .map((o) => (
              <Operation key={`${o.method} ${o.path}`} doc={doc} method={o.method} path={o.path} op={o.op} />
            ))}
        </section>
      ))}
    </Layout>
  );
}
