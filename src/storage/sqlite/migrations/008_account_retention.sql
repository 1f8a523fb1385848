-- Retention (contract §15): an enterprise account's own number of days. Pro and ultra take
-- theirs from the plan (90, 365), so only an override is stored.
CREATE TABLE account_retention (
  account_id TEXT PRIMARY KEY REFERENCES accounts (id),
  days INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
