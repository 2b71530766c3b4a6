/**
 * The campaign page: set an optimization campaign up from a workflow's parameters and outputs. Its parts:
 * parameters.tsx (the search space), constraints.tsx (parameter constraints, outcome limits, early stop),
 * objectives.tsx, optimizer.tsx (the optimizer and its options), form.tsx (the inline error messages); the
 * execution page's live plot is panel.tsx.
 *
 * Form fields (read by server/routes/campaigns.tsx): `workflow`, `name`, `param.<name>.use|type|low|high|
 * step|log_scale|choices|value` (type range, int, choice or fixed), `objective.<output>` = ""|max|min and
 * `objective.<output>.weight`, `parameter_constraints`, `outcome_constraints` and `stop_when` (one per
 * line), `optimizer_type`, `config.<key>` (one fieldset per optimizer; only the selected one is enabled, so
 * only its fields are sent), `repeat`, `batch_size`, `seed`, `existing_data`, and the spec's own
 * `parameters` / `objectives` / `config` text fields ("advanced"), which replace the table when filled.
 */
import type { JSONSchema, OptimizerSchema } from '../../../core/contracts/index.js';
import { outputName, type Output } from '../../../core/workflow/model.js';
import type { OutputKind } from '../../../core/workflow/outputs.js';
import { UploadForm } from '../files.js';
import { Alert, ErrorList, Layout, WorkflowPicker, type ViewCtx } from '../layout.js';
import { OutcomeLimits, ParameterConstraints } from './constraints.js';
import { fieldMessages, Invalid, str, type FieldErrors, type LabErrorLike, type Values } from './form.js';
import { goalOf, Objectives, proposedObjective } from './objectives.js';
import { OptimizerFields } from './optimizer.js';
import { parameterHints, SearchSpace, searchedNames, shortSpace, type ParamHint, type WfParam } from './parameters.js';

type Wf = { name: string; version: number; definition: unknown };

const firstSentence = (s: string) => {
  const m = /^(.+?[.!?])(\s|$)/.exec(s.trim());
  return (m ? m[1] : s.trim()).replace(/[.!?]$/, '');
};

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
  /** What the deck declares an output of a workflow is (a number is proposed as the objective); unknown without it. */
  outputKind?: (definition: unknown, output: string) => OutputKind;
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
  const def = (current?.definition ?? {}) as { parameters?: WfParam[]; outputs?: Output[] };
  const params = def.parameters ?? [];
  const outputs = (def.outputs ?? []).map(outputName);
  const proposed = proposedObjective(outputs, (o) => (props.outputKind && current ? props.outputKind(current.definition, o) : 'unknown'));
  // a workflow without parameters or outputs cannot be optimized: the page says why (above) and offers no start
  const optimizable = params.length > 0 && outputs.length > 0;
  const hints = props.hints ?? (props.methodParams && current ? parameterHints(current.definition, props.methodParams) : {});
  const v = (k: string, fallback?: string) => (values ? (str(values[k]) ?? '') : fallback);

  // what is searched and which objectives are chosen, in the order the route reads them (the table's)
  const searched = searchedNames(params, hints, values);
  const chosen = outputs.filter((o) => goalOf(o, proposed, values) !== '');
  const errs = fieldMessages(props.error, values, searched, chosen);

  const selectedOpt = v('optimizer_type') || (optimizers.some((o) => o.name === 'gp') ? 'gp' : optimizers[0]?.name);
  const advancedOpen = !!(v('parameters')?.trim() || v('objectives')?.trim() || v('config')?.trim());
  const builder = u(`/workflows/${encodeURIComponent(current?.name ?? '')}/builder`);

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
                <SearchSpace workflow={current?.name} builder={builder} params={params} hints={hints} values={values} errs={errs} />
                <ParameterConstraints names={params.filter((p) => p.type === 'number' || p.type === undefined).map((p) => p.name)} value={v('parameter_constraints')} errs={errs} />
                <Objectives workflow={current?.name} builder={builder} outputs={outputs} proposed={proposed} values={values} errs={errs} />
                <OutcomeLimits outputs={outputs} values={{ outcome: v('outcome_constraints'), stop: v('stop_when') }} errs={errs} />

                <h2 className="h5 mt-3">Warm start (optional)</h2>
                <label className="form-label small mb-1" htmlFor="existing_data">
                  Earlier measurements from a history CSV (parameter columns, then output columns) are told to the optimizer first; <a href="#warm-start-upload">upload one</a> below.
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
                  <p className="small text-body-secondary mt-2 mb-1">JSON lists as in the API, or the short form. When filled, these replace the tables above.</p>
                  <AdvancedField
                    id="campaign-parameters"
                    name="parameters"
                    first
                    multiline
                    placeholder={shortSpace(params, hints) || 'x: 0..1, n: int 1..10, solvent: water|ethanol'}
                    value={v('parameters')}
                    invalid={errs.has('parameters') && !!v('parameters')?.trim()}
                  />
                  <AdvancedField
                    id="campaign-objectives-text"
                    name="objectives"
                    placeholder={outputs.length ? `${outputs[0]}:max` : 'yield:max'}
                    value={v('objectives')}
                    invalid={errs.has('objectives') && !!v('objectives')?.trim()}
                  />
                  <AdvancedField
                    id="campaign-config-text"
                    name="config"
                    note=" (JSON; replaces the optimizer's options)"
                    placeholder='{"candidates": 4096}'
                    value={v('config')}
                    invalid={errs.has('config')}
                  />
                  <Invalid messages={errs.get('config')} />
                </details>
              </div>

              <div className="col-xl-5">
                <OptimizerFields optimizers={optimizers} selected={selectedOpt} values={values} errs={errs} />

                <h2 className="h5">Budget</h2>
                <div className="row g-2">
                  <BudgetField label="Iterations" id="campaign-repeat" name="repeat" min={1} value={v('repeat', '20')} required errs={errs} />
                  <BudgetField label="Batch size" id="campaign-batch" name="batch_size" min={1} value={v('batch_size', '1')} errs={errs} />
                  <BudgetField label="Seed" id="campaign-seed" name="seed" placeholder="random" value={v('seed')} errs={errs} />
                </div>
                <p className="small text-body-secondary mt-1">The batch size is how many suggestions are made before their results are told back; the same seed gives the same suggestions.</p>
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
                <label className="form-label small mb-0" htmlFor="campaign-execution">
                  Carried out by
                </label>
                <select className="form-select form-select-sm mb-3" id="campaign-execution" name="execution" defaultValue={v('execution', 'robot')}>
                  <option value="robot">the workflow (the robot runs each experiment)</option>
                  <option value="manual">people (points to measure by hand, results entered later)</option>
                </select>
                <button
                  className="btn btn-primary"
                  type="submit"
                  id="campaign-start"
                  disabled={!optimizable}
                  title={optimizable ? undefined : `${current?.name} needs parameters and an output to be optimized`}
                >
                  Start the campaign
                </button>
              </div>
            </div>
          </form>

          {optimizable ? (
            <>
              <h2 className="h6 mt-4" id="warm-start-upload">
                Upload a history file for the warm start
              </h2>
              <UploadForm ctx={ctx} kind="history" workflow={current?.name} limitBytes={props.uploadLimit} />
            </>
          ) : null}
        </>
      )}
    </Layout>
  );
}

/** A whole-number field of the budget (a third of the row), with its messages. */
function BudgetField(props: { label: string; id: string; name: string; min?: number; placeholder?: string; value?: string; required?: boolean; errs: FieldErrors }) {
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

/** One of the advanced fields: the spec's own `parameters`, `objectives` or `config`, typed as in the API. */
function AdvancedField(props: { id: string; name: string; note?: string; first?: boolean; multiline?: boolean; placeholder: string; value?: string; invalid: boolean }) {
  const Control = props.multiline ? 'textarea' : 'input';
  return (
    <>
      <label className={`form-label small mb-0${props.first ? '' : ' mt-2'}`} htmlFor={props.id}>
        <code>{props.name}</code>
        {props.note}
      </label>
      <Control
        className={`form-control form-control-sm font-monospace${props.invalid ? ' is-invalid' : ''}`}
        id={props.id}
        name={props.name}
        rows={props.multiline ? 2 : undefined}
        placeholder={props.placeholder}
        defaultValue={props.value}
      />
    </>
  );
}
