/**
 * The safety page: the lab's safety file and its problems, the limits per instrument, trays drawn as grids,
 * rules in words, the states with their values (a form settles one nothing has set), and for admins the file
 * itself to edit.
 */
import type { SafetyStatus } from '../../core/safety/index.js';
import { trayGrid } from '../../core/safety/format.js';
import type { ClauseDef, OperandDef } from '../../core/safety/format.js';
import { Alert, ErrorList, Layout, type ViewCtx } from './layout.js';

const show = (v: unknown) => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));

function operand(o: OperandDef): string {
  if ('arg' in o) return `argument ${o.arg}`;
  if ('read' in o) return `the reading ${o.read}${o.path ? `.${o.path}` : ''}`;
  if ('last' in o) return o.last.includes('.') ? `the last ${o.last} sent` : `the last action on ${o.last}`;
  if ('state' in o) return `the state ${o.state}`;
  return show(o.value);
}
const clause = (c: ClauseDef) => `${operand(c.left)} ${c.op} ${operand(c.right)}`;

export function SafetyPage({
  ctx,
  status,
  error,
  notice,
  text,
}: {
  ctx: ViewCtx;
  status: SafetyStatus;
  error?: { message: string; details?: { field?: string; message: string }[] };
  notice?: string;
  text?: string;
}) {
  const { config } = status;
  const admin = ctx.user?.role === 'admin';
  const byInstrument = new Map<string, typeof config.limits>();
  for (const l of config.limits) byInstrument.set(l.target, [...(byInstrument.get(l.target) ?? []), l]);
  return (
    <Layout ctx={ctx} title="Safety">
      <h1 className="h3">Safety guard</h1>
      <p className="text-body-secondary">
        What this lab allows its instruments to do, checked immediately before every call reaches a driver. The file: <code>{status.source}</code>
        {status.file === null ? ' (none yet: only the choices drivers declare are enforced)' : ''}.{config.enabled ? '' : ' The file turns the guard off (enabled: false).'}
      </p>
      {notice ? <Alert kind="success">{notice}</Alert> : null}
      <ErrorList error={error} />
      {status.error ? (
        <Alert kind="danger">
          <strong>{status.error}</strong>
          <ul className="mb-0 mt-1">
            {status.problems.map((p, i) => (
              <li key={i}>
                <code>{p.path}</code> {p.message}
              </li>
            ))}
          </ul>
        </Alert>
      ) : null}

      <h2 className="h5 mt-4">Limits</h2>
      {byInstrument.size === 0 ? <p className="text-body-secondary">No limits.</p> : null}
      {[...byInstrument].map(([target, limits]) => (
        <section key={target} aria-label={`Limits of ${target}`}>
          <h3 className="h6">{target}</h3>
          <table className="table table-sm w-auto">
            <thead>
              <tr>
                <th scope="col">Method</th>
                <th scope="col">Field</th>
                <th scope="col">Allowed</th>
              </tr>
            </thead>
            <tbody>
              {limits.map((l, i) => (
                <tr key={i}>
                  <td>
                    <code>{l.method}</code>
                  </td>
                  <td>
                    <code>{l.param}</code>
                  </td>
                  <td>
                    {[
                      l.min !== undefined || l.max !== undefined ? `${l.min ?? '−∞'} to ${l.max ?? '∞'}` : null,
                      l.allowed ? `one of ${l.allowed.join(', ')}` : null,
                      l.tray ? `a free position on tray ${l.tray}` : null,
                      l.note ?? null,
                    ]
                      .filter(Boolean)
                      .join('; ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}

      <h2 className="h5 mt-4">Trays</h2>
      {Object.keys(config.trays).length === 0 ? <p className="text-body-secondary">No trays.</p> : null}
      {Object.entries(config.trays).map(([name, tray]) => {
        const blocked = new Set(tray.blocked.map(String));
        return (
          <section key={name} aria-label={`Tray ${name}`}>
            <h3 className="h6">
              {tray.label ?? name}{' '}
              <span className="text-body-secondary">
                ({tray.rows} × {tray.columns})
              </span>
            </h3>
            <table className="table table-bordered table-sm w-auto safety-tray">
              <tbody>
                {trayGrid(tray).map((row, r) => (
                  <tr key={r}>
                    {row.map((p) => (
                      <td key={p} className={blocked.has(p) ? 'table-danger' : undefined} title={blocked.has(p) ? 'blocked' : undefined}>
                        {blocked.has(p) ? <s>{p}</s> : p}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        );
      })}

      <h2 className="h5 mt-4">Rules</h2>
      {config.rules.length === 0 ? <p className="text-body-secondary">No rules.</p> : null}
      <ul>
        {config.rules.map((r, i) => (
          <li key={i} className={r.enabled ? undefined : 'text-body-secondary'}>
            <strong>{r.name || r.id || `Rule ${i + 1}`}</strong>
            {r.enabled ? '' : ' (off)'}: when <code>{r.when.target}</code> is called with <code>{r.when.method}</code>
            {r.if.length ? `, if ${r.if.map(clause).join(' and ')}` : ''}, require {r.require.map(clause).join(' and ')}.{r.message ? ` “${r.message}”` : ''}
          </li>
        ))}
      </ul>

      <h2 className="h5 mt-4">States</h2>
      {Object.keys(config.states).length === 0 ? <p className="text-body-secondary">No states.</p> : null}
      <table className="table table-sm w-auto">
        <tbody>
          {Object.entries(config.states).map(([name, spec]) => {
            const now = status.states[name];
            return (
              <tr key={name}>
                <th scope="row">{spec.label ?? name}</th>
                <td>
                  {spec.read ? (
                    <span className="text-body-secondary">read from the instrument when needed</span>
                  ) : now && now.unknown === undefined ? (
                    <code>{String(now.value)}</code>
                  ) : (
                    <span className="text-danger">unknown{now?.unknown ? `: ${now.unknown}` : ''}</span>
                  )}
                </td>
                <td>
                  {spec.read ? null : (
                    <form method="post" action={ctx.url(`/safety/states/${encodeURIComponent(name)}`)} className="d-flex gap-2">
                      <select name="value" className="form-select form-select-sm" aria-label={`Value of ${name}`} required>
                        {(spec.values.length ? spec.values : [String(now?.value ?? '')]).map((v) => (
                          <option key={v} value={v}>
                            {v}
                          </option>
                        ))}
                      </select>
                      <button className="btn btn-sm btn-outline-primary" type="submit">
                        Set
                      </button>
                    </form>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>

      <h2 className="h5 mt-4">The file</h2>
      {admin ? (
        <form method="post" action={ctx.url('/safety/file')}>
          <label className="form-label" htmlFor="safety-text">
            Safety file (JSON, format ivoryos-safety/1)
          </label>
          <textarea
            id="safety-text"
            name="text"
            className="form-control font-monospace"
            rows={16}
            defaultValue={text ?? JSON.stringify(status.file ?? { format: 'ivoryos-safety/1', enabled: true, trays: {}, limits: [], rules: [], states: {} }, null, 2)}
          />
          <button className="btn btn-primary mt-2" type="submit">
            Save
          </button>
        </form>
      ) : (
        <pre className="border rounded p-2">
          <code>{JSON.stringify(status.file, null, 2)}</code>
        </pre>
      )}
    </Layout>
  );
}
