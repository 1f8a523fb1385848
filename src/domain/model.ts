/** The records the domain works with. Times are `Date`s here; adapters choose their encoding. */
import type { PlanName, SubscriptionStatus } from './accounts/plans.ts';
import type { Consent } from './consent.ts';
import type { ActionSource, RawMatchKeys } from './forwarding/match-keys.ts';

/**
 * What a visitor's browser told us that platforms match on, raw (collect/browser-event.ts makes
 * it): the match keys, and every click id and platform cookie seen.
 */
export interface VisitorKeys {
  matchKeys: RawMatchKeys;
  ids: Record<string, string>;
  cookies: Record<string, string>;
}

export interface Account {
  id: string;
  name: string;
  plan: PlanName;
  status: SubscriptionStatus;
  /** Operator-set limits; only ever present on enterprise accounts (contract §2). */
  customRequestsPerMinute: number | null;
  customDailyLimit: number | null;
  createdAt: Date;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  /** The key's first characters and last four, for display; the key itself is never stored. */
  prefix: string;
  last4: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export const EVENT_SOURCES = ['server', 'browser'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

export const PIXEL_STATUSES = ['active', 'paused'] as const;
export type PixelStatus = (typeof PIXEL_STATUSES)[number];

export interface Pixel {
  id: string;
  accountId: string;
  name: string;
  domain: string;
  trackingDomain: string;
  status: PixelStatus;
  /**
   * `tw_pub_` + 24 base62: sends browser events to this pixel only, from its own sites, on
   * `POST /v1/collect` only. Not a secret: it is written into the shop's pages.
   */
  publishableKey: string;
  /** The key a rotation replaced, still accepted until `previousKeyExpiresAt` (24 h). */
  previousPublishableKey: string | null;
  previousKeyExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface TrackedEvent {
  accountId: string;
  pixelId: string;
  eventId: string;
  eventName: string;
  value: number | null;
  currency: string | null;
  /** When the event happened (the caller's `timestamp`, or the time of receipt). */
  timestamp: Date;
  receivedAt: Date;
  url: string | null;
  referrer: string | null;
  title: string | null;
  searchString: string | null;
  /** Hashes only: raw PII never reaches this record. */
  userData: Record<string, string> | null;
  customData: Record<string, unknown> | null;
  /**
   * custom_data as ingestion serialised it to check its size: the insert stores this string
   * instead of serialising the object a second time (issue 21). Absent on events built by
   * hand and on events read back; whoever changes `customData` must drop it.
   */
  customDataJson?: string | null;
  /**
   * Contract §11's `action_source`. Ingestion always sets it and stores read it back; absent
   * only on events built by hand (tests), which the record shows as the default, `website`.
   */
  actionSource?: ActionSource;
  /**
   * Where the event came from: `server` (`/v1/track`) or `browser` (`/v1/collect`). Absent
   * only on events built by hand (tests), which are stored and shown as `server`.
   */
  source?: EventSource;
  /** The visitor (`_tw_id`) the event belongs to, when it said; null or absent otherwise. */
  anonymousId?: string | null;
  /**
   * A browser event's identifiers, raw, for the visitor's identity (stitching): the insert
   * keeps them per (pixel, anonymous id) until 7 days after this event, in its transaction.
   * Never part of the record; absent on server events and under denied consent.
   */
  visitor?: VisitorKeys;
  /** The local match quality estimate, computed at ingestion (absent: computed from userData). */
  matchQuality?: MatchQuality;
  /** The caller's consent (contract §16); null or absent when none was given. */
  consent?: Consent | null;
  /**
   * What ingestion derived for forwarding; only the insert reads it, and reads never fill it.
   * The hashes are stored with the event; the raw keys and unhashed location are stored APART
   * (event_match_keys, erased 7 days after `timestamp`), never in the record.
   */
  ingested?: IngestedMatchData;
  /**
   * The `user_data` values left out because they could not be used (contract §19), as dotted
   * paths (`user_data.phone`): stored with the event. Absent or empty: nothing was dropped.
   */
  dropped?: readonly string[];
  /** What the answer to the request that carried it warns of; set at ingestion, not stored. */
  warnings?: readonly string[];
}

/**
 * `match_quality` (contract §12): a local estimate from the keys present, computed by
 * forwarding/match-quality.ts (declared here, where the record's model is).
 */
export interface MatchQuality {
  /** 0–10, one decimal. */
  score: number;
  /** The keys present, highest weight first. */
  keys: string[];
  /** The keys absent, highest weight first: what would raise the score most. */
  missing: string[];
  /** The keys filled from the visitor's browser (identity stitching), when any were. */
  enriched?: string[];
}

/** Each platform's hashes of one event's contact data, by platform type. */
export type PlatformHashes = Readonly<Record<string, Readonly<Record<string, string>> | undefined>>;

/** The unhashed coarse location some platforms want, by platform type (kept ≤ 7 days). */
export type PlatformLocation = Readonly<
  Record<string, Readonly<Record<string, string>> | undefined>
>;

/** Per-platform hashes and the raw match data of one event, as ingestion computed them. */
export interface IngestedMatchData {
  hashes: PlatformHashes | null;
  /** Null when the event carried no match key and no location. */
  matchKeys: RawMatchKeys | null;
  location: PlatformLocation | null;
}

export const WEBHOOK_EVENT_TYPES = [
  'event.tracked',
  'event.forwarded',
  'pixel.created',
  'pixel.updated',
  'subscription.updated',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Something that happened and that subscribed endpoints must hear about. Stores write these
 * in the same transaction as the change that caused them (the transactional outbox).
 */
export interface WebhookEvent {
  accountId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
  occurredAt: Date;
}

export interface WebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  enabled: boolean;
  secret: string;
  /** During a rotation the old secret keeps signing until this time (24 h). */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  /** Start of the current run of failures; cleared by a success. */
  failingSince: Date | null;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export type AttemptStatus = 'succeeded' | 'failed' | 'pending';

export interface DeliveryAttempt {
  /** `att_` + random base62: says nothing about other accounts' attempts. */
  id: string;
  messageId: string;
  endpointId: string;
  eventType: WebhookEventType;
  attempt: number;
  status: AttemptStatus;
  responseStatusCode: number | null;
  durationMs: number | null;
  error: string | null;
  responseBody: string | null;
  attemptedAt: Date;
}

/** A (message, endpoint) pair the delivery worker has claimed for one attempt. */
export interface ClaimedDelivery {
  messageId: string;
  endpoint: WebhookEndpoint;
  eventType: WebhookEventType;
  /** The exact bytes to send, fixed when the message was committed. */
  body: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** When the first attempt was due: the start of the failure clock for this message. */
  createdAt: Date;
}

export type DeliveryOutcome =
  | { kind: 'succeeded' }
  | { kind: 'retry'; at: Date }
  /** No more automatic attempts; the message stays visible and can be retried by hand. */
  | { kind: 'failed' };

export interface AttemptResult {
  status: 'succeeded' | 'failed';
  responseStatusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  outcome: DeliveryOutcome;
  /** Set when the endpoint must be switched off (410 Gone, or failing for too long). */
  disableEndpoint?: string;
}

// ---- Keys, stats, live tail and dashboard sessions (contract §13) ----

export const KEY_SCOPES = ['full', 'ingest'] as const;
/** `full` may call every route; `ingest` only the track routes. */
export type KeyScope = (typeof KEY_SCOPES)[number];

/** A key as the keys API and the dashboard show it. */
export interface ManagedKey extends ApiKeyRecord {
  name: string;
  scope: KeyScope;
  /** Updated at most once a minute per key and instance, not on every request. */
  lastUsedAt: Date | null;
}

export type StatsInterval = 'hour' | 'day';

/** One (bucket, event name) of the per-bucket counts kept at insert. */
export interface StatsBucket {
  start: Date;
  eventName: string;
  count: number;
  /** Sum of `value` over the bucket's events (events without one add 0). */
  valueSum: number;
}

/** A stored event with its arrival number: the live tail's event id, for `Last-Event-ID`. */
export interface SequencedEvent {
  seq: number;
  event: TrackedEvent;
}

/** A signed-in dashboard browser; the store keeps only the hash of its cookie token. */
export interface DashboardSession {
  tokenHash: string;
  accountId: string;
  keyId: string;
  createdAt: Date;
  expiresAt: Date;
}
