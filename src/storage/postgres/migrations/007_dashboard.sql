-- The dashboard (contract §13): named, scoped keys that remember when they were last used;
-- revenue beside the hourly and daily counts, for the stats API; dashboard sessions shared by
-- every instance.

-- Keys made before this migration (and by the CLI) are full-access and unnamed.
ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'full';
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;

-- A signed-in dashboard browser. Only the SHA-256 of the cookie's token is kept; the session
-- lives as long as its key does (revoking the key ends it) and until expires_at.
CREATE TABLE dashboard_sessions (
  token_hash text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  key_id text NOT NULL REFERENCES api_keys (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
