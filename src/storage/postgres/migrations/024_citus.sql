-- On Citus (the `citus` extension created in the database before the first start), the
-- tables are distributed here, once every growing table is keyed by account (023): one
-- account lives on one shard, so an account's writes and reads go to one node. The tables
-- that grow with traffic are distributed by account_id, colocated with `events`; the small
-- ones every account's statements join (accounts, keys, pixels, endpoints, destinations,
-- sessions, retention) are reference tables, copied to every node. A table created by a later
-- migration is distributed by that migration, the same way. On plain PostgreSQL this does
-- nothing.
DO $citus$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    RETURN;
  END IF;
  PERFORM create_reference_table('accounts');
  PERFORM create_reference_table('api_keys');
  PERFORM create_reference_table('pixels');
  PERFORM create_reference_table('webhook_endpoints');
  PERFORM create_reference_table('destinations');
  PERFORM create_reference_table('dashboard_sessions');
  PERFORM create_reference_table('account_retention');
  PERFORM create_distributed_table('events', 'account_id');
  PERFORM create_distributed_table('event_match_keys', 'account_id', colocate_with => 'events');
  PERFORM create_distributed_table('visitor_identities', 'account_id', colocate_with => 'events');
  PERFORM create_distributed_table('event_totals', 'account_id', colocate_with => 'events');
  PERFORM create_distributed_table('event_counts_daily', 'account_id', colocate_with => 'events');
  PERFORM create_distributed_table('event_counts', 'account_id', colocate_with => 'events');
  -- A local table's foreign key to a table being distributed is refused: the deliveries'
  -- key to their message is taken off while both are distributed, then put back.
  ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_message_fkey;
  PERFORM create_distributed_table('webhook_messages', 'account_id', colocate_with => 'events');
  PERFORM create_distributed_table('webhook_deliveries', 'account_id', colocate_with => 'events');
  ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_message_fkey
    FOREIGN KEY (account_id, message_id) REFERENCES webhook_messages (account_id, id);
  PERFORM create_distributed_table('webhook_attempts', 'account_id', colocate_with => 'events');
  PERFORM create_distributed_table('forward_jobs', 'account_id', colocate_with => 'events');
  PERFORM create_distributed_table('forward_attempts', 'account_id', colocate_with => 'events');
  PERFORM create_distributed_table('forward_replays', 'account_id', colocate_with => 'events');
END
$citus$;
