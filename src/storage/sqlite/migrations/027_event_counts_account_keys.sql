-- The event counts' keys begin with account_id, as on PostgreSQL
-- (postgres/migrations/027_event_counts_account_keys.sql), so both stores' upserts name the
-- same key. SQLite cannot reorder a primary key in place: as in 026, each table is made again
-- with the new key and its rows copied (a row per pixel, name and hour or day, not per
-- event), in the migration's transaction. The range indexes of 012 go with the old table and
-- are made again as they were.
CREATE TABLE event_totals_new (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (account_id, pixel_id, event_name)
) STRICT, WITHOUT ROWID;
INSERT INTO event_totals_new (pixel_id, account_id, event_name, n)
SELECT pixel_id, account_id, event_name, n FROM event_totals;
DROP TABLE event_totals;
ALTER TABLE event_totals_new RENAME TO event_totals;

-- value_sum was added by 006 (ALTER TABLE … ADD COLUMN): the copies name their columns, so
-- they do not rely on the two tables listing them in the same order.
CREATE TABLE event_counts_daily_new (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  day INTEGER NOT NULL,
  n INTEGER NOT NULL,
  value_sum REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, pixel_id, event_name, day)
) STRICT, WITHOUT ROWID;
INSERT INTO event_counts_daily_new (pixel_id, account_id, event_name, day, n, value_sum)
SELECT pixel_id, account_id, event_name, day, n, value_sum FROM event_counts_daily;
DROP TABLE event_counts_daily;
ALTER TABLE event_counts_daily_new RENAME TO event_counts_daily;
CREATE INDEX event_counts_daily_by_day
  ON event_counts_daily (pixel_id, account_id, day, event_name, n, value_sum);

-- value_sum (006), match_sum and match_n (011).
CREATE TABLE event_counts_new (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_name TEXT NOT NULL,
  hour INTEGER NOT NULL,
  n INTEGER NOT NULL,
  value_sum REAL NOT NULL DEFAULT 0,
  match_sum REAL NOT NULL DEFAULT 0,
  match_n INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, pixel_id, event_name, hour)
) STRICT, WITHOUT ROWID;
INSERT INTO event_counts_new (pixel_id, account_id, event_name, hour, n, value_sum, match_sum,
  match_n)
SELECT pixel_id, account_id, event_name, hour, n, value_sum, match_sum, match_n
  FROM event_counts;
DROP TABLE event_counts;
ALTER TABLE event_counts_new RENAME TO event_counts;
CREATE INDEX event_counts_by_hour
  ON event_counts (pixel_id, account_id, hour, event_name, n, value_sum);
