/**
 * Each table's row, declared once for both stores, and read into the domain's model once.
 * What differs between the databases is only how a column type comes back from the driver,
 * and that is the codec's: time (SQLite: epoch milliseconds; pg: Date), booleans (SQLite: 0/1)
 * and JSON (SQLite: text; pg: parsed already). Writing stays with each adapter's SQL.
 */
import type { PlanName, SubscriptionStatus } from '../domain/accounts/plans.ts';
import type { ActionSource } from '../domain/forwarding/match-keys.ts';
import type { MatchQuality } from '../domain/forwarding/match-quality.ts';
import type {
  Account,
  ApiKeyRecord,
  DeliveryAttempt,
  Pixel,
  PixelStatus,
  TrackedEvent,
  WebhookEndpoint,
  WebhookEventType,
} from '../domain/model.ts';

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

/** A column the codec converts: its driver type differs by database. */
type Coded = unknown;

export interface AccountRow {
  id: string;
  name: string;
  plan: string;
  status: string;
  custom_requests_per_minute: number | null;
  custom_daily_limit: number | null;
  created_at: Coded;
}

export interface KeyRow {
  id: string;
  account_id: string;
  prefix: string;
  last4: string;
  created_at: Coded;
  revoked_at: Coded | null;
}

export interface PixelRow {
  id: string;
  account_id: string;
  name: string;
  domain: string;
  tracking_domain: string;
  status: string;
  created_at: Coded;
  updated_at: Coded;
}

export interface EventRow {
  account_id: string;
  pixel_id: string;
  event_id: string;
  event_name: string;
  value: number | null;
  currency: string | null;
  timestamp: Coded;
  received_at: Coded;
  url: string | null;
  referrer: string | null;
  title: string | null;
  search_string: string | null;
  user_data: Coded | null;
  custom_data: Coded | null;
  /** Contract §11 (migration 010); optional so narrower selects of other tables still type. */
  action_source?: string;
  match_quality?: Coded | null;
}

export interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  events: Coded;
  description: string | null;
  enabled: Coded;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Coded | null;
  failing_since: Coded | null;
  disabled_reason: string | null;
  created_at: Coded;
  updated_at: Coded;
}

/** An attempt row joined with its message's event type. */
export interface AttemptRow {
  public_id: string;
  message_id: string;
  endpoint_id: string;
  event_type: string;
  attempt: number;
  status: string;
  response_status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  response_body: string | null;
  attempted_at: Coded;
}

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
  // Null for an event stored before migration 010: the record computes it from user_data.
  ...(r.match_quality != null && { matchQuality: c.json<MatchQuality>(r.match_quality) }),
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
