-- Attempt ids shown to API users are random (`att_` + base62), not the row counter: a counter
-- shared by every account told one account how many attempts all the others had.
ALTER TABLE webhook_attempts ADD COLUMN public_id text;
-- Derived from the random message id (no volatile function: Citus refuses one in an UPDATE of a
-- distributed table, and a statement-based replica would compute another value).
UPDATE webhook_attempts
   SET public_id = 'att_' || substr(md5(message_id || ':' || endpoint_id || ':' || id::text), 1, 20);
ALTER TABLE webhook_attempts ALTER COLUMN public_id SET NOT NULL;
