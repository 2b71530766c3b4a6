/**
 * The campaign page (set an optimization campaign up from a workflow's parameters and outputs) and the
 * campaign panel of the execution page (the live plot, drawn by server/client/campaign.ts).
 *
 * Form fields (read by server/routes/campaigns.tsx): `workflow`, `name`, `param.<name>.use|type|low|high|
 * choices`, `objective.<output>` = ""|max|min, `optimizer_type`, `config.<key>` (one fieldset per optimizer;
 * only the selected one is enabled, so only its fields are sent), `repeat`, `batch_size`, `seed`,
 * `existing_data`, and the spec's own `parameters` / `objectives` / `config` text fields ("advanced"), which
 * replace the table when filled.
 */
import type { JSONSchema, OptimizerSchema } from '../../core/contracts/index.js';
import type { Step } from '../../core/workflow/model.js';
import { SchemaFields } from './fields.js';
import { UploadForm } from './files.js';
import { Alert, ErrorList, Layout, WorkflowPicker, type ViewCtx } from './layout.js';

type Wf = { name: string; version: number; definition: unknown };
type WfParam = { name: string; type?: string; default?: unknown; description?: string };
type Values = Record<string, unknown>;
type LabErrorLike = { message: string; details?: { field?: string; message: string }[] };

/** What the deck says about a workflow parameter: the bounds or choices of the argument it feeds. */
export interface ParamHint {
  low?: number;
  high?: number;
  choices?: string[];
}

/**
 * Bounds and choices for a workflow's parameters, read from the schemas of the instrument arguments each
 * parameter is passed to (`{ "param": "temperature" }` as `reactor.run`'s `temperature`, minimum 20 and
 * maximum 120 → 20..120). Where a parameter feeds several arguments, the tightest bounds win.
 * `methodParams(instrument, method)` is the JSON Schema of a method's arguments, or undefined.
 */
export function parameterHints(definition: unknown, methodParams: (instrument: string, method: string) => JSONSchema | undefined): Record<string, ParamHint> {
  const hints: Record<string, ParamHint> = {};
  const def = (definition ?? {}) as { prep?: Step[]; main?: Step[]; cleanup?: Step[] };
  const visit = (steps: Step[] | undefined) => {
    for (const s of steps ?? []) {
      if (s.kind === 'repeat') visit(s.steps);
      else if (s.kind === 'if') {
        visit(s.then);
        visit(s.else);
      } else if (s.kind === 'call') {
        const props = (methodParams(s.instrument, s.method)?.properties ?? {}) as Record<string, Record<string, unknown>>;
        for (const [arg, value] of Object.entries(s.args ?? {})) {
          if (!value || typeof value !== 'object' || !('param' in value)) continue;
          const p = props[arg];
          if (!p) continue;
          const h = (hints[value.param] ??= {});
          const num = (k: string) => (typeof p[k] === 'number' && Math.abs(p[k] as number) < Number.MAX_SAFE_INTEGER ? (p[k] as number) : undefined);
          const lo = num('minimum') ?? num('exclusiveMinimum');
          const hi = num('maximum') ?? num('exclusiveMaximum');
          if (lo !== undefined) h.low = h.low === undefined ? lo : Math.max(h.low, lo);
          if (hi !== undefined) h.high = h.high === undefined ? hi : Math.min(h.high, hi);
          if (Array.isArray(p.enum) && p.enum.every((e) => typeof e === 'string')) h.choices = p.enum as string[];
        }
      }
    }
  };
  visit(def.prep);
  visit(def.main);
  visit(def.cleanup);
  return hints;
}

/** The parameter types a campaign can give a workflow parameter of this type (first = preset). */
function typesFor(t: string | undefined): ('range' | 'int' | 'choice')[] {
  if (t === 'number' || t === undefined) return ['range', 'int'];
  if (t === 'integer') return ['int'];
  if (t === 'string') return ['choice'];
  if (t === 'boolean') return [];
  return ['range', 'int', 'choice'];
}

/** Outputs one usually wants low; the rest are maximized by default. */
const MINIMIZE_HINT = /cost|loss|error|waste|impurit|price|energy|time|duration|variance|noise|residual/i;

const str = (v: unknown): string | undefined => (Array.isArray(v) ? str(v[v.length - 1]) : v === undefined || v === null ? undefined : String(v));
const firstSentence = (s: string) => {
  const m = /^(.+?[.!?])(\s|$)/.exec(s.trim());
  return (m ? m[1] : s.trim()).replace(/[.!?]$/, '');
};

/**
 * Inline messages by form field, from an error's details: `parameters[1].bounds` belongs to the second
 * searched parameter's row, `objectives[0].name` to the first chosen objective, `config.x` to that option,
 * `line 3, column yield` to the warm-start file.
 */
function fieldMessages(error: LabErrorLike | undefined, values: Values | undefined, searched: string[], chosen: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!error?.details) return out;
  const advanced = (k: string) => !!str(values?.[k])?.trim();
  const add = (key: string, msg: string) => out.set(key, [...(out.get(key) ?? []), msg]);
  for (const d of error.details) {
    const f = d.field ?? '';
    const msg = d.field ? `${d.field}: ${d.message}` : d.message;
    let m: RegExpExecArray | null;
    if ((m = /^parameters\[(\d+)\](?:\.(\w+))?/.exec(f))) {
      const name = searched[+m[1]];
      if (advanced('parameters') || !name) add('parameters', msg);
      else {
        add(`param.${name}`, msg);
        out.set(`param.${name}.${m[2] ?? 'name'}`, []); // marks the offending input (bounds, choices, type)
      }
    }
    else if ((m = /^objectives\[(\d+)\]/.exec(f))) add(advanced('objectives') || !chosen[+m[1]] ? 'objectives' : `objective.${chosen[+m[1]]}`, msg);
    else if (f.startsWith('config')) add(advanced('config') ? 'config' : f, msg);
    else if (/^line \d+/.test(f) || f === 'existing_data') add('existing_data', msg);
    else if (f) add(f, msg);
  }
  return out;
}

function Invalid({ messages }: { messages?: string[] }) {
  if (!messages?.length) return null;
  return (
    <div className="invalid-feedback d-block" data-testid="field-error">
      {messages.join('; ')}
    </div>
  );
}

/** The optimizer's config schema with its fields named `config.<key>` and, after an error, the values sent. */
function configSchema(schema: JSONSchema, values: Values | undefined): JSONSchema {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const renamed = Object.entries(props).map(([k, p]) => {
    const sent = values ? values[`config.${k}`] : undefined;
    if (sent === undefined) return [`config.${k}`, p];
    const type = Array.isArray(p.type) ? (p.type as string[]).find((t) => t !== 'null') : p.type;
    const last = str(sent) ?? '';
    let value: unknown = last;
    if (type === 'boolean') value = (Array.isArray(sent) ? sent.map(String) : [last]).includes('true');
    else if ((type === 'number' || type === 'integer') && last.trim() !== '' && Number.isFinite(Number(last))) value = Number(last);
    else if (last === '') value = undefined;
    return [`config.${k}`, { ...p, default: value }];
  });
  return { ...schema, properties: Object.fromEntries(renamed), required: ((schema.required as string[] | undefined) ?? []).map((k) => `config.${k}`) };
}

export interface CampaignPageProps {
  ctx: ViewCtx;
  workflows: Wf[];
  selected?: string;
  optimizers: OptimizerSchema[];
  /** Uploaded history files (warm-start data), newest first. */
  histories?: { name: string; original: string; rows: number }[];
  /** Bounds and choices per parameter of the selected workflow (see parameterHints)… */
  hints?: Record<string, ParamHint>;
  /** …or the deck's argument schemas, to work them out here: `(instrument, method) => params JSON Schema`. */
  methodParams?: (instrument: string, method: string) => JSONSchema | undefined;
  /** A history file just uploaded: preselected as the warm start. */
  uploaded?: string;
  uploadLimit?: number;
  error?: LabErrorLike;
  /** The form as sent, after an error: the page is filled with it again. */
  values?: Values;
}

export function CampaignPage(props: CampaignPageProps) {
  const { ctx, workflows, optimizers, values } = props;
  const u = ctx.url;
  const current = workflows.find((w) => w.name === props.selected) ?? workflows[0];
  const def = (current?.definition ?? {}) as { parameters?: WfParam[]; outputs?: string[] };
  const params = def.parameters ?? [];
  const outputs = def.outputs ?? [];
  const hints = props.hints ?? (props.methodParams && current ? parameterHints(current.definition, props.methodParams) : {});
  const v = (k: string, fallback?: string) => (values ? (str(values[k]) ?? '') : fallback);

  // what is searched and which objectives are chosen, in the order the route reads them (the table's)
  const uses = (p: WfParam) => (values ? str(values[`param.${p.name}.use`]) === 'on' : presetUse(p, hints[p.name]));
  const searched = params.filter((p) => typesFor(p.type).length > 0 && uses(p)).map((p) => p.name);
  const objectiveOf = (o: string, i: number) => (values ? (str(values[`objective.${o}`]) ?? '') : i === 0 ? (MINIMIZE_HINT.test(o) ? 'min' : 'max') : '');
  const chosen = outputs.filter((o, i) => objectiveOf(o, i) !== '');
  const errs = fieldMessages(props.error, values, searched, chosen);

  const selectedOpt = v('optimizer_type') || (optimizers.some((o) => o.name === 'gp') ? 'gp' : optimizers[0]?.name);
  const advancedOpen = !!(v('parameters')?.trim() || v('objectives')?.trim() || v('config')?.trim());
  const shortSpace = params
    .filter((p) => typesFor(p.type).length)
    .map((p) => {
      const h = hints[p.name] ?? {};
      if (p.type === 'string') return `${p.name}: ${(h.choices ?? ['a', 'b']).join('|')}`;
      return `${p.name}: ${p.type === 'integer' ? 'int ' : ''}${h.low ?? 0}..${h.high ?? 1}`;
    })
    .join(', ');

  return (
    <Layout ctx={ctx} title="Optimization campaign">
      <div className="d-flex flex-wrap align-items-baseline gap-2">
        <h1 className="h3 me-auto">Optimization campaign</h1>
        <a href={u('/executions/config')} className="small">
          Watch the runner and the latest campaign →
        </a>
      </div>
      <p className="text-body-secondary" id="campaign-intro">
        A campaign runs a workflow again and again while an optimizer picks each run's parameters from the results so far
        {optimizers.length ? ': ' : '.'}
        {optimizers.map((o, i) => (
          <span key={o.name}>
            {i ? '; ' : ''}
            <strong>{o.name}</strong> — {firstSentence(o.description)}
          </span>
        ))}
        {optimizers.length ? '.' : ''}
      </p>
      <ErrorList error={props.error} />
      {workflows.length === 0 ? (
        <p>
          No workflow yet: <a href={u('/workflows')}>make one</a> with parameters and outputs, then come back.
        </p>
      ) : optimizers.length === 0 ? (
        <Alert kind="warning">No optimizer plugin is loaded, so no campaign can run.</Alert>
      ) : (
        <>
          <WorkflowPicker action={u('/executions/campaign')} id="campaign-pick" workflows={workflows} current={current?.name} selectId="campaign-pick-workflow" autosubmit />

          <form method="post" action={u('/executions/campaign')} id="campaign-form">
            <input type="hidden" name="workflow" value={current?.name} />
            <div className="row g-4">
              <div className="col-xl-7">
                <h2 className="h5">Search space</h2>
                {params.length === 0 ? (
                  <Alert kind="warning">
                    {current?.name} has no parameters: there is nothing to optimize. Give it parameters in the <a href={u(`/workflows/${encodeURIComponent(current?.name ?? '')}/builder`)}>builder</a>.
                  </Alert>
                ) : (
                  <div className="table-responsive">
                    <table className="table table-sm align-middle" id="campaign-params">
                      <thead>
                        <tr>
                          <th scope="col">Search</th>
                          <th scope="col">Parameter</th>
                          <th scope="col">Type</th>
                          <th scope="col">Low</th>
                          <th scope="col">High</th>
                          <th scope="col">Choices</th>
                        </tr>
                      </thead>
                      <tbody>
                        {params.map((p) => (
                          <ParamRow key={p.name} p={p} hint={hints[p.name]} values={values} use={uses(p)} errs={errs} />
                        ))}
                      </tbody>
                    </table>
                  </div>
                )}
                <Invalid messages={errs.get('parameters')} />
                <p className="small text-body-secondary">
                  Parameters not searched keep their default. Choices are written <code>a|b|c</code>.
                </p>

                <h2 className="h5 mt-3">Objectives</h2>
                {outputs.length === 0 ? (
                  <Alert kind="warning">
                    {current?.name} names no output: add an output (a value a step saves) in the{' '}
                    <a href={u(`/workflows/${encodeURIComponent(current?.name ?? '')}/builder`)}>builder</a>.
                  </Alert>
                ) : (
                  <table className="table table-sm align-middle" id="campaign-objectives">
                    <thead>
                      <tr>
                        <th scope="col">Output</th>
                        <th scope="col">Goal</th>
                      </tr>
                    </thead>
                    <tbody>
                      {outputs.map((o, i) => (
                        <tr key={o}>
                          <td>
                            <label htmlFor={`objective-${i}`}>
                              <code>{o}</code>
                            </label>
                          </td>
                          <td>
                            <select
                              className={`form-select form-select-sm${errs.has(`objective.${o}`) ? ' is-invalid' : ''}`}
                              id={`objective-${i}`}
                              name={`objective.${o}`}
                              defaultValue={objectiveOf(o, i)}
                            >
                              <option value="">not an objective</option>
                              <option value="max">maximize</option>
                              <option value="min">minimize</option>
                            </select>
                            <Invalid messages={errs.get(`objective.${o}`)} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
                <Invalid messages={errs.get('objectives')} />

                <h2 className="h5 mt-3">Warm start (optional)</h2>
                <label className="form-label small mb-1" htmlFor="existing_data">
                  Earlier measurements from a history CSV (parameter columns, then output columns) are told to the optimizer first;{' '}
                  <a href="#warm-start-upload">upload one</a> below.
                </label>
                <select
                  className={`form-select form-select-sm${errs.has('existing_data') ? ' is-invalid' : ''}`}
                  id="existing_data"
                  name="existing_data"
                  defaultValue={v('existing_data', props.uploaded ?? '')}
                >
                  <option value="">none</option>
                  {(props.histories ?? []).map((h) => (
                    <option key={h.name} value={h.name}>
                      {h.original} ({h.rows} rows)
                    </option>
                  ))}
                </select>
                <Invalid messages={errs.get('existing_data')} />

                <details className="mt-3" id="campaign-advanced" open={advancedOpen}>
                  <summary>Advanced: type the search space and objectives instead</summary>
                  <p className="small text-body-secondary mt-2 mb-1">
                    JSON lists as in the API, or the short form. When filled, these replace the tables above.
                  </p>
                  <label className="form-label small mb-0" htmlFor="campaign-parameters">
                    <code>parameters</code>
                  </label>
                  <textarea
                    className={`form-control form-control-sm font-monospace${errs.has('parameters') && v('parameters')?.trim() ? ' is-invalid' : ''}`}
                    id="campaign-parameters"
                    name="parameters"
                    rows={2}
                    placeholder={shortSpace || 'x: 0..1, n: int 1..10, solvent: water|ethanol'}
                    defaultValue={v('parameters')}
                  />
                  <label className="form-label small mb-0 mt-2" htmlFor="campaign-objectives-text">
                    <code>objectives</code>
                  </label>
                  <input
                    className={`form-control form-control-sm font-monospace${errs.has('objectives') && v('objectives')?.trim() ? ' is-invalid' : ''}`}
                    id="campaign-objectives-text"
                    name="objectives"
                    placeholder={outputs.length ? `${outputs[0]}:max` : 'yield:max'}
                    defaultValue={v('objectives')}
                  />
                  <label className="form-label small mb-0 mt-2" htmlFor="campaign-config-text">
                    <code>config</code> (JSON; replaces the optimizer's options)
                  </label>
                  <input
                    className={`form-control form-control-sm font-monospace${errs.has('config') ? ' is-invalid' : ''}`}
                    id="campaign-config-text"
                    name="config"
                    placeholder='{"candidates": 4096}'
                    defaultValue={v('config')}
                  />
                  <Invalid messages={errs.get('config')} />
                </details>
              </div>

              <div className="col-xl-5">
                <h2 className="h5">Optimizer</h2>
                <label className="form-label small mb-1" htmlFor="campaign-optimizer">
                  Optimizer
                </label>
                <select className={`form-select mb-2${errs.has('optimizer_type') ? ' is-invalid' : ''}`} id="campaign-optimizer" name="optimizer_type" defaultValue={selectedOpt}>
                  {optimizers.map((o) => (
                    <option key={o.name} value={o.name}>
                      {o.name}
                    </option>
                  ))}
                </select>
                <Invalid messages={errs.get('optimizer_type')} />
                {optimizers.map((o) => {
                  const on = o.name === selectedOpt;
                  const configErrors = [...errs.entries()].filter(([k]) => k.startsWith('config.')).flatMap(([, m]) => m);
                  return (
                    <fieldset key={o.name} className="optimizer-config border rounded p-2 mb-3" data-optimizer={o.name} disabled={!on} hidden={!on}>
                      <legend className="fs-6 mb-1 float-none w-auto px-1">
                        <code>{o.name}</code> options
                      </legend>
                      <p className="small mb-1">{o.description}</p>
                      <p className="small text-body-secondary mb-2">
                        Parameter types: {o.capabilities.parameterTypes.join(', ')} · batches: {o.capabilities.batch ? 'yes' : 'no'} · several objectives:{' '}
                        {o.capabilities.multiObjective ? 'yes' : 'no'}
                      </p>
                      <SchemaFields schema={configSchema(o.config, on ? values : undefined)} idPrefix={`opt-${o.name}`} />
                      {on ? <Invalid messages={configErrors} /> : null}
                    </fieldset>
                  );
                })}

                <h2 className="h5">Budget</h2>
                <div className="row g-2">
                  <BudgetField label="Iterations" id="campaign-repeat" name="repeat" min={1} value={v('repeat', '20')} required errs={errs} />
                  <BudgetField label="Batch size" id="campaign-batch" name="batch_size" min={1} value={v('batch_size', '1')} errs={errs} />
                  <BudgetField label="Seed" id="campaign-seed" name="seed" placeholder="random" value={v('seed')} errs={errs} />
                </div>
                <p className="small text-body-secondary mt-1">
                  The batch size is how many suggestions are made before their results are told back; the same seed gives the same suggestions.
                </p>
                <label className="form-label small mb-0" htmlFor="campaign-name">
                  Name (optional)
                </label>
                <input
                  className={`form-control form-control-sm mb-3${errs.has('name') ? ' is-invalid' : ''}`}
                  id="campaign-name"
                  name="name"
                  maxLength={200}
                  placeholder={`${current?.name} · ${selectedOpt} × n`}
                  defaultValue={v('name')}
                />
                <button className="btn btn-primary" type="submit" id="campaign-start">
                  Start the campaign
                </button>
              </div>
            </div>
          </form>

          <h2 className="h6 mt-4" id="warm-start-upload">
            Upload a history file for the warm start
          </h2>
          <UploadForm ctx={ctx} kind="history" workflow={current?.name} limitBytes={props.uploadLimit} />
        </>
      )}
    </Layout>
  );
}

/** A whole-number field of the budget (a third of the row), with its messages. */
function BudgetField(props: { label: string; id: string; name: string; min?: number; placeholder?: string; value?: string; required?: boolean; errs: Map<string, string[]> }) {
  const { id, name, errs } = props;
  return (
    <div className="col-sm-4">
      <label className="form-label small mb-0" htmlFor={id}>
        {props.label}
      </label>
      <input
        className={`form-control form-control-sm${errs.has(name) ? ' is-invalid' : ''}`}
        type="number"
        min={props.min}
        step={1}
        id={id}
        name={name}
        placeholder={props.placeholder}
        defaultValue={props.value}
        required={props.required}
      />
      <Invalid messages={errs.get(name)} />
    </div>
  );
}

/** A parameter is searched by default when the page knows enough to search it (bounds or choices). */
function presetUse(p: WfParam, h: ParamHint | undefined): boolean {
  const t = typesFor(p.type)[0];
  if (!t) return false;
  return t === 'choice' ? !!h?.choices?.length : h?.low !== undefined && h?.high !== undefined;
}

function ParamRow({ p, hint, values, use, errs }: { p: WfParam; hint?: ParamHint; values?: Values; use: boolean; errs: Map<string, string[]> }) {
  const types = typesFor(p.type);
  const key = (k: string) => (k ? `param.${p.name}.${k}` : `param.${p.name}`);
  const v = (k: string, fallback: string) => (values ? (str(values[key(k)]) ?? '') : fallback);
  const id = (k: string) => `param-${p.name}-${k}`;
  const messages = errs.get(key(''));
  const bad = (k: string) => (errs.has(key(k)) ? ' is-invalid' : '');
  const type = v('type', types[0] ?? '') || types[0];
  const info = (
    <>
      <label htmlFor={id('use')}>
        <code>{p.name}</code>
      </label>{' '}
      <span className="small text-body-secondary">
        {p.type ?? 'number'}
        {p.default !== undefined ? ` · default ${String(p.default)}` : ' · no default'}
      </span>
      {p.description ? <div className="small text-body-secondary">{p.description}</div> : null}
      <Invalid messages={messages} />
    </>
  );
  const bound = (end: 'low' | 'high') => (
    <td>
      <input
        className={`form-control form-control-sm campaign-num${bad('bounds')}`}
        type="number"
        step="any"
        name={key(end)}
        defaultValue={v(end, hint?.[end] === undefined ? '' : String(hint[end]))}
        disabled={type === 'choice'}
        data-bound={end}
        aria-label={`${p.name} ${end}`}
      />
    </td>
  );
  if (!types.length) {
    return (
      <tr data-param={p.name}>
        <td>
          <input className="form-check-input" type="checkbox" id={id('use')} disabled aria-label={`search ${p.name}`} />
        </td>
        <td>{info}</td>
        <td colSpan={4} className="small text-body-secondary">
          A {p.type} parameter cannot be searched: it keeps its default.
        </td>
      </tr>
    );
  }
  return (
    <tr data-param={p.name} className={use ? '' : 'campaign-off'}>
      <td>
        <input className="form-check-input" type="checkbox" id={id('use')} name={key('use')} value="on" defaultChecked={use} aria-label={`search ${p.name}`} />
      </td>
      <td>{info}</td>
      <td>
        <select className={`form-select form-select-sm campaign-type${bad('type')}`} name={key('type')} defaultValue={type} data-param-type="true" aria-label={`${p.name} type`}>
          {types.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </td>
      {bound('low')}
      {bound('high')}
      <td>
        <input
          className={`form-control form-control-sm${bad('choices')}`}
          name={key('choices')}
          placeholder="a|b|c"
          defaultValue={v('choices', hint?.choices?.join('|') ?? '')}
          disabled={type !== 'choice'}
          data-bound="choices"
          aria-label={`${p.name} choices`}
        />
      </td>
    </tr>
  );
}

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
      <section id="campaign" className="mb-4" hidden data-active={active ? 'true' : 'false'} data-plot={u('/executions/latest_plot')} data-events={u('/executions/events')} data-new={u('/executions/campaign')}>
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
