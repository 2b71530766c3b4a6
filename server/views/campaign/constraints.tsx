/**
 * The campaign page's constraints, one per line: linear constraints on the parameters (`parameter_constraints`),
 * limits on the outputs (`outcome_constraints`) and when to stop early (`stop_when`). The route passes the text
 * on as it is; the campaign splits it into lines (or at `;`) and names a bad one by its index.
 */
import type { ReactNode } from 'react';
import { Invalid, type FieldErrors } from './form.js';

/** A labelled textarea of constraints, its syntax below it and its messages under that. */
function ListField(props: { id: string; name: string; label: string; rows: number; placeholder: string; value?: string; errs: FieldErrors; children: ReactNode }) {
  const { id, name, errs } = props;
  const hint = `${id}-hint`;
  return (
    <div className="mb-2">
      <label className="form-label small mb-0" htmlFor={id}>
        {props.label}
      </label>
      <textarea
        className={`form-control form-control-sm font-monospace${errs.has(name) ? ' is-invalid' : ''}`}
        id={id}
        name={name}
        rows={props.rows}
        placeholder={props.placeholder}
        defaultValue={props.value}
        aria-describedby={hint}
        spellCheck={false}
      />
      <Invalid messages={errs.get(name)} />
      <div className="form-text mt-0" id={hint}>
        {props.children}
      </div>
    </div>
  );
}

/** The "Constraints" section: linear constraints every suggestion satisfies. */
export function ParameterConstraints({ names, value, errs }: { names: string[]; value?: string; errs: FieldErrors }) {
  const example = names.length >= 2 ? `${names[0]} + ${names[1]} <= 1` : 'x1 + 2*x2 <= 10';
  return (
    <>
      <h2 className="h5 mt-3">Constraints (optional)</h2>
      <ListField id="campaign-constraints" name="parameter_constraints" label="Linear constraints on the parameters, one per line" rows={2} placeholder={example} value={value} errs={errs}>
        Each side a sum of parameters times numbers, compared with <code>&lt;=</code>, <code>&gt;=</code> or <code>==</code>: <code>x1 + 2*x2 &lt;= 10</code>, <code>water + ethanol + dmso == 1</code>,{' '}
        <code>3 &gt;= x1 - x2/2</code>. Only searched continuous ranges (not int, stepped or log-scale); a fixed parameter may appear. Every suggestion satisfies them.
      </ListField>
    </>
  );
}

/** Limits on the outputs and the early stop, under the objectives. */
export function OutcomeLimits({ outputs, values, errs }: { outputs: string[]; values: { outcome?: string; stop?: string }; errs: FieldErrors }) {
  const [first = 'yield', second = 'purity'] = outputs;
  return (
    <>
      <ListField
        id="campaign-outcome-constraints"
        name="outcome_constraints"
        label="Limits on the outputs (optional), one per line"
        rows={1}
        placeholder={`${second} >= 0.9`}
        value={values.outcome}
        errs={errs}
      >
        An output compared with a number: <code>{second} &gt;= 0.9</code>, <code>cost &lt;= 10</code>. A measurement that misses a limit never counts as the best; gp steers towards the settings likely
        to meet them.
      </ListField>
      <ListField id="campaign-stop-when" name="stop_when" label="Stop early when (optional)" rows={1} placeholder={`${first} >= 0.95`} value={values.stop} errs={errs}>
        The campaign ends after the first measurement that meets it (<code>{first} &gt;= 0.95</code>; one per line: any of them), and says so.
      </ListField>
    </>
  );
}
