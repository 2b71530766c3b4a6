import type { RouteInfo } from '../catalogue.js';
import type { InstrumentSchema } from '../../core/contracts/index.js';
import type { RecordSummary } from '../../core/records/index.js';
import { SITUATION, situationOf, type Situation } from '../../core/runner/controls.js';
import type { RunnerStatus } from '../../core/runner/index.js';
import { Alert, Layout, LocalTime, type ViewCtx } from './layout.js';
import { DeckChangedNotice } from './instruments.js';
import { RunStatusBadge } from './records.js';

export interface LabHomeData {
  status: RunnerStatus;
  /** Waiting tasks, in queue order (the first few), each with its state in the run page's words. */
  queue: { id: number; name: string; label: string }[];
  /** How many tasks wait in all. */
  waiting: number;
  recent: RecordSummary[];
  workflows: number;
  instruments: InstrumentSchema[];
  /** The deck changed on disk since labdeck started: a restart loads it. */
  deckChanged?: { message: string; at: Date } | null;
}

/** What the runner is doing, in the run page's words (core/runner/controls.ts), with what it waits for. */
function runnerLine(s: RunnerStatus): { situation: Situation; text: string } {
  const situation = situationOf(s);
  const task = s.current_task?.name ?? 'a task';
  const text: Record<Situation, string> = {
    idle: 'ready for a run',
    held: 'after an abort, no task starts until the queue is released (on the run page)',
    interrupted: 'a run was cut off by a restart: retry or skip its step, or end it, on the run page',
    running: `${task}: iteration ${s.progress.iteration + 1} of ${s.progress.iterations || '?'}`,
    pausing: `${task}: no new step starts after this one`,
    paused: `${task}: resume it on the run page`,
    waiting: s.waiting?.message ?? 'continue on the run page',
    waiting_input: s.input ? `${s.input.prompt} (give ${s.input.save_as} on the run page)` : 'give the value on the run page',
    failed: s.failed_step ? `${s.failed_step.path}: ${s.failed_step.error} (retry it, skip it or abort, on the run page)` : 'on the run page',
    stopping: `${task}: its cleanup runs`,
  };
  return { situation, text: s.store_error ? `the data folder cannot be written: ${s.store_error}` : text[situation] };
}

/**
 * The lab's front page: what the runner is doing (and what it waits for), the queue, the latest runs, the
 * instruments, and what to do next. Every route of the API is on the API page.
 */
export function LabHome({ ctx, data, routes, notice }: { ctx: ViewCtx; data: LabHomeData; routes: readonly RouteInfo[]; notice?: string }) {
  const u = ctx.url;
  const { status } = data;
  const line = runnerLine(status);
  const badge = SITUATION[line.situation];
  const next: { href: string; text: string }[] = [];
  if (data.workflows === 0) next.push({ href: u('/workflows/new'), text: 'Build your first workflow from the instruments below' });
  else if (data.recent.length === 0) next.push({ href: u('/executions/config'), text: 'Run a workflow' });
  else next.push({ href: u('/executions/config'), text: 'Run a workflow' }, { href: u('/workflows/new'), text: 'Build a workflow' });
  if (data.workflows > 0) next.push({ href: u('/executions/campaign'), text: 'Let an optimizer choose the next experiments (campaign)' });
  next.push({ href: u('/help'), text: 'How labdeck works' }, { href: u('/api'), text: 'The HTTP API, every route' });
  return (
    <Layout ctx={ctx} title="Home">
      {notice ? <Alert kind="success">{notice}</Alert> : null}
      <h1 className="h3">Your lab</h1>
      <div className="row g-3 mb-4">
        <section className="col-lg-6" id="home-runner">
          <h2 className="h5">Now</h2>
          <p className="mb-1">
            <span className={`badge text-bg-${badge.tone} me-2`} data-situation={line.situation}>
              {badge.label}
            </span>
            {line.text}
          </p>
          {status.current_task?.run_id ? (
            <p className="small mb-1">
              <a href={u(`/executions/records/${status.current_task.run_id}`)}>The run's record</a> · <a href={u('/executions/config')}>its live page and controls</a>
            </p>
          ) : null}
          <h2 className="h6 mt-3">Queue</h2>
          {data.queue.length ? (
            <ol className="small mb-1" id="home-queue">
              {data.queue.map((t) => (
                <li key={t.id}>
                  {t.name} <span className="text-body-secondary">({t.label})</span>
                </li>
              ))}
            </ol>
          ) : (
            <p className="small text-body-secondary mb-1" id="home-queue">
              Nothing waits.
            </p>
          )}
          {data.waiting > data.queue.length ? (
            <p className="small">
              and {data.waiting - data.queue.length} more: <a href={u('/executions/config')}>the queue</a>
            </p>
          ) : null}
        </section>
        <section className="col-lg-6" id="home-recent">
          <h2 className="h5">Latest runs</h2>
          {data.recent.length ? (
            <table className="table table-sm small">
              <tbody>
                {data.recent.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <a href={u(`/executions/records/${r.id}`)}>{r.name}</a>
                    </td>
                    <td>
                      <RunStatusBadge status={r.status} skipped={r.skipped_steps} />
                    </td>
                    <td className="text-nowrap">
                      <LocalTime iso={r.started_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="small text-body-secondary">No run yet.</p>
          )}
          <p className="small">
            <a href={u('/executions/records')}>Every record</a>
          </p>
        </section>
      </div>
      <section className="mb-4" id="home-next">
        <h2 className="h5">What to do next</h2>
        <ul className="small">
          {next.map((n) => (
            <li key={n.href}>
              <a href={n.href}>{n.text}</a>
            </li>
          ))}
        </ul>
      </section>
      <h2 className="h5">Instruments</h2>
      <DeckChangedNotice change={data.deckChanged} />
      <div className="row g-3 mb-4" id="home-instruments">
        {data.instruments.map((i) => (
          <div className="col-6 col-md-4 col-xl-3" key={i.name}>
            <a className="card h-100 text-decoration-none" href={u(`/instruments/${encodeURIComponent(i.name)}`)}>
              <div className="card-body">
                <h3 className="h6 card-title mb-1">
                  {i.name}
                  {i.host ? <span className="badge text-bg-secondary ms-1 fw-normal instrument-host">on {i.host}</span> : null}
                  {i.offline ? (
                    <span className="badge text-bg-danger ms-1 fw-normal" title={i.offline}>
                      offline
                    </span>
                  ) : null}
                </h3>
                <p className="card-text small text-body-secondary mb-0">
                  {i.description || i.driver} · {i.methods.length} {i.methods.length === 1 ? 'method' : 'methods'}
                </p>
              </div>
            </a>
          </div>
        ))}
      </div>
      <RouteList ctx={ctx} routes={routes} />
    </Layout>
  );
}

/** Every route of the app, by section (the spec's home page lists them; the API page describes each). */
function RouteList({ ctx, routes }: { ctx: ViewCtx; routes: readonly RouteInfo[] }) {
  const sections = [...new Set(routes.map((r) => r.section))];
  return (
    <details className="mb-4" id="home-routes">
      <summary className="h5">Every route of the app</summary>
      <p className="text-body-secondary small">
        Each route is served under <code>/app</code> and at <code>/</code>. Add <code>?format=json</code> or
        <code> Accept: application/json</code> to get JSON.
      </p>
      {sections.map((s) => (
        <section key={s}>
          <h3 className="h6 mt-3">{s}</h3>
          <table className="table table-sm routes">
            <tbody>
              {routes
                .filter((r) => r.section === s)
                .map((r) => (
                  <tr key={r.method + r.path}>
                    <td className="text-nowrap">
                      <span className="badge text-bg-light border">{r.method}</span>
                    </td>
                    <td>{r.method === 'GET' && !r.path.includes('{') ? <a href={ctx.url(r.path)}>{ctx.url(r.path)}</a> : <code>{ctx.url(r.path)}</code>}</td>
                    <td>
                      {r.summary}
                      {r.admin ? <span className="badge text-bg-warning ms-1">admin</span> : null}
                    </td>
                  </tr>
                ))}
            </tbody>
          </table>
        </section>
      ))}
    </details>
  );
}

export function HelpPage({ ctx }: { ctx: ViewCtx }) {
  const u = ctx.url;
  return (
    <Layout ctx={ctx} title="Help">
      <div className="col-lg-8">
        <h1 className="h3">labdeck help</h1>
        <p>
          labdeck turns the instrument drivers your lab already has into this web app and the <code>lab</code> command. Every instrument of the deck gets a page with a form per method, generated from
          the driver's schema.
        </p>
        <h2 className="h5">Calling an instrument</h2>
        <p>
          Open <a href={u('/instruments/')}>Instruments</a>, pick one, fill a method's form and press <em>Run</em>. Each call is recorded with its arguments, output, timing and who made it; the result
          shows the record's number (<code>{u('/instruments/task/ID')}</code>). Inputs are checked before the instrument is touched: a bad value is named and nothing runs. An instrument does one thing
          at a time: calls to it wait their turn, and an instrument a running workflow holds answers "busy" (409).
        </p>
        <p>
          Drag methods to reorder them, and hide the ones you do not use: both are kept for your account. Fields marked <span className="badge text-bg-info">inferred</span> come from plain code
          without a schema: labdeck guessed their type from the default value, or asks for JSON.
        </p>
        <h2 className="h5">From scripts</h2>
        <p>
          Make a token on your <a href={u('/account')}>account page</a>, then send <code>Authorization: Bearer &lt;token&gt;</code> with <code>Accept: application/json</code>:
        </p>
        <pre className="border rounded p-2 small">
          {`curl -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \\
  -d '{"method":"dose","args":{"volume_ml":1.5}}' ${u('/instruments/pump')}`}
        </pre>
        <p>
          Or download a ready-made client for the live deck: <a href={u('/instruments/proxy?lang=python')}>Python</a> (standard library only) or{' '}
          <a href={u('/instruments/proxy?lang=typescript')}>TypeScript</a>.
        </p>
        <h2 className="h5">Workflows</h2>
        <p>
          In <a href={u('/workflows')}>Workflows</a>, make one with the builder: click or drag instrument methods into prep (once), main (once per iteration) and cleanup (once at the end, also after
          an abort). In an argument field, type <code>#name</code> to make it a parameter of the workflow, <code>$name</code> to use a value an earlier step saved (its <em>save as</em>), anything else
          is a fixed value. Outputs are the saved values reported per iteration; <code>run.yield</code> picks a field of a saved object.
        </p>
        <h2 className="h5">Running</h2>
        <p>
          On <a href={u('/executions/config')}>Run</a>, choose a workflow and give one row of parameters per iteration (typed, or an uploaded CSV), or a number of repeats. Runs wait in a queue and run
          one at a time; the instruments a run uses are locked for it. <strong>Pause / resume</strong> holds before the next step (and skips a failed step, continues a pause step, releases a held
          queue). <strong>Retry step</strong> re-runs a failed step. <strong>Stop after iteration</strong> finishes the current iteration, runs cleanup and goes on with the queue.{' '}
          <strong>Abort task</strong> stops after the step in progress, runs cleanup and holds the queue. If labdeck stops during a run, the run is marked interrupted and its last step in doubt: retry
          it, go on after it, or abort.
        </p>
        <p>
          A <a href={u('/executions/campaign')}>campaign</a> lets an optimizer choose the parameters of each next experiment: pick the parameters to search, the outputs to maximise or minimise, and a
          budget. Every run is kept in <a href={u('/executions/records')}>Records</a>, with its steps, log, plots and CSV downloads.
        </p>
        <h2 className="h5">Temporary devices</h2>
        <p>
          Admins can import a driver module or a deck module from a path on the lab PC and connect new devices at run time on <a href={u('/instruments/new/')}>Connect device</a>. They last until the
          server stops.
        </p>
        <h2 className="h5">Errors</h2>
        <p>
          JSON errors look like <code>{'{"error":{"code","message","details"}}'}</code>; <code>details</code> names the offending field. 400 bad input, 401 not logged in, 403 not allowed, 404 unknown,
          409 busy or taken, 413 too large, 429 too many failed logins, 502 the instrument itself failed (the record id is in <code>task_id</code>).
        </p>
      </div>
    </Layout>
  );
}
