-- Every table that grows with traffic is keyed by account (contract §8): its primary key and
-- unique constraints begin with account_id and the foreign keys between them carry it, so the
-- schema can be distributed by account_id (Citus) with every key checked on one shard.
-- A pixel never changes account (docs/decisions.md), so (account_id, pixel_id, event_id)
-- deduplicates exactly what (pixel_id, event_id) did.
--
-- The raw match keys name their event by (account_id, seq): the column is added and filled
-- from the event (a plain join: no volatile function), then becomes part of the key.
ALTER TABLE event_match_keys DROP CONSTRAINT event_match_keys_seq_fkey;
ALTER TABLE event_match_keys ADD COLUMN account_id text;
UPDATE event_match_keys k SET account_id = e.account_id FROM events e WHERE e.seq = k.seq;
DELETE FROM event_match_keys WHERE account_id IS NULL;
ALTER TABLE event_match_keys ALTER COLUMN account_id SET NOT NULL;
ALTER TABLE event_match_keys DROP CONSTRAINT event_match_keys_pkey;
ALTER TABLE event_match_keys ADD PRIMARY KEY (account_id, seq);

-- Events: arrival number and dedup key per account.
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD PRIMARY KEY (account_id, seq);
ALTER TABLE events DROP CONSTRAINT events_dedup;
ALTER TABLE events ADD CONSTRAINT events_dedup UNIQUE (account_id, pixel_id, event_id);
ALTER TABLE event_match_keys ADD CONSTRAINT event_match_keys_event_fkey
  FOREIGN KEY (account_id, seq) REFERENCES events (account_id, seq) ON DELETE CASCADE;

-- The outbox: messages, their deliveries and the attempt log.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_message_id_fkey;
ALTER TABLE webhook_messages DROP CONSTRAINT webhook_messages_pkey;
ALTER TABLE webhook_messages ADD PRIMARY KEY (account_id, id);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey;
ALTER TABLE webhook_deliveries ADD PRIMARY KEY (account_id, message_id, endpoint_id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_message_fkey
  FOREIGN KEY (account_id, message_id) REFERENCES webhook_messages (account_id, id);
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey;
ALTER TABLE webhook_attempts ADD PRIMARY KEY (account_id, id);

-- Forwarding: the ledger (jobs and replays are keyed by account already). An event's jobs and
-- attempts are found by (account, pixel, event): the purge's and erasure's deletes name all three.
ALTER TABLE forward_attempts DROP CONSTRAINT forward_attempts_pkey;
ALTER TABLE forward_attempts ADD PRIMARY KEY (account_id, id);
DROP INDEX forward_jobs_event;
CREATE INDEX forward_jobs_event ON forward_jobs (account_id, pixel_id, event_id);
DROP INDEX forward_attempts_event;
CREATE INDEX forward_attempts_event
  ON forward_attempts (account_id, pixel_id, event_id, destination_id, attempted_at);

-- Browser identities: one per (account, pixel, visitor).
ALTER TABLE visitor_identities DROP CONSTRAINT visitor_identities_pkey;
ALTER TABLE visitor_identities ADD PRIMARY KEY (account_id, pixel_id, anonymous_id);
