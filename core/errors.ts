/**
 * One catalogue of coded errors for the whole runtime. Core code throws LabError with a code; the HTTP
 * layer maps codes to statuses (server/errors.ts) and the CLI to exit codes. The error type itself is part
 * of the plugin contract (core/contracts/errors.ts), so plugins import it without reaching into core/.
 */
import { LabError } from './contracts/errors.js';

export { ERROR_CODES, LabError, isLabError, type ErrorCode, type ErrorDetail } from './contracts/errors.js';

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
