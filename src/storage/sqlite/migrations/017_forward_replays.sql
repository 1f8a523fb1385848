-- Replays (contract §21): the request is recorded here with the count it promised, then its
-- events are queued in the background in chunks, each chunk one short transaction that also
-- moves the cursor (newest first: timestamp, seq), so a crash resumes after the last committed
-- chunk and never queues a chunk twice. Leased like a job: one worker advances a replay.
CREATE TABLE forward_replays (
  account_id TEXT NOT NULL,
  id TEXT NOT NULL,
  destination_id TEXT NOT NULL,
  pixel_id TEXT NOT NULL,
  range_from INTEGER NOT NULL,
  range_to INTEGER NOT NULL,
  statuses TEXT NOT NULL,
  promised INTEGER NOT NULL,
  queued INTEGER NOT NULL DEFAULT 0,
  cursor_at INTEGER,
  cursor_seq INTEGER,
  created_at INTEGER NOT NULL,
  finished_at INTEGER,
  lease_until INTEGER,
  lease_owner TEXT,
  PRIMARY KEY (account_id, id)
) STRICT;
CREATE INDEX forward_replays_open ON forward_replays (created_at) WHERE finished_at IS NULL;
