/** The execution page's campaign panel: the live plot of the latest campaign, drawn by server/client/campaign/. */
import type { ViewCtx } from '../layout.js';

/**
 * The execution page's campaign panel: hidden until `latest_plot` answers 200 (the page script fetches it,
 * draws it with uPlot, and fetches again on each iteration of the campaign's run). `active`: a campaign
 * has been queued (latest_plot would answer 200), so the page fetches it at once; otherwise the page waits
 * for a campaign task to start (SSE status) before it asks.
 */
export function CampaignPanel({ ctx, active, workflow }: { ctx: ViewCtx; active?: boolean; workflow?: string }) {
  const u = ctx.url;
  const setUp = u(`/executions/campaign${workflow ? `?workflow=${encodeURIComponent(workflow)}` : ''}`);
  return (
    <>
      <link rel="stylesheet" href={u('/static/vendor/uPlot.min.css')} />
      <script src={u('/static/vendor/uPlot.iife.min.js')} defer />
      <p className="small mb-3" id="campaign-start-link">
        Let an optimizer choose the parameters: <a href={setUp}>start an optimization campaign{workflow ? ` on ${workflow}` : ''}</a>.
      </p>
      <section
        id="campaign"
        className="mb-4"
        hidden
        data-active={active ? 'true' : 'false'}
        data-plot={u('/executions/latest_plot')}
        data-events={u('/executions/events')}
        data-new={u('/executions/campaign')}
      >
        <div className="d-flex flex-wrap align-items-center gap-2 mb-1">
          <h2 className="h5 mb-0">Campaign</h2>
          <span id="campaign-name" className="fw-semibold" />
          <span id="campaign-status" className="badge text-bg-secondary" />
          <span className="ms-auto small d-flex gap-2">
            <a href={u('/executions/latest_plot?format=svg')} id="campaign-svg" target="_blank" rel="noopener">
              SVG
            </a>
            <a href={u('/executions/latest_plot?format=json')} target="_blank" rel="noopener">
              JSON
            </a>
            <a href={u('/executions/campaign')}>New campaign</a>
          </span>
        </div>
        <p id="campaign-summary" className="small text-body-secondary mb-1" />
        <p id="campaign-stopped" className="small alert alert-info py-1 px-2 mb-1" role="status" hidden />
        <div id="campaign-chart" className="campaign-chart" />
        <div id="campaign-model" className="mt-2" hidden>
          <h3 className="h6 mb-1" id="campaign-model-title">
            Model
          </h3>
          <div id="campaign-model-chart" className="campaign-chart" />
        </div>
        <p id="campaign-note" className="small text-body-secondary mb-0" />
      </section>
    </>
  );
}
