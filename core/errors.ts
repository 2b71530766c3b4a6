/**
 * One catalogue of coded errors for the whole runtime. Core code throws LabError with a code; the HTTP
 * layer maps codes to statuses (server/errors.ts) and the CLI to exit codes. The error type itself is part
 * of the plugin contract (core/contracts/errors.ts), so plugins import it without reaching into core/.
 */
import { LabError, isLabError } from './contracts/errors.js';

export { ERROR_CODES, LabError, isLabError, type ErrorCode, type ErrorDetail } from './contracts/errors.js';

/** Error codes of a disk or database that cannot write: SQLite's, PostgreSQL's (disk full, read-only), the OS's. */
const FULL = /^(SQLITE_FULL|53100|ENOSPC)$/;
const READ_ONLY = /^(SQLITE_READONLY.*|SQLITE_IOERR.*|SQLITE_CANTOPEN|25006|EROFS|EACCES|EPERM)$/;

/**
 * Codes of a database that does not answer: the OS's (refused, reset, unreachable, timed out), PostgreSQL's
 * connection exceptions (class 08), shutdowns (57P01 terminated by an administrator, 57P02, 57P03 starting up),
 * too many connections (53300), a statement cancelled by its time limit (57014), SQLite's busy/locked.
 */
const UNREACHABLE = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|08\w{3}|57P0[123]|53300|57014|SQLITE_BUSY.*|SQLITE_LOCKED.*)$/;
/** What node-postgres says when a connection dies or a time limit passes (these errors carry no code). */
const UNREACHABLE_TEXT =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|not queryable|Cannot use a pool after calling end|terminating connection/i;

/**
 * A database failure as the store reports it: a full or read-only disk → 507 (see storageFailure); a
 * database that does not answer → 503 `store_unavailable` naming it and the driver's reason; anything else
 * unchanged. Every statement of the store goes through it (core/store/sql.ts), and the HTTP layer applies it
 * to what reaches it raw.
 */
export function storeFailure(e: unknown, where: string): unknown {
  if (isLabError(e)) return e;
  const stored = storageFailure(e, where);
  if (stored !== e) return stored;
  const err = e as { code?: unknown; message?: unknown; driverError?: { code?: unknown; message?: unknown } } | null;
  const code = String(err?.driverError?.code ?? err?.code ?? '');
  const text = String(err?.driverError?.message ?? err?.message ?? '');
  if (!UNREACHABLE.test(code) && !UNREACHABLE_TEXT.test(text)) return e;
  const why = code === '57014' ? 'did not answer within its time limit' : 'cannot be reached';
  return new LabError('store_unavailable', `The database ${where} ${why} (${code || text.slice(0, 120)}): try again when it answers again.`, undefined, { storage: code || 'unreachable' });
}

/** A store failure (full or read-only disk, database unreachable): the run or request could not be recorded. */
export function isStoreFault(e: unknown): e is LabError {
  return isLabError(e) && (e.code === 'insufficient_storage' || e.code === 'store_unavailable');
}

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
