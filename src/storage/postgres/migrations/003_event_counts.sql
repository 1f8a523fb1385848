-- Pre-aggregated event counts per (pixel, account, name, UTC hour), so `total` on
-- GET /v1/pixels/:id/events sums buckets instead of counting millions of index entries.
-- `hour` is floor(epoch seconds / 3600): whole hours since the epoch, negative before 1970,
-- independent of the session's TimeZone (date_trunc on timestamptz is not).
-- The insert path keeps it exact in the same transaction as each batch of events.
CREATE TABLE event_counts (
  pixel_id text NOT NULL,
  account_id text NOT NULL,
  event_name text NOT NULL,
  hour bigint NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (pixel_id, account_id, event_name, hour)
);

-- SHARE mode blocks inserts (from instances still running the previous version) until this
-- migration commits, so no event lands between the backfill's snapshot and the commit
-- uncounted. Readers are not blocked.
LOCK TABLE events IN SHARE MODE;

INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n)
SELECT pixel_id, account_id, event_name, floor(extract(epoch FROM timestamp) / 3600)::bigint,
       count(*)
  FROM events
 GROUP BY 1, 2, 3, 4;
