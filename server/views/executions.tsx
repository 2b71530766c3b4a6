import {
  availableControls,
  CONTROL_HELP,
  controlLabel,
  CONTROLS,
  liveFlags,
  queueStatusLabel,
  runOutcome,
  SITUATION,
  situationOf,
  statusAlerts,
  taskNotice,
  type Control,
} from '../../core/runner/controls.js';
import type { RunnerStatus } from '../../core/runner/index.js';
import { CampaignPanel } from './campaign/panel.js';
import { UploadForm } from './files.js';
import { Alert, ErrorList, Layout, WorkflowPicker, type ViewCtx } from './layout.js';
import { LiveTiming } from './timing.js';
import type { Timing } from '../../core/notify/timing-view.js';

type Task = { id: number; name: string; status: string; workflow: string | null; iterations: number | null; run_id: number | null };
type Wf = { name: string; version: number; definition: unknown };
type Param = { name: string; type: string; default?: unknown; description?: string };
/** A task just queued from this page: its queue status (or its run's outcome) and run, as known now. */
export type StartedTask = { id: number; name: string; status: string; run_id: number | null };

/** The page's control buttons: each one control of the runner, at its route. */
export const CONTROL_ROUTES: Record<Control, string> = {
  pause: '/executions/pause',
  resume: '/executions/resume',
  continue: '/executions/continue',
  retry: '/executions/retry',
  skip: '/executions/skip',
  release: '/executions/release',
  'stop-iteration': '/executions/abort/next-iteration',
  'abort-task': '/executions/abort/next-task',
  'rerun-iteration': '/executions/rerun-iteration',
  'retry-step': '/executions/retry-step',
};
const CONTROL_STYLE: Record<Control, string> = {
  pause: 'warning',
  resume: 'warning',
  continue: 'success',
  retry: 'primary',
  skip: 'warning',
  release: 'secondary',
  'stop-iteration': 'secondary',
  'abort-task': 'danger',
  'rerun-iteration': 'primary',
  'retry-step': 'secondary',
};
const CONFIRM: Partial<Record<Control, string>> = {
  'stop-iteration': 'Finish this iteration, skip the rest, and run cleanup?',
  'abort-task': 'Abort this run after the current step, run cleanup, and hold the queue?',
};

/** The last run that ended, linked to its record. */
export type LastRun = { run_id: number; name: string; status: string; skipped: number };

/** The live panel: filled by the server, then kept current by /static/app.js from the SSE stream. */
function LivePanel({ ctx, status, lastRun, timing }: { ctx: ViewCtx; status: RunnerStatus; lastRun: LastRun | null; timing: Timing | null }) {
  const p = status.progress;
  const pct = p.iterations ? Math.round(((p.iteration - 1 + (p.steps ? p.step / p.steps : 0)) / p.iterations) * 100) : 0;
  const u = ctx.url;
  const where = situationOf(status);
  const on = availableControls(status);
  return (
    <section id="live" data-events={u('/executions/events')} data-base={u('/')} data-status={JSON.stringify(status)} className="mb-4">
      <div className="d-flex flex-wrap align-items-center gap-2 mb-2">
        <h2 className="h5 mb-0 me-2">Runner</h2>
        <span id="live-state" data-situation={where} className={`badge text-bg-${SITUATION[where].tone}`}>
          {SITUATION[where].label}
        </span>
        <span id="live-flags" className="small text-body-secondary">
          {liveFlags(status, where)}
        </span>
      </div>
      <div className="d-flex flex-wrap gap-1 mb-2" id="controls">
        {CONTROLS.map((c) => (
          <button
            key={c}
            type="button"
            className={`btn btn-sm btn-outline-${CONTROL_STYLE[c]}`}
            data-control={u(CONTROL_ROUTES[c])}
            data-control-name={c}
            data-confirm={CONFIRM[c]}
            title={CONTROL_HELP[c]}
            disabled={!on[c]}
          >
            {controlLabel(c, status)}
          </button>
        ))}
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
      <div id="live-last" className={`small mb-1${lastRun ? '' : ' d-none'}`}>
        {lastRun ? (
          <>
            Last run: <a href={u(`/executions/records/${lastRun.run_id}`)}>run {lastRun.run_id}</a> ({lastRun.name}) {runOutcome(lastRun.status, lastRun.skipped)}.
          </>
        ) : null}
      </div>
      <div className="progress mb-1" role="progressbar" aria-label="Iterations" aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct}>
        {/* width set by the page script (an inline style attribute would break the CSP) */}
        <div id="live-bar" className="progress-bar" data-pct={pct} />
      </div>
      <div id="live-progress" className="small text-body-secondary mb-2">
        {status.current_task ? `iteration ${p.iteration} of ${p.iterations} · ${p.phase ?? ''} step ${p.step} of ${p.steps}` : ''}
      </div>
      {/* each run's ETA and each running step's expected end, an overdue one marked (the watchdog) */}
      <LiveTiming timing={timing} statusUrl={u('/executions/status')} />
      <div id="live-alert">
        {statusAlerts(status).map((a) => (
          <Alert key={a.text} kind={a.tone}>
            {a.text}
          </Alert>
        ))}
      </div>
      {/* a waiting input step's form: drawn from the live status by the page script (server/client/input-form.ts) */}
      <div id="live-input" />
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

/** The note about the task just queued: kept current by the page script until it ends, then its record. */
function TaskNote({ ctx, task, status }: { ctx: ViewCtx; task: StartedTask; status: RunnerStatus }) {
  const n = taskNotice(task, status);
  return (
    <div id="run-notice" className={`alert alert-${n.tone}`} role="status" data-task={task.id} data-name={task.name} data-status={task.status} data-run={task.run_id ?? ''}>
      <span className="run-notice-text">{n.text}</span>
      {n.run_id !== null ? (
        <>
          {' '}
          <a className="run-notice-link" href={ctx.url(`/executions/records/${n.run_id}`)}>
            Its record: run {n.run_id}
          </a>
        </>
      ) : null}
    </div>
  );
}

function QueueTable({ ctx, queue, status }: { ctx: ViewCtx; queue: Task[]; status: RunnerStatus }) {
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
              <td className="queue-status">{queueStatusLabel(t, status)}</td>
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
  /** The task the form just queued: the page follows it until it ends, then links its record. */
  started?: StartedTask;
  /** The last run that ended. */
  lastRun?: LastRun | null;
  rows?: Record<string, unknown>[];
  uploaded?: { name: string; original: string; rows: number; workflow: string | null };
  uploadLimit?: number;
  /** A campaign has been queued: the campaign panel fetches latest_plot at once. */
  campaign?: boolean;
  /** The watchdog's timing (as `GET /executions/status` carries it). */
  timing?: Timing | null;
}) {
  const { ctx, workflows } = props;
  const u = ctx.url;
  const current = workflows.find((w) => w.name === props.selected) ?? workflows[0];
  const params = ((current?.definition as { parameters?: Param[] } | undefined)?.parameters ?? []) as Param[];
  return (
    <Layout ctx={ctx} title="Run a workflow">
      <h1 className="h3">Run a workflow</h1>
      {props.started ? <TaskNote ctx={ctx} task={props.started} status={props.status} /> : null}
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
                  {/* Queue first: the form's default button (Enter in a field queues, as before) */}
                  <button className="btn btn-primary" type="submit">
                    Queue the run
                  </button>
                  <button className="btn btn-outline-secondary" type="submit" formAction={u('/executions/preflight')} id="preflight-run">
                    Check first
                  </button>
                </div>
              </form>
              <h2 className="h6 mt-4">…or a config CSV</h2>
              <p className="small text-body-secondary mb-2">
                A header of parameter names and one row per iteration: <a href={u(`/files/execution-configs?workflow=${encodeURIComponent(current?.name ?? '')}`)}>download an empty one</a>.
              </p>
              {props.uploaded ? (
                <form method="post" action={u('/executions/config')} className="alert alert-info d-flex flex-wrap align-items-center gap-2 py-2" id="run-file">
                  <input type="hidden" name="workflow" value={props.uploaded.workflow ?? current?.name} />
                  <input type="hidden" name="config_file" value={props.uploaded.name} />
                  <span>
                    Uploaded <strong>{props.uploaded.original}</strong>: {props.uploaded.rows} row(s). <a href={u(`/files/preview/${props.uploaded.name}`)}>Preview</a>
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
          <LivePanel ctx={ctx} status={props.status} lastRun={props.lastRun ?? null} timing={props.timing ?? null} />
          <CampaignPanel ctx={ctx} active={props.campaign} workflow={current?.name} />
          <QueueTable ctx={ctx} queue={props.queue} status={props.status} />
        </div>
      </div>
    </Layout>
  );
}

type LabError = { message: string; details?: { field?: string; message: string }[] };
