/**
 * The tables that grow with traffic (contract §8): each is keyed by account, so the schema can
 * be distributed by `account_id` (Citus) and every statement on them reaches one account's
 * shard. Three checks hold the rule: postgres/account-keys.test.ts reads the catalog (keys),
 * account-scope.test.ts the statements the store issues, postgres/citus-tables.test.ts the
 * migrations (each of these tables distributed by account on Citus, every other one a
 * reference table).
 */
export const GROWING_TABLES = [
  'events',
  'event_match_keys',
  'webhook_messages',
  'webhook_deliveries',
  'webhook_attempts',
  'forward_jobs',
  'forward_attempts',
  'forward_replays',
  'visitor_identities',
  // The diagnostics' hourly rollups (025, keyed by account in 026): a row per pixel, hour and
  // name or outcome, so they grow with traffic too.
  'diag_hourly',
  'diag_dropped_hourly',
  'revenue_hourly',
  'forward_hourly',
  // The event counts (004, keyed by account in 027): a row per pixel, name and hour or day
  // (and per pixel and name for all time), kept by every event insert and purge.
  'event_counts',
  'event_counts_daily',
  'event_totals',
] as const;
