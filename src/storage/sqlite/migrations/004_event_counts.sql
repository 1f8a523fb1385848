-- Pre-aggregated event counts per (pixel, account, name, UTC hour), so `total` on
-- GET /v1/pixels/:id/events sums buckets instead of counting millions of index entries.
-- `hour` is floor(timestamp / 3,600,000): whole hours since the epoch, negative before 1970.
-- The insert path keeps it exact in the same transaction as each event; this backfills the
-- events already stored (the migration holds the write lock, so none can slip in between).
CREATE TABLE event_counts (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  hour INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (pixel_id, account_id, event_name, hour)
) STRICT, WITHOUT ROWID;

-- SQLite's integer division truncates toward zero; subtracting the non-negative remainder
-- first makes it a floor for timestamps before 1970 too.
INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n)
SELECT pixel_id, account_id, event_name,
       (timestamp - ((timestamp % 3600000) + 3600000) % 3600000) / 3600000 AS hour,
       count(*)
  FROM events
 GROUP BY pixel_id, account_id, event_name, hour;
