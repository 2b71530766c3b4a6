/** The campaign page's objectives: a goal (maximize, minimize or none) per workflow output, `objective.<output>`. */
import { Alert } from '../layout.js';
import { Invalid, str, type FieldErrors, type Values } from './form.js';

/** Outputs one usually wants low; the rest are maximized by default. */
const MINIMIZE_HINT = /cost|loss|error|waste|impurit|price|energy|time|duration|variance|noise|residual/i;

/** An output's goal: as sent after an error, else the first output is the objective (max or min by its name). */
export const goalOf = (output: string, index: number, values: Values | undefined) =>
  values ? (str(values[`objective.${output}`]) ?? '') : index === 0 ? (MINIMIZE_HINT.test(output) ? 'min' : 'max') : '';

/** The "Objectives" section: a goal per output, or why there is none to choose. */
export function Objectives(props: { workflow?: string; builder: string; outputs: string[]; values?: Values; errs: FieldErrors }) {
  const { outputs, values, errs } = props;
  return (
    <>
      <h2 className="h5 mt-3">Objectives</h2>
      {outputs.length === 0 ? (
        <Alert kind="warning">
          {props.workflow} names no output: add an output (a value a step saves) in the{' '}
          <a href={props.builder}>builder</a>.
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
                    defaultValue={goalOf(o, i, values)}
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
    </>
  );
}
