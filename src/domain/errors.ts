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
  | 'method_not_allowed'
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

  constructor(retryAfter: number, message: string = RATE_LIMIT_MESSAGE) {
    super('rate_limited', message);
    this.retryAfter = retryAfter;
  }
}

/**
 * The store could not do it right now (unreachable, or still conflicting after its own
 * retries): nothing was written, and the same request can simply be sent again later. Adapters
 * translate their drivers' errors into this (storage/driver-errors.ts).
 */
export function storageUnavailable(
  reason: 'unreachable' | 'conflict',
  cause: unknown,
): TrackwayError {
  return new TrackwayError(
    'service_unavailable',
    reason === 'conflict'
      ? 'Storage is busy with conflicting writes; nothing was stored. Please retry shortly.'
      : 'Storage is not reachable right now; nothing was stored. Please retry shortly.',
    undefined,
    { cause },
  );
}
