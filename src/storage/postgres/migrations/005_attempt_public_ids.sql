-- Attempt ids shown to API users are random (`att_` + base62), not the row counter: a counter
-- shared by every account told one account how many attempts all the others had.
ALTER TABLE webhook_attempts ADD COLUMN public_id text;
UPDATE webhook_attempts SET public_id = 'att_' || substr(md5(random()::text || id::text), 1, 20);
ALTER TABLE webhook_attempts ALTER COLUMN public_id SET NOT NULL;
