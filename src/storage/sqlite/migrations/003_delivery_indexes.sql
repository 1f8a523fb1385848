-- Indexes for the delivery worker.
-- Recording an attempt finds it by (message, endpoint, attempt); without this the update
-- scanned every attempt of the endpoint.
CREATE INDEX webhook_attempts_message ON webhook_attempts (message_id, endpoint_id, attempt);

-- The worker claims each endpoint's oldest due deliveries with one seek here.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at)
  WHERE status = 'pending';
