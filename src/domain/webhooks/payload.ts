import type { WebhookEventType } from '../model.ts';

/**
 * The delivery body: the spec's `{event, data, webhook_id, timestamp}` plus `id`, the message
 * id. `timestamp` is when the message was first sent (contract §6), so the body is serialised
 * when the first attempt is claimed and stored: every retry sends the same bytes, a receiver
 * can deduplicate on `id`, and the signature of a replay is identical.
 */
export function webhookBody(
  messageId: string,
  endpointId: string,
  type: WebhookEventType,
  data: unknown,
  firstSentAt: Date,
): string {
  return JSON.stringify({
    id: messageId,
    event: type,
    data,
    webhook_id: endpointId,
    timestamp: firstSentAt.toISOString(),
  });
}
