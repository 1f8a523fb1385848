-- Publishable keys (browser collection): every pixel has one, `tw_pub_` + 24 base62, which only
-- sends browser events to its pixel from its own sites. A rotation keeps the previous key
-- working until `previous_publishable_key_expires_at` (24 h). Pixels made before this
-- migration get a key here: 24 hex digits of a random UUID are 24 base62 characters.
ALTER TABLE pixels ADD COLUMN publishable_key text;
ALTER TABLE pixels ADD COLUMN previous_publishable_key text;
ALTER TABLE pixels ADD COLUMN previous_publishable_key_expires_at timestamptz;
UPDATE pixels SET publishable_key = 'tw_pub_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24)
 WHERE publishable_key IS NULL;
ALTER TABLE pixels ALTER COLUMN publishable_key SET NOT NULL;
CREATE UNIQUE INDEX pixels_publishable_key ON pixels (publishable_key);
CREATE UNIQUE INDEX pixels_previous_publishable_key ON pixels (previous_publishable_key)
  WHERE previous_publishable_key IS NOT NULL;
