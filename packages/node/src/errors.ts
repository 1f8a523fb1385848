import type { ApiErrorBody } from './types.ts';

/** The server answered with an error (`{error, message, field?}`), after any retries. */
export class TrackwayApiError extends Error {
  override readonly name = 'TrackwayApiError';
  readonly status: number;
  /** The short name, e.g. `Invalid request`, `Not found`, `Rate limit exceeded`. */
  readonly error: string;
  readonly field: string | undefined;
  /** Seconds to wait, on a 429. */
  readonly retryAfter: number | undefined;

  constructor(status: number, body: Partial<ApiErrorBody> | undefined) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.error = body?.error ?? `HTTP ${status}`;
    this.field = body?.field;
    this.retryAfter = body?.retry_after;
  }
}

/** The request never got an answer (network error or timeout), after any retries. */
export class TrackwayNetworkError extends Error {
  override readonly name = 'TrackwayNetworkError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export type WebhookVerificationFailure =
  | 'missing_signature'
  | 'invalid_timestamp'
  | 'timestamp_out_of_tolerance'
  | 'invalid_signature'
  | 'invalid_payload';

/** `verifyWebhook()` refused a delivery: answer it with 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly code: WebhookVerificationFailure;
  constructor(code: WebhookVerificationFailure, message: string) {
    super(message);
    this.code = code;
  }
}
