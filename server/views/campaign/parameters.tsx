/**
 * The campaign page's search space: which workflow parameters are searched and over what (a row each:
 * `param.<name>.use|type|low|high|step|log_scale|choices|value`), preset from the bounds and choices the
 * deck declares.
 */
import type { JSONSchema } from '../../../core/contracts/index.js';
import type { Step } from '../../../core/workflow/model.js';
import { Alert } from '../layout.js';
import { Invalid, str, type FieldErrors, type Values } from './form.js';

export type WfParam = { name: string; type?: string; default?: unknown; description?: string };

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

type Kind = 'range' | 'int' | 'choice' | 'fixed';

/** The parameter types a campaign can give a workflow parameter of this type (first = preset). */
function typesFor(t: string | undefined): Kind[] {
  if (t === 'number' || t === undefined) return ['range', 'int', 'fixed'];
  if (t === 'integer') return ['int', 'fixed'];
  if (t === 'string') return ['choice', 'fixed'];
  if (t === 'boolean') return [];
  return ['range', 'int', 'choice', 'fixed'];
}

/**
 * Which inputs of a row a parameter type uses (`data-types`; the page script enables only those), and
 * which it hides (`data-hidden-for`: the choices and the fixed value share a cell).
 */
const INPUTS = {
  low: { types: 'range int' },
  high: { types: 'range int' },
  step: { types: 'range int' },
  log_scale: { types: 'range int' },
  choices: { types: 'choice', hiddenFor: 'fixed' },
  value: { types: 'fixed', hiddenFor: 'range int choice' },
} as const;
type Input = keyof typeof INPUTS;
const inputAttrs = (k: Input, type: string) => {
  const spec: { types: string; hiddenFor?: string } = INPUTS[k];
  return {
    'data-types': spec.types,
    'data-hidden-for': spec.hiddenFor,
    disabled: !spec.types.split(' ').includes(type),
    hidden: !!spec.hiddenFor?.split(' ').includes(type),
  };
};

/** A parameter is searched by default when the page knows enough to search it (bounds or choices). */
function presetUse(p: WfParam, h: ParamHint | undefined): boolean {
  const t = typesFor(p.type)[0];
  if (!t) return false;
  return t === 'choice' ? !!h?.choices?.length : h?.low !== undefined && h?.high !== undefined;
}

/** Whether a parameter's row is ticked: as sent after an error, else the preset. */
export const isSearched = (p: WfParam, hint: ParamHint | undefined, values: Values | undefined) => (values ? str(values[`param.${p.name}.use`]) === 'on' : presetUse(p, hint));

/** The names of the parameters searched, in the table's order (the order the route reads them). */
export const searchedNames = (params: WfParam[], hints: Record<string, ParamHint>, values: Values | undefined) =>
  params.filter((p) => typesFor(p.type).length > 0 && isSearched(p, hints[p.name], values)).map((p) => p.name);

/** The search space in the short text form (`x: 0..1, n: int 1..10, solvent: a|b`): the advanced field's example. */
export function shortSpace(params: WfParam[], hints: Record<string, ParamHint>): string {
  return params
    .filter((p) => typesFor(p.type).length)
    .map((p) => {
      const h = hints[p.name] ?? {};
      if (p.type === 'string') return `${p.name}: ${(h.choices ?? ['a', 'b']).join('|')}`;
      return `${p.name}: ${p.type === 'integer' ? 'int ' : ''}${h.low ?? 0}..${h.high ?? 1}`;
    })
    .join(', ');
}

/** The "Search space" section: a row per workflow parameter, or why there is nothing to search. */
export function SearchSpace(props: { workflow?: string; builder: string; params: WfParam[]; hints: Record<string, ParamHint>; values?: Values; errs: FieldErrors }) {
  const { params, hints, values, errs } = props;
  return (
    <>
      <h2 className="h5">Search space</h2>
      {params.length === 0 ? (
        <Alert kind="warning">
          {props.workflow} has no parameters: there is nothing to optimize. Give it parameters in the <a href={props.builder}>builder</a>.
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
                <th scope="col">Step</th>
                <th scope="col">Log</th>
                <th scope="col">Choices / value</th>
              </tr>
            </thead>
            <tbody>
              {params.map((p) => (
                <ParamRow key={p.name} p={p} hint={hints[p.name]} values={values} use={isSearched(p, hints[p.name], values)} errs={errs} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Invalid messages={errs.get('parameters')} />
      <p className="small text-body-secondary">
        Parameters not searched keep their default. Choices are written <code>a|b|c</code>. A <em>fixed</em> parameter is not searched: every experiment runs with its value, and the record keeps it. A
        step keeps a range to <code>low + k·step</code> (it must divide the range); <em>log</em> searches a range evenly in its logarithm (bounds above 0).
      </p>
    </>
  );
}

function ParamRow({ p, hint, values, use, errs }: { p: WfParam; hint?: ParamHint; values?: Values; use: boolean; errs: FieldErrors }) {
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
  const number = (k: 'low' | 'high' | 'step', fallback: string, invalid: string) => (
    <td>
      <input
        className={`form-control form-control-sm campaign-num${invalid}`}
        type="number"
        step="any"
        min={k === 'step' ? 0 : undefined}
        name={key(k)}
        defaultValue={v(k, fallback)}
        aria-label={`${p.name} ${k}`}
        {...inputAttrs(k, type)}
      />
    </td>
  );
  const hinted = (end: 'low' | 'high') => (hint?.[end] === undefined ? '' : String(hint[end]));
  if (!types.length) {
    return (
      <tr data-param={p.name}>
        <td>
          <input className="form-check-input" type="checkbox" id={id('use')} disabled aria-label={`search ${p.name}`} />
        </td>
        <td>{info}</td>
        <td colSpan={6} className="small text-body-secondary">
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
      {number('low', hinted('low'), bad('bounds'))}
      {number('high', hinted('high'), bad('bounds'))}
      {number('step', '', bad('step'))}
      <td>
        <input
          className={`form-check-input${bad('log_scale')}`}
          type="checkbox"
          name={key('log_scale')}
          value="on"
          defaultChecked={values ? str(values[key('log_scale')]) === 'on' : false}
          aria-label={`${p.name} on a log scale`}
          {...inputAttrs('log_scale', type)}
        />
      </td>
      <td>
        <input
          className={`form-control form-control-sm${bad('choices')}`}
          name={key('choices')}
          placeholder="a|b|c"
          defaultValue={v('choices', hint?.choices?.join('|') ?? '')}
          aria-label={`${p.name} choices`}
          {...inputAttrs('choices', type)}
        />
        <input
          className={`form-control form-control-sm campaign-num${bad('value')}`}
          name={key('value')}
          placeholder={p.default !== undefined ? String(p.default) : 'value'}
          defaultValue={v('value', '')}
          aria-label={`${p.name} value`}
          {...inputAttrs('value', type)}
        />
      </td>
    </tr>
  );
}
