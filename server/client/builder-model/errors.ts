/** Where a server error detail belongs on the builder page. */

export type ErrorPlace =
  { where: 'step'; step: string; field: string } | { where: 'parameters'; index: number; field: string } | { where: 'outputs'; index: number } | { where: 'name' | 'description' | 'general' };

const STEP_FIELD = /^((?:prep|main|cleanup)\[\d+\](?:\.(?:steps|then|else)\[\d+\])*)(?:\.(.+))?$/;

/**
 * Where a server error detail belongs on the page: `main[1].args.volume_ml` → the step `main[1]`, its field
 * `args.volume_ml`; `parameters[0].default` → the parameters panel; `name` → the name field.
 */
export function placeError(field: string | undefined): ErrorPlace {
  if (!field) return { where: 'general' };
  const step = STEP_FIELD.exec(field);
  if (step) return { where: 'step', step: step[1], field: step[2] ?? '' };
  const param = /^parameters\[(\d+)\](?:\.(.+))?$/.exec(field);
  if (param) return { where: 'parameters', index: Number(param[1]), field: param[2] ?? '' };
  const out = /^outputs\[(\d+)\]$/.exec(field);
  if (out) return { where: 'outputs', index: Number(out[1]) };
  if (field === 'name' || field === 'description') return { where: field };
  return { where: 'general' };
}
