-- GET /v1/pixels/:id/stats (contract §13) returns buckets ordered by bucket, then event name.
-- The indexes of 004 end at the bucket, so every range was sorted again, comparing names
-- under the database's collation: on 1,000 hours × 10 names, 14 ms of a 21 ms query. With
-- the name in the index, in byte order ("C", the order SQLite's BINARY gives, so both stores
-- list names alike), the scan returns rows already in order (6 ms).
--
-- `n` and `value_sum` are deliberately not INCLUDEd (as SQLite's 011 does): an index holding
-- them would make every count update on the ingest path a non-HOT update, writing every index
-- of the table again; the key here (bucket, name) never changes once a row exists.
DROP INDEX event_counts_by_hour;
CREATE INDEX event_counts_by_hour ON event_counts (pixel_id, account_id, hour, event_name COLLATE "C");

DROP INDEX event_counts_daily_by_day;
CREATE INDEX event_counts_daily_by_day
  ON event_counts_daily (pixel_id, account_id, day, event_name COLLATE "C");
