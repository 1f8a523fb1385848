import type pg from 'pg';
import type { TrackedEvent, WebhookEvent } from '../../domain/model.ts';
import type { EventQuery, EventStore, InsertOutcome, NewEvent } from '../../domain/ports.ts';
import { GroupCommit } from '../group-commit.ts';
import { inTransaction } from './database.ts';
import { writeOutbox } from './webhooks.ts';

interface EventRow {
  account_id: string;
  pixel_id: string;
  event_id: string;
  event_name: string;
  value: number | null;
  currency: string | null;
  timestamp: Date;
  received_at: Date;
  url: string | null;
  referrer: string | null;
  title: string | null;
  search_string: string | null;
  user_data: Record<string, string> | null;
  custom_data: Record<string, unknown> | null;
}

const toEvent = (r: EventRow): TrackedEvent => ({
  accountId: r.account_id,
  pixelId: r.pixel_id,
  eventId: r.event_id,
  eventName: r.event_name,
  value: r.value,
  currency: r.currency,
  timestamp: r.timestamp,
  receivedAt: r.received_at,
  url: r.url,
  referrer: r.referrer,
  title: r.title,
  searchString: r.search_string,
  userData: r.user_data,
  customData: r.custom_data,
});

type Outcome = InsertOutcome;
type Pending = NewEvent;

/** Most events one transaction carries: bounds statement size and the wait of the last caller. */
export const MAX_BATCH = 256;

const key = (e: TrackedEvent) => `${e.pixelId}\u0000${e.eventId}`;

/**
 * Inserts events (and the outbox rows of those that are new) with one statement each, inside
 * the caller's transaction. Returns the outcome of each event, in order. Within the list the
 * first of two equal `(pixel_id, event_id)` wins, as it would arriving first on its own.
 */
async function insertMany(db: pg.PoolClient, batch: Pending[]): Promise<Outcome[]> {
  const seen = new Set<string>();
  const firsts = batch.filter((p) => {
    const k = key(p.event);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const e = firsts.map((p) => p.event);
  const json = (v: unknown) => (v === null ? null : JSON.stringify(v));
  // unnest turns one array per column into rows: a single statement and a single round trip
  // whatever the batch size, and rows enter in array order, so seq keeps arrival order.
  const { rows } = await db.query<{ pixel_id: string; event_id: string }>(
    `INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
       received_at, url, referrer, title, search_string, user_data, custom_data)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::text[],
       $7::timestamptz[], $8::timestamptz[], $9::text[], $10::text[], $11::text[], $12::text[],
       $13::json[], $14::json[])
     ON CONFLICT (pixel_id, event_id) DO NOTHING
     RETURNING pixel_id, event_id`,
    [
      e.map((x) => x.accountId),
      e.map((x) => x.pixelId),
      e.map((x) => x.eventId),
      e.map((x) => x.eventName),
      e.map((x) => x.value),
      e.map((x) => x.currency),
      e.map((x) => x.timestamp),
      e.map((x) => x.receivedAt),
      e.map((x) => x.url),
      e.map((x) => x.referrer),
      e.map((x) => x.title),
      e.map((x) => x.searchString),
      e.map((x) => json(x.userData)),
      e.map((x) => json(x.customData)),
    ],
  );
  const inserted = new Set(rows.map((r) => `${r.pixel_id}\u0000${r.event_id}`));
  const winners = new Set(firsts);
  const outcomes = batch.map(
    (p): Outcome => (winners.has(p) && inserted.has(key(p.event)) ? 'inserted' : 'duplicate'),
  );
  // The outbox rows commit with the events that caused them; duplicates emit nothing.
  await writeOutbox(
    db,
    batch.flatMap((p, i) => (outcomes[i] === 'inserted' ? p.emit : [])),
  );
  return outcomes;
}

/**
 * Group commit (../group-commit.ts). A PostgreSQL commit waits for the WAL flush; paying it once
 * per event caps ingest at a few thousand events per second per connection. Concurrent calls go
 * together in one transaction (at most MAX_BATCH events, a batch request never split), and each
 * settles after its transaction commits: a 200 still means "durable".
 */
export class PostgresEventStore implements EventStore {
  private readonly batches: GroupCommit<NewEvent, Outcome>;

  constructor(private readonly pool: pg.Pool) {
    this.batches = new GroupCommit(
      (batch) => inTransaction(this.pool, (db) => insertMany(db, batch)),
      MAX_BATCH,
    );
  }

  insertEvent(event: TrackedEvent, emit: WebhookEvent[]): Promise<Outcome> {
    return this.batches.one({ event, emit });
  }

  insertEvents(events: NewEvent[]): Promise<PromiseSettledResult<Outcome>[]> {
    return this.batches.submit(events);
  }

  /** Resolves once no batch is queued or in flight (used by close()). */
  flushed(): Promise<void> {
    return this.batches.flushed();
  }

  async listEvents(query: EventQuery) {
    const where = ['pixel_id = $1', 'account_id = $2'];
    const params: unknown[] = [query.pixelId, query.accountId];
    if (query.eventName !== undefined) {
      params.push(query.eventName);
      where.push(`event_name = $${params.length}`);
    }
    if (query.from) {
      params.push(query.from);
      where.push(`timestamp >= $${params.length}`);
    }
    if (query.to) {
      params.push(query.to);
      where.push(`timestamp <= $${params.length}`);
    }
    const filter = where.join(' AND ');
    const n = params.length;
    // The page and the count are independent reads: run them side by side on two connections.
    const [page, count] = await Promise.all([
      this.pool.query<EventRow>(
        `SELECT account_id, pixel_id, event_id, event_name, value, currency, timestamp, received_at,
           url, referrer, title, search_string, user_data, custom_data
           FROM events WHERE ${filter}
          ORDER BY timestamp DESC, seq DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...params, query.limit, query.offset],
      ),
      this.pool.query<{ total: number }>(
        `SELECT count(*)::int AS total FROM events WHERE ${filter}`,
        params,
      ),
    ]);
    return { events: page.rows.map(toEvent), total: count.rows[0]?.total ?? 0 };
  }
}
