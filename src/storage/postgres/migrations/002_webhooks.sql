-- Webhook endpoints and the transactional outbox. A message is one thing that happened
-- (msg_ id, stable across retries); it fans out to one delivery row per subscribed endpoint,
-- written in the same transaction as the change that caused it.
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  url text NOT NULL,
  events text[] NOT NULL,
  description text,
  enabled boolean NOT NULL,
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  failing_since timestamptz,
  disabled_reason text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at);

CREATE TABLE webhook_messages (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  event_type text NOT NULL,
  data text NOT NULL,
  created_at timestamptz NOT NULL
);

-- One row per (message, endpoint): what the delivery worker claims, sends and reschedules.
-- body holds the exact bytes sent, fixed when the message is committed.
CREATE TABLE webhook_deliveries (
  message_id text NOT NULL REFERENCES webhook_messages (id),
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
  account_id text NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_until timestamptz,
  lease_owner text,
  body text,
  first_sent_at timestamptz,
  PRIMARY KEY (message_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id) WHERE status = 'pending';

CREATE TABLE webhook_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  message_id text NOT NULL,
  endpoint_id text NOT NULL,
  account_id text NOT NULL,
  attempt integer NOT NULL,
  status text NOT NULL,
  response_status_code integer,
  duration_ms integer,
  error text,
  response_body text,
  attempted_at timestamptz NOT NULL
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, attempted_at DESC, id DESC);
CREATE INDEX webhook_attempts_message ON webhook_attempts (message_id, endpoint_id) WHERE status = 'pending';
