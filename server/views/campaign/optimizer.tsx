/**
 * The campaign page's optimizer: the choice of optimizer (`optimizer_type`) and a fieldset of options
 * (`config.<key>`) per optimizer, of which only the selected one is enabled, so only its fields are sent.
 */
import type { JSONSchema, OptimizerSchema } from '../../../core/contracts/index.js';
import { SchemaFields } from '../fields.js';
import { Invalid, str, type FieldErrors, type Values } from './form.js';

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

/** The "Optimizer" section: the select, then each optimizer's options (only the selected one's shown). */
export function OptimizerFields({ optimizers, selected, values, errs }: { optimizers: OptimizerSchema[]; selected?: string; values?: Values; errs: FieldErrors }) {
  return (
    <>
      <h2 className="h5">Optimizer</h2>
      <label className="form-label small mb-1" htmlFor="campaign-optimizer">
        Optimizer
      </label>
      <select className={`form-select mb-2${errs.has('optimizer_type') ? ' is-invalid' : ''}`} id="campaign-optimizer" name="optimizer_type" defaultValue={selected}>
        {optimizers.map((o) => (
          <option key={o.name} value={o.name}>
            {o.name}
          </option>
        ))}
      </select>
      <Invalid messages={errs.get('optimizer_type')} />
      {optimizers.map((o) => {
        const on = o.name === selected;
        const configErrors = [...errs.entries()].filter(([k]) => k.startsWith('config.')).flatMap(([, m]) => m);
        return (
          <fieldset key={o.name} className="optimizer-config border rounded p-2 mb-3" data-optimizer={o.name} disabled={!on} hidden={!on}>
            <legend className="fs-6 mb-1 float-none w-auto px-1">
              <code>{o.name}</code> options
            </legend>
            <p className="small mb-1">{o.description}</p>
            <p className="small text-body-secondary mb-2">
              Parameter types: {o.capabilities.parameterTypes.join(', ')} · batches: {o.capabilities.batch ? 'yes' : 'no'} · several objectives: {o.capabilities.multiObjective ? 'yes' : 'no'}
            </p>
            <SchemaFields schema={configSchema(o.config, on ? values : undefined)} idPrefix={`opt-${o.name}`} />
            {on ? <Invalid messages={configErrors} /> : null}
          </fieldset>
        );
      })}
    </>
  );
}
