/**
 * Campaigns in ivoryOS 1.6.11's format (`run_workflow_campaign` and `get_optimizer_schema` of ivoryos-client
 * 0.2.x), read into labdeck's own campaign input so that every labdeck check applies (core/campaign). What
 * labdeck answers differently (ivoryOS's `ax` or `baybe` run by labdeck's `gp`, a model named in `steps` that
 * gp is not) is said in the answer's `warnings`, never pretended.
 *
 * ivoryOS's parameter: `{ name, type: "range" | "choice" | "fixed", value_type: "float" | "int" | "str",
 * bounds: [low, high] | [low, high, step] | [choices…], value, log_scale }`; an objective
 * `{ name, minimize (default true), weight }`; `steps: { step_1: { model, num_samples }, step_2: { model } }`.
 */
import type { CampaignInput } from '../../core/campaign/index.js';
import type { JSONSchema, OptimizerSchema, ParameterType } from '../../core/contracts/index.js';
import { LabError, type ErrorDetail } from '../../core/errors.js';

/** ivoryOS's optimizers that labdeck does not have, and the one of labdeck's that answers for them. */
export const STAND_INS: Record<string, string> = { ax: 'gp', baybe: 'gp' };

const PARAM_KEYS = ['name', 'type', 'value_type', 'bounds', 'value', 'log_scale'];
const OBJECTIVE_KEYS = ['name', 'minimize', 'weight'];

/** The campaign's body as ivoryos-client sends it (the route's schema has checked the top-level fields). */
export interface IvoryosCampaign {
  optimizer_type: string;
  parameters: Record<string, unknown>[];
  objectives: Record<string, unknown>[];
  repeat: number;
  batch_size?: number;
  steps?: { step_1?: { model?: string; num_samples?: number }; step_2?: { model?: string; num_samples?: number } } | null;
  parameter_constraints?: string[] | null;
  outcome_constraints?: string[] | null;
  early_stop?: string[] | null;
  existing_data?: string | null;
  additional_params?: Record<string, unknown> | null;
  seed?: number;
}

const refuse = (details: ErrorDetail[]): never => {
  throw new LabError('invalid_input', `The campaign does not fit: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, details);
};

/** Keys of an ivoryOS `what` (parameter, objective) that it does not have, each named. */
function unknownKeys(item: Record<string, unknown>, at: string, what: string, known: string[]): ErrorDetail[] {
  return Object.keys(item)
    .filter((k) => !known.includes(k))
    .map((k) => ({ field: `${at}.${k}`, message: `is not a field of an ivoryOS ${what} (its fields: ${known.join(', ')})` }));
}

/** One ivoryOS parameter → labdeck's ParameterSpec fields (labdeck's checkSpace checks the values). */
function parameter(p: Record<string, unknown>, i: number, details: ErrorDetail[]): Record<string, unknown> {
  const at = `parameters[${i}]`;
  details.push(...unknownKeys(p, at, 'parameter', PARAM_KEYS));
  const { name, type, value_type: valueType, bounds, value, log_scale } = p;
  const wrongType = (message: string) => details.push({ field: `${at}.value_type`, message });
  if (valueType !== undefined && !['float', 'int', 'str', 'bool'].includes(String(valueType))) wrongType('must be float, int, str or bool');
  const extra = log_scale === undefined ? {} : { log_scale };
  if (type === 'fixed') return { name, type, value, ...(bounds === undefined ? {} : { bounds }), ...extra };
  if (type === 'choice') {
    if (valueType !== undefined && valueType !== 'str') wrongType(`labdeck's choice parameters are text (value_type str); for ${String(valueType)} values give a range with a step, [low, high, step]`);
    return { name, type, choices: bounds, ...extra };
  }
  if (type === 'range') {
    if (valueType === 'str' || valueType === 'bool') wrongType(`a range is float or int, not ${String(valueType)}`);
    const stepped = Array.isArray(bounds) && bounds.length === 3;
    return { name, type: valueType === 'int' ? 'int' : 'range', bounds: stepped ? bounds.slice(0, 2) : bounds, ...(stepped ? { step: bounds[2] } : {}), ...extra };
  }
  details.push({ field: `${at}.type`, message: `must be range, choice or fixed, got ${JSON.stringify(type)}` });
  return {};
}

/** The names of a labdeck config schema's fields. */
const configFields = (s: OptimizerSchema) => Object.keys((s.config.properties ?? {}) as Record<string, JSONSchema>);

/**
 * ivoryOS's campaign → labdeck's CampaignInput over `workflow`, with what labdeck does differently in words.
 * `schemaOf` is labdeck's schema of an optimizer (null when there is none: labdeck then refuses it by name).
 */
export function campaignInput(body: IvoryosCampaign, workflow: string, schemaOf: (name: string) => OptimizerSchema | null): { input: CampaignInput; warnings: string[]; optimizer: string } {
  const warnings: string[] = [];
  const details: ErrorDetail[] = [];
  const asked = body.optimizer_type;
  const optimizer = STAND_INS[asked] ?? asked;
  if (optimizer !== asked) {
    warnings.push(`labdeck has no "${asked}" optimizer: its "${optimizer}" runs this campaign (${schemaOf(optimizer)?.description ?? "labdeck's own"}).`);
  }
  const parameters = body.parameters.map((p, i) => parameter(p, i, details));
  const objectives = body.objectives.map((o, i) => {
    details.push(...unknownKeys(o, `objectives[${i}]`, 'objective', OBJECTIVE_KEYS));
    // ivoryOS minimizes an objective that does not say
    return { name: o.name, minimize: o.minimize ?? true, ...(o.weight === undefined ? {} : { weight: o.weight }) };
  });
  if (body.additional_params && Object.keys(body.additional_params).length) {
    details.push({ field: 'additional_params', message: `labdeck's optimizers take no additional parameters (${Object.keys(body.additional_params).join(', ')}); leave it out or empty` });
  }
  const config: Record<string, unknown> = {};
  const { step_1: first, step_2: then } = body.steps ?? {};
  const schema = schemaOf(optimizer);
  if (first?.num_samples !== undefined) {
    if (schema && configFields(schema).includes('initial_points')) config.initial_points = first.num_samples;
    else warnings.push(`steps.step_1.num_samples is not used: "${optimizer}" has no initial points to set.`);
  }
  if (first?.model !== undefined && first.model.toLowerCase() !== 'sobol') {
    warnings.push(`steps.step_1.model "${first.model}" is not used: ${optimizer === 'gp' ? "gp's initial points are Sobol points" : `"${optimizer}" has no steps`}.`);
  }
  if (then?.model !== undefined)
    warnings.push(`steps.step_2.model "${then.model}" is not used: ${optimizer === 'gp' ? "after the initial points, gp's own Gaussian process suggests" : `"${optimizer}" has no steps`}.`);
  if (then?.num_samples !== undefined && then.num_samples !== -1) warnings.push(`steps.step_2.num_samples is not used: the last step runs until repeat is reached.`);
  if (details.length) refuse(details);
  return {
    optimizer,
    warnings,
    input: {
      workflow,
      optimizer_type: optimizer,
      repeat: body.repeat,
      batch_size: body.batch_size,
      seed: body.seed,
      parameters,
      objectives,
      parameter_constraints: body.parameter_constraints ?? undefined,
      outcome_constraints: body.outcome_constraints ?? undefined,
      stop_when: body.early_stop ?? undefined,
      existing_data: body.existing_data ?? undefined,
      config,
    },
  };
}

/**
 * labdeck's field names of a search space in ivoryOS's terms: the step is the third of `bounds`, the choices
 * are `bounds`. Applied to an error's message and details.
 */
export function inIvoryosTerms(err: LabError, choices: 'bounds' | 'values' = 'bounds'): LabError {
  const rename = (s: string) => s.replace(/(parameters\[\d+\])\.step\b/g, '$1.bounds[2]').replace(/(parameters\[\d+\])\.choices\b/g, `$1.${choices}`);
  if (!err.details?.some((d) => /^parameters\[\d+\]\.(step|choices)\b/.test(d.field ?? ''))) return err;
  return new LabError(
    err.code,
    rename(err.message),
    err.details.map((d) => ({ ...d, ...(d.field === undefined ? {} : { field: rename(d.field) }) })),
    err.data,
  );
}

/**
 * One of labdeck's optimizers as ivoryOS's `get_schema()` describes one: parameter types, objectives,
 * constraints and the `optimizer_config` steps template, plus labdeck's own capabilities and config schema.
 */
export function ivoryosSchema(s: OptimizerSchema) {
  const c = s.capabilities;
  const has = (t: ParameterType) => c.parameterTypes.includes(t);
  return {
    parameter_types: [...(has('range') || has('int') ? ['range'] : []), ...(has('choice') ? ['choice'] : []), 'fixed'],
    value_types: [...(has('range') ? ['float'] : []), ...(has('int') ? ['int'] : []), ...(has('choice') ? ['str'] : [])],
    multiple_objectives: c.multiObjective,
    supports_continuous: has('range'),
    supports_constraints: c.constraints,
    optimizer_config: configFields(s).includes('initial_points') ? { step_1: { model: ['Sobol'], num_samples: null }, step_2: { model: [s.name] } } : {},
    additional_field: {},
    // labdeck's own
    name: s.name,
    description: s.description,
    supports_batch: c.batch,
    supports_outcome_constraints: c.outcomeConstraints,
    supports_log_scale: c.logScale,
    supports_steps: c.steps,
    config: s.config,
  };
}

/* ------------------------------------------------------------------ ivoryOS 1.0 (ivoryos-mcp): Ax's format */

const AX_KEYS = ['name', 'type', 'bounds', 'values', 'value', 'value_type', 'log_scale', 'is_ordered'];

/** The Ax-style campaign ivoryos-mcp's `run-workflow-campaign` posts to POST /experiment. */
export interface AxCampaign {
  parameters: Record<string, unknown>[];
  objectives: Record<string, unknown>[];
  parameter_constraints?: string[] | null;
  repeat: number;
  batch_size?: number;
}

/**
 * An Ax-style campaign (ivoryOS 1.0 ran these with Ax: `{ name, type: "range", bounds }`, `"fixed"` with
 * `value`, `"choice"` with `values` and `is_ordered`) → labdeck's CampaignInput, run by labdeck's `gp` in
 * place of Ax, with warnings saying what differs. Keys that are not Ax's are refused by name.
 */
export function axCampaignInput(body: AxCampaign, workflow: string, schemaOf: (name: string) => OptimizerSchema | null) {
  const details: ErrorDetail[] = [];
  const notes: string[] = [];
  const parameters = body.parameters.map((p, i) => {
    const at = `parameters[${i}]`;
    details.push(
      ...Object.keys(p)
        .filter((k) => !AX_KEYS.includes(k))
        .map((k) => ({ field: `${at}.${k}`, message: `is not a field of an Ax parameter labdeck reads (its fields: ${AX_KEYS.join(', ')})` })),
    );
    const { values, is_ordered, ...rest } = p;
    if (is_ordered === true) notes.push(`${at}.is_ordered is not used: labdeck's choices have no order.`);
    if (p.type === 'choice') {
      if (rest.bounds !== undefined) details.push({ field: `${at}.bounds`, message: 'an Ax choice lists its options in values, not bounds' });
      return { ...rest, bounds: values };
    }
    if (values !== undefined) details.push({ field: `${at}.values`, message: `only a choice parameter has values (this one is ${JSON.stringify(p.type)})` });
    return rest;
  });
  if (details.length) refuse(details);
  const out = campaignInput(
    { optimizer_type: 'ax', parameters, objectives: body.objectives, repeat: body.repeat, batch_size: body.batch_size, parameter_constraints: body.parameter_constraints },
    workflow,
    schemaOf,
  );
  return { ...out, warnings: [...out.warnings, ...notes] };
}
