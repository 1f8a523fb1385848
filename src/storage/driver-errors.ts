/**
 * What the drivers' errors mean, known only here: SQLSTATE codes, pg's messages, socket codes,
 * SQLite's busy code. Each database's runner (sqlite/runner.ts; postgres/runner.ts, whose pool
 * every PostgreSQL query goes through) translates with `toDomainError`, so the domain and the
 * HTTP layer see domain errors (`storageUnavailable`), never a driver's.
 */
import { storageUnavailable, TrackwayError } from '../domain/errors.ts';

/** Errors that mean "the database cannot be reached right now", from either store's driver. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // PostgreSQL: admin/crash shutdown, cannot connect now, too many connections.
  '57P01',
  '57P02',
  '57P03',
  '53300',
  // SQLite: still locked by another writer after busy_timeout; the disk full.
  'SQLITE_BUSY',
  'SQLITE_FULL',
]);
/**
 * SQLite's primary codes whose extended forms (`SQLITE_IOERR_WRITE`, `SQLITE_READONLY_DBMOVED`
 * …) all mean the file cannot be used right now: an I/O error, a file made read-only or moved,
 * a file that cannot be opened. None is a bug in the request.
 */
const UNAVAILABLE_CODE_FAMILIES = /^SQLITE_(IOERR|READONLY|CANTOPEN|BUSY)(_|$)/;
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Connection is closed|connection error|database connection is not open/i;

/**
 * True for a storage outage (as opposed to a bug): the request is answered 503 at once, and
 * the same request can simply be sent again later.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (
    typeof code === 'string' &&
    (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || UNAVAILABLE_CODE_FAMILIES.test(code))
  ) {
    return true;
  }
  return UNAVAILABLE_MESSAGES.test(error.message);
}

/**
 * PostgreSQL aborted a transaction to resolve a conflict with another one, not because of
 * anything in it: a serialization failure or a deadlock. Nothing was written, and running it
 * again normally succeeds.
 */
export function isTransactionConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/** A driver's error as the domain's, when it is an outage or a conflict; anything else as is. */
export function toDomainError(error: unknown): unknown {
  if (error instanceof TrackwayError) return error;
  if (isStorageUnavailable(error)) return storageUnavailable('unreachable', error);
  // Still conflicting after the store's own retries (postgres/database.ts): nothing was
  // stored, and the client's retry is the right answer, not a 500.
  if (isTransactionConflict(error)) return storageUnavailable('conflict', error);
  return error;
}
