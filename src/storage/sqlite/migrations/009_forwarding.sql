-- Forwarding to ad platforms (contract §12). A destination belongs to one pixel; a job is one
-- (event, destination) pair, written in the same transaction as the event (the transactional
-- outbox), claimed per destination under a lease and settled as forwarded, failed or skipped.
CREATE TABLE destinations (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  pixel_id TEXT NOT NULL,
  type TEXT NOT NULL,
  name TEXT,
  config TEXT NOT NULL,
  events TEXT,
  enabled INTEGER NOT NULL,
  state TEXT NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
-- The event insert's lookup: one seek per (account, pixel), empty for most pixels.
CREATE INDEX destinations_pixel ON destinations (account_id, pixel_id, created_at);

CREATE TABLE forward_jobs (
  account_id TEXT NOT NULL,
  destination_id TEXT NOT NULL,
  pixel_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  reason TEXT,
  last_error TEXT,
  forwarded_at INTEGER,
  created_at INTEGER NOT NULL,
  next_attempt_at INTEGER,
  lease_until INTEGER,
  lease_owner TEXT,
  PRIMARY KEY (account_id, destination_id, pixel_id, event_id)
) STRICT;
-- A claim: one destination's oldest due jobs in one seek.
CREATE INDEX forward_jobs_due ON forward_jobs (destination_id, next_attempt_at) WHERE status = 'pending';
-- An event record's `forwarding` entries.
CREATE INDEX forward_jobs_event ON forward_jobs (pixel_id, event_id);

-- The attempt ledger: one row per event per request that carried it.
CREATE TABLE forward_attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  destination_id TEXT NOT NULL,
  pixel_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  attempted_at INTEGER NOT NULL,
  status_code INTEGER,
  duration_ms INTEGER,
  platform_response TEXT
) STRICT;
CREATE INDEX forward_attempts_event ON forward_attempts (pixel_id, event_id, destination_id, attempted_at);
