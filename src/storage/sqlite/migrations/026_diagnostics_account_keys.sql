-- The diagnostics rollups' keys begin with account_id, as on PostgreSQL
-- (postgres/migrations/026_diagnostics_account_keys.sql), so both stores' upserts name the
-- same key. SQLite cannot reorder a primary key in place: each table is made again with the
-- new key and its rows copied (a few rows per pixel, hour and name, not per event).
CREATE TABLE diag_hourly_new (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  event_name TEXT NOT NULL,
  source TEXT NOT NULL,
  n INTEGER NOT NULL DEFAULT 0,
  duplicates INTEGER NOT NULL DEFAULT 0,
  k_email INTEGER NOT NULL DEFAULT 0,
  k_phone INTEGER NOT NULL DEFAULT 0,
  k_external_id INTEGER NOT NULL DEFAULT 0,
  k_fbc INTEGER NOT NULL DEFAULT 0,
  k_fbp INTEGER NOT NULL DEFAULT 0,
  k_ip INTEGER NOT NULL DEFAULT 0,
  k_ua INTEGER NOT NULL DEFAULT 0,
  k_click INTEGER NOT NULL DEFAULT 0,
  consent_denied INTEGER NOT NULL DEFAULT 0,
  enriched INTEGER NOT NULL DEFAULT 0,
  e_fbc INTEGER NOT NULL DEFAULT 0,
  e_fbp INTEGER NOT NULL DEFAULT 0,
  e_ip INTEGER NOT NULL DEFAULT 0,
  e_ua INTEGER NOT NULL DEFAULT 0,
  e_click INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, pixel_id, hour, event_name, source)
) STRICT, WITHOUT ROWID;
INSERT INTO diag_hourly_new SELECT * FROM diag_hourly;
DROP TABLE diag_hourly;
ALTER TABLE diag_hourly_new RENAME TO diag_hourly;

CREATE TABLE diag_dropped_hourly_new (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  field TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (account_id, pixel_id, hour, field)
) STRICT, WITHOUT ROWID;
INSERT INTO diag_dropped_hourly_new SELECT * FROM diag_dropped_hourly;
DROP TABLE diag_dropped_hourly;
ALTER TABLE diag_dropped_hourly_new RENAME TO diag_dropped_hourly;

CREATE TABLE revenue_hourly_new (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  event_name TEXT NOT NULL,
  currency TEXT NOT NULL,
  n INTEGER NOT NULL,
  value_sum REAL NOT NULL,
  PRIMARY KEY (account_id, pixel_id, hour, event_name, currency)
) STRICT, WITHOUT ROWID;
INSERT INTO revenue_hourly_new SELECT * FROM revenue_hourly;
DROP TABLE revenue_hourly;
ALTER TABLE revenue_hourly_new RENAME TO revenue_hourly;

CREATE TABLE forward_hourly_new (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  destination_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  status TEXT NOT NULL,
  reason TEXT NOT NULL,
  n INTEGER NOT NULL,
  example_event_id TEXT NOT NULL,
  PRIMARY KEY (account_id, pixel_id, hour, destination_id, status, reason)
) STRICT, WITHOUT ROWID;
INSERT INTO forward_hourly_new SELECT * FROM forward_hourly;
DROP TABLE forward_hourly;
ALTER TABLE forward_hourly_new RENAME TO forward_hourly;
