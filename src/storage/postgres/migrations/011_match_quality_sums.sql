-- The pixel's 7-day match quality (GET /v1/pixels/:id `match_quality_7d`, contract §12) from
-- the hourly rollup: the sum of the scores and how many events were scored, kept with `n` in
-- the insert's transaction and taken off by every delete, like `n` and `value_sum` (006).
-- Apart from 010 so that, like 004 and 006, it can be run again to rebuild the sums from the
-- events; events stored before 010 have no score and are not counted.
ALTER TABLE event_counts ADD COLUMN match_sum double precision NOT NULL DEFAULT 0;
ALTER TABLE event_counts ADD COLUMN match_n bigint NOT NULL DEFAULT 0;

-- As in 004: no insert may land between the backfill and the commit uncounted.
LOCK TABLE events IN SHARE MODE;

UPDATE event_counts c SET match_sum = s.match_sum, match_n = s.match_n
  FROM (SELECT pixel_id, account_id, event_name,
               floor(extract(epoch FROM timestamp) / 3600)::bigint AS hour,
               sum((match_quality ->> 'score')::float8) AS match_sum, count(*) AS match_n
          FROM events WHERE match_quality IS NOT NULL GROUP BY 1, 2, 3, 4) s
 WHERE c.pixel_id = s.pixel_id AND c.account_id = s.account_id
   AND c.event_name = s.event_name AND c.hour = s.hour;
