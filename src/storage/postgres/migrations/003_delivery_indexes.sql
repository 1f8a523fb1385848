-- The worker claims each endpoint's oldest due deliveries with one seek here (it replaces the
-- plain per-endpoint index), and recording an attempt finds it by (message, endpoint, attempt).
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at)
  WHERE status = 'pending';
DROP INDEX webhook_deliveries_endpoint;
CREATE INDEX webhook_attempts_lookup ON webhook_attempts (message_id, endpoint_id, attempt);
