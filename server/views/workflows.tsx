/** Workflow pages: the list, one workflow (read-only), and the builder's skeleton (server/client/builder/ fills it). */
import { outputName, type Parameter, type Step, type Workflow } from '../../core/workflow/model.js';
import { PHASES, summary, type InstrumentInfo } from '../client/builder-model/index.js';
import type { BrokenStep } from '../../core/operations/index.js';
import { Breadcrumb, Layout, LocalTime, type ViewCtx } from './layout.js';

export interface WorkflowJson {
  name: string;
  version: number;
  /** When this version was saved, and by whom (null: the user is gone, or a script without a user). */
  updated_at: string;
  updated_by: string | null;
  workflow: Workflow;
}

export interface WorkflowSummary extends Omit<WorkflowJson, 'workflow'> {
  description: string;
  parameters: Parameter[];
  outputs: string[];
  /** The instruments its steps call (the runner locks these while it runs). */
  instruments: string[];
  /** Top-level steps per phase. */
  steps: { prep: number; main: number; cleanup: number };
  /** What the current deck breaks in it, per step and field (empty: it fits the deck). */
  broken: BrokenStep[];
}

/** What the builder page embeds as its data island (and GET …/builder answers as JSON). */
export interface BuilderData {
  /** null for a new workflow. */
  name: string | null;
  version: number | null;
  workflow: unknown;
  instruments: InstrumentInfo[];
  /** The workflow list (POST here), `base` + name (GET/PUT), `run` + name (the execution page). */
  urls: { list: string; base: string; run: string; campaign: string };
}

export const PHASE_HELP: Record<(typeof PHASES)[number], string> = {
  prep: 'once, before the first iteration',
  main: 'once per iteration (one parameter set each)',
  cleanup: 'once at the end, also after an abort or a failure',
};

const PHASE_TITLE = { prep: 'Prep', main: 'Main', cleanup: 'Cleanup' } as const;

const runUrl = (ctx: ViewCtx, name: string) => ctx.url(`/executions/config?workflow=${encodeURIComponent(name)}`);
const wfUrl = (ctx: ViewCtx, name: string, rest = '') => ctx.url(`/workflows/${encodeURIComponent(name)}${rest}`);

const when = (iso: string) => <LocalTime iso={iso} />;

/** The "Import Python" form: what was sent, and why it was refused, when it comes back. */
export interface PythonImportForm {
  source?: string;
  name?: string;
  error?: string;
}

function ImportPython({ ctx, form }: { ctx: ViewCtx; form: PythonImportForm | undefined }) {
  return (
    <details className="card card-body mb-3" open={form !== undefined} data-testid="import-python">
      <summary className="fw-semibold">Import Python</summary>
      <p className="small text-body-secondary mt-2 mb-2">
        Paste an ivoryOS-style script: a main function whose arguments are the parameters, optional <code>prep</code> and <code>cleanup</code> functions, calls like{' '}
        <code>deck.pump.dose(volume_ml=1.5)</code>, <code>time.sleep</code>, <code>if</code> and <code>for _ in range(n)</code>. It is read, never run.
      </p>
      {form?.error ? (
        <div className="alert alert-danger py-2" role="alert">
          {form.error}
        </div>
      ) : null}
      <form method="post" action={ctx.url('/workflows/import/python')}>
        <textarea className="form-control font-monospace mb-2" name="source" rows={10} required aria-label="Python script" defaultValue={form?.source ?? ''} />
        <div className="d-flex gap-2">
          <input className="form-control form-control-sm w-auto" name="name" placeholder="name (default: the main function's)" aria-label="Workflow name" defaultValue={form?.name ?? ''} />
          <button type="submit" className="btn btn-sm btn-primary">
            Import
          </button>
        </div>
      </form>
    </details>
  );
}

export function WorkflowsPage({ ctx, workflows, importForm }: { ctx: ViewCtx; workflows: WorkflowSummary[]; importForm?: PythonImportForm }) {
  return (
    <Layout ctx={ctx} title="Workflows">
      <div className="d-flex flex-wrap align-items-center gap-2 mb-3">
        <h1 className="h3 me-auto mb-0">Workflows</h1>
        <a className="btn btn-sm btn-primary" href={ctx.url('/workflows/new')}>
          New workflow
        </a>
      </div>
      <ImportPython ctx={ctx} form={importForm} />
      {workflows.length === 0 ? (
        <div className="text-body-secondary">
          <p>No workflows yet. A workflow is a list of instrument calls (and waits, pauses, repeats and ifs) that labdeck runs for you, once per set of parameters.</p>
          <a className="btn btn-primary" href={ctx.url('/workflows/new')}>
            Make the first one in the builder
          </a>
        </div>
      ) : (
        <div className="list-group" data-testid="workflow-list">
          {workflows.map((w) => (
            <div className={w.broken.length ? 'list-group-item list-group-item-warning' : 'list-group-item'} key={w.name} data-broken={w.broken.length ? 'true' : undefined}>
              <div className="d-flex flex-wrap align-items-baseline gap-2">
                <a className="fw-semibold me-auto" href={wfUrl(ctx, w.name)}>
                  {w.name}
                </a>
                <span className="small text-body-secondary">
                  v{w.version} · {when(w.updated_at)}
                  {w.updated_by ? ` · ${w.updated_by}` : ''}
                </span>
                <a className="btn btn-sm btn-outline-secondary" href={wfUrl(ctx, w.name, '/builder')}>
                  Open in builder
                </a>
                <a className="btn btn-sm btn-outline-primary" href={runUrl(ctx, w.name)}>
                  Run
                </a>
              </div>
              {w.description ? <div className="small">{w.description}</div> : null}
              <div className="small text-body-secondary">
                {w.parameters.length ? `parameters: ${w.parameters.map((p) => p.name).join(', ')}` : 'no parameters'}
                {w.outputs.length ? ` · outputs: ${w.outputs.join(', ')}` : ''}
                {w.instruments.length ? ` · uses ${w.instruments.join(', ')}` : ''}
              </div>
              {w.broken.length ? <BrokenBy ctx={ctx} problems={w.broken} /> : null}
            </div>
          ))}
        </div>
      )}
    </Layout>
  );
}

/** What the current deck breaks in a workflow: each step and field, and the deck's change that did it. */
function BrokenBy({ ctx, problems }: { ctx: ViewCtx; problems: BrokenStep[] }) {
  return (
    <div className="small mt-1" role="alert" aria-label="Broken by the current deck">
      <span className="badge text-bg-warning me-1">broken by the deck</span>
      <ul className="mb-0">
        {problems.map((p, i) => (
          <li key={i}>
            <code>{p.field}</code>
            {p.call ? <> ({p.call})</> : null}: {p.message}
            {p.change ? (
              <>
                {' '}
                — <a href={ctx.url(`/deck/versions/${p.deck_version}`)}>deck version {p.deck_version}</a>: {p.change}
              </>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}

function StepTree({ steps }: { steps: Step[] }) {
  if (!steps.length) return <p className="small text-body-secondary mb-1">No steps.</p>;
  return (
    <ol className="wf-tree">
      {steps.map((s, i) => (
        <li key={i}>
          <code>{summary(s)}</code>
          {s.label ? <span className="text-body-secondary small"> — {s.label}</span> : null}
          {s.kind === 'repeat' ? <StepTree steps={s.steps} /> : null}
          {s.kind === 'if' ? (
            <>
              <div className="small text-body-secondary">then</div>
              <StepTree steps={s.then} />
              {s.else?.length ? (
                <>
                  <div className="small text-body-secondary">else</div>
                  <StepTree steps={s.else} />
                </>
              ) : null}
            </>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

/** A workflow version; `latest`: the current version of the name, null when the workflow was deleted since. */
export function WorkflowPage({ ctx, wf, latest }: { ctx: ViewCtx; wf: WorkflowJson; latest: number | null }) {
  const doc = wf.workflow;
  return (
    <Layout ctx={ctx} title={wf.name}>
      <Breadcrumb links={[{ href: ctx.url('/workflows'), label: 'Workflows' }]} current={wf.name} />
      <div className="d-flex flex-wrap align-items-center gap-2 mb-2">
        <h1 className="h3 me-auto mb-0">
          {wf.name} <span className="badge text-bg-secondary fs-6">v{wf.version}</span>
        </h1>
        <a className="btn btn-sm btn-outline-secondary" href={wfUrl(ctx, wf.name, '/builder')}>
          Open in builder
        </a>
        <a className="btn btn-sm btn-primary" href={runUrl(ctx, wf.name)}>
          Run
        </a>
        <a className="btn btn-sm btn-outline-secondary" href={wfUrl(ctx, wf.name, `?format=json${wf.version !== latest ? `&version=${wf.version}` : ''}`)}>
          JSON
        </a>
        <a className="btn btn-sm btn-outline-secondary" href={wfUrl(ctx, wf.name, `/python${wf.version !== latest ? `?version=${wf.version}` : ''}`)} download>
          Python
        </a>
        <button type="button" className="btn btn-sm btn-outline-danger" data-wf-delete={wfUrl(ctx, wf.name)} data-wf-list={ctx.url('/workflows')} data-wf-name={wf.name}>
          Delete
        </button>
      </div>
      {latest === null ? (
        <div className="alert alert-warning py-2">This is version {wf.version} of a workflow that was deleted since: kept because records name it.</div>
      ) : wf.version !== latest ? (
        <div className="alert alert-warning py-2">
          This is version {wf.version}; the current one is <a href={wfUrl(ctx, wf.name)}>version {latest}</a>.
        </div>
      ) : null}
      <p className="small text-body-secondary">
        Saved {when(wf.updated_at)}
        {wf.updated_by ? ` by ${wf.updated_by}` : ''}.
      </p>
      {doc.description ? <p>{doc.description}</p> : null}
      <div className="row">
        <div className="col-md-7">
          {PHASES.map((p) => (
            <section key={p} className="mb-3">
              <h2 className="h6 mb-1">
                {PHASE_TITLE[p]} <span className="small text-body-secondary fw-normal">{PHASE_HELP[p]}</span>
              </h2>
              <StepTree steps={doc[p] ?? []} />
            </section>
          ))}
        </div>
        <div className="col-md-5">
          <h2 className="h6">Parameters</h2>
          {doc.parameters?.length ? (
            <table className="table table-sm small">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Type</th>
                  <th>Default</th>
                </tr>
              </thead>
              <tbody>
                {doc.parameters.map((p) => (
                  <tr key={p.name}>
                    <td>
                      <code>{p.name}</code>
                      {p.description ? <div className="text-body-secondary">{p.description}</div> : null}
                    </td>
                    <td>{p.type}</td>
                    <td>{p.default === undefined ? '—' : JSON.stringify(p.default)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p className="small text-body-secondary">None.</p>
          )}
          <h2 className="h6">Outputs</h2>
          <p className="small">
            {doc.outputs?.length ? (
              doc.outputs.map((o) => (
                <code key={outputName(o)} className="me-2">
                  {typeof o === 'string' ? o : `${o.name} (${o.from})`}
                </code>
              ))
            ) : (
              <span className="text-body-secondary">None.</span>
            )}
          </p>
          <details>
            <summary className="small">The JSON document</summary>
            <pre className="small wf-json">{JSON.stringify(doc, null, 2)}</pre>
          </details>
        </div>
      </div>
    </Layout>
  );
}

/**
 * JSON for a `<script type="application/json">` data island: `<`, `>`, `&` and the JS line separators are
 * written as \u escapes, so no text in it can end the script element or start markup. (The island is data:
 * the CSP forbids inline scripts, and nothing evaluates it; the page reads it with JSON.parse.)
 */
export function jsonIsland(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const BLOCKS: [string, string, string][] = [
  ['wait', 'Wait', 'Wait a number of seconds'],
  ['pause', 'Pause', 'Wait for an operator to press resume'],
  ['input', 'Input', 'Ask a person for a value (a number, a text, yes/no or a file) and save it as a variable'],
  ['repeat', 'Repeat', 'Run the steps inside a number of times'],
  ['if', 'If', 'Run steps only when a condition holds (else: other steps)'],
];

const SAFETY_BADGE: Record<string, string> = { readonly: 'text-bg-success', idempotent: 'text-bg-secondary', hazardous: 'text-bg-danger' };

export function BuilderPage({ ctx, data }: { ctx: ViewCtx; data: BuilderData }) {
  const title = data.name ? `Builder · ${data.name}` : 'New workflow';
  return (
    <Layout ctx={ctx} title={title}>
      <div id="wf-builder" className="wf-builder">
        <script type="application/json" id="wf-data" dangerouslySetInnerHTML={{ __html: jsonIsland(data) }} />
        <Breadcrumb links={[{ href: ctx.url('/workflows'), label: 'Workflows' }, ...(data.name ? [{ href: wfUrl(ctx, data.name), label: data.name }] : [])]} current="Builder" className="mb-2" />
        <noscript>
          <div className="alert alert-warning">The builder needs JavaScript. The workflow's JSON can also be sent to POST {ctx.url('/workflows')}.</div>
        </noscript>
        <div className="wf-head d-flex flex-wrap align-items-start gap-2 mb-2">
          <div className="wf-name-box">
            <label className="visually-hidden" htmlFor="wf-name">
              Workflow name
            </label>
            <input
              id="wf-name"
              className="form-control fw-semibold"
              placeholder="workflow-name"
              autoComplete="off"
              spellCheck={false}
              defaultValue={data.name ?? ''}
              readOnly={!!data.name}
              title={data.name ? 'A saved workflow keeps its name' : 'Letters, digits, _ and -; starts with a letter or _'}
              data-field="name"
            />
            <div className="wf-field-errors" data-errors-for="name" />
          </div>
          <span id="wf-version" className="badge text-bg-secondary mt-2">
            {data.version ? `v${data.version}` : 'new'}
          </span>
          <div className="ms-auto d-flex align-items-center gap-2">
            <span id="wf-status" className="small text-body-secondary" role="status" aria-live="polite" />
            {data.name ? (
              <>
                <a id="wf-run" className="btn btn-outline-primary" href={runUrl(ctx, data.name)}>
                  Run
                </a>
                <a id="wf-campaign" className="btn btn-outline-primary" href={ctx.url(`/executions/campaign?workflow=${encodeURIComponent(data.name)}`)}>
                  Optimize
                </a>
              </>
            ) : null}
            <button id="wf-save" type="button" className="btn btn-primary">
              Save
            </button>
          </div>
        </div>
        <div id="wf-general-errors" />
        <label className="visually-hidden" htmlFor="wf-description">
          Description
        </label>
        <textarea id="wf-description" className="form-control form-control-sm mb-3" rows={1} placeholder="What this workflow does (optional)" data-field="description" />
        <div className="row g-3">
          <aside className="col-12 col-md-4 col-xl-3">
            <div className="wf-palette card">
              <div className="card-body p-2">
                <h2 className="h6 mb-1">Add a step</h2>
                <p className="small text-body-secondary mb-2">
                  Click to add to <strong id="wf-target-name">main</strong>, or drag into a phase.
                </p>
                <input id="wf-filter" type="search" className="form-control form-control-sm mb-2" placeholder="Find a method" aria-label="Find a method" />
                <div className="wf-palette-group mb-2">
                  <div className="small fw-semibold text-body-secondary mb-1">Blocks</div>
                  <div className="wf-palette-list d-flex flex-wrap gap-1">
                    {BLOCKS.map(([kind, label, help]) => (
                      <button key={kind} type="button" className="btn btn-sm btn-outline-secondary wf-palette-item" data-block={kind} title={help}>
                        {label}
                      </button>
                    ))}
                  </div>
                </div>
                {data.instruments.length === 0 ? <p className="small text-body-secondary">The deck has no instruments.</p> : null}
                {data.instruments.map((inst) => (
                  <details key={inst.name} className="wf-palette-group mb-1" open>
                    <summary className="small fw-semibold" title={inst.description}>
                      {inst.name} <span className="text-body-secondary fw-normal">{inst.driver}</span>
                    </summary>
                    <div className="wf-palette-list d-flex flex-column gap-1 mt-1">
                      {inst.methods.map((m) => (
                        <button key={m.name} type="button" className="btn btn-sm btn-light text-start wf-palette-item" data-instrument={inst.name} data-method={m.name} title={m.description}>
                          <code>
                            {inst.name}.{m.name}
                          </code>
                          {m.safety === 'hazardous' ? <span className={`badge ${SAFETY_BADGE[m.safety]} ms-1`}>hazardous</span> : null}
                        </button>
                      ))}
                    </div>
                  </details>
                ))}
              </div>
            </div>
            <div className="small text-body-secondary mt-2 wf-help">
              In an argument, <code>#name</code> makes a workflow parameter (set per run), <code>$name</code> uses the value an earlier step saved (its "save as"), anything else is a value.{' '}
              <code>\#</code> at the start keeps a <code>#</code> or <code>$</code> as text. An empty field leaves the method's default.
            </div>
          </aside>
          <section className="col-12 col-md-8 col-xl-6" id="wf-phases" aria-label="Steps">
            {PHASES.map((p) => (
              <section key={p} className="wf-phase card mb-3" data-phase={p}>
                <div className="card-header py-1 d-flex align-items-baseline gap-2">
                  <h2 className="h6 mb-0">{PHASE_TITLE[p]}</h2>
                  <span className="small text-body-secondary">{PHASE_HELP[p]}</span>
                </div>
                <div className="card-body p-2">
                  <div className="wf-steps" data-list={p} data-testid={`phase-${p}`} />
                </div>
              </section>
            ))}
          </section>
          <aside className="col-12 col-xl-3">
            <div className="card mb-3">
              <div className="card-header py-1 d-flex align-items-center">
                <h2 className="h6 mb-0 me-auto">Parameters</h2>
                <button id="wf-add-param" type="button" className="btn btn-sm btn-link p-0">
                  Add
                </button>
              </div>
              <div className="card-body p-2" id="wf-params" />
            </div>
            <div className="card mb-3">
              <div className="card-header py-1">
                <h2 className="h6 mb-0">Outputs</h2>
              </div>
              <div className="card-body p-2" id="wf-outputs" />
            </div>
            <details className="card" id="wf-json-box">
              <summary className="card-header py-1 small">JSON</summary>
              <pre className="card-body p-2 small mb-0 wf-json" id="wf-json" />
            </details>
          </aside>
        </div>
      </div>
    </Layout>
  );
}
