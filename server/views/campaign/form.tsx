/** What the campaign form's parts share: the values sent back after an error, and the inline messages by field. */

export type Values = Record<string, unknown>;
export type LabErrorLike = { message: string; details?: { field?: string; message: string }[] };
/** Messages by form field name; an empty list marks the input without a message of its own. */
export type FieldErrors = Map<string, string[]>;

/** A form value as text: the last one when the field was sent more than once. */
export const str = (v: unknown): string | undefined => (Array.isArray(v) ? str(v[v.length - 1]) : v === undefined || v === null ? undefined : String(v));

/** The list fields whose items the details name by index (`parameter_constraints[2]`): one textarea each. */
const LIST_FIELDS = /^(parameter_constraints|outcome_constraints|stop_when)(?:\[\d+\])?$/;

/**
 * Inline messages by form field, from an error's details: `parameters[1].bounds` (or the page's own
 * `param.<name>.<key>`) belongs to the second searched parameter's row, `objectives[0].weight` to the first
 * chosen objective, `parameter_constraints[2]` to the constraints, `config.x` to that option, `line 3,
 * column yield` to the warm-start file.
 */
export function fieldMessages(error: LabErrorLike | undefined, values: Values | undefined, searched: string[], chosen: string[]): FieldErrors {
  const out: FieldErrors = new Map();
  if (!error?.details) return out;
  const advanced = (k: string) => !!str(values?.[k])?.trim();
  const add = (key: string, msg: string) => out.set(key, [...(out.get(key) ?? []), msg]);
  const mark = (key: string) => out.set(key, out.get(key) ?? []);
  for (const d of error.details) {
    const f = d.field ?? '';
    const msg = d.field ? `${d.field}: ${d.message}` : d.message;
    let m: RegExpExecArray | null;
    const row = (name: string, input: string) => {
      add(`param.${name}`, msg);
      mark(`param.${name}.${input}`); // the offending input (bounds, step, value, choices, type)
    };
    if ((m = /^parameters\[(\d+)\](?:\.(\w+))?/.exec(f))) {
      const name = searched[+m[1]];
      if (advanced('parameters') || !name) add('parameters', msg);
      else row(name, m[2] ?? 'name');
    } else if ((m = /^param\.([^.]+)\.(\w+)$/.exec(f))) row(m[1], m[2]);
    else if ((m = /^objectives\[(\d+)\](?:\.(\w+))?/.exec(f))) {
      const name = chosen[+m[1]];
      if (advanced('objectives') || !name) add('objectives', msg);
      else {
        add(`objective.${name}`, msg);
        if (m[2] === 'weight') mark(`objective.${name}.weight`);
      }
    } else if ((m = LIST_FIELDS.exec(f))) add(m[1], msg);
    else if (f.startsWith('config')) add(advanced('config') ? 'config' : f, msg);
    else if (/^line \d+/.test(f) || f === 'existing_data') add('existing_data', msg);
    else if (f) add(f, msg);
  }
  return out;
}

export function Invalid({ messages }: { messages?: string[] }) {
  if (!messages?.length) return null;
  return (
    <div className="invalid-feedback d-block" data-testid="field-error">
      {messages.join('; ')}
    </div>
  );
}
