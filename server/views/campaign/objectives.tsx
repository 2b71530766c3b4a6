/**
 * The campaign page's objectives: a goal (maximize, minimize or none) per workflow output, `objective.<output>`,
 * and, when there are several outputs, a weight each (`objective.<output>.weight`).
 */
import type { OutputKind } from '../../../core/workflow/outputs.js';
import { Alert } from '../layout.js';
import { Invalid, str, type FieldErrors, type Values } from './form.js';

/** Outputs one usually wants low; the rest are maximized by default. */
const MINIMIZE_HINT = /cost|loss|error|waste|impurit|price|energy|time|duration|variance|noise|residual/i;

/**
 * The output proposed as the objective: the first the deck declares a number. None when no output is
 * declared one: a whole dict result, a text or an undeclared value is never chosen for the scientist.
 */
export const proposedObjective = (outputs: readonly string[], kind: (output: string) => OutputKind): string | null => outputs.find((o) => kind(o) === 'number') ?? null;

/** An output's goal: as sent after an error, else the proposed objective's (max or min by its name). */
export const goalOf = (output: string, proposed: string | null, values: Values | undefined) =>
  values ? (str(values[`objective.${output}`]) ?? '') : output === proposed ? (MINIMIZE_HINT.test(output) ? 'min' : 'max') : '';

/** The "Objectives" section: a goal per output, or why there is none to choose. */
export function Objectives(props: { workflow?: string; builder: string; outputs: string[]; proposed: string | null; values?: Values; errs: FieldErrors }) {
  const { outputs, values, errs, proposed } = props;
  const weighed = outputs.length > 1;
  return (
    <>
      <h2 className="h5 mt-3">Objectives</h2>
      {outputs.length === 0 ? (
        <Alert kind="warning">
          {props.workflow} names no output: add an output (a value a step saves) in the <a href={props.builder}>builder</a>.
        </Alert>
      ) : (
        <table className="table table-sm align-middle" id="campaign-objectives">
          <thead>
            <tr>
              <th scope="col">Output</th>
              <th scope="col">Goal</th>
              {weighed ? <th scope="col">Weight</th> : null}
            </tr>
          </thead>
          <tbody>
            {outputs.map((o, i) => (
              <tr key={o} data-objective={o}>
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
                    defaultValue={goalOf(o, proposed, values)}
                  >
                    <option value="">not an objective</option>
                    <option value="max">maximize</option>
                    <option value="min">minimize</option>
                  </select>
                  <Invalid messages={errs.get(`objective.${o}`)} />
                </td>
                {weighed ? (
                  <td>
                    <input
                      className={`form-control form-control-sm campaign-num${errs.has(`objective.${o}.weight`) ? ' is-invalid' : ''}`}
                      type="number"
                      step="any"
                      min={0}
                      name={`objective.${o}.weight`}
                      placeholder="none"
                      defaultValue={values ? (str(values[`objective.${o}.weight`]) ?? '') : ''}
                      disabled={goalOf(o, proposed, values) === ''}
                      data-weight="true"
                      aria-label={`${o} weight`}
                    />
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Invalid messages={errs.get('objectives')} />
      {weighed ? (
        <p className="small text-body-secondary">
          With several objectives, weights (every objective one, or none) say how much each counts: gp then scalarises them with these weights, and the best compromise is the one they favour.
        </p>
      ) : null}
    </>
  );
}
