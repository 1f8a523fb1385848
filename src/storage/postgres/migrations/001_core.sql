-- Accounts, API keys, pixels and events. Times are timestamptz; the service writes them with
-- millisecond precision (JavaScript Dates), so every value round-trips exactly.
CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL,
  plan text NOT NULL,
  status text NOT NULL,
  custom_requests_per_minute integer,
  custom_daily_limit integer,
  created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  key_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  last4 text NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

CREATE TABLE pixels (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  domain text NOT NULL,
  tracking_domain text NOT NULL,
  status text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX pixels_account ON pixels (account_id, created_at DESC, id DESC);

-- seq is the arrival order: the tie-breaker of the newest-first listing. user_data and
-- custom_data are json (not jsonb) so the caller's key order comes back exactly as sent.
CREATE TABLE events (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id text NOT NULL,
  pixel_id text NOT NULL,
  event_id text NOT NULL,
  event_name text NOT NULL,
  value double precision,
  currency text,
  timestamp timestamptz NOT NULL,
  received_at timestamptz NOT NULL,
  url text,
  referrer text,
  title text,
  search_string text,
  user_data json,
  custom_data json,
  CONSTRAINT events_dedup UNIQUE (pixel_id, event_id)
);
-- The two shapes of GET /v1/pixels/:id/events: by time, and by name then time. Pixel ids are
-- unique across accounts, so account_id need not be a key column; it is INCLUDEd so the
-- account-scoped count(*) behind `total` can be an index-only scan instead of a heap visit
-- per matching row.
CREATE INDEX events_by_time ON events (pixel_id, timestamp DESC, seq DESC) INCLUDE (account_id);
CREATE INDEX events_by_name ON events (pixel_id, event_name, timestamp DESC, seq DESC) INCLUDE (account_id);
