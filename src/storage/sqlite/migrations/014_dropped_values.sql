-- The user_data values an event was stored without because they could not be used (contract
-- §19): a JSON array of paths (`["user_data.phone"]`), NULL when nothing was dropped (almost
-- every event, and every event stored before this migration).
ALTER TABLE events ADD COLUMN dropped TEXT;
