-- The event counts (004) grow with traffic like the rollups of 026: a row per pixel, name and
-- hour or day, and one per pixel and name for all time. Their primary keys begin with
-- account_id (contract §8). The columns are the same, only their order in the key changes:
-- ON CONFLICT names the key's columns as a set, so the insert's upserts find the new key.
-- The range indexes (012) stay as they are: every read names both pixel_id and account_id
-- with `=`, so their order there changes nothing. On Citus the three tables are distributed
-- by account_id already (024); a key that includes the distribution column can be dropped
-- and added on a distributed table, so nothing else is needed.
ALTER TABLE event_counts DROP CONSTRAINT event_counts_pkey;
ALTER TABLE event_counts ADD PRIMARY KEY (account_id, pixel_id, event_name, hour);
ALTER TABLE event_counts_daily DROP CONSTRAINT event_counts_daily_pkey;
ALTER TABLE event_counts_daily ADD PRIMARY KEY (account_id, pixel_id, event_name, day);
ALTER TABLE event_totals DROP CONSTRAINT event_totals_pkey;
ALTER TABLE event_totals ADD PRIMARY KEY (account_id, pixel_id, event_name);
