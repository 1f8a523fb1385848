-- Webhook endpoints and the transactional outbox. A message is one thing that happened
-- (msg_ id, stable across retries); it fans out to one delivery row per subscribed endpoint,
-- written in the same transaction as the change that caused it.
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  description TEXT,
  enabled INTEGER NOT NULL,
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_expires_at INTEGER,
  failing_since INTEGER,
  disabled_reason TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
) STRICT;
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at);

CREATE TABLE webhook_messages (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;

-- One row per (message, endpoint): what the delivery worker claims, sends and reschedules.
-- body holds the exact bytes sent, fixed at the first attempt so every retry sends the same.
CREATE TABLE webhook_deliveries (
  message_id TEXT NOT NULL REFERENCES webhook_messages (id),
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id),
  account_id TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  lease_until INTEGER,
  lease_owner TEXT,
  body TEXT,
  first_sent_at INTEGER,
  PRIMARY KEY (message_id, endpoint_id)
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE webhook_attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status TEXT NOT NULL,
  response_status_code INTEGER,
  duration_ms INTEGER,
  error TEXT,
  response_body TEXT,
  attempted_at INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, attempted_at DESC, id DESC);
