/**
 * The resources page: the stock (with a top-up form per row), the calls in doubt to settle, adding a
 * resource, CSV in and out, and the consumption rules; and the deck versions page with what changed and the
 * workflows the current deck breaks.
 */
import type { ConsumptionRule } from '../../core/resources/rules.js';
import type { ErrorDetail } from '../../core/errors.js';
import type { PreflightResult } from '../../core/resources/preflight.js';
import { Alert, ErrorList, Layout, LocalTime, type ViewCtx } from './layout.js';

export interface ResourceView {
  name: string;
  kind: string;
  quantity: number;
  unit: string;
  rows: number | null;
  columns: number | null;
  location: string | null;
  identity: string | null;
  in_doubt: number;
  updated_at: string;
}
export interface MoveView {
  id: number;
  resource: string;
  kind: string;
  status: string;
  delta: number | null;
  to: string | null;
  step_id: number | null;
  run_id: number | null;
  at: string;
}

export function ResourcesPage(props: {
  ctx: ViewCtx;
  resources: ResourceView[];
  inDoubt: MoveView[];
  rules: ConsumptionRule[];
  error?: { message: string; details?: ErrorDetail[] };
  notice?: string;
}) {
  const { ctx } = props;
  const u = ctx.url;
  return (
    <Layout ctx={ctx} title="Resources">
      <h1 className="h3">Resources</h1>
      {props.notice ? <Alert kind="success">{props.notice}</Alert> : null}
      <ErrorList error={props.error} />
      {props.inDoubt.length ? (
        <section aria-label="In doubt" className="mb-4">
          <h2 className="h5">Calls in doubt</h2>
          <p className="text-body-secondary">These calls may or may not have reached their instrument: say whether they used what they would have.</p>
          <table className="table table-sm w-auto">
            <thead>
              <tr>
                <th>Resource</th>
                <th>Change</th>
                <th>Call</th>
                <th>When</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {props.inDoubt.map((m) => (
                <tr key={m.id}>
                  <td>{m.resource}</td>
                  <td>{m.to !== null ? `move to ${m.to}` : String(m.delta)}</td>
                  <td>{m.step_id === null ? '' : <a href={u(`/instruments/task/${m.step_id}`)}>task {m.step_id}</a>}</td>
                  <td>
                    <LocalTime iso={m.at} />
                  </td>
                  <td className="d-flex gap-2">
                    <form method="post" action={u(`/resources/moves/${m.id}/settle`)}>
                      <input type="hidden" name="used" value="true" />
                      <button className="btn btn-sm btn-outline-danger">It used it</button>
                    </form>
                    <form method="post" action={u(`/resources/moves/${m.id}/settle`)}>
                      <input type="hidden" name="used" value="false" />
                      <button className="btn btn-sm btn-outline-secondary">It did not</button>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
      <table className="table table-sm align-middle" aria-label="Stock">
        <thead>
          <tr>
            <th>Name</th>
            <th>Kind</th>
            <th>Stock</th>
            <th>Where</th>
            <th>Top up</th>
          </tr>
        </thead>
        <tbody>
          {props.resources.length === 0 ? (
            <tr>
              <td colSpan={5} className="text-body-secondary">
                No resources yet: add one below, or import a CSV.
              </td>
            </tr>
          ) : null}
          {props.resources.map((r) => (
            <tr key={r.name}>
              <td>
                <a href={u(`/resources/${encodeURIComponent(r.name)}?format=json`)}>{r.name}</a>
                {r.identity && r.identity !== r.name ? <span className="text-body-secondary"> ({r.identity})</span> : null}
              </td>
              <td>
                {r.kind}
                {r.rows && r.columns ? ` ${r.rows} × ${r.columns}` : ''}
              </td>
              <td>
                {r.quantity} {r.unit}
                {r.in_doubt ? <span className="badge text-bg-warning ms-2">{r.in_doubt} in doubt</span> : null}
              </td>
              <td>{r.location ?? ''}</td>
              <td>
                <form method="post" action={u(`/resources/${encodeURIComponent(r.name)}/quantity`)} className="d-flex gap-1">
                  <input name="add" type="number" step="any" className="form-control form-control-sm input-short" aria-label={`Add to ${r.name}`} required />
                  <button className="btn btn-sm btn-outline-primary">Add</button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="row g-4">
        <section className="col-md-6" aria-label="Add a resource">
          <h2 className="h5">Add a resource</h2>
          <form method="post" action={u('/resources')} className="row g-2">
            <div className="col-6">
              <label className="form-label" htmlFor="res-name">
                Name
              </label>
              <input id="res-name" name="name" className="form-control" required />
            </div>
            <div className="col-6">
              <label className="form-label" htmlFor="res-kind">
                Kind
              </label>
              <select id="res-kind" name="kind" className="form-select">
                <option value="consumable">consumable (a count: tips)</option>
                <option value="liquid">liquid (a volume)</option>
                <option value="sample">sample (an identity)</option>
              </select>
            </div>
            <div className="col-4">
              <label className="form-label" htmlFor="res-quantity">
                Quantity
              </label>
              <input id="res-quantity" name="quantity" type="number" step="any" className="form-control" />
            </div>
            <div className="col-4">
              <label className="form-label" htmlFor="res-unit">
                Unit
              </label>
              <input id="res-unit" name="unit" className="form-control" placeholder="each, ml" />
            </div>
            <div className="col-12">
              <button className="btn btn-primary">Add</button>
            </div>
          </form>
          {/* a container has positions, and only a container: its own form, so every field of each form fits */}
          <h2 className="h6 mt-3">Add a container (a rack or plate: rows × columns, positions A1…)</h2>
          <form method="post" action={u('/resources')} className="row g-2">
            <input type="hidden" name="kind" value="container" />
            <div className="col-6">
              <label className="form-label" htmlFor="res-cname">
                Name
              </label>
              <input id="res-cname" name="name" className="form-control" required />
            </div>
            <div className="col-3">
              <label className="form-label" htmlFor="res-rows">
                Rows
              </label>
              <input id="res-rows" name="rows" type="number" min="1" className="form-control" required />
            </div>
            <div className="col-3">
              <label className="form-label" htmlFor="res-columns">
                Columns
              </label>
              <input id="res-columns" name="columns" type="number" min="1" className="form-control" required />
            </div>
            <div className="col-12">
              <button className="btn btn-outline-primary">Add the container</button>
            </div>
          </form>
        </section>
        <section className="col-md-6" aria-label="CSV">
          <h2 className="h5">CSV</h2>
          <p>
            <a href={u('/resources/export')}>Download the stock as CSV</a>
          </p>
          <form method="post" action={u('/resources/import')}>
            <label className="form-label" htmlFor="res-csv">
              Import (columns name, kind, quantity, unit, rows, columns, location, identity)
            </label>
            <textarea id="res-csv" name="csv" rows={4} className="form-control mb-2" required />
            <button className="btn btn-outline-primary">Import</button>
          </form>
        </section>
      </div>
      <section className="mt-4" aria-label="Consumption rules">
        <h2 className="h5">Consumption rules</h2>
        <p className="text-body-secondary">
          Which calls use which resources (PUT <code>/resources/consumption</code>; see the guide). The <a href={u('/deck/versions')}>deck versions</a> page shows what changed on the deck.
        </p>
        <pre>
          <code>{JSON.stringify(props.rules, null, 2)}</code>
        </pre>
      </section>
    </Layout>
  );
}

interface Change {
  instrument: string;
  method?: string;
  change: string;
  argument?: string;
  to?: string;
  from?: string;
}

export function DeckVersionsPage(props: {
  ctx: ViewCtx;
  current: number | null;
  versions: { id: number; host: string; reason: string; at: string; changes: unknown }[];
  broken: { workflow: string; problems: (ErrorDetail & { change?: string; deck_version?: number })[] }[];
  diff?: { from: number | null; to: number; lines: string[] };
}) {
  const { ctx } = props;
  const u = ctx.url;
  return (
    <Layout ctx={ctx} title="Deck versions">
      <h1 className="h3">Deck versions</h1>
      <p>Current version: {props.current ?? 'none'}</p>
      {props.diff ? (
        <section aria-label="Diff">
          <h2 className="h5">{props.diff.from === null ? `What changed in version ${props.diff.to}` : `From version ${props.diff.from} to ${props.diff.to}`}</h2>
          {props.diff.lines.length ? (
            <ul>
              {props.diff.lines.map((l, i) => (
                <li key={i}>{l}</li>
              ))}
            </ul>
          ) : (
            <p className="text-body-secondary">No change to any method.</p>
          )}
          <a href={u('/deck/versions')}>All versions</a>
        </section>
      ) : null}
      {props.broken.length ? (
        <section aria-label="Broken workflows">
          <h2 className="h5">Workflows the current deck breaks</h2>
          <ul>
            {props.broken.map((b) => (
              <li key={b.workflow}>
                <a href={u(`/workflows/${encodeURIComponent(b.workflow)}/builder`)}>{b.workflow}</a>:{' '}
                {b.problems.map((p) => `${p.field ?? ''} ${p.message}${p.change ? ` (version ${p.deck_version}: ${p.change})` : ''}`).join('; ')}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {props.versions.length ? (
        <table className="table table-sm" aria-label="Versions">
          <thead>
            <tr>
              <th>Version</th>
              <th>When</th>
              <th>Host</th>
              <th>What changed</th>
            </tr>
          </thead>
          <tbody>
            {props.versions.map((v) => (
              <tr key={v.id}>
                <td>
                  <a href={u(`/deck/versions/${v.id}`)}>{v.id}</a>
                </td>
                <td>
                  <LocalTime iso={v.at} />
                </td>
                <td>{v.host}</td>
                <td>{((v.changes ?? []) as Change[]).length ? `${((v.changes ?? []) as Change[]).length} change(s)` : v.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Layout>
  );
}

/** The preflight of a run, before Start: problems, what it uses against the stock, how long it should take. */
export function PreflightPage(props: { ctx: ViewCtx; workflow: string; result: PreflightResult; fields: [string, string][] }) {
  const { ctx, result } = props;
  const u = ctx.url;
  const band = (b: { p10: number; p50: number; p90: number } | null) => (b ? `${b.p50} s (${b.p10}–${b.p90})` : '—');
  return (
    <Layout ctx={ctx} title={`Preflight · ${props.workflow}`}>
      <h1 className="h3">Preflight of {props.workflow}</h1>
      {result.ok ? <Alert kind="success">Everything checks out: {result.iterations} iteration(s).</Alert> : <Alert kind="danger">This run would not get through: see the problems below.</Alert>}
      {result.problems.length ? (
        <ul aria-label="Problems">
          {result.problems.map((p, i) => (
            <li key={i}>
              <code>{p.field}</code> {p.message}
            </li>
          ))}
        </ul>
      ) : null}
      <section aria-label="Safety">
        <h2 className="h6">Safety</h2>
        {result.safety === null ? (
          <p className="text-body-secondary">{result.steps.length ? 'No safety guard is installed.' : 'Not checked: the task does not check out.'}</p>
        ) : (
          <p className={result.safety.allowed ? 'text-body-secondary' : 'text-danger'} id="preflight-safety">
            {result.safety.error ??
              (result.safety.allowed
                ? "Every value known before it moves is within the lab's limits."
                : `${result.safety.problems.length} value(s) break the lab's limits (listed with the problems above).`)}{' '}
            {result.safety.note} (<a href={u('/safety')}>the safety file</a>: {result.safety.source})
          </p>
        )}
      </section>
      {result.resources.length ? (
        <table className="table table-sm w-auto" aria-label="Resources needed">
          <thead>
            <tr>
              <th>Resource</th>
              <th>Needed</th>
              <th>Available</th>
            </tr>
          </thead>
          <tbody>
            {result.resources.map((r) => (
              <tr key={r.name} className={r.needed > r.available ? 'table-danger' : undefined}>
                <td>{r.name}</td>
                <td>{r.needed}</td>
                <td>{r.available}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <p>
        Expected duration: {band(result.duration_s)}
        {result.duration_reason ? <span className="text-body-secondary"> ({result.duration_reason})</span> : null}
      </p>
      <table className="table table-sm" aria-label="Steps">
        <thead>
          <tr>
            <th>Step</th>
            <th>Call</th>
            <th>Host</th>
            <th>Times</th>
            <th>Each</th>
          </tr>
        </thead>
        <tbody>
          {result.steps.map((s) => (
            <tr key={s.path}>
              <td>
                <code>{s.path}</code>
              </td>
              <td>{s.kind === 'call' ? `${s.instrument}.${s.method}` : s.kind}</td>
              <td>{s.host ?? ''}</td>
              <td>{s.times}</td>
              <td>{s.duration_s ? band(s.duration_s) : (s.reason ?? '')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form method="post" action={u('/executions/config')} id="preflight-start">
        {props.fields.map(([k, v]) => (
          <input key={k} type="hidden" name={k} value={v} />
        ))}
        <button className="btn btn-primary" type="submit" disabled={!result.ok}>
          Start
        </button>{' '}
        <a href={u(`/executions/config?workflow=${encodeURIComponent(props.workflow)}`)}>Back</a>
      </form>
    </Layout>
  );
}
