/**
 * Every table as the shared queries see it, declared once for both databases. A column whose
 * driver type differs by database (time, booleans, JSON) is `Stored`: written through
 * `Sql.store`, read back through `Sql.codec` (rows.ts). Tables only the hot paths touch with
 * hand-written SQL (events, the count rollups) are declared here too so that shared reads of
 * them are typed.
 */
import type { ColumnType, Generated } from 'kysely';

/** A time, boolean or JSON column: SQLite and pg hand back different JS types. */
export type Stored = ColumnType<unknown, unknown, unknown>;

export interface AccountsTable {
  id: string;
  name: string;
  plan: string;
  status: string;
  custom_requests_per_minute: number | null;
  custom_daily_limit: number | null;
  created_at: Stored;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  key_hash: string;
  prefix: string;
  last4: string;
  /** Defaulted by the table for keys the operator CLI makes (unnamed, full scope). */
  name: Generated<string>;
  scope: Generated<string>;
  created_at: Stored;
  revoked_at: Stored | null;
  last_used_at: Stored | null;
}

export interface PixelsTable {
  id: string;
  account_id: string;
  name: string;
  domain: string;
  tracking_domain: string;
  status: string;
  publishable_key: string;
  previous_publishable_key: string | null;
  previous_publishable_key_expires_at: Stored | null;
  created_at: Stored;
  updated_at: Stored;
}

export interface EventsTable {
  seq: Generated<number>;
  account_id: string;
  pixel_id: string;
  event_id: string;
  event_name: string;
  value: number | null;
  currency: string | null;
  timestamp: Stored;
  received_at: Stored;
  url: string | null;
  referrer: string | null;
  title: string | null;
  search_string: string | null;
  user_data: Stored | null;
  custom_data: Stored | null;
  action_source: string;
  platform_hashes: Stored | null;
  match_quality: Stored | null;
  dropped: Stored | null;
  /** Contract §16, migration 016: the caller's consent, JSON; null when none was given. */
  consent: Stored | null;
  source: string;
  anonymous_id: string | null;
}

/** A visitor's latest browser identifiers, raw, until `expires_at` (migration 020). */
export interface VisitorIdentitiesTable {
  pixel_id: string;
  anonymous_id: string;
  account_id: string;
  keys: Stored;
  last_seen_at: Stored;
  expires_at: Stored;
}

/** Raw match keys kept apart from the record until `expires_at` (contract §11, migration 010). */
export interface EventMatchKeysTable {
  account_id: string;
  seq: number;
  expires_at: Stored;
  match_keys: Stored | null;
  location: Stored | null;
}

export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  url: string;
  events: Stored;
  description: string | null;
  enabled: Stored;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Stored | null;
  failing_since: Stored | null;
  disabled_reason: string | null;
  created_at: Stored;
  updated_at: Stored;
  deleted_at: Stored | null;
}

export interface WebhookMessagesTable {
  id: string;
  account_id: string;
  event_type: string;
  data: Stored;
  created_at: Stored;
}

export interface WebhookDeliveriesTable {
  message_id: string;
  endpoint_id: string;
  account_id: string;
  status: string;
  attempts: number;
  next_attempt_at: Stored | null;
  lease_until: Stored | null;
  lease_owner: string | null;
  body: string | null;
  first_sent_at: Stored | null;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  public_id: string;
  message_id: string;
  endpoint_id: string;
  account_id: string;
  attempt: number;
  status: string;
  response_status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  response_body: string | null;
  attempted_at: Stored;
}

export interface EventRollupTable {
  pixel_id: string;
  account_id: string;
  event_name: string;
  n: number;
  value_sum: number;
}

export interface DashboardSessionsTable {
  token_hash: string;
  account_id: string;
  key_id: string;
  created_at: Stored;
  expires_at: Stored;
}

export interface AccountRetentionTable {
  account_id: string;
  days: number;
}

export interface Tables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  pixels: PixelsTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  event_totals: Omit<EventRollupTable, 'value_sum'>;
  event_counts: EventRollupTable & { hour: number; match_sum: number; match_n: number };
  event_counts_daily: EventRollupTable & { day: number };
  dashboard_sessions: DashboardSessionsTable;
  account_retention: AccountRetentionTable;
  event_match_keys: EventMatchKeysTable;
  visitor_identities: VisitorIdentitiesTable;
  destinations: DestinationsTable;
  forward_jobs: ForwardJobsTable;
  forward_attempts: ForwardAttemptsTable;
  forward_replays: ForwardReplaysTable;
  forward_hourly: ForwardHourlyTable;
}

/** The diagnostics' forwarding rollup (migration 025). */
export interface ForwardHourlyTable {
  pixel_id: string;
  account_id: string;
  destination_id: string;
  hour: number;
  status: string;
  reason: string;
  n: number;
  example_event_id: string;
}

export interface DestinationsTable {
  id: string;
  account_id: string;
  pixel_id: string;
  type: string;
  name: string | null;
  /** JSON (SQLite text, pg jsonb). */
  config: Stored;
  /** A list of names (SQLite JSON text, pg text[]), null for every event. */
  events: Stored | null;
  /** `server` and/or `browser` (same encoding as `events`), null for both. */
  sources: Stored | null;
  enabled: Stored;
  state: string;
  last_error: string | null;
  created_at: Stored;
  updated_at: Stored;
}

export interface ForwardJobsTable {
  account_id: string;
  destination_id: string;
  pixel_id: string;
  event_id: string;
  status: string;
  attempts: number;
  reason: string | null;
  last_error: string | null;
  forwarded_at: Stored | null;
  created_at: Stored;
  next_attempt_at: Stored | null;
  lease_until: Stored | null;
  lease_owner: string | null;
}

export interface ForwardAttemptsTable {
  id: Generated<number>;
  account_id: string;
  destination_id: string;
  pixel_id: string;
  event_id: string;
  attempted_at: Stored;
  status_code: number | null;
  duration_ms: number | null;
  platform_response: string | null;
  /** What was left out of the event to fit the platform's rules (GA4's params), or null. */
  note: string | null;
}

/** A replay request and how far its background queueing got (migration 017). */
export interface ForwardReplaysTable {
  account_id: string;
  id: string;
  destination_id: string;
  pixel_id: string;
  range_from: Stored;
  range_to: Stored;
  /** The statuses to send again, as JSON text. */
  statuses: string;
  /** How many the 202 said would be queued. */
  promised: number;
  /** How many the chunks done so far queued. */
  queued: number;
  /** The last event done (newest first): its timestamp and seq; null before the first chunk. */
  cursor_at: Stored | null;
  cursor_seq: number | string | null;
  created_at: Stored;
  finished_at: Stored | null;
  lease_until: Stored | null;
  lease_owner: string | null;
}
