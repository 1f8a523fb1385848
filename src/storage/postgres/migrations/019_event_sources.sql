-- Browser collection: every event says where it came from, `server` (POST /v1/track and its
-- batch) or `browser` (POST /v1/collect); events stored before this migration came from
-- servers. A destination may take one source only (`sources`; NULL: both). A column added
-- with a constant default does not rewrite the table.
ALTER TABLE events ADD COLUMN source text NOT NULL DEFAULT 'server';
ALTER TABLE destinations ADD COLUMN sources text[];
