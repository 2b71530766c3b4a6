/** What the campaign form's parts share: the values sent back after an error, and the inline messages by field. */

export type Values = Record<string, unknown>;
export type LabErrorLike = { message: string; details?: { field?: string; message: string }[] };
/** Messages by form field name; an empty list marks the input without a message of its own. */
export type FieldErrors = Map<string, string[]>;

/** A form value as text: the last one when the field was sent more than once. */
export const str = (v: unknown): string | undefined => (Array.isArray(v) ? str(v[v.length - 1]) : v === undefined || v === null ? undefined : String(v));

/**
 * Inline messages by form field, from an error's details: `parameters[1].bounds` belongs to the second
 * searched parameter's row, `objectives[0].name` to the first chosen objective, `config.x` to that option,
 * `line 3, column yield` to the warm-start file.
 */
export function fieldMessages(error: LabErrorLike | undefined, values: Values | undefined, searched: string[], chosen: string[]): FieldErrors {
  const out: FieldErrors = new Map();
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

export function Invalid({ messages }: { messages?: string[] }) {
  if (!messages?.length) return null;
  return (
    <div className="invalid-feedback d-block" data-testid="field-error">
      {messages.join('; ')}
    </div>
  );
}
