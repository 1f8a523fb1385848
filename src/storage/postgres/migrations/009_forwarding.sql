-- Forwarding to ad platforms (contract §12). A destination belongs to one pixel; a job is one
-- (event, destination) pair, written in the same transaction as the event (the transactional
-- outbox), claimed per destination under a lease (SKIP LOCKED) and settled as forwarded,
-- failed or skipped.
CREATE TABLE destinations (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  pixel_id text NOT NULL,
  type text NOT NULL,
  name text,
  config jsonb NOT NULL,
  events text[],
  enabled boolean NOT NULL,
  state text NOT NULL,
  last_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- The event insert's lookup: one seek per (account, pixel), empty for most pixels.
CREATE INDEX destinations_pixel ON destinations (account_id, pixel_id, created_at);

CREATE TABLE forward_jobs (
  account_id text NOT NULL,
  destination_id text NOT NULL,
  pixel_id text NOT NULL,
  event_id text NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  reason text,
  last_error text,
  forwarded_at timestamptz,
  created_at timestamptz NOT NULL,
  next_attempt_at timestamptz,
  lease_until timestamptz,
  lease_owner text,
  PRIMARY KEY (account_id, destination_id, pixel_id, event_id)
);
-- A claim: one destination's oldest due jobs in one seek.
CREATE INDEX forward_jobs_due ON forward_jobs (destination_id, next_attempt_at) WHERE status = 'pending';
-- An event record's `forwarding` entries.
CREATE INDEX forward_jobs_event ON forward_jobs (pixel_id, event_id);

-- The attempt ledger: one row per event per request that carried it.
CREATE TABLE forward_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id text NOT NULL,
  destination_id text NOT NULL,
  pixel_id text NOT NULL,
  event_id text NOT NULL,
  attempted_at timestamptz NOT NULL,
  status_code integer,
  duration_ms integer,
  platform_response text
);
CREATE INDEX forward_attempts_event ON forward_attempts (pixel_id, event_id, destination_id, attempted_at);
