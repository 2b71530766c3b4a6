import type { RunnerStatus } from '../../core/runner/index.js';
import { CampaignPanel } from './campaign.js';
import { UploadForm } from './files.js';
import { Alert, ErrorList, Layout, WorkflowPicker, type ViewCtx } from './layout.js';

type Task = { id: number; name: string; status: string; workflow: string | null; iterations: number | null; run_id: number | null };
type Wf = { name: string; version: number; definition: unknown };
type Param = { name: string; type: string; default?: unknown; description?: string };

const STATE_BADGE: Record<string, string> = { idle: 'secondary', running: 'primary', paused: 'warning', failed: 'danger', stopping: 'dark' };

/** The live panel: filled by the server, then kept current by /static/app.js from the SSE stream. */
function LivePanel({ ctx, status }: { ctx: ViewCtx; status: RunnerStatus }) {
  const p = status.progress;
  const pct = p.iterations ? Math.round(((p.iteration - 1 + (p.steps ? p.step / p.steps : 0)) / p.iterations) * 100) : 0;
  const u = ctx.url;
  return (
    <section id="live" data-events={u('/executions/events')} data-base={u('/')} className="mb-4">
      <div className="d-flex flex-wrap align-items-center gap-2 mb-2">
        <h2 className="h5 mb-0 me-2">Runner</h2>
        <span id="live-state" className={`badge text-bg-${STATE_BADGE[status.state] ?? 'secondary'}`}>
          {status.state}
        </span>
        <span id="live-flags" className="small text-body-secondary">
          {[status.paused ? 'pause set' : '', status.queue_held ? 'queue held' : ''].filter(Boolean).join(' · ')}
        </span>
        <div className="ms-auto d-flex flex-wrap gap-1" id="controls">
          <button type="button" className="btn btn-sm btn-outline-warning" data-control={u('/executions/pause-resume')}>
            Pause / resume
          </button>
          <button type="button" className="btn btn-sm btn-outline-primary" data-control={u('/executions/retry')}>
            Retry step
          </button>
          <button type="button" className="btn btn-sm btn-outline-secondary" data-control={u('/executions/abort/next-iteration')} data-confirm="Finish this iteration, skip the rest, and run cleanup?">
            Stop after iteration
          </button>
          <button type="button" className="btn btn-sm btn-outline-danger" data-control={u('/executions/abort/next-task')} data-confirm="Abort this run after the current step, run cleanup, and hold the queue?">
            Abort task
          </button>
        </div>
      </div>
      <div id="live-task" className="small mb-1">
        {status.current_task ? (
          <>
            <strong>{status.current_task.name}</strong> · task {status.current_task.id}
            {status.current_task.run_id ? (
              <>
                {' '}
                · <a href={u(`/executions/records/${status.current_task.run_id}`)}>run {status.current_task.run_id}</a>
              </>
            ) : null}
          </>
        ) : (
          'No task running.'
        )}
      </div>
      <div className="progress mb-1" role="progressbar" aria-label="Iterations" aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct}>
        {/* width set by the page script (an inline style attribute would break the CSP) */}
        <div id="live-bar" className="progress-bar" data-pct={pct} />
      </div>
      <div id="live-progress" className="small text-body-secondary mb-2">
        {status.current_task ? `iteration ${p.iteration} of ${p.iterations} · ${p.phase ?? ''} step ${p.step} of ${p.steps}` : ''}
      </div>
      <div id="live-alert">
        {status.failed_step ? (
          <Alert kind="danger">
            Step <code>{status.failed_step.path}</code> failed: {status.failed_step.error}. Retry it, skip it (pause/resume), or abort.
          </Alert>
        ) : null}
        {status.waiting ? <Alert kind="warning">{status.waiting.message} (pause/resume to continue)</Alert> : null}
        {status.interrupted ? (
          <Alert kind="warning">
            Task {status.interrupted.task_id} was interrupted when labdeck stopped. Retry re-runs its in-doubt step, pause/resume goes on after it, abort ends
            it.
          </Alert>
        ) : null}
      </div>
      <div className="row g-3">
        <div className="col-lg-6">
          <h3 className="h6">Steps</h3>
          <ol id="live-steps" className="small list-unstyled mb-0 live-list" />
        </div>
        <div className="col-lg-6">
          <h3 className="h6">Log</h3>
          <ol id="live-log" className="small list-unstyled font-monospace mb-0 live-list" />
        </div>
      </div>
    </section>
  );
}

function QueueTable({ ctx, queue }: { ctx: ViewCtx; queue: Task[] }) {
  const u = ctx.url;
  return (
    <section id="queue" data-queue={u('/executions/queue')} data-base={u('/')}>
      <h2 className="h5">Queue</h2>
      <table className="table table-sm align-middle">
        <thead>
          <tr>
            <th>#</th>
            <th>Name</th>
            <th>Workflow</th>
            <th>Iterations</th>
            <th>Status</th>
            <th />
          </tr>
        </thead>
        <tbody id="queue-rows">
          {queue.map((t) => (
            <tr key={t.id} data-task={t.id}>
              <td>{t.id}</td>
              <td>{t.name}</td>
              <td>{t.workflow}</td>
              <td>{t.iterations}</td>
              <td>{t.status}</td>
              <td className="text-end text-nowrap" />
            </tr>
          ))}
        </tbody>
      </table>
      <p id="queue-empty" className={`small text-body-secondary${queue.length ? ' d-none' : ''}`}>
        The queue is empty.
      </p>
    </section>
  );
}

export function ExecutionPage(props: {
  ctx: ViewCtx;
  workflows: Wf[];
  selected?: string;
  status: RunnerStatus;
  queue: Task[];
  error?: LabError;
  notice?: string;
  rows?: Record<string, unknown>[];
  uploaded?: { name: string; original: string; rows: number; workflow: string | null };
  uploadLimit?: number;
  /** A campaign has been queued: the campaign panel fetches latest_plot at once. */
  campaign?: boolean;
}) {
  const { ctx, workflows } = props;
  const u = ctx.url;
  const current = workflows.find((w) => w.name === props.selected) ?? workflows[0];
  const params = ((current?.definition as { parameters?: Param[] } | undefined)?.parameters ?? []) as Param[];
  return (
    <Layout ctx={ctx} title="Run a workflow">
      <h1 className="h3">Run a workflow</h1>
      {props.notice ? <Alert kind="success">{props.notice}</Alert> : null}
      <ErrorList error={props.error} />
      <div className="row g-4">
        <div className="col-xl-5">
          {workflows.length === 0 ? (
            <p>
              No workflow yet: <a href={u('/workflows')}>make one</a>.
            </p>
          ) : (
            <>
              <WorkflowPicker action={u('/executions/config')} id="pick-workflow" workflows={workflows} current={current?.name} />
              <form method="post" action={u('/executions/config')} id="run-form">
                <input type="hidden" name="workflow" value={current?.name} />
                <div className="mb-2">
                  <label className="form-label" htmlFor="run-name">
                    Name (optional)
                  </label>
                  <input className="form-control form-control-sm" id="run-name" name="name" placeholder={`${current?.name} × n`} />
                </div>
                <h2 className="h6 mt-3">Iterations</h2>
                {params.length ? (
                  <>
                    <p className="small text-body-secondary">One row per iteration. Empty cells take the default.</p>
                    <div className="table-responsive">
                      <table className="table table-sm" id="config-rows" data-params={JSON.stringify(params.map((p) => p.name))}>
                        <thead>
                          <tr>
                            {params.map((p) => (
                              <th key={p.name}>
                                <code>{p.name}</code> <span className="small text-body-secondary">{p.type}</span>
                              </th>
                            ))}
                          </tr>
                        </thead>
                        <tbody>
                          {Array.from({ length: Math.max(3, props.rows?.length ?? 0) }, (_, i) => i).map((i) => (
                            <tr key={i}>
                              {params.map((p) => (
                                <td key={p.name}>
                                  <input
                                    className="form-control form-control-sm"
                                    name={`rows[${i}][${p.name}]`}
                                    placeholder={p.default === undefined ? '' : String(p.default)}
                                    defaultValue={props.rows?.[i]?.[p.name] === undefined ? undefined : String(props.rows[i][p.name])}
                                    aria-label={`row ${i + 1} ${p.name}`}
                                  />
                                </td>
                              ))}
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </div>
                    <button type="button" className="btn btn-sm btn-link px-0" id="add-row">
                      + add a row
                    </button>
                  </>
                ) : (
                  <p className="small text-body-secondary">This workflow has no parameters: give a number of iterations.</p>
                )}
                <div className="d-flex align-items-end gap-2 mt-2">
                  <div>
                    <label className="form-label small mb-0" htmlFor="repeat">
                      …or repeat with defaults
                    </label>
                    <input className="form-control form-control-sm" type="number" min={1} id="repeat" name="repeat" placeholder="n" />
                  </div>
                  <button className="btn btn-primary" type="submit">
                    Queue the run
                  </button>
                </div>
              </form>
              <h2 className="h6 mt-4">…or a config CSV</h2>
              <p className="small text-body-secondary mb-2">
                A header of parameter names and one row per iteration:{' '}
                <a href={u(`/files/execution-configs?workflow=${encodeURIComponent(current?.name ?? '')}`)}>download an empty one</a>.
              </p>
              {props.uploaded ? (
                <form method="post" action={u('/executions/config')} className="alert alert-info d-flex flex-wrap align-items-center gap-2 py-2" id="run-file">
                  <input type="hidden" name="workflow" value={props.uploaded.workflow ?? current?.name} />
                  <input type="hidden" name="config_file" value={props.uploaded.name} />
                  <span>
                    Uploaded <strong>{props.uploaded.original}</strong>: {props.uploaded.rows} row(s).{' '}
                    <a href={u(`/files/preview/${props.uploaded.name}`)}>Preview</a>
                  </span>
                  <button className="btn btn-sm btn-primary ms-auto" type="submit">
                    Queue these rows
                  </button>
                </form>
              ) : null}
              <UploadForm ctx={ctx} kind="config" workflow={current?.name} limitBytes={props.uploadLimit} />
            </>
          )}
        </div>
        <div className="col-xl-7">
          <LivePanel ctx={ctx} status={props.status} />
          <CampaignPanel ctx={ctx} active={props.campaign} />
          <QueueTable ctx={ctx} queue={props.queue} />
        </div>
      </div>
    </Layout>
  );
}

type LabError = { message: string; details?: { field?: string; message: string }[] };
