-- Revenue beside the hourly and daily counts of 004, for GET /v1/pixels/:id/stats (contract §13).
-- Sum of `value` over the bucket's events (events without a value add 0), kept in the same
-- transaction as the counts, so GET /v1/pixels/:id/stats never scans events.
ALTER TABLE event_counts ADD COLUMN value_sum REAL NOT NULL DEFAULT 0;
ALTER TABLE event_counts_daily ADD COLUMN value_sum REAL NOT NULL DEFAULT 0;

UPDATE event_counts SET value_sum = coalesce((
  SELECT sum(e.value) FROM events e
   WHERE e.pixel_id = event_counts.pixel_id AND e.account_id = event_counts.account_id
     AND e.event_name = event_counts.event_name
     AND e.timestamp >= event_counts.hour * 3600000
     AND e.timestamp < (event_counts.hour + 1) * 3600000), 0);

UPDATE event_counts_daily SET value_sum = coalesce((
  SELECT sum(h.value_sum) FROM event_counts h
   WHERE h.pixel_id = event_counts_daily.pixel_id AND h.account_id = event_counts_daily.account_id
     AND h.event_name = event_counts_daily.event_name
     AND h.hour >= event_counts_daily.day * 24 AND h.hour < (event_counts_daily.day + 1) * 24), 0);
