import type {
  AttemptResult,
  ClaimedDelivery,
  DeliveryAttempt,
  WebhookEndpoint,
  WebhookEvent,
} from '../model.ts';
import type { Change, Page } from './common.ts';

export type RetryOutcome = 'queued' | 'in_flight' | 'not_found';

/** What a worker asks for when it claims due deliveries (WebhookStore.claimDue). */
export interface DeliveryClaim {
  now: Date;
  limit: number;
  perEndpoint: number;
  /** Requests the claiming worker has open, by endpoint id. */
  open: Readonly<Record<string, number>>;
  leaseMs: number;
  owner: string;
}

export interface WebhookStore {
  /**
   * Registers the endpoint unless the account already has `limit` (not deleted), checked
   * atomically: concurrent registrations cannot together pass the limit.
   */
  createEndpoint(
    endpoint: WebhookEndpoint,
    limit: number | null,
  ): Promise<'created' | 'limit_exceeded'>;
  listEndpoints(accountId: string): Promise<WebhookEndpoint[]>;
  getEndpoint(accountId: string, endpointId: string): Promise<WebhookEndpoint | null>;
  updateEndpoint(
    accountId: string,
    endpointId: string,
    change: Change<WebhookEndpoint>,
  ): Promise<{ before: WebhookEndpoint; after: WebhookEndpoint } | null>;
  /** Removes the endpoint and cancels what it had pending; `false` when there is none. */
  deleteEndpoint(accountId: string, endpointId: string, at: Date): Promise<boolean>;
  /** The attempt log, newest first. */
  listAttempts(
    accountId: string,
    endpointId: string,
    page: Page,
  ): Promise<{ attempts: DeliveryAttempt[]; total: number }>;
  /**
   * Puts a delivery back in the queue, due `at`: `queued`; `in_flight` (nothing changed) while
   * an unexpired lease covers an attempt being sent, so the message is never sent twice at
   * once; `not_found` when the endpoint never had it.
   */
  retryDelivery(
    accountId: string,
    endpointId: string,
    messageId: string,
    at: Date,
  ): Promise<RetryOutcome>;
  /** Writes a message addressed to one endpoint only, whatever its filter (test sends). */
  enqueueFor(endpointId: string, event: WebhookEvent): Promise<string>;
  /**
   * Claims up to `limit` due deliveries of enabled endpoints for `leaseMs`, recording each as
   * a pending attempt, so that no endpoint has more than `perEndpoint` open: an endpoint with
   * `open[id]` requests already in flight gets at most `perEndpoint - open[id]`. A claim is
   * exclusive until its lease ends, across workers and processes.
   */
  claimDue(options: DeliveryClaim): Promise<ClaimedDelivery[]>;
  /** Records how the attempt ended and what happens next; ignored if the lease was lost. */
  recordAttempt(
    delivery: ClaimedDelivery,
    owner: string,
    result: AttemptResult,
    at: Date,
  ): Promise<void>;
  /** The earliest time a pending delivery is due, to sleep exactly until then. */
  nextDueAt(): Promise<Date | null>;
  /** What waits to be delivered to enabled endpoints, read at each metrics scrape. */
  backlog(): Promise<OutboxBacklog>;
}

/**
 * An outbox's backlog: deliveries still pending (endpoints switched off excluded: theirs wait
 * for the customer, not for us) and when the oldest of their messages was committed.
 */
export interface OutboxBacklog {
  pending: number;
  oldestCreatedAt: Date | null;
  /**
   * The earliest `next_attempt_at` among them: once it is in the past, how far the workers
   * are behind (a retry scheduled for later is not lag).
   */
  nextDueAt: Date | null;
}
