-- Revenue beside the hourly and daily counts of 004, for GET /v1/pixels/:id/stats (contract §13).
-- Sum of `value` over the bucket's events (events without a value add 0), kept in the same
-- transaction as the counts, so GET /v1/pixels/:id/stats never scans events.
ALTER TABLE event_counts ADD COLUMN value_sum double precision NOT NULL DEFAULT 0;
ALTER TABLE event_counts_daily ADD COLUMN value_sum double precision NOT NULL DEFAULT 0;

-- As in 004: no insert may land between the backfill and the commit uncounted.
LOCK TABLE events IN SHARE MODE;

UPDATE event_counts c SET value_sum = s.value_sum
  FROM (SELECT pixel_id, account_id, event_name,
               floor(extract(epoch FROM timestamp) / 3600)::bigint AS hour,
               coalesce(sum(value), 0) AS value_sum
          FROM events GROUP BY 1, 2, 3, 4) s
 WHERE c.pixel_id = s.pixel_id AND c.account_id = s.account_id
   AND c.event_name = s.event_name AND c.hour = s.hour;

UPDATE event_counts_daily d SET value_sum = s.value_sum
  FROM (SELECT pixel_id, account_id, event_name, floor(hour / 24.0)::bigint AS day,
               sum(value_sum) AS value_sum
          FROM event_counts GROUP BY 1, 2, 3, 4) s
 WHERE d.pixel_id = s.pixel_id AND d.account_id = s.account_id
   AND d.event_name = s.event_name AND d.day = s.day;
