-- Match keys and match quality (contract §11, §12).
--
-- On the event: `action_source` (not a secret: shown on the record), the GA4 and TikTok hashes
-- of its contact data (`platform_hashes`, {ga4, tiktok}; Meta's are the record's own user_data
-- hashes, so they are not stored twice) and the match quality estimate computed at ingestion
-- (`match_quality`, {score, keys, missing}). Events stored before this migration read as
-- `website`, and their estimate is computed from their user_data on read. A column added with
-- a constant default does not rewrite the table (PostgreSQL 11+).
ALTER TABLE events ADD COLUMN action_source text NOT NULL DEFAULT 'website';
ALTER TABLE events ADD COLUMN platform_hashes json;
ALTER TABLE events ADD COLUMN match_quality json;

-- The raw match keys (IP, user agent, click ids, cookies) and the unhashed coarse location,
-- kept APART from the record, only for forwarding, until `expires_at` (the event's timestamp +
-- 7 days), then deleted by the periodic sweep. A row exists only for an event that carried
-- some. ON DELETE CASCADE: erasing or purging the event takes its raw keys with it.
CREATE TABLE event_match_keys (
  seq bigint PRIMARY KEY REFERENCES events (seq) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  match_keys json,
  location json
);
CREATE INDEX event_match_keys_expiry ON event_match_keys (expires_at);
