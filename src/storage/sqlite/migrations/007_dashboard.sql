-- The dashboard (contract §13): named, scoped keys that remember when they were last used;
-- dashboard sessions.

-- Keys made before this migration (and by the CLI) are full-access and unnamed.
ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'full';
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;

-- A signed-in dashboard browser. Only the SHA-256 of the cookie's token is kept; the session
-- lives as long as its key does (revoking the key ends it) and until expires_at.
CREATE TABLE dashboard_sessions (
  token_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  key_id TEXT NOT NULL REFERENCES api_keys (id),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
