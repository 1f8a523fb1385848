import type { WebhookEvent } from '../model.ts';

/**
 * The delivery body: the spec's `{event, data, webhook_id, timestamp}` plus `id`, the message
 * id. Serialised once, when the message is committed, and stored: every retry sends the same
 * bytes, so a receiver can deduplicate on `id` and the signature of a replay is identical.
 */
export function webhookBody(
  messageId: string,
  endpointId: string,
  event: WebhookEvent,
  at: Date,
): string {
  return JSON.stringify({
    id: messageId,
    event: event.type,
    data: event.data,
    webhook_id: endpointId,
    timestamp: at.toISOString(),
  });
}
