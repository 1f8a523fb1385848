-- The diagnostics rollups (025) grow with traffic like the tables of 023: their primary keys
-- begin with account_id (contract §8), and on Citus they are distributed by account_id,
-- colocated with `events`, so the event insert's and the settlement's upserts stay on the
-- account's shard. The columns are the same, only their order in the key changes: ON CONFLICT
-- names the key's columns as a set, so upserts written for either order find the new key.
ALTER TABLE diag_hourly DROP CONSTRAINT diag_hourly_pkey;
ALTER TABLE diag_hourly ADD PRIMARY KEY (account_id, pixel_id, hour, event_name, source);
ALTER TABLE diag_dropped_hourly DROP CONSTRAINT diag_dropped_hourly_pkey;
ALTER TABLE diag_dropped_hourly ADD PRIMARY KEY (account_id, pixel_id, hour, field);
ALTER TABLE revenue_hourly DROP CONSTRAINT revenue_hourly_pkey;
ALTER TABLE revenue_hourly ADD PRIMARY KEY (account_id, pixel_id, hour, event_name, currency);
ALTER TABLE forward_hourly DROP CONSTRAINT forward_hourly_pkey;
ALTER TABLE forward_hourly
  ADD PRIMARY KEY (account_id, pixel_id, hour, destination_id, status, reason);

-- Distributed as 024 distributes the other growing tables, when the `citus` extension is
-- there; a table an operator already distributed by hand is left as it is.
DO $citus$
DECLARE
  rollup text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  FOREACH rollup IN ARRAY ARRAY['diag_hourly', 'diag_dropped_hourly', 'revenue_hourly',
                                'forward_hourly'] LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = rollup::regclass) THEN
      PERFORM create_distributed_table(rollup::regclass, 'account_id', colocate_with => 'events');
    END IF;
  END LOOP;
END
$citus$;
