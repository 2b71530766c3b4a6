/** Human-readable validation errors from zod issues: `volume_ml must be greater than 0`. */
import type { z } from '../contracts/index.js';
import { LabError, type ErrorDetail } from '../errors.js';

type Issue = z.core.$ZodIssue;

const article = (w: string) => (/^[aeiou]/i.test(w) ? `an ${w}` : `a ${w}`);

/** The problem of one issue, phrased to follow the field name. */
export function issueMessage(issue: Issue): string {
  const i = issue as unknown as Record<string, unknown>;
  const origin = String(i.origin ?? '');
  switch (issue.code) {
    case 'invalid_type': {
      if (/received undefined/.test(issue.message)) return 'is required';
      const expected = String(i.expected);
      if (expected === 'int') return 'must be an integer';
      return `must be ${article(expected)}`;
    }
    case 'too_small': {
      const min = Number(i.minimum);
      if (origin === 'number' || origin === 'bigint' || origin === 'int') {
        return i.inclusive ? `must be at least ${min}` : `must be greater than ${min}`;
      }
      if (origin === 'string') return min <= 1 ? 'must not be empty' : `must be at least ${min} characters long`;
      if (origin === 'array' || origin === 'set') return `must have at least ${min} item${min === 1 ? '' : 's'}`;
      return issue.message;
    }
    case 'too_big': {
      const max = Number(i.maximum);
      if (origin === 'number' || origin === 'bigint' || origin === 'int') {
        return i.inclusive ? `must be at most ${max}` : `must be less than ${max}`;
      }
      if (origin === 'string') return `must be at most ${max} characters long`;
      if (origin === 'array' || origin === 'set') return `must have at most ${max} item${max === 1 ? '' : 's'}`;
      return issue.message;
    }
    case 'invalid_value':
      return `must be one of ${(i.values as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(i.divisor)}`;
    case 'invalid_format':
      return i.format === 'regex' ? `must match ${String(i.pattern)}` : `must be a valid ${String(i.format)}`;
    case 'invalid_union':
      return 'does not match any allowed form';
    default:
      return issue.message;
  }
}

/** zod issues → details [{ field, message }] (unknown keys get one detail each). */
export function issueDetails(issues: readonly Issue[]): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const issue of issues) {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) out.push({ field: path ? `${path}.${k}` : k, message: 'is not a known parameter' });
      continue;
    }
    out.push({ field: path || '(arguments)', message: issueMessage(issue) });
  }
  return out;
}

/** One LabError for a set of details: "what: field problem; field problem". */
export function invalid(what: string, details: ErrorDetail[]): LabError {
  const text = details.map((d) => (d.field && d.field !== '(arguments)' ? `${d.field} ${d.message}` : d.message)).join('; ');
  return new LabError('invalid_input', `${what}: ${text}`, details);
}
