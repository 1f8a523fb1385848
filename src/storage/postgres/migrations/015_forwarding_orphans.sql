-- Forwarding rows whose event is gone (issue 30): purge and erasure deleted events and left
-- their jobs and attempt ledger behind, so event ids and the platforms' answers outlived
-- retention and erasure. They now go with their event; this removes those left before.
-- Each row is one probe of the events' dedup index, by account too (colocated on Citus).
DELETE FROM forward_attempts
 WHERE NOT EXISTS (SELECT 1 FROM events e
                    WHERE e.account_id = forward_attempts.account_id
                      AND e.pixel_id = forward_attempts.pixel_id
                      AND e.event_id = forward_attempts.event_id);
DELETE FROM forward_jobs
 WHERE NOT EXISTS (SELECT 1 FROM events e
                    WHERE e.account_id = forward_jobs.account_id
                      AND e.pixel_id = forward_jobs.pixel_id
                      AND e.event_id = forward_jobs.event_id);
