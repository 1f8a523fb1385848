-- The pixel's 7-day match quality (GET /v1/pixels/:id `match_quality_7d`, contract §12) from
-- the hourly rollup: the sum of the scores and how many events were scored, kept with `n` in
-- the insert's transaction and taken off by every delete, like `n` and `value_sum` (006).
-- Apart from 010 so that, like 004 and 006, it can be run again to rebuild the sums from the
-- events; events stored before 010 have no score and are not counted.
ALTER TABLE event_counts ADD COLUMN match_sum REAL NOT NULL DEFAULT 0;
ALTER TABLE event_counts ADD COLUMN match_n INTEGER NOT NULL DEFAULT 0;

-- As 006: one indexed range of the events per hour row, whole hours so pre-1970 floors right.
UPDATE event_counts SET
  match_sum = coalesce((
    SELECT sum(json_extract(e.match_quality, '$.score')) FROM events e
     WHERE e.pixel_id = event_counts.pixel_id AND e.account_id = event_counts.account_id
       AND e.event_name = event_counts.event_name
       AND e.timestamp >= event_counts.hour * 3600000
       AND e.timestamp < (event_counts.hour + 1) * 3600000
       AND e.match_quality IS NOT NULL), 0),
  match_n = (
    SELECT count(*) FROM events e
     WHERE e.pixel_id = event_counts.pixel_id AND e.account_id = event_counts.account_id
       AND e.event_name = event_counts.event_name
       AND e.timestamp >= event_counts.hour * 3600000
       AND e.timestamp < (event_counts.hour + 1) * 3600000
       AND e.match_quality IS NOT NULL);
