/**
 * The delivery transitions both stores apply, written once: what a claim sends, how an attempt
 * cut short is logged, and what a recorded attempt does to its delivery and its endpoint. The
 * stores only persist what these return (in their hand-written hot-path SQL).
 */
import type { AttemptResult, WebhookEventType } from '../model.ts';
import { webhookBody } from './payload.ts';

/** The error of an attempt whose worker stopped before it ended (found at the next claim). */
export const INTERRUPTED_ATTEMPT_ERROR =
  'Interrupted: the worker stopped before the attempt finished';

/**
 * The bytes a claimed attempt sends: fixed at the first claim (its `timestamp` is when the
 * message was first sent) and kept, so every retry sends exactly the same body.
 */
export function claimedBody(
  delivery: {
    messageId: string;
    endpointId: string;
    eventType: WebhookEventType;
    /** The message's `data`, as stored (JSON text). */
    data: string;
    /** The body kept by an earlier claim; null until the first. */
    body: string | null;
  },
  now: Date,
): string {
  return (
    delivery.body ??
    webhookBody(
      delivery.messageId,
      delivery.endpointId,
      delivery.eventType,
      JSON.parse(delivery.data),
      now,
    )
  );
}

export interface AfterAttempt {
  /** The delivery's next state: `pending` again (due `nextAttemptAt`) or settled. */
  status: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
  /**
   * The endpoint's failure clock: `null` clears it (a success); a date starts it unless it is
   * already running (the store keeps the earlier start).
   */
  failingSince: Date | null;
  /** Set when the endpoint is switched off, with the reason. */
  disable: string | null;
}

/** What a recorded attempt, ended `at`, does to its delivery and its endpoint. */
export function afterAttempt(result: AttemptResult, at: Date): AfterAttempt {
  const { outcome } = result;
  return {
    status: outcome.kind === 'retry' ? 'pending' : outcome.kind,
    nextAttemptAt: outcome.kind === 'retry' ? outcome.at : null,
    failingSince: result.status === 'succeeded' ? null : at,
    disable: result.disableEndpoint ?? null,
  };
}
