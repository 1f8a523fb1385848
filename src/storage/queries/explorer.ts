/**
 * The dashboard's events explorer (issue 34), written once for both databases: a page of a
 * pixel's events, newest first, before or after a (timestamp, seq) cursor, filtered by name,
 * source and a forwarding status (of one destination or of any), with each event's status per
 * destination. Keyed reads only: the events' time or name index, and for the status filter and
 * the badges the jobs' (account_id, pixel_id, event_id) index.
 */
import type { TrackedEvent } from '../../domain/model.ts';
import type { ExplorerPage, ExplorerQuery } from '../../domain/ports/stats-store.ts';
import { type EventRow, toEvent } from '../rows.ts';
import { all, type Query, type Sql } from '../sql/query.ts';

export function* explorePage(db: Sql, q: ExplorerQuery): Query<ExplorerPage> {
  let statement = db.q
    .selectFrom('events as e')
    .selectAll('e')
    .where('e.account_id', '=', q.accountId)
    .where('e.pixel_id', '=', q.pixelId);
  if (q.eventName !== undefined) statement = statement.where('e.event_name', '=', q.eventName);
  if (q.source !== undefined) statement = statement.where('e.source', '=', q.source);
  if (q.from) statement = statement.where('e.timestamp', '>=', db.store.time(q.from));
  if (q.to) statement = statement.where('e.timestamp', '<=', db.store.time(q.to));
  if (q.status !== undefined) {
    const { status, destinationId } = q.status;
    statement = statement.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('forward_jobs as j')
          .select('j.event_id')
          // By account too: the jobs' index, and on Citus the join stays on the shard.
          .whereRef('j.account_id', '=', 'e.account_id')
          .whereRef('j.pixel_id', '=', 'e.pixel_id')
          .whereRef('j.event_id', '=', 'e.event_id')
          .where('j.status', '=', status)
          .$if(destinationId !== undefined, (s) =>
            s.where('j.destination_id', '=', destinationId!),
          ),
      ),
    );
  }
  const newer = q.cursor?.direction === 'newer';
  if (q.cursor) {
    // As exportPage: `timestamp >= t` bounds the index scan, the OR settles ties by seq.
    const t = db.store.time(q.cursor.timestamp);
    const seq = q.cursor.seq;
    statement = newer
      ? statement
          .where('e.timestamp', '>=', t)
          .where((eb) => eb.or([eb('e.timestamp', '>', t), eb('e.seq', '>', seq)]))
      : statement
          .where('e.timestamp', '<=', t)
          .where((eb) => eb.or([eb('e.timestamp', '<', t), eb('e.seq', '<', seq)]));
  }
  const order = newer ? 'asc' : 'desc';
  const rows = (yield* all(
    statement
      .orderBy('e.timestamp', order)
      .orderBy('e.seq', order)
      .limit(q.limit + 1),
  )) as Array<EventRow & { seq: number }>;
  const more = rows.length > q.limit;
  const page = rows.slice(0, q.limit);
  if (newer) page.reverse();
  const events = page.map((r) => ({
    event: toEvent(db.codec, r) as TrackedEvent,
    seq: Number(r.seq),
  }));
  const statuses = new Map<string, Array<{ destinationId: string; status: string }>>();
  if (events.length > 0) {
    const jobs = yield* all(
      db.q
        .selectFrom('forward_jobs')
        .select(['event_id', 'destination_id', 'status'])
        // By account first: the jobs' index (forward_jobs_event) and, on Citus, their shard.
        .where('account_id', '=', q.accountId)
        .where('pixel_id', '=', q.pixelId)
        .where(
          'event_id',
          'in',
          events.map((e) => e.event.eventId),
        ),
    );
    for (const j of jobs) {
      const list = statuses.get(j.event_id) ?? [];
      list.push({ destinationId: j.destination_id, status: j.status });
      statuses.set(j.event_id, list);
    }
  }
  return {
    events: events.map((e) => ({ ...e, forwarding: statuses.get(e.event.eventId) ?? [] })),
    // More in the direction read; the other way there is more whenever a cursor was given.
    older: newer ? true : more,
    newer: newer ? more : q.cursor !== undefined,
  };
}
