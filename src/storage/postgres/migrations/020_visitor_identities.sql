-- Identity stitching (browser collection). For each pixel and visitor (`anonymous_id`, the
-- snippet's `_tw_id` cookie), the latest identifiers the browser sent (click ids, platform
-- cookies, IP, user agent), RAW: kept apart like event_match_keys, only to fill the match keys
-- a server event of that visitor lacks, and deleted by the same periodic sweep at
-- `expires_at` (the last browser event + 7 days).
CREATE TABLE visitor_identities (
  pixel_id text NOT NULL,
  anonymous_id text NOT NULL,
  account_id text NOT NULL,
  keys json NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (pixel_id, anonymous_id)
);
CREATE INDEX visitor_identities_expiry ON visitor_identities (expires_at);

-- The visitor an event belongs to, when it said (browser events always; server events when
-- they carry `anonymous_id`): an erasure that deletes a person's events deletes their
-- visitors' identities with them.
ALTER TABLE events ADD COLUMN anonymous_id text;
