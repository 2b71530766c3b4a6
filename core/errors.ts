/**
 * One catalogue of coded errors for the whole runtime. Core code throws LabError with a code; the HTTP
 * layer maps codes to statuses (server/errors.ts) and the CLI to exit codes. Messages are written for the
 * person who has to act on them; `details` names the offending field, row or step.
 */
export const ERROR_CODES = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  busy: 409,
  payload_too_large: 413,
  too_many_requests: 429,
  instrument_error: 502,
  /** An instrument (or the host it lives in) is offline. */
  unavailable: 503,
  /** The database or the data folder cannot be written: its disk is full or read-only. */
  insufficient_storage: 507,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetail {
  /** The offending field, row/column or step path, when there is one. */
  field?: string;
  message: string;
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

/** Error codes of a disk or database that cannot write: SQLite's, PostgreSQL's (disk full, read-only), the OS's. */
const FULL = /^(SQLITE_FULL|53100|ENOSPC)$/;
const READ_ONLY = /^(SQLITE_READONLY.*|SQLITE_IOERR.*|SQLITE_CANTOPEN|25006|EROFS|EACCES|EPERM)$/;

/**
 * A write refused by a full or read-only disk → 507 naming where the data lives (`what`: the thing that
 * was not stored); anything else unchanged.
 */
export function storageFailure(e: unknown, where: string, what = 'The record'): unknown {
  const err = e as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = String(err?.driverError?.code ?? err?.code ?? '');
  const full = FULL.test(code);
  if (!full && !READ_ONLY.test(code)) return e;
  return new LabError(
    'insufficient_storage',
    `${what} could not be stored: ${where} ${full ? 'has no space left' : 'cannot be written (read-only, or no permission)'} (${code}). Free space or fix the data folder; nothing was written.`,
    undefined,
    { storage: code },
  );
}
