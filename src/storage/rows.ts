/**
 * Each table's row read into the domain's model once, for both stores.
 * What differs between the databases is only how a column type comes back from the driver,
 * and that is the codec's: time (SQLite: epoch milliseconds; pg: Date), booleans (SQLite: 0/1)
 * and JSON (SQLite: text; pg: parsed already). Writing goes through `Sql.store` (sql/query.ts).
 */

import type { Selectable } from 'kysely';
import type { PlanName, SubscriptionStatus } from '../domain/accounts/plans.ts';
import type { Consent } from '../domain/consent.ts';
import type { ActionSource } from '../domain/forwarding/match-keys.ts';
import type { MatchQuality } from '../domain/forwarding/match-quality.ts';
import type {
  Account,
  ApiKeyRecord,
  DashboardSession,
  DeliveryAttempt,
  EventSource,
  KeyScope,
  ManagedKey,
  Pixel,
  PixelStatus,
  TrackedEvent,
  WebhookEndpoint,
  WebhookEventType,
} from '../domain/model.ts';
import type {
  AccountsTable,
  ApiKeysTable,
  DashboardSessionsTable,
  EventsTable,
  PixelsTable,
  WebhookAttemptsTable,
  WebhookEndpointsTable,
} from './sql/tables.ts';

/** How one database hands back the column types the model needs converted. */
export interface Codec {
  time(value: unknown): Date;
  bool(value: unknown): boolean;
  json<T>(value: unknown): T;
}

export const sqliteCodec: Codec = {
  time: (value) => new Date(value as number),
  bool: (value) => value === 1,
  json: <T>(value: unknown) => JSON.parse(value as string) as T,
};

export const postgresCodec: Codec = {
  time: (value) => value as Date,
  bool: (value) => value as boolean,
  // json, jsonb and text[] columns arrive parsed.
  json: <T>(value: unknown) => value as T,
};

const timeOrNull = (codec: Codec, value: unknown) => (value === null ? null : codec.time(value));
const jsonOrNull = <T>(codec: Codec, value: unknown) =>
  value === null ? null : codec.json<T>(value);

// Rows are the tables' own (sql/tables.ts), as a `SELECT` returns them: a column whose driver
// type differs by database is `unknown` there, read through the codec.
export type AccountRow = Selectable<AccountsTable>;
export type KeyRow = Pick<
  ManagedKeyRow,
  'id' | 'account_id' | 'prefix' | 'last4' | 'created_at' | 'revoked_at'
>;
/** Never the hash: a key's row as the keys API reads it. */
export type ManagedKeyRow = Omit<Selectable<ApiKeysTable>, 'key_hash'>;
export type PixelRow = Selectable<PixelsTable>;
/**
 * Contract §11's columns (migration 010) §19's `dropped` (014) and §16's `consent` (016) are optional, so that reads selecting the record's
 * older columns only still type.
 */
export type EventRow = Omit<
  Selectable<EventsTable>,
  | 'seq'
  | 'action_source'
  | 'platform_hashes'
  | 'match_quality'
  | 'source'
  | 'anonymous_id'
  | 'dropped'
  | 'consent'
> &
  Partial<
    Pick<
      Selectable<EventsTable>,
      'action_source' | 'match_quality' | 'source' | 'dropped' | 'consent'
    >
  >;
export type EndpointRow = Omit<Selectable<WebhookEndpointsTable>, 'deleted_at'>;
/** An attempt row joined with its message's event type. */
export type AttemptRow = Omit<Selectable<WebhookAttemptsTable>, 'id' | 'account_id'> & {
  event_type: string;
};
export type SessionRow = Selectable<DashboardSessionsTable>;

export const toAccount = (c: Codec, r: AccountRow): Account => ({
  id: r.id,
  name: r.name,
  plan: r.plan as PlanName,
  status: r.status as SubscriptionStatus,
  customRequestsPerMinute: r.custom_requests_per_minute,
  customDailyLimit: r.custom_daily_limit,
  createdAt: c.time(r.created_at),
});

export const toKey = (c: Codec, r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  accountId: r.account_id,
  prefix: r.prefix,
  last4: r.last4,
  createdAt: c.time(r.created_at),
  revokedAt: timeOrNull(c, r.revoked_at),
});

export const toPixel = (c: Codec, r: PixelRow): Pixel => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  domain: r.domain,
  trackingDomain: r.tracking_domain,
  status: r.status as PixelStatus,
  publishableKey: r.publishable_key,
  previousPublishableKey: r.previous_publishable_key,
  previousKeyExpiresAt: timeOrNull(c, r.previous_publishable_key_expires_at),
  createdAt: c.time(r.created_at),
  updatedAt: c.time(r.updated_at),
});

export const toEvent = (c: Codec, r: EventRow): TrackedEvent => ({
  accountId: r.account_id,
  pixelId: r.pixel_id,
  eventId: r.event_id,
  eventName: r.event_name,
  value: r.value,
  currency: r.currency,
  timestamp: c.time(r.timestamp),
  receivedAt: c.time(r.received_at),
  url: r.url,
  referrer: r.referrer,
  title: r.title,
  searchString: r.search_string,
  userData: jsonOrNull(c, r.user_data),
  customData: jsonOrNull(c, r.custom_data),
  ...(r.action_source !== undefined && { actionSource: r.action_source as ActionSource }),
  ...(r.source !== undefined && { source: r.source as EventSource }),
  // Null for an event stored before migration 010: the record computes it from user_data.
  ...(r.match_quality != null && { matchQuality: c.json<MatchQuality>(r.match_quality) }),
  // Null when nothing was dropped (contract §19), and on events stored before migration 014.
  ...(r.dropped != null && { dropped: c.json<string[]>(r.dropped) }),
  ...(r.consent != null && { consent: c.json<Consent>(r.consent) }),
});

export const toEndpoint = (c: Codec, r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  accountId: r.account_id,
  url: r.url,
  events: c.json<WebhookEventType[]>(r.events),
  description: r.description,
  enabled: c.bool(r.enabled),
  secret: r.secret,
  previousSecret: r.previous_secret,
  previousSecretExpiresAt: timeOrNull(c, r.previous_secret_expires_at),
  failingSince: timeOrNull(c, r.failing_since),
  disabledReason: r.disabled_reason,
  createdAt: c.time(r.created_at),
  updatedAt: c.time(r.updated_at),
});

export const toAttempt = (c: Codec, r: AttemptRow): DeliveryAttempt => ({
  id: r.public_id,
  messageId: r.message_id,
  endpointId: r.endpoint_id,
  eventType: r.event_type as WebhookEventType,
  attempt: r.attempt,
  status: r.status as DeliveryAttempt['status'],
  responseStatusCode: r.response_status_code,
  durationMs: r.duration_ms,
  error: r.error,
  responseBody: r.response_body,
  attemptedAt: c.time(r.attempted_at),
});

export const toManagedKey = (c: Codec, r: ManagedKeyRow): ManagedKey => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  scope: r.scope as KeyScope,
  prefix: r.prefix,
  last4: r.last4,
  createdAt: c.time(r.created_at),
  lastUsedAt: timeOrNull(c, r.last_used_at),
  revokedAt: timeOrNull(c, r.revoked_at),
});

export const toSession = (c: Codec, r: SessionRow): DashboardSession => ({
  tokenHash: r.token_hash,
  accountId: r.account_id,
  keyId: r.key_id,
  createdAt: c.time(r.created_at),
  expiresAt: c.time(r.expires_at),
});
