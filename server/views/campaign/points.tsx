/**
 * Campaigns people carry out (issue 31): the list, and a campaign's page: its points table (who suggested and
 * who measured each), its progress plot (every point entered, drawn by who chose it, and the best so far), a
 * form per pending point (its results, or discard it with a reason), more suggestions, a person's own point,
 * and the pending table as CSV down and back up.
 */
import type { CampaignView, PointView } from '../../../core/campaign/manual.js';
import type { CampaignPlot } from '../../../core/campaign/progress.js';
import { ErrorList, Layout, type ViewCtx } from '../layout.js';
import { campaignPlotSvg } from '../plot-svg.js';

type ListItem = { campaign_id: number; name: string; execution: string; workflow: string; optimizer: string; task_id: number | null; created_at: string };

export function CampaignsPage({ ctx, campaigns }: { ctx: ViewCtx; campaigns: ListItem[] }) {
  const u = ctx.url;
  return (
    <Layout ctx={ctx} title="Campaigns">
      <h1 className="h4">Campaigns</h1>
      <p className="small text-body-secondary">
        Campaigns people carry out (set one up on the <a href={u('/executions/campaign')}>campaign page</a> with “carried out by people”), and robot campaigns that take points measured by hand.
      </p>
      {campaigns.length === 0 ? (
        <p id="campaigns-empty">No campaign yet.</p>
      ) : (
        <ul className="list-group" id="campaigns-list">
          {campaigns.map((c) => (
            <li className="list-group-item" key={c.campaign_id}>
              <a href={u(`/executions/campaigns/${c.campaign_id}`)}>{c.name}</a> <span className="badge text-bg-secondary">{c.execution}</span>{' '}
              <span className="small text-body-secondary">
                {c.workflow} · {c.optimizer}
              </span>
            </li>
          ))}
        </ul>
      )}
    </Layout>
  );
}

const value = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'number' ? String(Number(v.toPrecision(6))) : String(v));

export function CampaignPointsPage({
  ctx,
  campaign: c,
  plot,
  error,
}: {
  ctx: ViewCtx;
  campaign: CampaignView;
  plot: CampaignPlot;
  error?: { message: string; details?: { field?: string; message: string }[] };
}) {
  const u = ctx.url;
  const base = `/executions/campaigns/${c.campaign_id}`;
  const names = c.parameters.map((p) => p.name);
  const rows: PointView[] = [...c.iterations, ...c.points];
  return (
    <Layout ctx={ctx} title={c.name}>
      <h1 className="h4">{c.name}</h1>
      <p className="small text-body-secondary" id="campaign-summary">
        {c.execution === 'manual' ? 'Carried out by people' : 'Run by its workflow; points measured by hand count too'} · {c.workflow} · {c.optimizer} · {c.counts.pending} pending, {c.counts.measured}{' '}
        measured, {c.counts.discarded} discarded
      </p>
      <ErrorList error={error} />
      <figure className="campaign-plot mb-3" id="campaign-plot" data-points={plot.points.length}>
        {/* the SVG is written by plotSvg, every text in it escaped; no script, no style attribute */}
        <div dangerouslySetInnerHTML={{ __html: campaignPlotSvg(plot) }} />
        <figcaption className="small text-body-secondary">
          Best so far of {plot.objectives[0]?.name ?? 'the objective'}; a dot is a point the optimizer suggested, a diamond one a person chose. <a href={u(`${base}/plot?format=svg`)}>SVG</a> ·{' '}
          <a href={u(`${base}/plot`)}>JSON</a>
        </figcaption>
      </figure>
      <div className="table-responsive">
        <table className="table table-sm align-middle" id="campaign-points">
          <thead>
            <tr>
              <th>n</th>
              {names.map((n) => (
                <th key={n}>{n}</th>
              ))}
              <th>state</th>
              <th>results</th>
              <th>suggested by</th>
              <th>measured by</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p, i) => (
              <tr key={`${p.measured_by?.startsWith('run:') ? 'run' : 'pt'}-${p.n}-${i}`} data-n={p.n} data-state={p.state}>
                <td>{p.n}</td>
                {names.map((n) => (
                  <td key={n}>{value(p.parameters[n])}</td>
                ))}
                <td>{p.state}</td>
                <td>
                  {p.state === 'pending' && !p.measured_by?.startsWith('run:') ? (
                    <>
                      <form method="post" action={u(`${base}/points/${p.n}`)} className="d-flex flex-wrap gap-1 point-results" data-n={p.n}>
                        {c.measures.map((m) => (
                          <input key={m} className="form-control form-control-sm" type="number" step="any" name={`results.${m}`} placeholder={m} aria-label={`${m} of point ${p.n}`} required />
                        ))}
                        <button className="btn btn-sm btn-primary" type="submit">
                          Save
                        </button>
                      </form>
                      <form method="post" action={u(`${base}/points/${p.n}`)} className="d-flex gap-1 mt-1 point-discard" data-n={p.n}>
                        <input type="hidden" name="discarded" value="true" />
                        <input className="form-control form-control-sm" name="reason" placeholder="why discard it" aria-label={`reason to discard point ${p.n}`} required />
                        <button className="btn btn-sm btn-outline-secondary" type="submit">
                          Discard
                        </button>
                      </form>
                    </>
                  ) : p.state === 'discarded' ? (
                    <span className="text-body-secondary">{p.reason}</span>
                  ) : (
                    Object.entries(p.results ?? {})
                      .map(([k, v]) => `${k} = ${value(v)}`)
                      .join(', ')
                  )}
                </td>
                <td>{p.suggested_by}</td>
                <td>{p.measured_by ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <div className="row g-4">
        <div className="col-md-4">
          <h2 className="h6">More suggestions</h2>
          <form method="post" action={u(`${base}/suggest`)} className="d-flex gap-2" id="campaign-suggest">
            <input className="form-control form-control-sm" type="number" name="n" min={1} max={20} defaultValue={c.batch_size} aria-label="how many" required />
            <button className="btn btn-sm btn-outline-primary" type="submit">
              Suggest
            </button>
          </form>
        </div>
        <div className="col-md-4">
          <h2 className="h6">A point of your own</h2>
          <form method="post" action={u(`${base}/points`)} id="campaign-add-point">
            {c.parameters
              .filter((p) => p.type !== 'fixed')
              .map((p) => (
                <label key={p.name} className="d-block small">
                  {p.name}{' '}
                  {p.type === 'choice' ? (
                    <select className="form-select form-select-sm" name={`parameters.${p.name}`}>
                      {p.choices!.map((ch) => (
                        <option key={ch}>{ch}</option>
                      ))}
                    </select>
                  ) : (
                    <input
                      className="form-control form-control-sm"
                      type="number"
                      step={p.type === 'int' ? 1 : (p.step ?? 'any')}
                      min={p.bounds?.[0]}
                      max={p.bounds?.[1]}
                      name={`parameters.${p.name}`}
                      required
                    />
                  )}
                </label>
              ))}
            <button className="btn btn-sm btn-outline-primary mt-1" type="submit">
              Add the point
            </button>
          </form>
        </div>
        <div className="col-md-4">
          <h2 className="h6">As a spreadsheet</h2>
          <p className="small">
            <a href={u(`${base}/points.csv?state=pending`)} id="campaign-pending-csv">
              Download the pending points
            </a>{' '}
            · <a href={u(`${base}/points.csv?state=all`)}>all points (who suggested, who measured)</a>
          </p>
          <form method="post" action={u(`${base}/results`)} encType="multipart/form-data" id="campaign-upload">
            <input className="form-control form-control-sm" type="file" name="file" accept=".csv,text/csv" aria-label="the filled-in CSV" required />
            <button className="btn btn-sm btn-outline-primary mt-1" type="submit">
              Upload the results
            </button>
          </form>
        </div>
      </div>
    </Layout>
  );
}
