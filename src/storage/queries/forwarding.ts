/**
 * Forwarding reads and the replay, written once for both databases (sql/query.ts) and run by
 * sql/ports.ts forwardingStore. The worker's claims and settlements are hot paths and stay
 * hand-written per dialect (sqlite/forwarding.ts, postgres/forwarding.ts): PostgreSQL settles a
 * batch in one set-based statement (unnest … RETURNING), SQLite job by job on prepared
 * statements, so no one builder keeps both shapes.
 */
import { sql } from 'kysely';
import type { Destination } from '../../domain/forwarding/model.ts';
import type {
  DestinationBacklog,
  ForwardAttempt,
  ForwardingEntry,
  ForwardStatus,
} from '../../domain/ports.ts';
import { all, first, prepared, type Query, run, type Sql } from '../sql/query.ts';

const CHUNK = 1_000;

export function* eventForwarding(
  db: Sql,
  accountId: string,
  pixelId: string,
  eventIds: string[],
  withLog: boolean,
): Query<Map<string, ForwardingEntry[]>> {
  const byEvent = new Map<string, ForwardingEntry[]>();
  for (let i = 0; i < eventIds.length; i += CHUNK) {
    const ids = eventIds.slice(i, i + CHUNK);
    const rows = yield* all(
      db.q
        .selectFrom('forward_jobs as j')
        .innerJoin('destinations as d', 'd.id', 'j.destination_id')
        .select([
          'j.event_id',
          'j.destination_id',
          'd.type',
          'j.status',
          'j.attempts',
          'j.reason',
          'j.last_error',
          'j.forwarded_at',
        ])
        .where('j.pixel_id', '=', pixelId)
        .where('j.account_id', '=', accountId)
        .where('j.event_id', 'in', ids)
        .orderBy('d.created_at')
        .orderBy('d.id'),
    );
    const logs = new Map<string, ForwardAttempt[]>();
    if (withLog && rows.length > 0) {
      const attempts = yield* all(
        db.q
          .selectFrom('forward_attempts')
          .select([
            'event_id',
            'destination_id',
            'attempted_at',
            'status_code',
            'duration_ms',
            'platform_response',
            'note',
          ])
          .where('pixel_id', '=', pixelId)
          .where('account_id', '=', accountId)
          .where('event_id', 'in', ids)
          .orderBy('attempted_at')
          .orderBy('id'),
      );
      for (const a of attempts) {
        const key = `${a.event_id}\u0000${a.destination_id}`;
        const list = logs.get(key) ?? [];
        list.push({
          attemptedAt: db.codec.time(a.attempted_at),
          statusCode: a.status_code,
          durationMs: a.duration_ms ?? 0,
          platformResponse: a.platform_response ?? '',
          note: a.note,
        });
        logs.set(key, list);
      }
    }
    for (const r of rows) {
      const entry: ForwardingEntry = {
        destinationId: r.destination_id,
        platform: r.type,
        status: r.status as ForwardStatus,
        attempts: r.attempts,
        reason: r.reason,
        lastError: r.last_error,
        forwardedAt: r.forwarded_at === null ? null : db.codec.time(r.forwarded_at),
      };
      if (withLog) entry.attemptLog = logs.get(`${r.event_id}\u0000${r.destination_id}`) ?? [];
      const list = byEvent.get(r.event_id) ?? [];
      list.push(entry);
      byEvent.set(r.event_id, list);
    }
  }
  return byEvent;
}

export function* replay(
  db: Sql,
  options: {
    destination: Destination;
    from: Date;
    to: Date;
    statuses: ForwardStatus[];
    now: Date;
  },
): Query<number> {
  const { destination: d, from, to, now } = options;
  const inRange = db.q
    .selectFrom('events')
    .select('event_id')
    .where('pixel_id', '=', d.pixelId)
    .where('account_id', '=', d.accountId)
    .where('timestamp', '>=', db.store.time(from))
    .where('timestamp', '<=', db.store.time(to));
  let requeued = 0;
  if (options.statuses.length > 0) {
    requeued = yield* run(
      db.q
        .updateTable('forward_jobs')
        .set({
          status: 'pending',
          reason: null,
          next_attempt_at: db.store.time(now),
          lease_until: null,
          lease_owner: null,
        })
        .where('account_id', '=', d.accountId)
        .where('destination_id', '=', d.id)
        .where('pixel_id', '=', d.pixelId)
        .where('status', 'in', options.statuses)
        .where('event_id', 'in', inRange),
    );
  }
  // Events stored before the destination existed (or while it was switched off) have no job:
  // a replay sends them too, as the destination's filter allows.
  let missing = db.q
    .selectFrom('events as e')
    .select([
      'e.account_id',
      sql.lit(d.id).as('destination_id'),
      'e.pixel_id',
      'e.event_id',
      sql.lit('pending').as('status'),
      sql.lit(0).as('attempts'),
      sql<unknown>`${db.store.time(now)}`.as('created_at'),
      sql<unknown>`${db.store.time(now)}`.as('next_attempt_at'),
    ])
    .where('e.pixel_id', '=', d.pixelId)
    .where('e.account_id', '=', d.accountId)
    .where('e.timestamp', '>=', db.store.time(from))
    .where('e.timestamp', '<=', db.store.time(to))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('forward_jobs as j')
            .select('j.event_id')
            .whereRef('j.event_id', '=', 'e.event_id')
            .whereRef('j.pixel_id', '=', 'e.pixel_id')
            .where('j.account_id', '=', d.accountId)
            .where('j.destination_id', '=', d.id),
        ),
      ),
    );
  if (d.events !== null) missing = missing.where('e.event_name', 'in', d.events);
  if (d.sources !== null) missing = missing.where('e.source', 'in', d.sources);
  const created = yield* run(
    db.q
      .insertInto('forward_jobs')
      .columns([
        'account_id',
        'destination_id',
        'pixel_id',
        'event_id',
        'status',
        'attempts',
        'created_at',
        'next_attempt_at',
      ])
      .expression(missing),
  );
  return requeued + created;
}

export function* backlog(db: Sql): Query<DestinationBacklog[]> {
  const rows = yield* all(
    db.q
      .selectFrom('forward_jobs as j')
      .innerJoin('destinations as d', 'd.id', 'j.destination_id')
      .select((eb) => [
        'j.destination_id',
        'd.type',
        eb.fn.countAll().as('pending'),
        eb.fn.min('j.created_at').as('oldest'),
      ])
      .where('j.status', '=', 'pending')
      .groupBy(['j.destination_id', 'd.type']),
  );
  return rows.map((r) => ({
    destinationId: r.destination_id,
    platform: r.type,
    pending: Number(r.pending),
    oldestCreatedAt: r.oldest === null ? null : db.codec.time(r.oldest),
  }));
}

/**
 * The earliest due job of an active destination: one index seek per destination (the jobs'
 * partial index), never a scan of the queue.
 */
export function* nextDueAt(db: Sql): Query<Date | null> {
  const row = yield* first(earliestDueJob(db));
  const due = row?.due;
  return due === null || due === undefined ? null : db.codec.time(due);
}

/**
 * Prepared (compiled once per dialect): the forwarding worker reads it at every wake-up, and
 * every commit that stores events wakes it; built and compiled per call it cost ~4 µs a tick
 * (docs/decisions.md, "The seam's cost, attributed").
 */
const earliestDueJob = prepared((db: Sql) =>
  db.q
    .selectFrom('destinations as d')
    .select((eb) =>
      eb.fn
        .min(
          eb
            .selectFrom('forward_jobs as j')
            .select((e2) => e2.fn.min('j.next_attempt_at').as('due'))
            .whereRef('j.destination_id', '=', 'd.id')
            .where('j.status', '=', 'pending'),
        )
        .as('due'),
    )
    .where('d.enabled', '=', db.store.bool(true))
    .where('d.state', '<>', 'suspended'),
);
