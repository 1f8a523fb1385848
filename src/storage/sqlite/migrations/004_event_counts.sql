-- Pre-aggregated event counts, so `total` on GET /v1/pixels/:id/events sums a few buckets
-- instead of counting millions of index entries (see src/storage/event-totals.ts):
-- all-time, per UTC day and per UTC hour, each per (pixel, account, event name). Buckets are
-- whole days / hours since the epoch, negative before 1970. The insert path keeps them exact
-- in the same transaction as each event; this backfills the events already stored (the
-- migration holds the write lock, so none can slip in between).
CREATE TABLE event_totals (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (pixel_id, account_id, event_name)
) STRICT, WITHOUT ROWID;

CREATE TABLE event_counts_daily (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  day INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (pixel_id, account_id, event_name, day)
) STRICT, WITHOUT ROWID;

CREATE TABLE event_counts (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  hour INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (pixel_id, account_id, event_name, hour)
) STRICT, WITHOUT ROWID;

-- Without an event_name filter a range is summed over every name: these find the buckets of
-- the range directly instead of reading all of the pixel's buckets (a pixel with 50 names over
-- two years has 876,000 hour rows).
CREATE INDEX event_counts_daily_by_day ON event_counts_daily (pixel_id, account_id, day);
CREATE INDEX event_counts_by_hour ON event_counts (pixel_id, account_id, hour);

-- SQLite's integer division truncates toward zero; subtracting the non-negative remainder
-- first makes it a floor for timestamps before 1970 too.
INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n)
SELECT pixel_id, account_id, event_name,
       (timestamp - ((timestamp % 3600000) + 3600000) % 3600000) / 3600000 AS hour,
       count(*)
  FROM events
 GROUP BY pixel_id, account_id, event_name, hour;

-- Hours are whole, so a day is a floor of the hour the same way.
INSERT INTO event_counts_daily (pixel_id, account_id, event_name, day, n)
SELECT pixel_id, account_id, event_name, (hour - ((hour % 24) + 24) % 24) / 24 AS day, sum(n)
  FROM event_counts
 GROUP BY pixel_id, account_id, event_name, day;

INSERT INTO event_totals (pixel_id, account_id, event_name, n)
SELECT pixel_id, account_id, event_name, sum(n)
  FROM event_counts
 GROUP BY pixel_id, account_id, event_name;
