/**
 * The single place where failures become HTTP: each error code's status and the spec's short
 * `error` name. Bodies are always `{ error, message }`, plus `field` when one field is at fault.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, RateLimitedError, TrackwayError } from '../domain/errors.ts';

export const MAX_BODY_BYTES = 32_768;
/** POST /v1/track/batch: room for 1,000 typical events (Segment's batch limit is 500 KB). */
export const MAX_BATCH_BODY_BYTES = 524_288;

const CATALOGUE: Record<ErrorCode, { status: number; error: string }> = {
  invalid_request: { status: 400, error: 'Invalid request' },
  unauthorized: { status: 401, error: 'Unauthorized' },
  forbidden: { status: 403, error: 'Forbidden' },
  not_found: { status: 404, error: 'Not found' },
  method_not_allowed: { status: 405, error: 'Method not allowed' },
  conflict: { status: 409, error: 'Conflict' },
  payload_too_large: { status: 413, error: 'Payload too large' },
  unsupported_media_type: { status: 415, error: 'Unsupported media type' },
  rate_limited: { status: 429, error: 'Rate limit exceeded' },
  service_unavailable: { status: 503, error: 'Service unavailable' },
  internal: { status: 500, error: 'Internal server error' },
};

export interface ErrorBody {
  error: string;
  message: string;
  field?: string;
  retry_after?: number;
}

export function errorBody(error: TrackwayError): { status: number; body: ErrorBody } {
  const { status, error: name } = CATALOGUE[error.code];
  const body: ErrorBody = { error: name, message: error.message };
  if (error.field !== undefined) body.field = error.field;
  if (error instanceof RateLimitedError) body.retry_after = error.retryAfter;
  return { status, body };
}

/** Fastify's own errors (body parsing, limits) in the product's words. */
function fromFastify(error: FastifyError, bodyLimit: number): TrackwayError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new TrackwayError('payload_too_large', `Request body exceeds ${bodyLimit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new TrackwayError('unsupported_media_type', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new TrackwayError('invalid_request', 'Request body must be a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new TrackwayError('invalid_request', 'Content-Length does not match the body');
    // Raised by the router, before any route or hook (frameworkErrors in app.ts).
    case 'FST_ERR_BAD_URL':
      return new TrackwayError(
        'invalid_request',
        'Malformed URL: a percent-encoded part of the path is not valid UTF-8',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new TrackwayError('invalid_request', 'Malformed URL: a part of the path is too long');
  }
  if (error.statusCode === 400 && error instanceof SyntaxError) {
    return new TrackwayError('invalid_request', 'Malformed JSON body');
  }
  if (error.statusCode === 415) {
    return new TrackwayError('unsupported_media_type', 'Content-Type must be application/json');
  }
  return undefined;
}

/** `bodyLimit` is the route's, for the 413 message (the batch route allows more). */
export function toTrackwayError(error: unknown, bodyLimit = MAX_BODY_BYTES): TrackwayError {
  if (error instanceof TrackwayError) return error;
  const known = fromFastify(error as FastifyError, bodyLimit);
  if (known) return known;
  // A store outage or conflict arrives as a domain error already (storage/driver-errors.ts):
  // what is left is a bug.
  return new TrackwayError('internal', 'An unexpected error occurred');
}

/**
 * The client closed its connection before its request body arrived: Node fails the body
 * stream with `ECONNRESET` "aborted" (no `syscall`, unlike a database socket's reset, which is a
 * storage outage). Nothing went wrong on our side, so it is no 503 and no outage warning.
 */
function isClientAbort(error: unknown, request: FastifyRequest): boolean {
  return (
    error instanceof Error &&
    (error as NodeJS.ErrnoException).code === 'ECONNRESET' &&
    (error as NodeJS.ErrnoException).syscall === undefined &&
    (request.raw.readableAborted || request.raw.socket?.destroyed === true)
  );
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  if (isClientAbort(error, request)) {
    request.log.debug('client closed the connection before its request body arrived');
    // Nobody is there to read it; the status is for metrics and access logs (a client error).
    return reply.code(400).send({
      error: 'Invalid request',
      message: 'The connection closed before the request body arrived',
    });
  }
  const mapped = toTrackwayError(error, request.routeOptions.bodyLimit ?? MAX_BODY_BYTES);
  if (mapped.code === 'internal') {
    // The only place a stack trace goes: the log, never the client.
    request.log.error({ err: error }, 'unhandled error');
  } else if (mapped.code === 'service_unavailable') {
    // The driver's own words (the cause), for the operator; the client got the product's.
    const cause = (error as Error).cause;
    request.log.warn(
      { err: cause instanceof Error ? cause.message : (error as Error).message },
      'storage unavailable',
    );
  }
  const { status, body } = errorBody(mapped);
  if (body.retry_after !== undefined) reply.header('retry-after', body.retry_after);
  return reply.code(status).send(body);
}

/**
 * Errors Node raises before a request reaches Fastify (a client too slow, headers too large,
 * bytes that are not HTTP), answered in the product's `{error, message}` shape instead of
 * Fastify's default (which adds `statusCode`).
 */
export function handleClientError(error: NodeJS.ErrnoException, socket: import('node:net').Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, body] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [
          408,
          'Request Timeout',
          { error: 'Request timeout', message: 'The request did not arrive in time' },
        ]
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [
            431,
            'Request Header Fields Too Large',
            { error: 'Invalid request', message: 'Request headers are too large' },
          ]
        : [400, 'Bad Request', { error: 'Invalid request', message: 'Malformed HTTP request' }];
  const json = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
    );
  }
  socket.destroy();
}
