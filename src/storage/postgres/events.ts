import type pg from 'pg';
import { newMessageId } from '../../domain/ids.ts';
import type { TrackedEvent, WebhookEvent } from '../../domain/model.ts';
import type {
  EventQuery,
  EventStore,
  InsertOutcome,
  NewEvent,
} from '../../domain/ports/event-store.ts';
import { hourOf, planTotal, totalSql } from '../event-totals.ts';
import { GroupCommit, PartlyCommitted } from '../group-commit.ts';
import { matchColumns } from '../match-columns.ts';
import { getEvent } from '../queries/events.ts';
import * as rows from '../rows.ts';
import { type EventRow, postgresCodec } from '../rows.ts';
import { eventsCommitted, type QueuedWork } from '../sql/committed.ts';
import { oneStatement } from './database.ts';
import { FirstStatistics } from './first-statistics.ts';
import { firstsOfBatch, fromMs, MAX_NOTIFY_PAYLOAD, SEQ_ROOM } from './ingest-batch.ts';
import type { IngestPath } from './ingest-path.ts';
import { insertPerAccount } from './per-account-ingest.ts';
import type { PostgresRunner } from './runner.ts';

export const toEvent = (r: EventRow) => rows.toEvent(postgresCodec, r);
export type { EventRow };

type Outcome = InsertOutcome;
type Pending = NewEvent;

/** Most events one transaction carries: bounds statement size and the wait of the last caller. */
export const MAX_BATCH = 256;

/** Strings (or nulls) as one JSON array, read back by `json_array_elements_text`. */
const texts = (values: (string | null)[]): string => JSON.stringify(values);

/**
 * JSON documents, already serialised, as one JSON array, read back by `json_array_elements`
 * (which keeps each document's text, so key order, as sent). A SQL NULL goes as JSON `null`
 * and is turned back by `sqlNull`: no document stored here is ever the JSON literal null.
 */
const documents = (values: (string | null)[]): string => {
  let text = '[';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) text += ',';
    text += values[i] ?? 'null';
  }
  return `${text}]`;
};

const sqlNull = (column: string) =>
  `CASE WHEN json_typeof(${column}) = 'null' THEN NULL ELSE ${column} END`;

/**
 * The statement storing one batch: events, raw match keys, forwarding jobs, counts, the outbox
 * and the live tail's notices, all of it. One statement is one round trip and, outside
 * BEGIN/COMMIT, its own transaction, committed (with the WAL flush) before PostgreSQL answers:
 * the five round trips a batch took before (BEGIN, insert, NOTIFY, outbox lookup, COMMIT),
 * each a write, a wake-up and a read on both sides, cost the service more CPU than the rows
 * (issue 21). It is a named prepared statement, so each connection sends its ~6 kB of text and
 * PostgreSQL parses it once, not once per batch.
 *
 * One parameter per column, zipped into rows by ROWS FROM: a single statement whatever the
 * batch size. Every column goes as one JSON array (`texts`, `documents`; numbers, and times as
 * epoch milliseconds, `fromMs`), not as a PostgreSQL array: pg writes an array literal by escaping every element
 * with two regular expressions (and every Date through a local-time formatter), which for the
 * JSON columns (all quotes) cost more than the rest of the insert (docs/decisions.md, "Ingest
 * before and after the seam"). Validation has refused NUL and unpaired surrogates, so every
 * string survives the JSON round trip unchanged. The answer names the stored events by their
 * place in the arrays (`arrival`), not by their keys: one small number a row to read back.
 *
 * seq is drawn in array order, so it keeps arrival order; the rows then go in sorted by
 * (pixel_id, event_id). That order is what keeps two instances from deadlocking: an event_id in
 * both their batches makes the second wait for the first transaction, and with every batch
 * taking its keys in one global order, neither can be holding a key the other is waiting
 * behind. The counts are upserted with their keys sorted too, for the same reason.
 *
 * Data-modifying WITH queries all run, referenced or not, against one snapshot; `notices` is a
 * plain SELECT, which runs only when referenced, hence the final SELECT's count of it.
 */
const INSERT_BATCH: Omit<pg.QueryConfig, 'values'> = {
  name: 'trackway_insert_events',
  text: `WITH arrived AS MATERIALIZED (
       SELECT nextval((SELECT pg_get_serial_sequence('events', 'seq'))::regclass) AS seq,
              e.account_id, e.pixel_id, e.event_id, e.event_name, e.value::float8 AS value,
              e.currency, ${fromMs('e.timestamp')} AS timestamp,
              ${fromMs('e.received_at')} AS received_at, e.url, e.referrer, e.title,
              e.search_string,
              ${sqlNull('e.user_data')} AS user_data,
              ${sqlNull('e.custom_data')} AS custom_data,
              e.action_source,
              ${sqlNull('e.platform_hashes')} AS platform_hashes,
              ${sqlNull('e.match_quality')} AS match_quality,
              ${fromMs('e.raw_expires_at')} AS raw_expires_at,
              ${sqlNull('e.match_keys')} AS match_keys,
              ${sqlNull('e.location')} AS location,
              ${sqlNull('e.dropped')} AS dropped,
              ${sqlNull('e.consent')} AS consent,
              e.source,
              e.anonymous_id,
              ${sqlNull('e.visitor_keys')} AS visitor_keys,
              ${fromMs('e.visitor_expires_at')} AS visitor_expires_at,
              e.diag_flags::int AS diag_flags,
              e.arrival
         FROM ROWS FROM (json_array_elements_text($1::json), json_array_elements_text($2::json),
           json_array_elements_text($3::json), json_array_elements_text($4::json),
           json_array_elements_text($5::json), json_array_elements_text($6::json),
           json_array_elements_text($7::json), json_array_elements_text($8::json),
           json_array_elements_text($9::json), json_array_elements_text($10::json),
           json_array_elements_text($11::json), json_array_elements_text($12::json),
           json_array_elements($13::json), json_array_elements($14::json),
           json_array_elements_text($15::json), json_array_elements($16::json),
           json_array_elements($17::json), json_array_elements_text($18::json),
           json_array_elements($19::json), json_array_elements($20::json),
           json_array_elements($28::json), json_array_elements($29::json),
           json_array_elements_text($30::json), json_array_elements_text($31::json),
           json_array_elements($32::json), json_array_elements_text($33::json),
           json_array_elements_text($34::json)) WITH ORDINALITY
           AS e (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
             received_at, url, referrer, title, search_string, user_data, custom_data,
             action_source, platform_hashes, match_quality, raw_expires_at, match_keys,
             location, dropped, consent, source, anonymous_id, visitor_keys, visitor_expires_at,
             diag_flags, arrival)
        ORDER BY e.arrival
     ), inserted AS (
       INSERT INTO events (seq, account_id, pixel_id, event_id, event_name, value, currency,
         timestamp, received_at, url, referrer, title, search_string, user_data, custom_data,
         action_source, platform_hashes, match_quality, dropped, consent, source, anonymous_id)
       OVERRIDING SYSTEM VALUE
       SELECT seq, account_id, pixel_id, event_id, event_name, value, currency, timestamp,
         received_at, url, referrer, title, search_string, user_data, custom_data,
         action_source, platform_hashes, match_quality, dropped, consent, source, anonymous_id
         FROM arrived ORDER BY pixel_id, event_id
       ON CONFLICT (account_id, pixel_id, event_id) DO NOTHING
       RETURNING seq, account_id, pixel_id, event_id, event_name, coalesce(value, 0) AS value,
         floor(extract(epoch FROM timestamp) / 3600)::bigint AS hour,
         (match_quality ->> 'score')::float8 AS score, received_at, source
     ), raw_keys AS (
       -- Contract §11: the raw match keys apart from the record, for the new events that
       -- carried any (raw_expires_at is null for the others).
       INSERT INTO event_match_keys (account_id, seq, expires_at, match_keys, location)
       SELECT a.account_id, a.seq, a.raw_expires_at, a.match_keys, a.location
         FROM inserted i JOIN arrived a ON a.seq = i.seq AND a.account_id = i.account_id
        WHERE a.raw_expires_at IS NOT NULL
     ), visitors AS (
       -- Identity stitching: a browser event replaces its visitor's identifiers (a repeated
       -- event too: it is still their latest hit), the batch's last hit per visitor winning.
       INSERT INTO visitor_identities (pixel_id, anonymous_id, account_id, keys, last_seen_at,
         expires_at)
       SELECT DISTINCT ON (pixel_id, anonymous_id) pixel_id, anonymous_id, account_id,
              visitor_keys, received_at, visitor_expires_at
         FROM arrived
        WHERE visitor_keys IS NOT NULL AND anonymous_id IS NOT NULL
        ORDER BY pixel_id, anonymous_id, arrival DESC
       ON CONFLICT (account_id, pixel_id, anonymous_id) DO UPDATE SET keys = excluded.keys,
         last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at
     ), jobs AS (
       -- The forwarding jobs commit with the events (contract §12), one per enabled
       -- destination whose filter the event matches: for a pixel without destinations, one
       -- index probe of destinations_pixel per event and nothing written.
       INSERT INTO forward_jobs (account_id, destination_id, pixel_id, event_id, status,
         attempts, created_at, next_attempt_at)
       SELECT i.account_id, d.id, i.pixel_id, i.event_id, 'pending', 0, i.received_at,
              i.received_at
         FROM inserted i
         JOIN destinations d ON d.account_id = i.account_id AND d.pixel_id = i.pixel_id
        WHERE d.enabled AND (d.events IS NULL OR i.event_name = ANY (d.events))
          AND (d.sources IS NULL OR i.source = ANY (d.sources))
        ORDER BY 1, 2, 3, 4
       ON CONFLICT DO NOTHING
       RETURNING account_id, destination_id, pixel_id, event_id
     ), pending AS (
       -- The diagnostics' forwarding rollup (migration 025): each new job is +1 pending.
       INSERT INTO forward_hourly (pixel_id, account_id, destination_id, hour, status, reason,
         n, example_event_id)
       SELECT j.pixel_id, j.account_id, j.destination_id, i.hour, 'pending', '', count(*),
              max(j.event_id)
         FROM jobs j JOIN inserted i ON i.pixel_id = j.pixel_id AND i.event_id = j.event_id
        GROUP BY 1, 2, 3, 4
        ORDER BY 1, 2, 4, 3
       ON CONFLICT (account_id, pixel_id, hour, destination_id, status, reason)
         DO UPDATE SET n = forward_hourly.n + excluded.n,
           example_event_id = excluded.example_event_id
     ), diag_rows AS (
       -- The diagnostics' event rollup (migration 025): what each stored event carried (the
       -- bits of DIAG_FLAGS), and the duplicates refused, those of the table and ($35) those
       -- repeated within the batch.
       SELECT a.pixel_id, a.account_id, floor(extract(epoch FROM a.timestamp) / 3600)::bigint
                AS hour, a.event_name, a.source, (i.seq IS NOT NULL)::int AS stored,
              (i.seq IS NULL)::int AS dup,
              CASE WHEN i.seq IS NULL THEN 0 ELSE a.diag_flags END AS flags
         FROM arrived a LEFT JOIN inserted i ON i.seq = a.seq
       UNION ALL
       SELECT d ->> 0, d ->> 1, (d ->> 2)::bigint, d ->> 3, d ->> 4, 0, 1, 0
         FROM json_array_elements($35::json) d
     ), diag AS (
       INSERT INTO diag_hourly (pixel_id, account_id, hour, event_name, source, n, duplicates,
         k_email, k_phone, k_external_id, k_fbc, k_fbp, k_ip, k_ua, k_click, consent_denied, enriched, e_fbc, e_fbp, e_ip, e_ua, e_click)
       SELECT pixel_id, account_id, hour, event_name, source, sum(stored), sum(dup),
              sum((flags >> 0) & 1),
              sum((flags >> 1) & 1),
              sum((flags >> 2) & 1),
              sum((flags >> 3) & 1),
              sum((flags >> 4) & 1),
              sum((flags >> 5) & 1),
              sum((flags >> 6) & 1),
              sum((flags >> 7) & 1),
              sum((flags >> 8) & 1),
              sum((flags >> 9) & 1),
              sum((flags >> 10) & 1),
              sum((flags >> 11) & 1),
              sum((flags >> 12) & 1),
              sum((flags >> 13) & 1),
              sum((flags >> 14) & 1)
         FROM diag_rows
        GROUP BY 1, 2, 3, 4, 5
        ORDER BY 1, 2, 3, 4, 5
       ON CONFLICT (account_id, pixel_id, hour, event_name, source)
         DO UPDATE SET n = diag_hourly.n + excluded.n,
           duplicates = diag_hourly.duplicates + excluded.duplicates,
           k_email = diag_hourly.k_email + excluded.k_email,
           k_phone = diag_hourly.k_phone + excluded.k_phone,
           k_external_id = diag_hourly.k_external_id + excluded.k_external_id,
           k_fbc = diag_hourly.k_fbc + excluded.k_fbc,
           k_fbp = diag_hourly.k_fbp + excluded.k_fbp,
           k_ip = diag_hourly.k_ip + excluded.k_ip,
           k_ua = diag_hourly.k_ua + excluded.k_ua,
           k_click = diag_hourly.k_click + excluded.k_click,
           consent_denied = diag_hourly.consent_denied + excluded.consent_denied,
           enriched = diag_hourly.enriched + excluded.enriched,
           e_fbc = diag_hourly.e_fbc + excluded.e_fbc,
           e_fbp = diag_hourly.e_fbp + excluded.e_fbp,
           e_ip = diag_hourly.e_ip + excluded.e_ip,
           e_ua = diag_hourly.e_ua + excluded.e_ua,
           e_click = diag_hourly.e_click + excluded.e_click
     ), dropped_fields AS (
       INSERT INTO diag_dropped_hourly (pixel_id, account_id, hour, field, n)
       SELECT i.pixel_id, i.account_id, i.hour, f.field, count(*)
         FROM inserted i JOIN arrived a ON a.seq = i.seq,
              json_array_elements_text(a.dropped) AS f (field)
        WHERE a.dropped IS NOT NULL
        GROUP BY 1, 2, 3, 4
        ORDER BY 1, 2, 3, 4
       ON CONFLICT (account_id, pixel_id, hour, field)
         DO UPDATE SET n = diag_dropped_hourly.n + excluded.n
     ), revenue AS (
       -- Revenue per currency: event_counts' value_sum adds EUR to USD.
       INSERT INTO revenue_hourly (pixel_id, account_id, hour, event_name, currency, n, value_sum)
       SELECT i.pixel_id, i.account_id, i.hour, i.event_name, coalesce(a.currency, ''), count(*),
              sum(a.value)
         FROM inserted i JOIN arrived a ON a.seq = i.seq
        WHERE a.value IS NOT NULL
        GROUP BY 1, 2, 3, 4, 5
        ORDER BY 1, 2, 3, 4, 5
       ON CONFLICT (account_id, pixel_id, hour, event_name, currency)
         DO UPDATE SET n = revenue_hourly.n + excluded.n,
           value_sum = revenue_hourly.value_sum + excluded.value_sum
     ), all_time AS (
       INSERT INTO event_totals AS c (pixel_id, account_id, event_name, n)
       SELECT pixel_id, account_id, event_name, count(*) FROM inserted
        GROUP BY pixel_id, account_id, event_name
        ORDER BY pixel_id, account_id, event_name
       ON CONFLICT (account_id, pixel_id, event_name) DO UPDATE SET n = c.n + excluded.n
     ), daily AS (
       INSERT INTO event_counts_daily AS c (pixel_id, account_id, event_name, day, n, value_sum)
       SELECT pixel_id, account_id, event_name, floor(hour / 24.0)::bigint AS day, count(*),
              sum(value)
         FROM inserted
        GROUP BY pixel_id, account_id, event_name, day
        ORDER BY pixel_id, account_id, event_name, day
       ON CONFLICT (account_id, pixel_id, event_name, day)
         DO UPDATE SET n = c.n + excluded.n, value_sum = c.value_sum + excluded.value_sum
     ), hourly AS (
       INSERT INTO event_counts AS c (pixel_id, account_id, event_name, hour, n, value_sum, match_sum,
         match_n)
       SELECT pixel_id, account_id, event_name, hour, count(*), sum(value),
              coalesce(sum(score), 0), count(score)
         FROM inserted
        GROUP BY pixel_id, account_id, event_name, hour
        ORDER BY pixel_id, account_id, event_name, hour
       ON CONFLICT (account_id, pixel_id, event_name, hour)
         DO UPDATE SET n = c.n + excluded.n, value_sum = c.value_sum + excluded.value_sum,
           match_sum = c.match_sum + excluded.match_sum, match_n = c.match_n + excluded.match_n
     ), emitted AS (
       -- The outbox (outbox.ts, the same rows writeOutbox writes): one message per webhook
       -- event of a newly stored event whose account has an enabled endpoint subscribed to its
       -- type, and one delivery per such endpoint. Duplicates emit nothing.
       -- data ($26) goes as JSON documents, each read back as its own text (webhook_messages.data
       -- is text, JSON.stringify(data) exactly as writeOutbox stores it).
       SELECT m.id, m.account_id, m.event_type, m.data::text AS data,
              ${fromMs('m.created_at')} AS created_at
         FROM ROWS FROM (json_array_elements_text($22::json), json_array_elements_text($23::json),
           json_array_elements_text($24::json), json_array_elements_text($25::json),
           json_array_elements($26::json), json_array_elements_text($27::json))
           AS m (arrival, id, account_id, event_type, data, created_at)
         JOIN arrived a ON a.arrival = m.arrival::bigint
         JOIN inserted i ON i.seq = a.seq
        WHERE EXISTS (SELECT 1 FROM webhook_endpoints w
                       WHERE w.account_id = m.account_id AND w.enabled
                         AND w.deleted_at IS NULL AND m.event_type = ANY (w.events))
     ), messages AS (
       INSERT INTO webhook_messages (id, account_id, event_type, data, created_at)
       SELECT id, account_id, event_type, data, created_at FROM emitted
       RETURNING 1
     ), deliveries AS (
       -- The message rows are inserted by the same statement: the foreign key is checked at
       -- its end, when they are there.
       INSERT INTO webhook_deliveries (message_id, endpoint_id, account_id, status, attempts,
         next_attempt_at)
       SELECT m.id, w.id, m.account_id, 'pending', 0, m.created_at
         FROM emitted m
         JOIN webhook_endpoints w ON w.account_id = m.account_id AND w.enabled
          AND w.deleted_at IS NULL AND m.event_type = ANY (w.events)
     ), notices AS (
       -- Tells every instance's live tail which events this transaction stored: \`<pixel_id>
       -- <seq>,<seq>…\` on the store's channel, split so no payload passes
       -- MAX_NOTIFY_PAYLOAD. NOTIFY is transactional, so listeners hear of the events only
       -- once they are committed, and never of a rolled-back batch. pg_notify() returns void,
       -- which Citus cannot carry as a column of a CTE: the row holds a boolean instead.
       SELECT pg_notify($21, pixel_id || ' ' || string_agg(seq::text, ',' ORDER BY seq))
                IS NULL AS sent
         FROM (SELECT pixel_id, seq,
                      (row_number() OVER (PARTITION BY pixel_id ORDER BY seq) - 1)
                        / greatest(1, (${MAX_NOTIFY_PAYLOAD} - 1 - octet_length(pixel_id)) / ${SEQ_ROOM})
                        AS part
                 FROM inserted) s
        GROUP BY pixel_id, part
     )
     SELECT a.arrival::int AS arrival, q.messages, q.jobs
       FROM inserted i JOIN arrived a ON a.seq = i.seq, (SELECT count(*) FROM notices) n,
            (SELECT EXISTS (SELECT 1 FROM messages) AS messages,
                    EXISTS (SELECT 1 FROM jobs) AS jobs) q`,
};

/**
 * Inserts events (and the outbox rows of those that are new) with one statement
 * (INSERT_BATCH), as one transaction. Returns the outcome of each event, in order. Within the
 * list the first of two equal `(pixel_id, event_id)` wins, as it would arriving first on its
 * own.
 */
async function insertMany(
  pool: pg.Pool,
  batch: Pending[],
  channel: string,
): Promise<{ outcomes: Outcome[]; queued: QueuedWork }> {
  const { firsts, repeats, arrival } = firstsOfBatch(batch);
  const e = firsts.map((p) => p.event);
  const m = e.map(matchColumns);
  // Only the first of equal keys can have been inserted: the others' messages never go. An
  // event is named by its place in `firsts`, counted from 1 (its `arrival` in the statement).
  const emitted = firsts.flatMap((p, i) => p.emit.map((event) => ({ arrival: i + 1, event })));
  const ms = (d: Date) => d.getTime();
  const { rows } = await oneStatement<{ arrival: number; messages: boolean; jobs: boolean }>(pool, {
    ...INSERT_BATCH,
    values: [
      texts(e.map((x) => x.accountId)),
      texts(e.map((x) => x.pixelId)),
      texts(e.map((x) => x.eventId)),
      texts(e.map((x) => x.eventName)),
      // Finite (validation refuses the rest), so JSON.stringify writes each as String() would.
      JSON.stringify(e.map((x) => x.value)),
      texts(e.map((x) => x.currency)),
      JSON.stringify(e.map((x) => ms(x.timestamp))),
      JSON.stringify(e.map((x) => ms(x.receivedAt))),
      texts(e.map((x) => x.url)),
      texts(e.map((x) => x.referrer)),
      texts(e.map((x) => x.title)),
      texts(e.map((x) => x.searchString)),
      documents(e.map((x) => (x.userData === null ? null : JSON.stringify(x.userData)))),
      documents(
        e.map(
          (x) => x.customDataJson ?? (x.customData === null ? null : JSON.stringify(x.customData)),
        ),
      ),
      texts(m.map((x) => x.actionSource)),
      documents(m.map((x) => x.platformHashes)),
      documents(m.map((x) => x.matchQuality)),
      JSON.stringify(m.map((x) => x.raw?.expiresAtMs ?? null)),
      documents(m.map((x) => x.raw?.matchKeys ?? null)),
      documents(m.map((x) => x.raw?.location ?? null)),
      channel,
      JSON.stringify(emitted.map((x) => x.arrival)),
      texts(emitted.map(() => newMessageId())),
      texts(emitted.map((x) => x.event.accountId)),
      texts(emitted.map((x) => x.event.type)),
      // Documents, not texts: each message's JSON is not escaped again inside the array
      // (20 bytes less an event.tracked, 10 %).
      documents(emitted.map((x) => JSON.stringify(x.event.data))),
      JSON.stringify(emitted.map((x) => ms(x.event.occurredAt))),
      // $28 and $29, after the outbox's: what each event dropped (contract §19) and its
      // consent (contract §16); $30–$33: the source, anonymous_id and visitor identity (contract §17).
      documents(m.map((x) => x.dropped)),
      documents(e.map((x) => (x.consent ? JSON.stringify(x.consent) : null))),
      texts(m.map((x) => x.source)),
      texts(m.map((x) => x.anonymousId)),
      documents(m.map((x) => x.visitor?.keys ?? null)),
      JSON.stringify(m.map((x) => x.visitor?.expiresAtMs ?? null)),
      // $34, $35: the diagnostics' bits of each event, and the events repeated in the batch.
      JSON.stringify(m.map((x) => x.diagFlags)),
      JSON.stringify(
        repeats.map(({ event: x }) => [
          x.pixelId,
          x.accountId,
          hourOf(x.timestamp.getTime()),
          x.eventName,
          x.source ?? 'server',
        ]),
      ),
    ],
  });
  const stored = new Set(rows.map((r) => r.arrival));
  return {
    outcomes: batch.map(
      (p): Outcome => (stored.has(arrival.get(p) ?? 0) ? 'inserted' : 'duplicate'),
    ),
    // What the workers have to look for: said by the statement that wrote it.
    queued: { webhookMessages: rows[0]?.messages === true, forwardingJobs: rows[0]?.jobs === true },
  };
}

/**
 * Group commit (../group-commit.ts). A PostgreSQL commit waits for the WAL flush; paying it once
 * per event caps ingest at a few thousand events per second per connection. Concurrent calls go
 * together in one transaction (at most MAX_BATCH events, a batch request never split; on the
 * per-account path, one transaction per account of them), and each settles after its
 * transaction commits: a 200 still means "durable".
 */
export class PostgresEventStore implements EventStore {
  private readonly batches: GroupCommit<NewEvent, Outcome>;
  /** A fresh install's first ANALYZE (first-statistics.ts), on the one-statement path. */
  private readonly firstStatistics: FirstStatistics;

  constructor(
    private readonly pool: pg.Pool,
    channel: string,
    private readonly runner: PostgresRunner,
    /** Chosen at open (ingest-path.ts); both store and report exactly the same. */
    readonly ingest: IngestPath = 'statement',
  ) {
    this.firstStatistics = new FirstStatistics(pool);
    this.batches = new GroupCommit(
      ingest === 'statement'
        ? (batch) =>
            runner.own(async (note) => {
              const { outcomes, queued } = await insertMany(this.pool, batch, channel);
              // Announced by the runner after the commit (committed.ts eventsCommitted).
              note(eventsCommitted(outcomes, queued));
              this.firstStatistics.committed(batch.length);
              return outcomes;
            })
        : async (batch) => {
            const results = await runner.own(async (note) => {
              const { results, queued } = await insertPerAccount(this.pool, batch, channel);
              // What the committed accounts stored, announced even when others failed.
              const committed: Outcome[] = [];
              for (const r of results) if (r?.status === 'fulfilled') committed.push(r.value);
              note(eventsCommitted(committed, queued));
              return results;
            });
            if (results.every((r) => r?.status === 'fulfilled')) {
              return results.map((r) => (r as PromiseFulfilledResult<Outcome>).value);
            }
            // Some accounts' transactions failed: only their events are retried.
            throw new PartlyCommitted(results);
          },
      MAX_BATCH,
    );
  }

  insertEvent(event: TrackedEvent, emit: WebhookEvent[]): Promise<Outcome> {
    return this.batches.one({ event, emit });
  }

  insertEvents(events: NewEvent[]): Promise<PromiseSettledResult<Outcome>[]> {
    return this.batches.submit(events);
  }

  /** Batch transactions that failed and were retried one event each (group-commit.ts). */
  get failedBatches(): number {
    return this.batches.failedBatches;
  }

  /** Resolves once no batch is queued or in flight, nor a first ANALYZE (used by close()). */
  async flushed(): Promise<void> {
    await this.batches.flushed();
    await this.firstStatistics.settled();
  }

  getEvent(accountId: string, pixelId: string, eventId: string): Promise<TrackedEvent | null> {
    return this.runner.read(() => getEvent(this.runner.sql, accountId, pixelId, eventId));
  }

  async listEvents(query: EventQuery) {
    const scope = ['pixel_id = $1', 'account_id = $2'];
    const params: unknown[] = [query.pixelId, query.accountId];
    if (query.eventName !== undefined) {
      params.push(query.eventName);
      scope.push(`event_name = $${params.length}`);
    }
    const pageParams = [...params];
    const where = [...scope];
    if (query.from) {
      pageParams.push(query.from);
      where.push(`timestamp >= $${pageParams.length}`);
    }
    if (query.to) {
      pageParams.push(query.to);
      where.push(`timestamp <= $${pageParams.length}`);
    }
    const n = pageParams.length;
    // The page and the total are independent reads: run them side by side on two connections.
    const [page, total] = await Promise.all([
      this.pool.query<EventRow>(
        `SELECT account_id, pixel_id, event_id, event_name, value, currency, timestamp, received_at,
           url, referrer, title, search_string, user_data, custom_data, action_source,
           match_quality, dropped, consent, source
           FROM events WHERE ${where.join(' AND ')}
          ORDER BY timestamp DESC, seq DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...pageParams, query.limit, query.offset],
      ),
      this.total(scope, params, query),
    ]);
    return { events: page.rows.map(toEvent), total };
  }

  /** Buckets from the count tables plus the partial edge hours from the index: one statement. */
  private async total(scope: string[], base: unknown[], query: EventQuery): Promise<number> {
    const params = [...base];
    const sql = totalSql(
      planTotal(query.from, query.to),
      scope.join(' AND '),
      (value) => {
        params.push(value);
        return `$${params.length}`;
      },
      (ms) => new Date(ms),
    );
    if (sql === null) return 0;
    // sum() of bigint is numeric, which pg hands over as text: exact either way.
    const { rows } = await this.pool.query<{ total: string }>(
      `SELECT (${sql})::text AS total`,
      params,
    );
    return Number(rows[0]?.total ?? 0);
  }
}
