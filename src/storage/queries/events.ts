/**
 * Event reads that are the same logic on both databases (sql/query.ts). The insert, its group
 * commit and listEvents' total stay hand-written per database: they are the hot paths.
 */
import type { SequencedEvent, TrackedEvent } from '../../domain/model.ts';
import type { ExportCursor, ExportQuery } from '../../domain/ports/lifecycle-store.ts';
import { type EventRow, toEvent } from '../rows.ts';
import { all, first, type Query, type Sql } from '../sql/query.ts';

type SeqRow = EventRow & { seq: number };

/** The account's newest arrival number, 0 when it has no events. */
export function* lastSeq(db: Sql, accountId: string): Query<number> {
  const row = yield* first(
    db.q
      .selectFrom('events')
      .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('seq'))
      .where('account_id', '=', accountId),
  );
  return Number(row?.seq ?? 0);
}

/** Every column of the pixel's events: what the reads below narrow down. */
const pixelEvents = (db: Sql, accountId: string, pixelId: string) =>
  db.q
    .selectFrom('events')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('pixel_id', '=', pixelId);

/** One page of the pixel's events, oldest first, and the cursor of the next page. */
export function* exportPage(
  db: Sql,
  q: ExportQuery,
): Query<{ events: TrackedEvent[]; next: ExportCursor | null }> {
  let statement = pixelEvents(db, q.accountId, q.pixelId);
  if (q.from) statement = statement.where('timestamp', '>=', db.store.time(q.from));
  if (q.to) statement = statement.where('timestamp', '<=', db.store.time(q.to));
  if (q.after) {
    // Not a row comparison: PostgreSQL cannot bound a scan of the (timestamp DESC, seq DESC)
    // index with one, so every page would read from the start. `timestamp >= t` can.
    const t = db.store.time(q.after.timestamp);
    const seq = q.after.seq;
    statement = statement
      .where('timestamp', '>=', t)
      .where((eb) => eb.or([eb('timestamp', '>', t), eb('seq', '>', seq)]));
  }
  const rows = (yield* all(
    statement.orderBy('timestamp').orderBy('seq').limit(q.limit),
  )) as SeqRow[];
  const last = rows.at(-1);
  const next: ExportCursor | null =
    last && rows.length === q.limit
      ? { timestamp: db.codec.time(last.timestamp), seq: Number(last.seq) }
      : null;
  return { events: rows.map((r) => toEvent(db.codec, r)), next };
}

/** The pixel's events with these arrival numbers, in arrival order (the live tail). */
export function* eventsBySeq(
  db: Sql,
  accountId: string,
  pixelId: string,
  seqs: number[],
): Query<SequencedEvent[]> {
  if (seqs.length === 0) return [];
  const rows = yield* all(
    pixelEvents(db, accountId, pixelId).where('seq', 'in', seqs).orderBy('seq'),
  );
  return (rows as SeqRow[]).map(sequenced(db));
}

/** The pixel's events after `afterSeq`, oldest first (the live tail catching up). */
export function* eventsAfter(
  db: Sql,
  accountId: string,
  pixelId: string,
  afterSeq: number,
  limit: number,
): Query<SequencedEvent[]> {
  const rows = yield* all(
    pixelEvents(db, accountId, pixelId).where('seq', '>', afterSeq).orderBy('seq').limit(limit),
  );
  return (rows as SeqRow[]).map(sequenced(db));
}

const sequenced =
  (db: Sql) =>
  (r: SeqRow): SequencedEvent => ({ seq: Number(r.seq), event: toEvent(db.codec, r) });

/** One of the account's events of the pixel (the single-event read), or null. */
export function* getEvent(
  db: Sql,
  accountId: string,
  pixelId: string,
  eventId: string,
): Query<TrackedEvent | null> {
  const row = yield* first(pixelEvents(db, accountId, pixelId).where('event_id', '=', eventId));
  return row ? toEvent(db.codec, row as EventRow) : null;
}
