/**
 * What the domain needs from the outside world. Every adapter (SQLite, PostgreSQL, memory,
 * Redis) implements these; the contract suites in storage/ and rate-limit/ hold each adapter to
 * the same behaviour. Every query is scoped by the caller's account id.
 */
import type {
  Account,
  ApiKeyRecord,
  AttemptResult,
  ClaimedDelivery,
  DeliveryAttempt,
  Pixel,
  TrackedEvent,
  WebhookEndpoint,
  WebhookEvent,
} from './model.ts';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface Page {
  limit: number;
  offset: number;
}

/** A change computed from the current row inside the store's transaction. */
export type Change<T> = (current: T) => { next: T; emit: WebhookEvent[] } | null;

export interface NewApiKeyRow extends ApiKeyRecord {
  /** SHA-256 of the key; the only form in which a key is kept. */
  hash: string;
}

export interface AccountStore {
  createAccount(account: Account, firstKey: NewApiKeyRow | null): Promise<void>;
  getAccount(accountId: string): Promise<Account | null>;
  countAccounts(): Promise<number>;
  /** Every account, oldest first (the operator's `accounts list`). */
  listAccounts(): Promise<Account[]>;
  /** Applies `change` to the account atomically; `null` when there is no such account. */
  updateAccount(
    accountId: string,
    change: Change<Account>,
  ): Promise<{ before: Account; after: Account } | null>;
  createApiKey(key: NewApiKeyRow): Promise<void>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked (idempotent); `null` when there is no such key. */
  revokeApiKey(keyId: string, at: Date): Promise<ApiKeyRecord | null>;
  /** The account owning an unrevoked key with this hash. */
  findByKeyHash(hash: string): Promise<{ account: Account; keyId: string } | null>;
}

export interface PixelStore {
  /** Creates the pixel unless the account already holds `quota` pixels (checked atomically). */
  createPixel(
    pixel: Pixel,
    quota: number | null,
    emit: WebhookEvent[],
  ): Promise<'created' | 'quota_exceeded'>;
  getPixel(accountId: string, pixelId: string): Promise<Pixel | null>;
  listPixels(accountId: string, page: Page): Promise<{ pixels: Pixel[]; total: number }>;
  updatePixel(
    accountId: string,
    pixelId: string,
    change: Change<Pixel>,
  ): Promise<{ before: Pixel; after: Pixel } | null>;
}

export interface EventQuery extends Page {
  accountId: string;
  pixelId: string;
  eventName?: string;
  /** Inclusive bounds on the event's `timestamp`. */
  from?: Date;
  to?: Date;
}

export type InsertOutcome = 'inserted' | 'duplicate';

/** An event to store with the webhook messages it causes if it is new. */
export type RetryOutcome = 'queued' | 'in_flight' | 'not_found';

export interface NewEvent {
  event: TrackedEvent;
  emit: WebhookEvent[];
}

export interface EventStore {
  /**
   * Commits the event (and its webhook messages) durably before resolving. `duplicate` when
   * `(pixelId, eventId)` is already stored: the first event wins and nothing is emitted.
   */
  insertEvent(event: TrackedEvent, emit: WebhookEvent[]): Promise<InsertOutcome>;
  /**
   * Commits all the events in one transaction (a batch request is one commit), with the same
   * rules as insertEvent; within the list the first of equal `(pixelId, eventId)` wins. Results
   * are in order; an event the database refuses is `rejected` alone, its neighbours are stored.
   */
  insertEvents(events: NewEvent[]): Promise<PromiseSettledResult<InsertOutcome>[]>;
  /** Newest first: `timestamp` desc, then arrival desc. `total` counts every match. */
  listEvents(query: EventQuery): Promise<{ events: TrackedEvent[]; total: number }>;
}

export interface WebhookStore {
  createEndpoint(endpoint: WebhookEndpoint): Promise<void>;
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
  claimDue(options: {
    now: Date;
    limit: number;
    perEndpoint: number;
    /** Requests the claiming worker has open, by endpoint id. */
    open: Readonly<Record<string, number>>;
    leaseMs: number;
    owner: string;
  }): Promise<ClaimedDelivery[]>;
  /** Records how the attempt ended and what happens next; ignored if the lease was lost. */
  recordAttempt(
    delivery: ClaimedDelivery,
    owner: string,
    result: AttemptResult,
    at: Date,
  ): Promise<void>;
  /** The earliest time a pending delivery is due, to sleep exactly until then. */
  nextDueAt(): Promise<Date | null>;
}

export interface Store {
  accounts: AccountStore;
  pixels: PixelStore;
  events: EventStore;
  webhooks: WebhookStore;
  /** Runs pending migrations; safe to call on every start. */
  migrate(): Promise<void>;
  /** Cheap round trip, for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Fixed windows aligned to the UTC calendar: the minute and the day. */
export type RateWindow = 'minute' | 'day';

export const RATE_WINDOW_SECONDS: Record<RateWindow, number> = { minute: 60, day: 86_400 };

export interface RateQuota {
  window: RateWindow;
  limit: number;
}

export interface RateWindowState {
  window: RateWindow;
  limit: number;
  /** Room left in the window after this request (0 when refused). */
  remaining: number;
  /** When the window resets, Unix epoch seconds. */
  resetAt: number;
}

export interface RateDecision {
  allowed: boolean;
  /** One entry per quota asked for, in the same order. */
  windows: RateWindowState[];
}

export interface RateLimiter {
  /**
   * Counts one request against every quota of `key` if all of them have room, atomically (also
   * across instances for a shared adapter). A refused request counts against none of them.
   * Windows are taken from `now`, so a test clock drives window boundaries.
   */
  consume(key: string, quotas: readonly RateQuota[], now: Date): Promise<RateDecision>;
  close(): Promise<void>;
}
