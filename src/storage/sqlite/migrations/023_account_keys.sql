-- Raw match keys carry their event's account (contract §8), as on PostgreSQL, where every
-- growing table is keyed by account (postgres/migrations/023_account_keys.sql): the shared
-- queries find them by (account_id, seq). SQLite keeps its other keys: one file is never
-- distributed, and rebuilding the events table to re-key it would cost a copy of every event.
ALTER TABLE event_match_keys ADD COLUMN account_id TEXT NOT NULL DEFAULT '';
UPDATE event_match_keys
   SET account_id = (SELECT e.account_id FROM events e WHERE e.seq = event_match_keys.seq);
