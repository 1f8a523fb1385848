-- Replays (contract §21): the request is recorded here with the count it promised, then its
-- events are queued in the background in chunks, each chunk one short transaction that also
-- moves the cursor (newest first: timestamp, seq), so a crash resumes after the last committed
-- chunk and never queues a chunk twice. Leased like a job: one worker advances a replay.
CREATE TABLE forward_replays (
  account_id text NOT NULL,
  id text NOT NULL,
  destination_id text NOT NULL,
  pixel_id text NOT NULL,
  range_from timestamptz NOT NULL,
  range_to timestamptz NOT NULL,
  statuses text NOT NULL,
  promised integer NOT NULL,
  queued integer NOT NULL DEFAULT 0,
  cursor_at timestamptz,
  cursor_seq bigint,
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  lease_until timestamptz,
  lease_owner text,
  PRIMARY KEY (account_id, id)
);
CREATE INDEX forward_replays_open ON forward_replays (created_at) WHERE finished_at IS NULL;
