-- The dashboard's diagnostics (issue 34), as hourly rollups kept by the event insert and the
-- forwarding settlement in their own transactions, so the page sums a few thousand rows and
-- never scans events. Hours are floor(epoch of the EVENT's timestamp / 3600), as in
-- event_counts (004), so a period selects the same events on every rollup. See the SQLite
-- migration of the same number for each table's meaning.
CREATE TABLE diag_hourly (
  pixel_id text NOT NULL,
  account_id text NOT NULL,
  hour bigint NOT NULL,
  event_name text NOT NULL,
  source text NOT NULL,
  n bigint NOT NULL DEFAULT 0,
  duplicates bigint NOT NULL DEFAULT 0,
  k_email bigint NOT NULL DEFAULT 0,
  k_phone bigint NOT NULL DEFAULT 0,
  k_external_id bigint NOT NULL DEFAULT 0,
  k_fbc bigint NOT NULL DEFAULT 0,
  k_fbp bigint NOT NULL DEFAULT 0,
  k_ip bigint NOT NULL DEFAULT 0,
  k_ua bigint NOT NULL DEFAULT 0,
  k_click bigint NOT NULL DEFAULT 0,
  consent_denied bigint NOT NULL DEFAULT 0,
  enriched bigint NOT NULL DEFAULT 0,
  e_fbc bigint NOT NULL DEFAULT 0,
  e_fbp bigint NOT NULL DEFAULT 0,
  e_ip bigint NOT NULL DEFAULT 0,
  e_ua bigint NOT NULL DEFAULT 0,
  e_click bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (pixel_id, account_id, hour, event_name, source)
);

CREATE TABLE diag_dropped_hourly (
  pixel_id text NOT NULL,
  account_id text NOT NULL,
  hour bigint NOT NULL,
  field text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (pixel_id, account_id, hour, field)
);

CREATE TABLE revenue_hourly (
  pixel_id text NOT NULL,
  account_id text NOT NULL,
  hour bigint NOT NULL,
  event_name text NOT NULL,
  currency text NOT NULL,
  n bigint NOT NULL,
  value_sum float8 NOT NULL,
  PRIMARY KEY (pixel_id, account_id, hour, event_name, currency)
);

CREATE TABLE forward_hourly (
  pixel_id text NOT NULL,
  account_id text NOT NULL,
  destination_id text NOT NULL,
  hour bigint NOT NULL,
  status text NOT NULL,
  reason text NOT NULL,
  n bigint NOT NULL,
  example_event_id text NOT NULL,
  PRIMARY KEY (pixel_id, account_id, hour, destination_id, status, reason)
);

-- Backfill from what is stored: the same rows ingest writes, but duplicates refused before
-- this migration and click ids in landing URLs were not recorded, so those start at 0.
INSERT INTO diag_hourly (pixel_id, account_id, hour, event_name, source, n, k_email, k_phone,
  k_external_id, k_fbc, k_fbp, k_ip, k_ua, consent_denied, enriched, e_fbc, e_fbp, e_ip, e_ua,
  e_click)
SELECT pixel_id, account_id, floor(extract(epoch FROM timestamp) / 3600)::bigint AS hour,
       event_name, source, count(*),
       count(*) FILTER (WHERE (match_quality -> 'keys')::jsonb ? 'email'),
       count(*) FILTER (WHERE (match_quality -> 'keys')::jsonb ? 'phone'),
       count(*) FILTER (WHERE (match_quality -> 'keys')::jsonb ? 'external_id'),
       count(*) FILTER (WHERE (match_quality -> 'keys')::jsonb ? 'fbc'),
       count(*) FILTER (WHERE (match_quality -> 'keys')::jsonb ? 'fbp'),
       count(*) FILTER (WHERE (match_quality -> 'keys')::jsonb ? 'client_ip_address'),
       count(*) FILTER (WHERE (match_quality -> 'keys')::jsonb ? 'client_user_agent'),
       count(*) FILTER (WHERE consent ->> 'ad_user_data' = 'denied'),
       count(*) FILTER (WHERE json_typeof(match_quality -> 'enriched') = 'array'
                          AND json_array_length(match_quality -> 'enriched') > 0),
       count(*) FILTER (WHERE (match_quality -> 'enriched')::jsonb ? 'fbc'),
       count(*) FILTER (WHERE (match_quality -> 'enriched')::jsonb ? 'fbp'),
       count(*) FILTER (WHERE (match_quality -> 'enriched')::jsonb ? 'client_ip_address'),
       count(*) FILTER (WHERE (match_quality -> 'enriched')::jsonb ? 'client_user_agent'),
       count(*) FILTER (WHERE (match_quality -> 'enriched')::jsonb ? 'ttclid')
  FROM events
 GROUP BY 1, 2, 3, 4, 5;

INSERT INTO diag_dropped_hourly (pixel_id, account_id, hour, field, n)
SELECT e.pixel_id, e.account_id, floor(extract(epoch FROM e.timestamp) / 3600)::bigint,
       d.field, count(*)
  FROM events e, json_array_elements_text(e.dropped) AS d (field)
 WHERE e.dropped IS NOT NULL
 GROUP BY 1, 2, 3, 4;

INSERT INTO revenue_hourly (pixel_id, account_id, hour, event_name, currency, n, value_sum)
SELECT pixel_id, account_id, floor(extract(epoch FROM timestamp) / 3600)::bigint, event_name,
       coalesce(currency, ''), count(*), sum(value)
  FROM events
 WHERE value IS NOT NULL
 GROUP BY 1, 2, 3, 4, 5;

INSERT INTO forward_hourly (pixel_id, account_id, destination_id, hour, status, reason, n,
  example_event_id)
SELECT e.pixel_id, e.account_id, j.destination_id,
       floor(extract(epoch FROM e.timestamp) / 3600)::bigint, j.status,
       -- A searched CASE: Citus 13.2 sends `CASE j.status WHEN …` to the workers wrongly
       -- ("text = boolean") when forward_hourly is distributed.
       CASE WHEN j.status = 'skipped' THEN left(coalesce(j.reason, ''), 200)
            WHEN j.status = 'failed' THEN left(coalesce(j.last_error, j.reason, ''), 200)
            ELSE '' END,
       count(*), max(e.event_id)
  FROM forward_jobs j
  -- By account too (the same rows: a job has its event's account), so on Citus the join
  -- stays on each shard instead of needing a repartition, which Citus refuses.
  JOIN events e ON e.account_id = j.account_id AND e.pixel_id = j.pixel_id
               AND e.event_id = j.event_id
 GROUP BY 1, 2, 3, 4, 5, 6;
