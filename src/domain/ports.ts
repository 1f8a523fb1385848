/**
 * What the domain needs from the outside world. Every adapter (SQLite, PostgreSQL, memory,
 * Redis) implements these; the contract suites in storage/ and rate-limit/ hold each adapter to
 * the same behaviour. Every query is scoped by the caller's account id.
 */

import type { Destination, ForwardableEvent, PlatformRequest } from './forwarding/model.ts';
import type { PlatformAnswer, Verdict } from './forwarding/platform-response.ts';
import type { Platform } from './forwarding/platforms/registry.ts';
import type {
  Account,
  ApiKeyRecord,
  AttemptResult,
  ClaimedDelivery,
  DashboardSession,
  DeliveryAttempt,
  KeyScope,
  ManagedKey,
  Pixel,
  SequencedEvent,
  StatsBucket,
  StatsInterval,
  TrackedEvent,
  VisitorKeys,
  WebhookEndpoint,
  WebhookEvent,
} from './model.ts';
import type { DiagnosticsQuery, DiagnosticsRollup } from './stats/diagnostics.ts';

/**
 * Where webhooks may be sent (the SSRF rule, contract §6). Checking resolves DNS, so it is a
 * port: the domain asks, the adapter (delivery/ssrf.ts) looks up.
 */
export interface DestinationCheck {
  /** The normalised URL, or a TrackwayError naming the `url` field. */
  check(url: string): Promise<URL>;
}

export interface Clock {
  now(): Date;
}

/**
 * Timers that run on a clock's time, so a test clock can fire them by moving time forward
 * instead of the test sleeping (the delivery worker's polls and waits).
 */
export interface Timers {
  /** Calls `callback` once `ms` of this clock's time have passed; returns what cancels it. */
  setTimer(callback: () => void, ms: number): () => void;
}

export const systemClock: Clock & Timers = {
  now: () => new Date(),
  setTimer(callback, ms) {
    // Not unref'd: in a standalone `trackway worker` the worker's timer keeps the process alive.
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
};

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
  /** The account owning an unrevoked key with this hash, and what the key may do. */
  findByKeyHash(hash: string): Promise<{ account: Account; keyId: string; scope: KeyScope } | null>;
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
  /**
   * The pixel (of any account) a publishable key opens: its current key, or the previous one
   * until that expires at `now`.
   */
  findByPublishableKey(key: string, now: Date): Promise<Pixel | null>;
  /** Whether the hostname is an active pixel's domain, a subdomain of it, or its tracking domain. */
  isPixelSite(hostname: string): Promise<boolean>;
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
  /** One stored event of the pixel, by its event id. */
  getEvent(accountId: string, pixelId: string, eventId: string): Promise<TrackedEvent | null>;
  /** Newest first: `timestamp` desc, then arrival desc. `total` counts every match. */
  listEvents(query: EventQuery): Promise<{ events: TrackedEvent[]; total: number }>;
}

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

/** How many events one commit stored, and how many it found already stored. */
export interface StoredCounts {
  stored: number;
  deduplicated: number;
}

/**
 * What a store announces once a write has committed: the one place the delivery worker and
 * the metrics learn of writes, so no caller (a route, the CLI) has to remember to tell them.
 */
export interface CommitNotifier {
  /** Webhook messages were committed, or a delivery put back in the queue: work is due now. */
  outboxWritten(): void;
  /** Events were committed (`insertEvent`, `insertEvents`). */
  eventsStored(counts: StoredCounts): void;
  /**
   * Forwarding jobs may have been committed or put back in the queue (events stored, a
   * destination resumed, a replay): the forwarding worker looks for due work.
   */
  forwardingQueued(): void;
  /** A replay was recorded: a forwarding worker starts queueing its events. */
  replayAccepted(): void;
  /** A pixel was changed: a copy kept of it (the track path's pixel cache) is stale. */
  pixelChanged(accountId: string, pixelId: string): void;
}

export interface Store {
  destinations: DestinationStore;
  forwarding: ForwardingStore;
  accounts: AccountStore;
  pixels: PixelStore;
  events: EventStore;
  webhooks: WebhookStore;
  keys: KeyStore;
  stats: StatsStore;
  feed: EventFeed;
  sessions: SessionStore;
  lifecycle: LifecycleStore;
  matchKeys: MatchKeyStore;
  /** Runs pending migrations; safe to call on every start. */
  migrate(): Promise<void>;
  /** Cheap round trip, for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// ---- Keys, stats, live tail and dashboard sessions (contract §13) ----

export interface NewManagedKeyRow extends NewApiKeyRow {
  name: string;
  scope: KeyScope;
}

/** The keys API's view of api_keys: names, scopes and last use, always scoped by account. */
export interface KeyStore {
  createKey(key: NewManagedKeyRow): Promise<void>;
  /** Oldest first, revoked keys included (the operator CLI: every key). */
  listKeys(accountId: string): Promise<ManagedKey[]>;
  /** The same order, one page of it, and how many keys the account has. */
  pageKeys(accountId: string, page: Page): Promise<{ keys: ManagedKey[]; total: number }>;
  /** Marks the account's key revoked (idempotent); `null` when the account has no such key. */
  revokeKey(accountId: string, keyId: string, at: Date): Promise<ManagedKey | null>;
  /** Records a use of the key; callers throttle it (one write a minute per key). */
  touchKey(keyId: string, at: Date): Promise<void>;
}

export interface StatsQuery {
  accountId: string;
  pixelId: string;
  interval: StatsInterval;
  /** Bucket numbers since the epoch (hours or days), `first` and `last` inclusive. */
  first: number;
  last: number;
  eventName?: string;
}

export interface StatsStore {
  /** The non-empty buckets of the range, from the per-bucket counts (never the events table). */
  eventStats(query: StatsQuery): Promise<StatsBucket[]>;
  /**
   * The same buckets, in the same order, as the API's JSON array text
   * (`[{"start","event_name","count","value_sum"}, …]`): the stats route sends it as is. A
   * 1,000-hour range over ten names is 10,000 entries (~1 MB); built by the database (or
   * straight from its rows) it costs a fraction of rows → objects → serializer.
   */
  eventStatsJson(query: StatsQuery): Promise<string>;
  /**
   * The range for a chart, bounded whatever the number of names: the `top` names with the
   * most events in the range, bucket by bucket, and every other name summed per bucket as
   * `eventName: null`; `otherNames` counts those names. At most (top + 1) rows a bucket.
   */
  topEventStats(query: StatsQuery, top: number): Promise<TopEventStats>;
  /** The diagnostics rollups (migration 025) summed over the query's hours. */
  diagnostics(query: DiagnosticsQuery): Promise<DiagnosticsRollup>;
  /**
   * The newest event of the name in the period stored without the match key (a match-quality
   * key name), looked for among the newest 50 of that name only; null when none of them.
   */
  exampleLacking(
    query: DiagnosticsQuery & { eventName: string; qualityKey: string },
  ): Promise<string | null>;
  /**
   * Revenue per hour and currency over the query's hours (revenue_hourly); with `names`,
   * per event name of those and currency instead (`hour` then 0): bounded by the names asked
   * for, whatever the pixel's number of names.
   */
  revenue(query: DiagnosticsQuery, names?: readonly string[]): Promise<RevenueRow[]>;
  /** A page of the events explorer (dashboard): see ExplorerQuery. */
  explore(query: ExplorerQuery): Promise<ExplorerPage>;
}

export interface RevenueRow {
  hour: number;
  /** Set when the rows are per name. */
  eventName: string | null;
  /** '' for values sent without a currency. */
  currency: string;
  n: number;
  valueSum: number;
}

/** The events explorer's page: newest first, before (`older`) or after (`newer`) a cursor. */
export interface ExplorerQuery {
  accountId: string;
  pixelId: string;
  limit: number;
  eventName?: string;
  source?: string;
  from?: Date;
  to?: Date;
  /** Events with a job in this status (for this destination, or any). */
  status?: { status: ForwardStatus; destinationId?: string };
  cursor?: { timestamp: Date; seq: number; direction: 'older' | 'newer' };
}

export interface ExplorerPage {
  events: Array<{
    event: TrackedEvent;
    seq: number;
    forwarding: Array<{ destinationId: string; status: string }>;
  }>;
  /** Whether there are events past each end of the page. */
  older: boolean;
  newer: boolean;
}

/** A chart's buckets (StatsStore.topEventStats): `eventName` null for the other names together. */
export interface TopEventStats {
  buckets: Array<Omit<StatsBucket, 'eventName'> & { eventName: string | null }>;
  otherNames: number;
}

/**
 * What the store announces after it committed new events: every instance hears of events any
 * instance stored (PostgreSQL: LISTEN/NOTIFY; SQLite: one process, an in-process bus).
 */
export interface EventFeed {
  /**
   * Calls `listener` with the arrival numbers of each commit's new events of the pixel. The
   * promise resolves once the subscription is live; the function it gives ends it.
   */
  subscribe(pixelId: string, listener: (seqs: number[]) => void): Promise<() => void>;
  /** The pixel's events with these arrival numbers, in arrival order. */
  eventsBySeq(accountId: string, pixelId: string, seqs: number[]): Promise<SequencedEvent[]>;
  /** The pixel's events that arrived after `afterSeq`, oldest first, at most `limit`. */
  eventsAfter(
    accountId: string,
    pixelId: string,
    afterSeq: number,
    limit: number,
  ): Promise<SequencedEvent[]>;
  close(): Promise<void>;
}

export interface SessionStore {
  createSession(session: DashboardSession): Promise<void>;
  /** The session with this token hash, unexpired at `now` and with its key unrevoked. */
  findSession(tokenHash: string, now: Date): Promise<DashboardSession | null>;
  deleteSession(tokenHash: string): Promise<void>;
}

// ---- Match keys and match quality (contract §11, §12) ----

/** What the forwarding engine reads an event to send with. */
export interface ForwardingSource {
  /**
   * The account's events of the pixel with these ids, in the order asked (ids not stored are
   * left out), each with its action_source, every platform's hashes, and its raw match keys
   * and unhashed location, or null once erased (7 days after the event's timestamp). With
   * `platform`, only what that platform's payload reads: the other platforms' hashes are
   * empty, and Meta's events carry no location (the worker reads 1,000 events a batch).
   */
  forwardable(
    accountId: string,
    pixelId: string,
    eventIds: string[],
    platform?: Platform,
  ): Promise<ForwardableEvent[]>;
}

/**
 * The raw match keys kept apart from the records (event_match_keys). They are written by the
 * event insert, in its transaction; an event's erasure or purge deletes them with it.
 */
export interface MatchKeyStore extends ForwardingSource {
  /**
   * Deletes at most `limit` rows of raw keys whose expiry is at or before `now` (events' raw
   * keys, then visitors' identities); how many.
   */
  eraseExpired(now: Date, limit: number): Promise<number>;
  /** A visitor's latest browser identifiers, raw, while kept (until 7 days after the last hit). */
  visitorKeys(
    accountId: string,
    pixelId: string,
    anonymousId: string,
    now: Date,
  ): Promise<VisitorKeys | null>;
  /** When a visitor of the pixel last sent a browser event (while kept), or null. */
  lastBrowserHit(accountId: string, pixelId: string): Promise<Date | null>;
  /**
   * The mean match quality score of the pixel's events timestamped in hour `fromHour` (hours
   * since the epoch) or later, from the hourly rollup; null when none was scored.
   */
  averageMatchQuality(accountId: string, pixelId: string, fromHour: number): Promise<number | null>;
}

// ---- Data lifecycle: erasure, export, retention (contract §15) ----

/** The match keys a person can be erased by, as stored: SHA-256 hex of the normalised value. */
export type PersonKeys = Partial<Record<'email' | 'phone' | 'external_id', string>>;

/** Where an export page starts: after this event in (timestamp, arrival) order. */
export interface ExportCursor {
  timestamp: Date;
  seq: number;
}

export interface ExportQuery {
  accountId: string;
  pixelId: string;
  /** Inclusive bounds on `timestamp`. */
  from?: Date;
  to?: Date;
  after: ExportCursor | null;
  limit: number;
}

/**
 * Deleting and reading events in bulk. Every delete removes the rows and takes them off the
 * per-bucket counts (event-totals.ts) in the same transaction, so `total` and the stats never
 * count a deleted event; each call is one short transaction, so ingest waits at most one batch.
 */
/** The events an erasure deletes (LifecycleStore.erasePerson). */
export interface PersonErasure {
  accountId: string;
  pixelIds: string[] | null;
  keys: PersonKeys;
  afterSeq: number;
  throughSeq: number;
}

export interface LifecycleStore {
  /** The account's highest arrival number (0 when none): where an erasure's scan ends. */
  lastSeq(accountId: string): Promise<number>;
  /**
   * Deletes the account's events of `pixelIds` (every pixel of the account when `null`) with
   * arrival number in (afterSeq, throughSeq] whose user_data holds any of `keys`; how many.
   */
  erasePerson(options: PersonErasure): Promise<number>;
  /** One page of the pixel's events, oldest first (`timestamp`, then arrival), after the cursor. */
  exportPage(query: ExportQuery): Promise<{ events: TrackedEvent[]; next: ExportCursor | null }>;
  /** Deletes at most `limit` of the pixel's events with `timestamp` before `before`; how many. */
  purgeBatch(accountId: string, pixelId: string, before: Date, limit: number): Promise<number>;
  /** The account's own retention in days (enterprise), `null` when none is set. */
  retentionDays(accountId: string): Promise<number | null>;
  setRetentionDays(accountId: string, days: number): Promise<void>;
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

// ---- Forwarding to ad platforms (contract §12) ----

export interface DestinationStore {
  /** Creates it unless the pixel already has `limit` destinations (checked atomically). */
  createDestination(destination: Destination, limit: number): Promise<'created' | 'limit_exceeded'>;
  /** Oldest first. */
  listDestinations(accountId: string, pixelId: string): Promise<Destination[]>;
  getDestination(accountId: string, pixelId: string, id: string): Promise<Destination | null>;
  /** Applies `change` atomically (`null`: no change); `null` when there is no such destination. */
  updateDestination(
    accountId: string,
    pixelId: string,
    id: string,
    change: (current: Destination) => Destination | null,
  ): Promise<{ before: Destination; after: Destination } | null>;
  /** Removes it and its jobs; `false` when there is none. */
  deleteDestination(accountId: string, pixelId: string, id: string): Promise<boolean>;
}

/**
 * Loads what the forwarding worker sends: the stored events (with their match keys, while
 * kept) of one pixel. The events table alone for now; the match-keys work (contract §11) gives
 * it the raw keys kept apart.
 */
export type ForwardStatus = 'pending' | 'forwarded' | 'failed' | 'skipped';

/** One (event, destination) job a worker claimed. */
export interface ClaimedJob {
  pixelId: string;
  eventId: string;
  /** Requests that carried it so far. */
  attempts: number;
  createdAt: Date;
  /** The store's own handle on the job's row (SQLite: its rowid), handed back to `settle`. */
  ref?: number;
}

export interface ClaimedBatch {
  destination: Destination;
  jobs: ClaimedJob[];
}

/** One request that carried the event: a row of the attempt ledger. */
export interface ForwardAttempt {
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  /** The first 1 KB of the answer (or the network error). */
  platformResponse: string;
  /**
   * What the request left out of this event to fit the platform's rules (GA4's dropped or
   * truncated params), or null: the ledger says what the platform never received.
   */
  note: string | null;
}

/** How one claimed job ended this round. */
export interface JobOutcome {
  pixelId: string;
  eventId: string;
  /** The claimed job's `ref`. */
  ref?: number;
  status: ForwardStatus;
  reason: string | null;
  lastError: string | null;
  forwardedAt: Date | null;
  /** For `pending`: when to try again. */
  nextAttemptAt: Date | null;
  attempts: ForwardAttempt[];
}

export interface ForwardingEntry {
  destinationId: string;
  platform: string;
  status: ForwardStatus;
  attempts: number;
  reason: string | null;
  lastError: string | null;
  forwardedAt: Date | null;
  /** Only when asked for (the single-event read). */
  attemptLog?: ForwardAttempt[];
}

/** Queue depth and oldest pending job of one destination (for the metrics). */
export interface DestinationBacklog {
  destinationId: string;
  platform: string;
  pending: number;
  oldestCreatedAt: Date | null;
}

/** What a forwarding claim asks for (see ForwardingStore.claim). */
export interface ForwardClaim {
  now: Date;
  take: (destination: Destination) => number;
  busy: readonly string[];
  leaseMs: number;
  owner: string;
  only?: string;
}

/** One batch's outcomes, settled in one transaction with the destination's state and messages. */
export interface ForwardSettlement {
  destination: Destination;
  owner: string;
  outcomes: JobOutcome[];
  state: { state: Destination['state']; lastError: string | null } | null;
  emit: WebhookEvent[];
}

export interface ForwardingStore {
  /**
   * Leases up to `take` due jobs of each active destination (enabled, not suspended) not in
   * `busy`, oldest due first; a lease is exclusive across workers until it ends. `only`:
   * that destination alone (still only if it is active), as it is stored now.
   */
  claim(options: ForwardClaim): Promise<ClaimedBatch[]>;
  /**
   * Records the outcomes, the ledger rows, the destination's new state and the webhook
   * messages they cause, in one transaction; outcomes of jobs whose lease `owner` lost are
   * dropped (another worker holds them now).
   */
  settle(options: ForwardSettlement): Promise<void>;
  /** The earliest time a job of an active destination is due. */
  nextDueAt(): Promise<Date | null>;
  /** Each event's entries (`withLog`: with the attempt ledger), by event id. */
  eventForwarding(
    accountId: string,
    pixelId: string,
    eventIds: string[],
    withLog: boolean,
  ): Promise<Map<string, ForwardingEntry[]>>;
  /**
   * Records a replay of the destination's events with `timestamp` in [from, to] and answers
   * how many it will queue: those whose job has one of `statuses` and is not being sent (not
   * leased), and those with no job that the destination's filter takes. Counted in pages, each
   * its own short read; nothing is queued yet: `advanceReplay` does it in the background.
   */
  replay(options: ReplayRequest): Promise<number>;
  /** Leases the oldest unfinished replay nobody holds (a dead holder's lease runs out). */
  claimReplay(options: {
    owner: string;
    now: Date;
    leaseMs: number;
  }): Promise<ClaimedReplay | null>;
  /**
   * Queues the next chunk of a leased replay in one short transaction that also moves its
   * cursor (due `now`; a job being sent is left alone) and renews the lease. `null`: the lease
   * was lost (nothing written). A destination deleted or switched off ends its replays.
   */
  advanceReplay(options: {
    replay: ClaimedReplay;
    owner: string;
    now: Date;
    leaseMs: number;
  }): Promise<{ queued: number; done: boolean } | null>;
  backlog(): Promise<DestinationBacklog[]>;
}

export interface ReplayRequest {
  accountId: string;
  pixelId: string;
  destinationId: string;
  from: Date;
  to: Date;
  statuses: ForwardStatus[];
  now: Date;
}

/** A replay a worker holds the lease of. */
export interface ClaimedReplay {
  accountId: string;
  id: string;
}

/**
 * A request's answer; `verdict` when it was decided before the platform could answer (an OAuth
 * grant refused or unavailable: delivery/platform-sender.ts).
 */
export interface SentRequest {
  answer: PlatformAnswer;
  durationMs: number;
  verdict?: Verdict;
}

/** Sends one request to a platform at its configured base URL (delivery/platform-sender.ts). */
export interface PlatformGateway {
  /** `config`: the destination's, for a platform whose access token the service obtains. */
  send(
    platform: Platform,
    request: PlatformRequest,
    config: Record<string, unknown>,
  ): Promise<SentRequest>;
}
