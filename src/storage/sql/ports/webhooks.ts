import type { WebhookStore } from '../../../domain/ports/webhook-store.ts';
import * as attempts from '../../queries/webhook-attempts.ts';
import * as deliveries from '../../queries/webhook-deliveries.ts';
import * as endpoints from '../../queries/webhook-endpoints.ts';
import type { Runner } from '../query.ts';

/** The delivery queue's parts written per database (sqlite/webhooks.ts, postgres/webhooks.ts). */
export type DeliveryQueue = Pick<
  WebhookStore,
  'retryDelivery' | 'enqueueFor' | 'claimDue' | 'recordAttempt'
>;

export function webhookStore(
  { sql: db, read, transaction, own }: Runner,
  queue: DeliveryQueue,
): WebhookStore {
  return {
    createEndpoint: (endpoint, limit) =>
      transaction(() => endpoints.createEndpoint(db, endpoint, limit)),
    listEndpoints: (accountId) => read(() => endpoints.listEndpoints(db, accountId)),
    getEndpoint: (accountId, id) => read(() => endpoints.getEndpoint(db, accountId, id)),
    updateEndpoint: (accountId, id, change) =>
      transaction(() => endpoints.updateEndpoint(db, accountId, id, change)),
    deleteEndpoint: (accountId, id, at) =>
      transaction(() => endpoints.deleteEndpoint(db, accountId, id, at)),
    listAttempts: (accountId, id, page) =>
      read(() => attempts.listAttempts(db, accountId, id, page)),
    retryDelivery: (accountId, id, messageId, at) =>
      own(async (note) => {
        const outcome = await queue.retryDelivery(accountId, id, messageId, at);
        note({ outbox: outcome === 'queued' });
        return outcome;
      }),
    enqueueFor: (endpointId, event) =>
      own(async (note) => {
        const id = await queue.enqueueFor(endpointId, event);
        note({ outbox: true });
        return id;
      }),
    claimDue: (options) => own(() => queue.claimDue(options)),
    recordAttempt: (delivery, owner, result, at) =>
      own(() => queue.recordAttempt(delivery, owner, result, at)),
    nextDueAt: () => read(() => deliveries.nextDueAt(db)),
    backlog: () => read(() => deliveries.backlog(db)),
  };
}
