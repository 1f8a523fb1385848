-- The attempt ledger says what a request left out of an event to fit the platform's rules
-- (GA4's dropped or truncated params): the event record's `reason` stays for skipped events
-- (contract §12).
ALTER TABLE forward_attempts ADD COLUMN note TEXT;
