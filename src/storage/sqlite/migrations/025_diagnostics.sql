-- The dashboard's diagnostics (issue 34), as hourly rollups kept by the event insert and the
-- forwarding settlement in their own transactions, so the page sums a few thousand rows and
-- never scans events. Hours are floor(timestamp / 3,600,000) of the EVENT's timestamp, as in
-- event_counts (004), so a period selects the same events on every rollup.
--
-- diag_hourly: per (pixel, hour, event name, source) the events stored, the duplicates refused,
-- and how many carried each match key (k_*), had ad_user_data consent denied, or had keys
-- filled by identity stitching (enriched, e_*). The columns are the bits of
-- src/domain/stats/diagnostics.ts `DIAG_FLAGS`, in that order.
CREATE TABLE diag_hourly (
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
  PRIMARY KEY (pixel_id, account_id, hour, event_name, source)
) STRICT, WITHOUT ROWID;

-- The user_data values stored without (contract §19), per field path.
CREATE TABLE diag_dropped_hourly (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  field TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (pixel_id, account_id, hour, field)
) STRICT, WITHOUT ROWID;

-- Revenue per currency ('' for a value sent without one): event_counts' value_sum adds EUR to
-- USD, this does not.
CREATE TABLE revenue_hourly (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  event_name TEXT NOT NULL,
  currency TEXT NOT NULL,
  n INTEGER NOT NULL,
  value_sum REAL NOT NULL,
  PRIMARY KEY (pixel_id, account_id, hour, event_name, currency)
) STRICT, WITHOUT ROWID;

-- Forwarding outcomes per destination: a job counts +1 `pending` when written (with its event
-- or by a replay), and settling it moves that 1 to its status and reason (the skip reason, or
-- the failure's message, cut to 200 characters); a replay moves it back. `example_event_id` is
-- the latest event counted in the row, for the page's link. Not per event name: a month of a
-- busy pixel would be 20 times the rows (300,000 for 20 names), past the page's 300 ms.
CREATE TABLE forward_hourly (
  pixel_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  destination_id TEXT NOT NULL,
  hour INTEGER NOT NULL,
  status TEXT NOT NULL,
  reason TEXT NOT NULL,
  n INTEGER NOT NULL,
  example_event_id TEXT NOT NULL,
  PRIMARY KEY (pixel_id, account_id, hour, destination_id, status, reason)
) STRICT, WITHOUT ROWID;

-- Backfill from what is stored (once, under the migration's write lock): the same rows ingest
-- writes, but duplicates refused before this migration and click ids in landing URLs were not
-- recorded, so those start at 0.
INSERT INTO diag_hourly (pixel_id, account_id, hour, event_name, source, n, k_email, k_phone,
  k_external_id, k_fbc, k_fbp, k_ip, k_ua, consent_denied, enriched, e_fbc, e_fbp, e_ip, e_ua,
  e_click)
SELECT pixel_id, account_id,
       (timestamp - ((timestamp % 3600000) + 3600000) % 3600000) / 3600000 AS hour,
       event_name, source, count(*),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.keys') WHERE value = 'email')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.keys') WHERE value = 'phone')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.keys') WHERE value = 'external_id')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.keys') WHERE value = 'fbc')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.keys') WHERE value = 'fbp')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.keys')
                    WHERE value = 'client_ip_address')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.keys')
                    WHERE value = 'client_user_agent')),
       sum(coalesce(json_extract(consent, '$.ad_user_data') = 'denied', 0)),
       sum(coalesce(json_array_length(match_quality, '$.enriched') > 0, 0)),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.enriched') WHERE value = 'fbc')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.enriched') WHERE value = 'fbp')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.enriched')
                    WHERE value = 'client_ip_address')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.enriched')
                    WHERE value = 'client_user_agent')),
       sum(EXISTS (SELECT 1 FROM json_each(match_quality, '$.enriched') WHERE value = 'ttclid'))
  FROM events
 GROUP BY pixel_id, account_id, hour, event_name, source;

INSERT INTO diag_dropped_hourly (pixel_id, account_id, hour, field, n)
SELECT e.pixel_id, e.account_id,
       (e.timestamp - ((e.timestamp % 3600000) + 3600000) % 3600000) / 3600000 AS hour,
       d.value, count(*)
  FROM events e, json_each(e.dropped) d
 WHERE e.dropped IS NOT NULL
 GROUP BY e.pixel_id, e.account_id, hour, d.value;

INSERT INTO revenue_hourly (pixel_id, account_id, hour, event_name, currency, n, value_sum)
SELECT pixel_id, account_id,
       (timestamp - ((timestamp % 3600000) + 3600000) % 3600000) / 3600000 AS hour,
       event_name, coalesce(currency, ''), count(*), sum(value)
  FROM events
 WHERE value IS NOT NULL
 GROUP BY pixel_id, account_id, hour, event_name, coalesce(currency, '');

INSERT INTO forward_hourly (pixel_id, account_id, destination_id, hour, status, reason, n,
  example_event_id)
SELECT e.pixel_id, e.account_id, j.destination_id,
       (e.timestamp - ((e.timestamp % 3600000) + 3600000) % 3600000) / 3600000 AS hour,
       j.status,
       CASE j.status WHEN 'skipped' THEN substr(coalesce(j.reason, ''), 1, 200)
                     WHEN 'failed' THEN substr(coalesce(j.last_error, j.reason, ''), 1, 200)
                     ELSE '' END AS reason,
       count(*), max(e.event_id)
  FROM forward_jobs j JOIN events e ON e.pixel_id = j.pixel_id AND e.event_id = j.event_id
 GROUP BY e.pixel_id, e.account_id, j.destination_id, hour, j.status, reason;
