/**
 * One workflow record: summary, parameters, phases with their steps, the log, a plot of the outputs per
 * iteration drawn by /static/app.js from the data route, downloads. Iterations and step indexes are stored
 * from 0; the page shows iterations from 1, as the live page does.
 */
import { Fragment } from 'react';
import type { RecordDetail, RecordPhase } from '../../core/records/index.js';
import { Alert, Layout, type ViewCtx } from './layout.js';
import { TimingList } from './record-timing.js';
import { Json, RunStatusBadge, StatusBadge, Time, formatDuration, recordUrl } from './record-parts.js';

/** Phases shown on the page: the first and last ones of a long run (the CSV and JSON have all). */
const PHASES_HEAD = 250;
const PHASES_TAIL = 50;
/** Parameter rows shown on the page. */
const PARAM_ROWS = 1000;

const phaseTitle = (p: RecordPhase) => (p.iteration === null ? p.phase : `${p.phase} · iteration ${p.iteration + 1}`);

function PhaseRows({ ctx, phase, units }: { ctx: ViewCtx; phase: RecordPhase; units?: Record<string, string> }) {
  const hasOutputs = phase.outputs && typeof phase.outputs === 'object' && Object.keys(phase.outputs).length > 0;
  return (
    <tbody className="phase" data-phase={phase.phase} data-iteration={phase.iteration ?? ''}>
      <tr className={`phase-head${phase.status === 'error' ? ' table-danger' : phase.status === 'skipped' ? ' table-warning' : ' table-light'}`}>
        <th colSpan={7} scope="rowgroup">
          <span className="me-2">{phaseTitle(phase)}</span>
          <StatusBadge status={phase.status} />
          <span className="small fw-normal text-body-secondary ms-2">{formatDuration(phase.duration_ms)}</span>
          {phase.phase === 'main' && phase.params && typeof phase.params === 'object' && Object.keys(phase.params).length ? (
            <span className="small fw-normal ms-2 phase-params">
              parameters <Json value={phase.params} />
            </span>
          ) : null}
          {hasOutputs ? (
            <span className="small fw-normal ms-2 phase-outputs">
              outputs <Json value={phase.outputs} />
            </span>
          ) : null}
        </th>
      </tr>
      {phase.steps.length === 0 && phase.steps_complete ? (
        <tr>
          <td colSpan={7} className="small text-body-secondary">
            no instrument call recorded
          </td>
        </tr>
      ) : null}
      {phase.steps.map((s) => (
        <Fragment key={s.task_id}>
          <tr className={s.status === 'error' ? 'table-danger step-error' : s.status === 'in-doubt' || s.status === 'running' || s.status === 'skipped' ? 'table-warning' : undefined}>
            <td className="text-body-secondary">{s.index ?? ''}</td>
            <td>{s.path ? <code className="small">{s.path}</code> : <span className="text-body-secondary">—</span>}</td>
            <td>
              <a href={ctx.url(`/instruments/task/${s.task_id}`)} className="text-decoration-none" title={`Call record ${s.task_id}`}>
                <code>
                  {s.instrument}.{s.method}
                </code>
              </a>
            </td>
            <td>
              <Json value={s.args} />
            </td>
            <td>
              {s.status === 'ok' ? <Json value={s.output} /> : null}
              {s.status === 'ok' && units && Object.hasOwn(units, `${s.instrument}.${s.method}`) ? (
                <span className="small text-body-secondary step-unit"> {units[`${s.instrument}.${s.method}`]}</span>
              ) : null}
            </td>
            <td>
              <StatusBadge status={s.status} />
            </td>
            <td className="text-end text-nowrap">{formatDuration(s.duration_ms)}</td>
          </tr>
          {s.error ? (
            <tr className="table-danger step-error-message">
              <td />
              <td colSpan={6} className="small">
                <strong>Error:</strong>
                <pre className="traceback small mb-0">{s.error}</pre>
              </td>
            </tr>
          ) : null}
        </Fragment>
      ))}
      {!phase.steps_complete ? (
        <tr>
          <td colSpan={7} className="small text-body-secondary">
            {phase.steps.length ? 'more steps' : 'steps'} not shown here: download the steps CSV
          </td>
        </tr>
      ) : null}
    </tbody>
  );
}

/** How a campaign was set up: what it searched, for what, with which optimizer, from which warm start. */
function CampaignSetup({ campaign: c }: { campaign: NonNullable<RecordDetail['campaign']> }) {
  const range = (s: (typeof c.space)[number]) =>
    s.type === 'fixed'
      ? `fixed at ${JSON.stringify(s.value)}`
      : s.type === 'choice'
        ? (s.choices ?? []).join(' | ')
        : s.bounds
          ? `${s.bounds[0]} … ${s.bounds[1]}${s.type === 'int' ? ' (whole numbers)' : ''}`
          : '';
  const fixed = Object.entries(c.fixed);
  return (
    <section className="mb-4" id="record-campaign">
      <h2 className="h5">Campaign</h2>
      <dl className="row small mb-2">
        <dt className="col-sm-2">Optimizer</dt>
        <dd className="col-sm-10">
          <code>{c.optimizer}</code>, seed {c.seed}, {c.budget} experiments{c.batch_size > 1 ? `, ${c.batch_size} suggested at a time` : ''}
          {Object.keys(c.config).length ? (
            <>
              {' '}
              · options <Json value={c.config} />
            </>
          ) : null}
        </dd>
        <dt className="col-sm-2">Objectives</dt>
        <dd className="col-sm-10">{c.objectives.map((o) => `${o.name} (${o.minimize ? 'minimise' : 'maximise'})`).join(', ')}</dd>
        <dt className="col-sm-2">Warm start</dt>
        <dd className="col-sm-10">
          {c.warm_start.rows
            ? `${c.warm_start.rows} earlier observation${c.warm_start.rows === 1 ? '' : 's'} from ${c.warm_start.file ?? 'a history file'}${c.warm_start.best !== null ? `, best ${c.objectives[0]?.name} ${Number(c.warm_start.best.toPrecision(6))}` : ''}`
            : 'none: the optimizer started from nothing'}
        </dd>
        {fixed.length ? (
          <>
            <dt className="col-sm-2">Fixed</dt>
            <dd className="col-sm-10">{fixed.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ')}</dd>
          </>
        ) : null}
      </dl>
      <table className="table table-sm w-auto small" id="record-campaign-space">
        <thead>
          <tr>
            <th scope="col">Searched</th>
            <th scope="col">Kind</th>
            <th scope="col">Range</th>
          </tr>
        </thead>
        <tbody>
          {c.space.map((s) => (
            <tr key={s.name}>
              <td>
                <code>{s.name}</code>
              </td>
              <td>{s.type}</td>
              <td>{range(s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="small text-body-secondary">Each iteration's suggested parameters and its outputs are below; the plot shows the best so far.</p>
    </section>
  );
}

export function ParametersTable({ rows, repeat }: { rows: unknown; repeat: number | null }) {
  const list = Array.isArray(rows) ? (rows as unknown[]) : [];
  if (list.length === 0) return <p className="small text-body-secondary">This workflow takes no parameter rows.</p>;
  const records = list.map((r) => (r && typeof r === 'object' && !Array.isArray(r) ? (r as Record<string, unknown>) : {}));
  const columns = [...new Set(records.flatMap((r) => Object.keys(r)))];
  const count = (repeat ?? list.length).toLocaleString('en');
  if (columns.length === 0) return <p className="small text-body-secondary">{count} iterations, without parameters.</p>;
  if (repeat !== null) {
    return (
      <p className="small" id="record-parameters">
        {count} iterations of the defaults: {columns.map((c) => `${c} = ${JSON.stringify(records[0][c])}`).join(', ')}
      </p>
    );
  }
  const shown = records.slice(0, PARAM_ROWS);
  // a parameter with the same value in every row: said once, above the table
  const same = (c: string) => records.every((r) => Object.hasOwn(r, c) && JSON.stringify(r[c]) === JSON.stringify(records[0][c]));
  const fixed = records.length > 1 ? columns.filter(same) : [];
  return (
    <>
      {fixed.length ? (
        <p className="small" id="record-fixed">
          The same in every row: {fixed.map((c) => `${c} = ${JSON.stringify(records[0][c])}`).join(', ')}
        </p>
      ) : null}
      <div className="table-responsive">
        <table className="table table-sm w-auto" id="record-parameters">
          <thead>
            <tr>
              <th scope="col">Iteration</th>
              {columns.map((c) => (
                <th scope="col" key={c}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((r, i) => (
              <tr key={i}>
                <td>{i + 1}</td>
                {columns.map((c) => (
                  <td key={c}>{typeof r[c] === 'string' ? r[c] : <Json value={r[c]} />}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.length > shown.length ? (
        <p className="small text-body-secondary">
          The first {shown.length.toLocaleString('en')} of {list.length.toLocaleString('en')} rows.
        </p>
      ) : null}
    </>
  );
}

export function RecordPage(props: { ctx: ViewCtx; record: RecordDetail; canDelete: boolean; /** `instrument.method` → its result's unit */ units?: Record<string, string> }) {
  const { ctx, record: r, units } = props;
  const u = ctx.url;
  const phases = r.phases;
  const cut = phases.length > PHASES_HEAD + PHASES_TAIL;
  const head = cut ? phases.slice(0, PHASES_HEAD) : phases;
  const tail = cut ? phases.slice(phases.length - PHASES_TAIL) : [];
  const errors = phases.reduce((n, p) => n + p.steps.filter((s) => s.status === 'error').length, 0);
  return (
    <Layout ctx={ctx} title={`Record ${r.id}`}>
      <link rel="stylesheet" href={u('/static/vendor/uPlot.min.css')} />
      <script src={u('/static/vendor/uPlot.iife.min.js')} defer />
      <nav aria-label="breadcrumb" className="small">
        <a href={u('/executions/records')}>Records</a> / {r.id}
      </nav>
      <div className="d-flex flex-wrap align-items-center gap-2 mb-3">
        <h1 className="h3 mb-0 me-2">
          {r.name} <RunStatusBadge status={r.status} skipped={r.skipped_steps} />
        </h1>
        <div className="ms-auto d-flex flex-wrap gap-1" id="record-actions">
          <a className="btn btn-sm btn-outline-secondary" href={recordUrl(ctx, r.id, '/steps_data_csv')} download>
            Steps CSV
          </a>
          <a className="btn btn-sm btn-outline-secondary" href={u(`/files/execution-data/run-${r.id}.csv`)} download>
            Data CSV
          </a>
          {r.logs.length ? (
            <a className="btn btn-sm btn-outline-secondary" href={recordUrl(ctx, r.id, '/logs')} download>
              Log
            </a>
          ) : null}
          <a className="btn btn-sm btn-outline-secondary" href={u(`/executions/data/${r.id}`)}>
            Plot data (JSON)
          </a>
          {props.canDelete ? (
            <form
              className="d-inline m-0"
              id="record-delete"
              hx-delete={recordUrl(ctx, r.id)}
              hx-confirm={`Delete record ${r.id} (“${r.name}”) with its steps and log? This cannot be undone.`}
              hx-target="#record-delete-result"
              hx-swap="innerHTML"
            >
              <button className="btn btn-sm btn-outline-danger" type="submit">
                Delete
              </button>
            </form>
          ) : null}
        </div>
      </div>
      <div id="record-delete-result" aria-live="polite" />
      {r.error ? (
        <Alert kind="danger">
          <strong>Run {r.status}:</strong>
          <pre className="traceback mb-0">{r.error}</pre>
        </Alert>
      ) : null}
      {errors > 0 ? (
        <Alert kind="warning">
          {errors} {errors === 1 ? 'step' : 'steps'} failed: highlighted in red below.
        </Alert>
      ) : null}
      {r.skipped_steps > 0 ? (
        <Alert kind="warning">
          {r.skipped_steps} failed {r.skipped_steps === 1 ? 'step was' : 'steps were'} skipped: {r.skipped_steps === 1 ? 'its iteration is' : 'their iterations are'} marked skipped below, left out of
          the plot and marked in the data CSV (status column).
        </Alert>
      ) : null}

      <dl className="row small mb-4" id="record-summary">
        <dt className="col-sm-2">Workflow</dt>
        <dd className="col-sm-10">
          <a href={u(`/workflows/${encodeURIComponent(r.workflow)}`)}>{r.workflow}</a>
          {r.workflow_version !== null ? ` v${r.workflow_version}` : ''} (the snapshot the run used is in the JSON)
        </dd>
        <dt className="col-sm-2">Status</dt>
        <dd className="col-sm-10">
          <RunStatusBadge status={r.status} skipped={r.skipped_steps} />
        </dd>
        <dt className="col-sm-2">Run by</dt>
        <dd className="col-sm-10">{r.user ?? (r.user_id === null ? 'labdeck (headless)' : `user ${r.user_id}`)}</dd>
        <dt className="col-sm-2">Started</dt>
        <dd className="col-sm-10">
          <Time iso={r.started_at} />
        </dd>
        <dt className="col-sm-2">Ended</dt>
        <dd className="col-sm-10">
          <Time iso={r.ended_at} />
        </dd>
        <dt className="col-sm-2">Duration</dt>
        <dd className="col-sm-10">{formatDuration(r.duration_ms)}</dd>
        <dt className="col-sm-2">Iterations</dt>
        <dd className="col-sm-10">{r.iterations ?? '—'}</dd>
        {r.task_id !== null ? (
          <>
            <dt className="col-sm-2">Queue task</dt>
            <dd className="col-sm-10">{r.task_id}</dd>
          </>
        ) : null}
      </dl>

      <section id="record-plot" data-url={u(`/executions/data/${r.id}`)} className="mb-4">
        <h2 className="h5">Outputs per iteration</h2>
        <div className="record-charts d-flex flex-wrap gap-3" />
        <p className="small text-body-secondary record-plot-note">The plot needs JavaScript; its data is at the “Plot data” link.</p>
      </section>

      {r.campaign ? (
        <CampaignSetup campaign={r.campaign} />
      ) : (
        <section className="mb-4">
          <h2 className="h5">Parameters</h2>
          <ParametersTable rows={r.parameters} repeat={r.repeat} />
        </section>
      )}

      <section className="mb-4">
        <h2 className="h5">Phases and steps</h2>
        {r.steps_truncated ? (
          <Alert kind="info">
            The first {r.steps_shown.toLocaleString('en')} steps are shown: download the <a href={recordUrl(ctx, r.id, '/steps_data_csv')}>steps CSV</a> for all of them.
          </Alert>
        ) : null}
        {phases.length ? (
          <p className="small text-body-secondary" id="record-rounding">
            Numbers are shown rounded to 6 significant digits: hover over one for its full value (the JSON and the CSVs keep every digit).
          </p>
        ) : null}
        {phases.length === 0 ? (
          <p className="small text-body-secondary">No phase has started.</p>
        ) : (
          <div className="table-responsive">
            <table className="table table-sm align-middle" id="record-steps">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Path</th>
                  <th scope="col">Call</th>
                  <th scope="col">Args</th>
                  <th scope="col">Output</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="text-end">
                    Duration
                  </th>
                </tr>
              </thead>
              {head.map((p, i) => (
                <PhaseRows key={`h${i}`} ctx={ctx} phase={p} units={units} />
              ))}
              {cut ? (
                <tbody>
                  <tr>
                    <td colSpan={7} className="text-center small text-body-secondary">
                      {(phases.length - head.length - tail.length).toLocaleString('en')} more phases are not shown here: the steps CSV and the JSON have all of them.
                    </td>
                  </tr>
                </tbody>
              ) : null}
              {tail.map((p, i) => (
                <PhaseRows key={`t${i}`} ctx={ctx} phase={p} units={units} />
              ))}
            </table>
          </div>
        )}
      </section>

      <TimingList phases={[...head, ...tail]} />

      <section className="mb-4">
        <h2 className="h5">Log</h2>
        {r.logs.length ? (
          <ol className="list-unstyled font-monospace small mb-0" id="record-log">
            {r.logs.map((l, i) => (
              <li key={i} className={l.level === 'error' ? 'text-danger' : l.level === 'warn' ? 'text-warning-emphasis' : undefined}>
                <Time iso={l.at} /> {l.level.toUpperCase().padEnd(5)} {l.message}
              </li>
            ))}
          </ol>
        ) : (
          <p className="small text-body-secondary">No log line.</p>
        )}
      </section>
    </Layout>
  );
}
