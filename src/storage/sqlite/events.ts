import type { TrackedEvent, WebhookEvent } from '../../domain/model.ts';
import type {
  EventQuery,
  EventStore,
  InsertOutcome,
  NewEvent,
} from '../../domain/ports/event-store.ts';
import { dayOf, hourOf, planTotal, totalSql } from '../event-totals.ts';
import { GroupCommit } from '../group-commit.ts';
import { matchColumns } from '../match-columns.ts';
import { getEvent } from '../queries/events.ts';
import * as rows from '../rows.ts';
import { type EventRow, sqliteCodec } from '../rows.ts';
import { eventsCommitted, type QueuedWork } from '../sql/committed.ts';
import type { SqliteDatabase } from './database.ts';
import { DiagBatch, diagStatements } from './diagnostics.ts';
import type { forwardJobWriter } from './forwarding.ts';
import type { SqliteRunner } from './runner.ts';
import type { DurableCommit } from './wal-sync.ts';

export const toEvent = (r: EventRow) => rows.toEvent(sqliteCodec, r);
export type { EventRow };

const json = (value: unknown): string | null => (value === null ? null : JSON.stringify(value));

/**
 * Most events one transaction gathers from concurrent calls. It bounds how long the write lock
 * is held and how long the last caller of a batch waits; a batch request larger than this is
 * still committed whole.
 */
const MAX_BATCH = 512;

/** New events of one (pixel, event name, hour) in a batch; the day follows from the hour. */
interface BucketCount {
  pixelId: string;
  accountId: string;
  eventName: string;
  day: number;
  hour: number;
  n: number;
  valueSum: number;
  /** Sum and number of the match quality scores (contract §12's 7-day average). */
  matchSum: number;
  matchN: number;
}

/** The new events of a committed batch, by arrival number: what the live tail hears. */
export type OnEventsCommitted = (inserted: { pixelId: string; seq: number }[]) => void;

/**
 * Inserts go through group commit (../group-commit.ts): better-sqlite3 is synchronous and
 * synchronous=FULL fsyncs every commit, so the win is one fsync per batch instead of one per
 * event. Each caller is answered after the transaction holding its event has committed.
 */
export class SqliteEventStore implements EventStore {
  private readonly insert;
  private readonly insertRawKeys;
  private readonly upsertVisitor;
  private readonly countAll;
  private readonly countDay;
  private readonly countHour;
  private readonly diag;
  private readonly batches: GroupCommit<NewEvent, InsertOutcome>;
  private readonly runner: SqliteRunner;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly outbox: (events: WebhookEvent[], targets?: Map<string, string[]>) => number,
    durable: DurableCommit,
    onCommitted: OnEventsCommitted,
    private readonly forwardJobs: ReturnType<typeof forwardJobWriter>,
    runner: SqliteRunner,
  ) {
    this.runner = runner;
    // ON CONFLICT DO NOTHING makes dedup exact under any concurrency: the unique index decides.
    this.insert = db.prepare(
      `INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
         received_at, url, referrer, title, search_string, user_data, custom_data,
         action_source, platform_hashes, match_quality, source, anonymous_id, dropped, consent)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (pixel_id, event_id) DO NOTHING`,
    );
    // Raw match keys apart from the record (contract §11), same transaction as the event.
    this.insertRawKeys = db.prepare(
      `INSERT INTO event_match_keys (account_id, seq, expires_at, match_keys, location)
       VALUES (?, ?, ?, ?, ?)`,
    );
    // Identity stitching: a browser event replaces its visitor's identifiers, same transaction.
    this.upsertVisitor = db.prepare(
      `INSERT INTO visitor_identities (pixel_id, anonymous_id, account_id, keys, last_seen_at,
         expires_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (pixel_id, anonymous_id) DO UPDATE SET account_id = excluded.account_id,
         keys = excluded.keys, last_seen_at = excluded.last_seen_at,
         expires_at = excluded.expires_at`,
    );
    this.countAll = db.prepare(
      `INSERT INTO event_totals (pixel_id, account_id, event_name, n)
       VALUES (@pixelId, @accountId, @eventName, @n)
       ON CONFLICT (account_id, pixel_id, event_name) DO UPDATE SET n = n + excluded.n`,
    );
    this.countDay = db.prepare(
      `INSERT INTO event_counts_daily (pixel_id, account_id, event_name, day, n, value_sum)
       VALUES (@pixelId, @accountId, @eventName, @day, @n, @valueSum)
       ON CONFLICT (account_id, pixel_id, event_name, day)
         DO UPDATE SET n = n + excluded.n, value_sum = value_sum + excluded.value_sum`,
    );
    this.countHour = db.prepare(
      `INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n, value_sum, match_sum,
         match_n)
       VALUES (@pixelId, @accountId, @eventName, @hour, @n, @valueSum, @matchSum, @matchN)
       ON CONFLICT (account_id, pixel_id, event_name, hour)
         DO UPDATE SET n = n + excluded.n, value_sum = value_sum + excluded.value_sum,
           match_sum = match_sum + excluded.match_sum, match_n = match_n + excluded.match_n`,
    );
    this.diag = diagStatements(db);
    // Rows go in in list order, so within one batch the first of equal event ids wins.
    // IMMEDIATE takes the write lock up front, so busy_timeout covers a concurrent CLI writer.
    const insertAll = db.transaction((items: NewEvent[]) => {
      const counts = new Map<string, BucketCount>();
      const targets = new Map<string, string[]>();
      const destinations = new Map();
      const inserted: { pixelId: string; seq: number }[] = [];
      const queued: QueuedWork = { webhookMessages: false, forwardingJobs: false };
      const diag = new DiagBatch();
      const outcomes = items.map(({ event, emit }) =>
        this.insertOne(event, emit, counts, targets, inserted, destinations, queued, diag),
      );
      // The diagnostics rollups (migration 025), once per key of the batch, like the counts.
      diag.write(this.diag);
      // Same transaction as the rows, so the counts can never disagree with the table; added
      // once per (pixel, name, hour) of the batch rather than once per event.
      for (const c of counts.values()) {
        this.countAll.run(c);
        this.countDay.run(c);
        this.countHour.run(c);
      }
      return { outcomes, inserted, queued };
    });
    // Answered once the batch's frames are on disk, flushed off the event loop (wal-sync.ts);
    // the live tail hears of the new events only then, so it never shows an unflushed event.
    this.batches = new GroupCommit(
      (items) =>
        this.runner.own(async (note) => {
          const { outcomes, inserted, queued } = await durable(() => insertAll.immediate(items));
          if (inserted.length > 0) onCommitted(inserted);
          // Announced by the runner, flushed (committed.ts eventsCommitted).
          note(eventsCommitted(outcomes, queued));
          return outcomes;
        }),
      MAX_BATCH,
    );
  }

  /** One row and, when it is new, its outbox messages; runs inside the batch's transaction. */
  private insertOne(
    event: TrackedEvent,
    emit: WebhookEvent[],
    counts: Map<string, BucketCount>,
    targets: Map<string, string[]>,
    inserted: { pixelId: string; seq: number }[],
    destinations: Parameters<ReturnType<typeof forwardJobWriter>>[1],
    queued: QueuedWork,
    diag: DiagBatch,
  ): InsertOutcome {
    const match = matchColumns(event);
    // Positional parameters: binding by name from a spread object cost ~2 µs more per event.
    const { changes, lastInsertRowid } = this.insert.run(
      event.accountId,
      event.pixelId,
      event.eventId,
      event.eventName,
      event.value,
      event.currency,
      event.timestamp.getTime(),
      event.receivedAt.getTime(),
      event.url,
      event.referrer,
      event.title,
      event.searchString,
      json(event.userData),
      event.customDataJson ?? json(event.customData),
      match.actionSource,
      match.platformHashes,
      match.matchQuality,
      match.source,
      match.anonymousId,
      match.dropped,
      event.consent ? JSON.stringify(event.consent) : null,
    );
    // The visitor's latest identifiers, even from a repeated event: it is still their latest hit.
    if (match.visitor) {
      this.upsertVisitor.run(
        event.pixelId,
        match.anonymousId,
        event.accountId,
        match.visitor.keys,
        event.receivedAt.getTime(),
        match.visitor.expiresAtMs,
      );
    }
    diag.event(event, match.source, match.diagFlags, changes !== 0);
    if (changes === 0) return 'duplicate';
    if (match.raw) {
      const { expiresAtMs, matchKeys, location } = match.raw;
      this.insertRawKeys.run(event.accountId, lastInsertRowid, expiresAtMs, matchKeys, location);
    }
    const ms = event.timestamp.getTime();
    const hour = hourOf(ms);
    const key = `${event.pixelId}\u0000${event.accountId}\u0000${event.eventName}\u0000${hour}`;
    const bucket = counts.get(key);
    const value = event.value ?? 0;
    if (bucket) {
      bucket.n += 1;
      bucket.valueSum += value;
      bucket.matchSum += match.score;
      bucket.matchN += 1;
    } else {
      const { pixelId, accountId, eventName } = event;
      counts.set(key, {
        pixelId,
        accountId,
        eventName,
        day: dayOf(ms),
        hour,
        n: 1,
        valueSum: value,
        matchSum: match.score,
        matchN: 1,
      });
    }
    inserted.push({ pixelId: event.pixelId, seq: Number(lastInsertRowid) });
    if (this.outbox(emit, targets) > 0) queued.webhookMessages = true;
    // The forwarding jobs commit with the event (contract §12: nothing is lost).
    const jobs = this.forwardJobs(event, destinations, (destinationId) =>
      diag.job(event, destinationId),
    );
    if (jobs > 0) queued.forwardingJobs = true;
    return 'inserted';
  }

  insertEvent(event: TrackedEvent, emit: WebhookEvent[]): Promise<InsertOutcome> {
    return this.batches.one({ event, emit });
  }

  insertEvents(events: NewEvent[]): Promise<PromiseSettledResult<InsertOutcome>[]> {
    return this.batches.submit(events);
  }

  /** Resolves once no batch is queued or in flight (used by close()). */
  flushed(): Promise<void> {
    return this.batches.flushed();
  }

  getEvent(accountId: string, pixelId: string, eventId: string): Promise<TrackedEvent | null> {
    return this.runner.read(() => getEvent(this.runner.sql, accountId, pixelId, eventId));
  }

  listEvents(query: EventQuery) {
    return this.runner.own(() => this.eventPage(query));
  }

  private eventPage(query: EventQuery) {
    const scope = ['account_id = @accountId', 'pixel_id = @pixelId'];
    if (query.eventName !== undefined) scope.push('event_name = @eventName');
    const where = [...scope];
    if (query.from) where.push('timestamp >= @from');
    if (query.to) where.push('timestamp <= @to');
    const params: Record<string, unknown> = {
      accountId: query.accountId,
      pixelId: query.pixelId,
      ...(query.eventName !== undefined && { eventName: query.eventName }),
    };
    const rows = this.db
      .prepare(
        `SELECT * FROM events WHERE ${where.join(' AND ')}
          ORDER BY timestamp DESC, seq DESC LIMIT @limit OFFSET @offset`,
      )
      .all({
        ...params,
        ...(query.from && { from: query.from.getTime() }),
        ...(query.to && { to: query.to.getTime() }),
        limit: query.limit,
        offset: query.offset,
      }) as EventRow[];
    // One statement: buckets from the count tables, the partial edge hours from the index.
    const bind: Record<string, unknown> = { ...params };
    const sql = totalSql(
      planTotal(query.from, query.to),
      scope.join(' AND '),
      (value) => {
        const name = `p${Object.keys(bind).length}`;
        bind[name] = value;
        return `@${name}`;
      },
      (ms) => ms,
    );
    const total = sql === null ? 0 : (this.db.prepare(`SELECT ${sql}`).pluck().get(bind) as number);
    return { events: rows.map(toEvent), total };
  }
}
