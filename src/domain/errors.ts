/**
 * The one closed list of things that can go wrong, in the product's words. Domain code throws
 * `TrackwayError`; `http/errors.ts` is the single place that turns a code into a status and the
 * spec's `{ error, message }` body.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'service_unavailable'
  | 'internal';

export class TrackwayError extends Error {
  readonly code: ErrorCode;
  /** The one field at fault, as a dotted path (`user_data.phone`), when there is one. */
  readonly field: string | undefined;

  constructor(code: ErrorCode, message: string, field?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TrackwayError';
    this.code = code;
    this.field = field;
  }
}

/** A field with the wrong type or format: `Invalid field: value must be a finite number`. */
export function invalidField(field: string, reason: string): TrackwayError {
  return new TrackwayError('invalid_request', `Invalid field: ${field} ${reason}`, field);
}

export function invalidParameter(parameter: string, reason: string): TrackwayError {
  return new TrackwayError(
    'invalid_request',
    `Invalid parameter: ${parameter} ${reason}`,
    parameter,
  );
}

export function pixelNotFound(pixelId: string): TrackwayError {
  return new TrackwayError('not_found', `Pixel not found: ${pixelId}`);
}

export const RATE_LIMIT_MESSAGE = 'Too many requests. Please try again later.';

/** 429: the spec's body carries `retry_after`, whole seconds until the binding window resets. */
export class RateLimitedError extends TrackwayError {
  readonly retryAfter: number;

  constructor(retryAfter: number) {
    super('rate_limited', RATE_LIMIT_MESSAGE);
    this.retryAfter = retryAfter;
  }
}

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
  // SQLite: still locked by another writer after busy_timeout.
  'SQLITE_BUSY',
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Connection is closed|connection error/i;

/**
 * True for a storage outage (as opposed to a bug): the request is answered 503 at once, and
 * the same request can simply be sent again later.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) {
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
