-- Attempt ids shown to API users are random (`att_` + base62), not the row counter: a counter
-- shared by every account told one account how many attempts all the others had.
ALTER TABLE webhook_attempts ADD COLUMN public_id TEXT;
UPDATE webhook_attempts SET public_id = 'att_' || lower(hex(randomblob(10))) WHERE public_id IS NULL;
