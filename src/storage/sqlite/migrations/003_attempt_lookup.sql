-- Recording an attempt finds it by (message, endpoint, attempt); without this the update
-- scanned every attempt of the endpoint.
CREATE INDEX webhook_attempts_message ON webhook_attempts (message_id, endpoint_id, attempt);
