import type { InstrumentSchema, MethodSchema } from '../../core/contracts/index.js';
import type { StepRow } from '../../core/store/types.js';
import { SchemaFields } from './fields.js';
import { Breadcrumb, ErrorList, Layout, LocalTime, type ViewCtx } from './layout.js';
import { ValueView } from './value-view.js';
import { sentence } from '../../core/text.js';
import type { LabwareView } from '../../core/operations/index.js';
import { LabwarePanel } from './labware.js';
import { callRecord } from '../../core/records/call-record.js';

type Err = { message: string; details?: { field?: string; message: string }[]; task_id?: number };
export type CallOutcome = { method: string; taskId?: number; output?: unknown; error?: Err; /** the result's unit (ivoryOS's Unit marker) */ unit?: string };

const SAFETY_BADGE: Record<string, string> = { readonly: 'text-bg-success', idempotent: 'text-bg-secondary', hazardous: 'text-bg-danger' };

/** The deck changed on disk since labdeck started (core/deck/watch.ts): a restart loads it. */
export function DeckChangedNotice({ change }: { change: { message: string; at: Date } | null | undefined }) {
  if (!change) return null;
  return (
    <div className="alert alert-warning" role="status" id="deck-changed">
      {change.message} <span className="text-body-secondary small">({change.at.toISOString()})</span>
    </div>
  );
}

export function InstrumentsPage({
  ctx,
  instruments,
  language = 'typescript',
  deckChanged,
}: {
  ctx: ViewCtx;
  instruments: InstrumentSchema[];
  language?: string;
  deckChanged?: { message: string; at: Date } | null;
}) {
  const admin = ctx.user?.role === 'admin';
  const first = instruments[0];
  const pyExample = first
    ? `${first.name}.${first.methods.find((m) => !Object.keys((m.params.properties ?? {}) as object).length)?.name ?? first.methods[0]?.name ?? '__class__'}()`
    : 'print("hello")';
  return (
    <Layout ctx={ctx} title="Instruments">
      <DeckChangedNotice change={deckChanged} />
      <div className="d-flex flex-wrap align-items-center gap-2 mb-3">
        <h1 className="h3 me-auto mb-0">Instruments</h1>
        <a className="btn btn-sm btn-outline-secondary" href={ctx.url('/instruments/proxy?lang=python')}>
          Python client
        </a>
        <a className="btn btn-sm btn-outline-secondary" href={ctx.url('/instruments/proxy?lang=typescript')}>
          TypeScript client
        </a>
        <a className="btn btn-sm btn-primary" href={ctx.url('/instruments/new/')}>
          Connect a device
        </a>
      </div>
      <div className="list-group mb-4">
        {instruments.map((i) => (
          <a className="list-group-item list-group-item-action" key={i.name} href={ctx.url(`/instruments/${encodeURIComponent(i.name)}`)}>
            <div className="d-flex justify-content-between">
              <strong>{i.name}</strong>
              <span className="small text-body-secondary">
                {i.driver}
                {i.source === 'temporary' ? <span className="badge text-bg-warning ms-1">temporary</span> : null}
                {i.host ? (
                  <span className="badge text-bg-secondary ms-1 instrument-host" title="The PC it lives on (a lab agent, or another labdeck on the database)">
                    on {i.host}
                  </span>
                ) : null}
                {i.offline ? (
                  <span className="badge text-bg-danger ms-1" title={i.offline}>
                    offline
                  </span>
                ) : null}
              </span>
            </div>
            <div className="small text-body-secondary">
              {i.description ? `${i.description} · ` : ''}
              {i.methods.map((m) => m.name).join(', ')}
            </div>
          </a>
        ))}
        {instruments.length === 0 ? <p className="text-body-secondary">The deck is empty: connect a device or start labdeck with a deck module.</p> : null}
      </div>
      {admin ? (
        <section>
          <h2 className="h5">Console</h2>
          <p className="small text-body-secondary">
            {language === 'python' ? (
              <>
                Python in the deck&apos;s namespace, like a REPL, e.g. <code>{pyExample}</code>. Every use is written to the audit log.
              </>
            ) : (
              <>
                JavaScript or TypeScript against the live deck, e.g. <code>await deck.balance.weigh()</code>. Every call is recorded; every use is written to the audit log.
              </>
            )}
          </p>
          <form hx-post={ctx.url('/instruments/console/execute')} hx-target="#console-out" hx-swap="innerHTML" method="post" action={ctx.url('/instruments/console/execute')}>
            <textarea className="form-control font-monospace mb-2" name="code" rows={4} defaultValue={language === 'python' ? pyExample : 'await deck.balance.weigh()'} aria-label="Code" />
            <div className="d-flex gap-2">
              <select className="form-select form-select-sm w-auto" name="language" defaultValue={language} aria-label="Language">
                <option value="python">Python</option>
                <option value="typescript">TypeScript</option>
                <option value="javascript">JavaScript</option>
              </select>
              <button className="btn btn-sm btn-dark" type="submit">
                Run
              </button>
            </div>
          </form>
          <div id="console-out" className="result mt-2" aria-live="polite" />
        </section>
      ) : null}
    </Layout>
  );
}

export function ConsoleOutput({ result }: { result: { success: boolean; result: unknown; stdout: string; error: string | null } }) {
  return (
    <div className={`alert ${result.success ? 'alert-secondary' : 'alert-danger'}`}>
      {result.stdout ? <pre className="small">{result.stdout}</pre> : null}
      {result.success ? <pre className="small">{`→ ${JSON.stringify(result.result, null, 2)}`}</pre> : <pre className="small">{result.error}</pre>}
    </div>
  );
}

export function CallResult({ ctx, outcome }: { ctx: ViewCtx; outcome: CallOutcome }) {
  if (outcome.error) {
    const id = outcome.error.task_id;
    return (
      <div data-testid="call-error">
        <ErrorList error={outcome.error} />
        {id ? (
          <p className="small">
            Recorded as <a href={ctx.url(`/instruments/task/${id}`)}>task {id}</a>.
          </p>
        ) : null}
      </div>
    );
  }
  return (
    <div className="alert alert-success py-2" data-testid="call-result">
      <div className="small mb-1">
        <a href={ctx.url(`/instruments/task/${outcome.taskId}`)}>task {outcome.taskId}</a> · {outcome.method}
      </div>
      {structured(outcome.output) ? (
        <>
          <ValueView value={outcome.output} />
          <details className="small mt-1">
            <summary>JSON</summary>
            <pre className="small output">{JSON.stringify(outcome.output, null, 2)}</pre>
          </details>
        </>
      ) : (
        <pre className="small output">{JSON.stringify(outcome.output, null, 2)}</pre>
      )}
      {outcome.unit ? <div className="small output-unit">in {outcome.unit}</div> : null}
    </div>
  );
}

function MethodCard({ ctx, instrument, m, outcome }: { ctx: ViewCtx; instrument: string; m: MethodSchema & { hidden: boolean }; outcome?: CallOutcome }) {
  const action = ctx.url(`/instruments/${encodeURIComponent(instrument)}`);
  const rid = `result-${m.name}`;
  return (
    <div className={`card method-card mb-3${m.hidden ? ' is-hidden' : ''}`} data-method={m.name} id={`method-${m.name}`}>
      <div className="card-header d-flex align-items-center gap-2">
        <span className="drag-handle" title="Drag to reorder" aria-hidden="true">
          ⠿
        </span>
        <strong className="me-auto">{m.name}</strong>
        <span className={`badge ${SAFETY_BADGE[m.safety] ?? 'text-bg-secondary'}`}>{m.safety}</span>
        {m.inferred ? (
          <span className="badge text-bg-info" title="Schema inferred from plain code">
            inferred
          </span>
        ) : null}
        <button
          type="button"
          className="btn btn-sm btn-link p-0 toggle-hidden"
          data-url={ctx.url(`/instruments/${encodeURIComponent(instrument)}/actions/${encodeURIComponent(m.name)}`)}
          data-hidden={m.hidden ? 'true' : 'false'}
        >
          {m.hidden ? 'Show' : 'Hide'}
        </button>
      </div>
      <div className="card-body">
        {m.description ? <p className="small mb-2">{m.description}</p> : null}
        <form method="post" action={action} hx-post={action} hx-target={`#${rid}`} hx-swap="innerHTML" hx-confirm={m.safety === 'hazardous' ? `${m.name} is marked hazardous. Run it?` : undefined}>
          <input type="hidden" name="method" value={m.name} />
          <SchemaFields schema={m.params} idPrefix={`${m.name}`} inferred={m.inferredFields} />
          <button className="btn btn-sm btn-primary mt-1" type="submit">
            {/* the method's name as code: a method called `run` reads "Run run()", not "Run run" */}
            Run <code className="text-reset">{m.name}()</code>
          </button>
        </form>
        <div id={rid} className="result mt-2" aria-live="polite">
          {outcome ? <CallResult ctx={ctx} outcome={outcome} /> : null}
        </div>
      </div>
    </div>
  );
}

export function RecentCalls({ ctx, steps }: { ctx: ViewCtx; steps: StepRow[] }) {
  if (steps.length === 0) return <p className="small text-body-secondary">No calls yet.</p>;
  const short = (v: unknown) => {
    const t = JSON.stringify(v);
    return t && t.length > 60 ? `${t.slice(0, 57)}…` : t;
  };
  return (
    <div className="table-responsive">
      <table className="table table-sm small recent-calls">
        <thead>
          <tr>
            <th>Task</th>
            <th>Call</th>
            <th>Result</th>
            <th>ms</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((s) => (
            <tr key={s.id} className={s.status === 'ok' ? '' : 'table-danger'}>
              <td>
                <a href={ctx.url(`/instruments/task/${s.id}`)}>{s.id}</a>
              </td>
              <td className="text-break">
                <code>{s.method}</code> <span className="text-body-secondary">{short(s.args)}</span>
              </td>
              <td className="text-break">{s.status !== 'ok' ? firstLine(s.error) : structured(s.output) ? <ValueView value={s.output} compact /> : short(s.output)}</td>
              <td>{s.endedAt ? s.endedAt.getTime() - s.startedAt.getTime() : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function InstrumentPage({
  ctx,
  instrument,
  outcome,
  recent,
  labware,
}: {
  ctx: ViewCtx;
  instrument: InstrumentSchema & { methods: (MethodSchema & { hidden: boolean })[] };
  outcome?: CallOutcome;
  recent: StepRow[];
  labware?: LabwareView;
}) {
  const callsUrl = ctx.url(`/instruments/${encodeURIComponent(instrument.name)}/calls`);
  const shown = instrument.methods.filter((m) => !m.hidden);
  const hidden = instrument.methods.filter((m) => m.hidden);
  return (
    <Layout ctx={ctx} title={instrument.name}>
      <Breadcrumb links={[{ href: ctx.url('/instruments/'), label: 'Instruments' }]} current={instrument.name} />
      <h1 className="h3">
        {instrument.name} <span className="h6 text-body-secondary">{instrument.driver}</span>
        {instrument.source === 'temporary' ? <span className="badge text-bg-warning ms-2 fs-6">temporary</span> : null}
        {instrument.host ? (
          <span className="badge text-bg-secondary ms-2 fs-6 instrument-host" title="The PC it lives on (a lab agent, or another labdeck on the database)">
            on {instrument.host}
          </span>
        ) : null}
        {instrument.offline ? <span className="badge text-bg-danger ms-2 fs-6">offline</span> : null}
      </h1>
      {instrument.offline ? (
        <div className="alert alert-danger" role="status">
          Offline: {sentence(instrument.offline)} Calls answer 503 until it is back.
          {instrument.failure ? (
            <form method="post" action={ctx.url(`/instruments/${encodeURIComponent(instrument.name)}/retry`)} className="mt-2 instrument-retry">
              <span className="me-2">
                Stage: <strong className="instrument-failure-stage">{instrument.failure.stage}</strong>
              </span>
              <button type="submit" className="btn btn-sm btn-outline-light">
                Retry
              </button>
            </form>
          ) : null}
        </div>
      ) : null}
      {instrument.description ? <p>{instrument.description}</p> : null}
      {instrument.methods.some((m) => m.inferredFields.length > 0) ? (
        <p className="small text-body-secondary">
          Fields marked <span className="badge text-bg-info">inferred</span> come from plain code: their types were guessed from default values, or they take JSON.
        </p>
      ) : null}
      <div className="row">
        <div className="col-lg-8 col-xl-6" id="methods" data-order-url={ctx.url(`/instruments/${encodeURIComponent(instrument.name)}/actions/order`)}>
          {shown.map((m) => (
            <MethodCard key={m.name} ctx={ctx} instrument={instrument.name} m={m} outcome={outcome?.method === m.name ? outcome : undefined} />
          ))}
        </div>
        <aside className="col-lg-4 col-xl-6">
          {labware?.worktable ? (
            <>
              <h2 className="h6">Labware</h2>
              <div id="labware" hx-get={ctx.url(`/instruments/${encodeURIComponent(instrument.name)}/labware`)} hx-trigger="labdeck-called from:body" hx-swap="innerHTML">
                <LabwarePanel view={labware} />
              </div>
            </>
          ) : null}
          <h2 className="h6">Recent calls</h2>
          <div id="recent-calls" hx-get={callsUrl} hx-trigger="labdeck-called from:body" hx-swap="innerHTML">
            <RecentCalls ctx={ctx} steps={recent} />
          </div>
        </aside>
      </div>
      {hidden.length ? (
        <details className="mt-3">
          <summary>Hidden methods ({hidden.length})</summary>
          <div className="row mt-2">
            <div className="col-lg-8 col-xl-6">
              {hidden.map((m) => (
                <MethodCard key={m.name} ctx={ctx} instrument={instrument.name} m={m} outcome={outcome?.method === m.name ? outcome : undefined} />
              ))}
            </div>
          </div>
        </details>
      ) : null}
      {outcome && !instrument.methods.some((m) => m.name === outcome.method) ? <CallResult ctx={ctx} outcome={outcome} /> : null}
    </Layout>
  );
}

/** A dict or a list: shown as a small table (a list of numbers as a sparkline). */
const structured = (v: unknown) => typeof v === 'object' && v !== null;

/** An error's headline (a Python traceback follows it in the record). */
const firstLine = (text: string | null) => (text ?? '').split('\n', 1)[0];

/** A call record as the API answers it: declared once, with its zod (core/records/call-record.ts). */
export const stepJson = callRecord;

export function TaskPage({ ctx, step }: { ctx: ViewCtx; step: ReturnType<typeof stepJson> }) {
  return (
    <Layout ctx={ctx} title={`Task ${step.task_id}`}>
      <h1 className="h3">
        Task {step.task_id} <span className={`badge ${step.status === 'ok' ? 'text-bg-success' : 'text-bg-danger'}`}>{step.status}</span>
      </h1>
      <dl className="row">
        <dt className="col-sm-2">Call</dt>
        <dd className="col-sm-10">
          <a href={ctx.url(`/instruments/${encodeURIComponent(step.instrument)}`)}>{step.instrument}</a>.{step.method}
        </dd>
        <dt className="col-sm-2">Arguments</dt>
        <dd className="col-sm-10">
          <pre className="small">{JSON.stringify(step.args, null, 2)}</pre>
        </dd>
        <dt className="col-sm-2">Output</dt>
        <dd className="col-sm-10">
          <pre className="small">{JSON.stringify(step.output, null, 2)}</pre>
        </dd>
        {step.error ? (
          <>
            <dt className="col-sm-2">Error</dt>
            <dd className="col-sm-10 text-danger">
              <pre className="small text-danger traceback">{step.error}</pre>
            </dd>
          </>
        ) : null}
        {step.log ? (
          <>
            <dt className="col-sm-2">Printed</dt>
            <dd className="col-sm-10">
              <pre className="small">{step.log}</pre>
            </dd>
          </>
        ) : null}
        <dt className="col-sm-2">Started</dt>
        <dd className="col-sm-10">
          <LocalTime iso={step.started_at} />
        </dd>
        <dt className="col-sm-2">Duration</dt>
        <dd className="col-sm-10">{step.duration_ms === null ? '—' : `${step.duration_ms} ms`}</dd>
      </dl>
    </Layout>
  );
}
