-- Accounts, API keys, pixels and events. Times are integer milliseconds since the Unix epoch.
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  plan TEXT NOT NULL,
  status TEXT NOT NULL,
  custom_requests_per_minute INTEGER,
  custom_daily_limit INTEGER,
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  key_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  last4 TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
) STRICT;
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

CREATE TABLE pixels (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  name TEXT NOT NULL,
  domain TEXT NOT NULL,
  tracking_domain TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX pixels_account ON pixels (account_id, created_at DESC, id DESC);

-- seq is the arrival order: the tie-breaker of the newest-first listing.
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  pixel_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  value REAL,
  currency TEXT,
  timestamp INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  url TEXT,
  referrer TEXT,
  title TEXT,
  search_string TEXT,
  user_data TEXT,
  custom_data TEXT,
  UNIQUE (pixel_id, event_id)
) STRICT;
CREATE INDEX events_by_time ON events (account_id, pixel_id, timestamp DESC, seq DESC);
CREATE INDEX events_by_name ON events (account_id, pixel_id, event_name, timestamp DESC, seq DESC);
