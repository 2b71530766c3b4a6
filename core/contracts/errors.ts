/**
 * The error a plugin throws to say what went wrong, and the one the whole runtime uses: a code (its HTTP
 * status and CLI exit code follow from it), a message written for the person who has to act on it, and
 * `details` naming the offending field, row or step. Part of the plugin contract, so a driver or an
 * optimizer throws `new LabError('invalid_input', …)` and the caller sees a 400 naming its field.
 */
export const ERROR_CODES = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  busy: 409,
  /** The lab's safety guard refused the call (core/safety): a limit or a rule it breaks, named in `details`. */
  safety: 409,
  payload_too_large: 413,
  too_many_requests: 429,
  instrument_error: 502,
  /** An instrument (or the host it lives in) is offline. */
  unavailable: 503,
  /** The database does not answer (unreachable, restarting, or silent past its time limit): try again when it is back. */
  store_unavailable: 503,
  /** The safety file cannot be read or is not valid: every instrument call is blocked until it is fixed. */
  safety_file: 503,
  /** The database or the data folder cannot be written: its disk is full or read-only. */
  insufficient_storage: 507,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetail {
  /** The offending field, row/column or step path, when there is one. */
  field?: string;
  message: string;
  /** A safety refusal: the limit broken (where it comes from, its bounds). */
  limit?: unknown;
  /** A safety refusal: the id of the rule broken. */
  rule?: string;
  /** A safety refusal: the value that broke it. */
  value?: unknown;
  /** A safety refusal before a task moves: the step (`main[0]`) whose call would break the limit. */
  step?: string;
}

export class LabError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  /** Extra data for the caller (e.g. the task id of a failed instrument call). */
  readonly data?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[], data?: Record<string, unknown>) {
    super(message);
    this.name = 'LabError';
    this.code = code;
    this.details = details;
    this.data = data;
  }
}

export const isLabError = (e: unknown): e is LabError => e instanceof LabError;
