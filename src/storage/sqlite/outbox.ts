import { newMessageId } from '../../domain/ids.ts';
import type { WebhookEvent } from '../../domain/model.ts';
import type { SqliteDatabase } from './database.ts';

/**
 * The transactional outbox: called inside the transaction of the change that caused the
 * events, it records one message per event and one delivery (with its final body) per
 * subscribed, enabled endpoint. An account without endpoints pays one indexed lookup.
 */
export function outboxWriter(db: SqliteDatabase): {
  /**
   * `targets`, when given, remembers each (account, event type)'s endpoints for the rest of
   * one transaction: they cannot change while it holds the write lock, and a batch of events
   * for one account then costs one lookup.
   */
  write(events: WebhookEvent[], targets?: Map<string, string[]>): number;
  writeFor(endpointId: string, event: WebhookEvent): string;
} {
  const endpoints = db.prepare<[string, string], { id: string }>(
    `SELECT id FROM webhook_endpoints
      WHERE account_id = ? AND enabled = 1 AND deleted_at IS NULL
        AND EXISTS (SELECT 1 FROM json_each(events) WHERE value = ?)`,
  );
  const message = db.prepare(
    'INSERT INTO webhook_messages (id, account_id, event_type, data, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const delivery = db.prepare(
    `INSERT INTO webhook_deliveries (message_id, endpoint_id, account_id, status, attempts, next_attempt_at)
     VALUES (?, ?, ?, 'pending', 0, ?)`,
  );
  const writeMessage = (event: WebhookEvent, targets: string[]): string => {
    const id = newMessageId();
    const at = event.occurredAt.getTime();
    message.run(id, event.accountId, event.type, JSON.stringify(event.data), at);
    for (const target of targets) {
      delivery.run(id, target, event.accountId, at);
    }
    return id;
  };
  return {
    write(events, memo) {
      let written = 0;
      for (const event of events) {
        const key = `${event.accountId}\u0000${event.type}`;
        let targets = memo?.get(key);
        if (!targets) {
          targets = endpoints.all(event.accountId, event.type).map((t) => t.id);
          memo?.set(key, targets);
        }
        if (targets.length > 0) {
          writeMessage(event, targets);
          written += 1;
        }
      }
      return written;
    },
    writeFor: (endpointId, event) => writeMessage(event, [endpointId]),
  };
}
