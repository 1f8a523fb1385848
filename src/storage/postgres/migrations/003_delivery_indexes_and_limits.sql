-- Delivery-worker indexes; 64-bit custom limits.
-- The worker claims each endpoint's oldest due deliveries with one seek here (it replaces the
-- plain per-endpoint index), and recording an attempt finds it by (message, endpoint, attempt).
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at)
  WHERE status = 'pending';
DROP INDEX webhook_deliveries_endpoint;
CREATE INDEX webhook_attempts_lookup ON webhook_attempts (message_id, endpoint_id, attempt);

-- Custom enterprise limits can pass 2^31 a day (SQLite's INTEGER is 64-bit already).
ALTER TABLE accounts
  ALTER COLUMN custom_requests_per_minute TYPE bigint,
  ALTER COLUMN custom_daily_limit TYPE bigint;
