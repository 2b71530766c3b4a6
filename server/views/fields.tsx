/** Form fields generated from a JSON Schema object: one typed input per property. */
import type { JSONSchema } from '../../core/contracts/index.js';
import type { ReactNode } from 'react';

type Prop = {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  title?: string;
  /** ivoryOS's markers (Unit, Wells), kept by the Python host: a unit beside the field, the labware a wells value can name. */
  'x-unit'?: string;
  'x-wells'?: string[];
  'x-wells-of'?: { name: string; rows: number; columns: number; first: string; last: string }[];
};

/** The unit beside a field (`Unit("mL")`), as an input group's suffix. */
function withUnit(input: ReactNode, unit: string | undefined): ReactNode {
  if (!unit) return input;
  return (
    <div className="input-group input-group-sm">
      {input}
      <span className="input-group-text field-unit">{unit}</span>
    </div>
  );
}

/** What a wells field may name: each labware of the worktable with its grid, and how to write it. */
function wellsHint(of: NonNullable<Prop['x-wells-of']>): ReactNode {
  const example = of[0] ? `${of[0].name}[${of[0].first}:${of[0].last}]` : 'plate[A1:H1]';
  return (
    <div className="form-text mt-0 wells-hint">
      Wells with their labware, e.g. <code>{example}</code>
      {of.length ? ': ' : ''}
      {of.map((l, i) => (
        <span key={l.name}>
          {i ? ', ' : ''}
          <code>{l.name}</code> ({l.rows} × {l.columns}, {l.first} to {l.last})
        </span>
      ))}
    </div>
  );
}

const props = (schema: JSONSchema) => Object.entries((schema.properties ?? {}) as Record<string, Prop>);

export function SchemaFields({ schema, idPrefix, inferred = [] }: { schema: JSONSchema; idPrefix: string; inferred?: string[] }) {
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const entries = props(schema);
  if (entries.length === 0) return <p className="small text-body-secondary mb-2">No parameters.</p>;
  return (
    <>
      {entries.map(([name, p]) => {
        const id = `${idPrefix}-${name}`;
        const isReq = required.has(name) && p.default === undefined;
        const type = Array.isArray(p.type) ? p.type.find((t) => t !== 'null') : p.type;
        // z.int() carries the safe-integer range as bounds: not worth showing
        const real = (n: number | undefined) => (n !== undefined && Math.abs(n) < Number.MAX_SAFE_INTEGER ? n : undefined);
        const [min, max, xmin, xmax] = [real(p.minimum), real(p.maximum), real(p.exclusiveMinimum), real(p.exclusiveMaximum)];
        const bounds = [min !== undefined ? `≥ ${min}` : xmin !== undefined ? `> ${xmin}` : '', max !== undefined ? `≤ ${max}` : xmax !== undefined ? `< ${xmax}` : ''].filter(Boolean);
        const label = (
          <label className="form-label mb-1" htmlFor={id}>
            <code>{name}</code>
            {isReq ? (
              <span className="text-danger" title="required">
                {' '}
                *
              </span>
            ) : null}
            {type ? <span className="text-body-secondary small"> {type}</span> : null}
            {bounds.length ? <span className="text-body-secondary small"> ({bounds.join(', ')})</span> : null}
            {inferred.includes(name) ? <span className="badge text-bg-info inferred ms-1">inferred</span> : null}
          </label>
        );
        const description = p.description ? <div className="form-text mt-0">{p.description}</div> : null;
        const help = p['x-wells'] ? (
          <>
            {description}
            {wellsHint(p['x-wells-of'] ?? [])}
          </>
        ) : (
          description
        );
        let input;
        if (p['x-wells']) {
          const of = p['x-wells-of']?.[0];
          input = (
            <input
              className="form-control form-control-sm font-monospace wells-field"
              type="text"
              id={id}
              name={name}
              placeholder={of ? `${of.name}[${of.first}:${of.last}]` : 'plate[A1:H1]'}
              list={p['x-wells-of']?.length ? `${id}-labware` : undefined}
              defaultValue={typeof p.default === 'string' ? p.default : undefined}
              required={isReq}
            />
          );
        } else if (p.enum) {
          input = (
            <select className="form-select form-select-sm" id={id} name={name} defaultValue={p.default === undefined ? undefined : String(p.default)} required={isReq}>
              {!isReq && p.default === undefined ? <option value="">—</option> : null}
              {p.enum.map((v) => (
                <option key={String(v)} value={String(v)}>
                  {String(v)}
                </option>
              ))}
            </select>
          );
        } else if (type === 'boolean') {
          return (
            <div className="form-check mb-2" key={name}>
              <input type="hidden" name={name} value="false" />
              <input className="form-check-input" type="checkbox" id={id} name={name} value="true" defaultChecked={p.default === true} />
              <label className="form-check-label" htmlFor={id}>
                <code>{name}</code>
                {inferred.includes(name) ? <span className="badge text-bg-info inferred ms-1">inferred</span> : null}
              </label>
              {help}
            </div>
          );
        } else if (type === 'number' || type === 'integer') {
          input = (
            <input
              className="form-control form-control-sm"
              type="number"
              id={id}
              name={name}
              step={type === 'integer' ? 1 : 'any'}
              min={min ?? xmin}
              max={max ?? xmax}
              defaultValue={typeof p.default === 'number' ? p.default : undefined}
              required={isReq}
            />
          );
        } else if (type === 'string') {
          input = <input className="form-control form-control-sm" type="text" id={id} name={name} defaultValue={typeof p.default === 'string' ? p.default : undefined} required={isReq} />;
        } else {
          input = (
            <textarea
              className="form-control form-control-sm font-monospace"
              id={id}
              name={name}
              rows={2}
              placeholder='JSON, e.g. 1, "text", [1, 2] or {"a": 1}'
              defaultValue={p.default === undefined ? undefined : JSON.stringify(p.default)}
              required={isReq}
            />
          );
        }
        return (
          <div className="mb-2" key={name}>
            {label}
            {withUnit(input, p['x-unit'])}
            {p['x-wells-of']?.length ? (
              <datalist id={`${id}-labware`}>
                {p['x-wells-of'].map((l) => (
                  <option key={l.name} value={`${l.name}[${l.first}:${l.last}]`} />
                ))}
              </datalist>
            ) : null}
            {help}
          </div>
        );
      })}
    </>
  );
}
