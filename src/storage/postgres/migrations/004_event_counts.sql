-- Pre-aggregated event counts, so `total` on GET /v1/pixels/:id/events sums a few buckets
-- instead of counting millions of index entries (see src/storage/event-totals.ts):
-- all-time, per UTC day and per UTC hour, each per (pixel, account, event name). Buckets are
-- whole days / hours since the epoch, negative before 1970, computed from the epoch so they
-- do not depend on the session's TimeZone (date_trunc on timestamptz does). The insert path
-- keeps them exact in the same transaction as each batch of events.
CREATE TABLE event_totals (
  pixel_id text NOT NULL,
  account_id text NOT NULL,
  event_name text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (pixel_id, account_id, event_name)
);

CREATE TABLE event_counts_daily (
  pixel_id text NOT NULL,
  account_id text NOT NULL,
  event_name text NOT NULL,
  day bigint NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (pixel_id, account_id, event_name, day)
);

CREATE TABLE event_counts (
  pixel_id text NOT NULL,
  account_id text NOT NULL,
  event_name text NOT NULL,
  hour bigint NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (pixel_id, account_id, event_name, hour)
);

-- Without an event_name filter a range is summed over every name: these find the buckets of
-- the range directly instead of reading all of the pixel's buckets (a pixel with 50 names over
-- two years has 876,000 hour rows). `n` is not indexed, so PostgreSQL can still update
-- counts in place (HOT).
CREATE INDEX event_counts_daily_by_day ON event_counts_daily (pixel_id, account_id, day);
CREATE INDEX event_counts_by_hour ON event_counts (pixel_id, account_id, hour);

-- SHARE mode blocks inserts (from instances still running the previous version) until this
-- migration commits, so no event lands between the backfill's snapshot and the commit
-- uncounted. Readers are not blocked.
LOCK TABLE events IN SHARE MODE;

INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n)
SELECT pixel_id, account_id, event_name, floor(extract(epoch FROM timestamp) / 3600)::bigint,
       count(*)
  FROM events
 GROUP BY 1, 2, 3, 4;

INSERT INTO event_counts_daily (pixel_id, account_id, event_name, day, n)
SELECT pixel_id, account_id, event_name, floor(hour / 24.0)::bigint, sum(n)
  FROM event_counts
 GROUP BY 1, 2, 3, 4;

INSERT INTO event_totals (pixel_id, account_id, event_name, n)
SELECT pixel_id, account_id, event_name, sum(n)
  FROM event_counts
 GROUP BY 1, 2, 3;
