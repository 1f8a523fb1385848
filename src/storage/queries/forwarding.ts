/**
 * Forwarding reads and the replay, written once for both databases (sql/query.ts) and run by
 * sql/ports/forwarding.ts. The worker's claims and settlements are hot paths and stay
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
} from '../../domain/ports/forwarding-store.ts';
import { outcomeReason } from '../../domain/stats/diagnostics.ts';
import { hourOf } from '../event-totals.ts';
import { all, first, note, prepared, type Query, run, type Sql } from '../sql/query.ts';
import type { Tables } from '../sql/tables.ts';
import { getDestination } from './destinations.ts';

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

/** Events a replay looks at per chunk: one short transaction each (contract §21). */
export const REPLAY_CHUNK = 500;
/** Events counted per read for the 202's number: reads only, so a larger page. */
const COUNT_PAGE = 2_000;

/** What a replay covers: a destination, a range of event timestamps, statuses to send again. */
export interface ReplayScope {
  destination: Destination;
  from: Date;
  to: Date;
  statuses: ForwardStatus[];
}

/** A position in a replay's walk: an event's (timestamp, seq), newest first. */
export interface ReplayCursor {
  at: unknown;
  seq: number | string;
}

/** What a replay does with one page of events. */
interface ReplayPage {
  /** Events whose job is sent again. */
  requeue: string[];
  /** Events queued for the first time. */
  create: string[];
  /** The page's last event: where the next page starts. */
  next: ReplayCursor | null;
  /** The range has no events after this page. */
  last: boolean;
  /** The page's events' hours, for the diagnostics' rollup. */
  events?: Map<string, { hour: number }>;
}

/**
 * The range's events after `after` (exclusive), along the events' (pixel, timestamp, seq)
 * index, newest first.
 */
function pageEvents(db: Sql, scope: ReplayScope, after: ReplayCursor | null) {
  const d = scope.destination;
  // One lower and one upper bound on timestamp: given two, SQLite may take the looser one for
  // the index's range (the range's end) and read up to it for every page.
  let q = db.q
    .selectFrom('events as e')
    .where('e.pixel_id', '=', d.pixelId)
    .where('e.account_id', '=', d.accountId)
    .where('e.timestamp', '>=', db.store.time(scope.from))
    .where('e.timestamp', '<=', after === null ? db.store.time(scope.to) : after.at);
  if (after !== null) {
    // Ties on the cursor's timestamp are broken by seq.
    q = q.where((eb) =>
      eb.or([eb('e.timestamp', '<', after.at), eb('e.seq', '<', after.seq as number)]),
    );
  }
  return q;
}

/**
 * A list for `IN (…)` padded to a power of two by repeating its first value (which changes
 * nothing): the statement then has one of 11 shapes, so the prepared-statement caches stay
 * small whatever the pages hold.
 */
function padded(values: string[]): string[] {
  let size = 1;
  while (size < values.length) size *= 2;
  const first = values[0] ?? '';
  return values.length === size ? values : [...values, ...Array(size - values.length).fill(first)];
}

/**
 * The next `REPLAY_CHUNK` events of the range after `after` and what a replay does with each:
 * a job with one of the statuses that is not being sent (a worker's lease on it running) is
 * sent again; an event with no job is queued if the destination's filter takes it. Keyed
 * reads only (the page by the events' index, its jobs by their primary key), whatever the
 * planner thinks of the tables' sizes. The count (`replay`) and the queueing
 * (`advanceReplay`) both read it, so the 202's number is what the chunks queue.
 */
function* replayPage(
  db: Sql,
  scope: ReplayScope,
  after: ReplayCursor | null,
  now: Date,
  size = REPLAY_CHUNK,
): Query<ReplayPage> {
  const d = scope.destination;
  const events = yield* all(
    pageEvents(db, scope, after)
      .select(['e.seq', 'e.timestamp', 'e.event_id', 'e.event_name', 'e.source'])
      .orderBy('e.timestamp', 'desc')
      .orderBy('e.seq', 'desc')
      .limit(size),
  );
  const tail = events.at(-1);
  if (tail === undefined) return { requeue: [], create: [], next: null, last: true };
  const jobs = yield* all(
    db.q
      .selectFrom('forward_jobs')
      .select(['event_id', 'status', 'lease_owner', 'lease_until'])
      .where('account_id', '=', d.accountId)
      .where('destination_id', '=', d.id)
      .where('pixel_id', '=', d.pixelId)
      .where('event_id', 'in', padded(events.map((e) => e.event_id))),
  );
  const byEvent = new Map(jobs.map((j) => [j.event_id, j]));
  const names = d.events === null ? null : new Set(d.events);
  const sources = d.sources === null ? null : new Set<string>(d.sources);
  const requeue: string[] = [];
  const create: string[] = [];
  for (const e of events) {
    const job = byEvent.get(e.event_id);
    if (job === undefined) {
      // The destination's filters: its event names and its sources (contract §17).
      if (
        (names === null || names.has(e.event_name)) &&
        (sources === null || sources.has(e.source))
      )
        create.push(e.event_id);
    } else if (
      scope.statuses.includes(job.status as ForwardStatus) &&
      !(
        job.lease_owner !== null &&
        job.lease_until !== null &&
        db.codec.time(job.lease_until).getTime() > now.getTime()
      )
    ) {
      requeue.push(e.event_id);
    }
  }
  return {
    requeue,
    create,
    next: { at: tail.timestamp, seq: tail.seq },
    last: events.length < size,
    events: new Map(
      events.map((e) => [e.event_id, { hour: hourOf(db.codec.time(e.timestamp).getTime()) }]),
    ),
  };
}

export interface ReplayCount {
  count: number;
  next: ReplayCursor | null;
  last: boolean;
}

/** How many one page of a replay would queue now (the 202's count is the sum over the pages). */
export function* countReplayPage(
  db: Sql,
  scope: ReplayScope,
  after: ReplayCursor | null,
  now: Date,
): Query<ReplayCount> {
  const page = yield* replayPage(db, scope, after, now, COUNT_PAGE);
  return { count: page.requeue.length + page.create.length, next: page.next, last: page.last };
}

export function* recordReplay(
  db: Sql,
  replay: ReplayScope & { id: string; promised: number; now: Date },
): Query<void> {
  const d = replay.destination;
  yield* run(
    db.q.insertInto('forward_replays').values({
      account_id: d.accountId,
      id: replay.id,
      destination_id: d.id,
      pixel_id: d.pixelId,
      range_from: db.store.time(replay.from),
      range_to: db.store.time(replay.to),
      statuses: JSON.stringify(replay.statuses),
      promised: replay.promised,
      queued: 0,
      created_at: db.store.time(replay.now),
    }),
  );
  // A forwarding worker starts queueing its events.
  yield* note({ replay: true });
}

/** The oldest open replays nobody holds (a read: most looks find none). */
export function* freeReplays(db: Sql, now: Date): Query<Array<{ accountId: string; id: string }>> {
  const at = db.store.time(now);
  const rows = yield* all(
    db.q
      .selectFrom('forward_replays')
      .select(['account_id', 'id'])
      .where('finished_at', 'is', null)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
      .orderBy('created_at')
      .limit(5),
  );
  return rows.map((r) => ({ accountId: r.account_id, id: r.id }));
}

/**
 * Leases one of `candidates`. The conditional UPDATE is the claim: of two workers that read
 * the same row, only the one whose UPDATE still finds it free gets it (PostgreSQL re-checks
 * the WHERE after the other's commit).
 */
export function* claimReplay(
  db: Sql,
  candidates: Array<{ accountId: string; id: string }>,
  options: { owner: string; now: Date; leaseMs: number },
): Query<{ accountId: string; id: string } | null> {
  const now = db.store.time(options.now);
  for (const c of candidates) {
    const taken = yield* run(
      db.q
        .updateTable('forward_replays')
        .set({
          lease_owner: options.owner,
          lease_until: db.store.time(new Date(options.now.getTime() + options.leaseMs)),
        })
        .where('account_id', '=', c.accountId)
        .where('id', '=', c.id)
        .where('finished_at', 'is', null)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)])),
    );
    if (taken === 1) return c;
  }
  return null;
}

/**
 * One chunk of a leased replay, inside the caller's transaction: renews the lease (or answers
 * null if it was lost), queues the next page and moves the cursor with it, so what a crash
 * interrupts resumes after the last committed chunk, never twice and never skipped.
 */
export function* advanceReplay(
  db: Sql,
  options: { replay: { accountId: string; id: string }; owner: string; now: Date; leaseMs: number },
): Query<{ queued: number; done: boolean } | null> {
  const { replay, now } = options;
  const held = yield* run(
    db.q
      .updateTable('forward_replays')
      .set({ lease_until: db.store.time(new Date(now.getTime() + options.leaseMs)) })
      .where('account_id', '=', replay.accountId)
      .where('id', '=', replay.id)
      .where('lease_owner', '=', options.owner)
      .where('finished_at', 'is', null),
  );
  if (held === 0) return null;
  const row = yield* first(
    db.q
      .selectFrom('forward_replays')
      .selectAll()
      .where('account_id', '=', replay.accountId)
      .where('id', '=', replay.id),
  );
  if (row === undefined) return null;
  const destination = yield* getDestination(db, row.account_id, row.pixel_id, row.destination_id);
  const finish = (queued: number) =>
    db.q
      .updateTable('forward_replays')
      .set({
        finished_at: db.store.time(now),
        lease_owner: null,
        lease_until: null,
        queued: row.queued + queued,
      })
      .where('account_id', '=', replay.accountId)
      .where('id', '=', replay.id);
  // Deleted or switched off since: its replays end (a disabled destination is not replayed).
  if (destination === null || !destination.enabled) {
    yield* run(finish(0));
    return { queued: 0, done: true };
  }
  const scope: ReplayScope = {
    destination,
    from: db.codec.time(row.range_from),
    to: db.codec.time(row.range_to),
    statuses: JSON.parse(row.statuses) as ForwardStatus[],
  };
  const after =
    row.cursor_at === null || row.cursor_seq === null
      ? null
      : { at: row.cursor_at, seq: row.cursor_seq };
  const page = yield* replayPage(db, scope, after, now);
  const queued = yield* queuePage(db, scope, page, now);
  if (queued > 0) yield* note({ forwarding: true });
  if (page.last || page.next === null) {
    yield* run(finish(queued));
    return { queued, done: true };
  }
  yield* run(
    db.q
      .updateTable('forward_replays')
      .set({ cursor_at: page.next.at, cursor_seq: page.next.seq, queued: row.queued + queued })
      .where('account_id', '=', replay.accountId)
      .where('id', '=', replay.id),
  );
  return { queued, done: false };
}

/** Puts the page's jobs back in the queue (due now) and creates the missing ones; how many. */
function* queuePage(db: Sql, scope: ReplayScope, page: ReplayPage, now: Date): Query<number> {
  const d = scope.destination;
  const at = db.store.time(now);
  let queued = 0;
  // The diagnostics' rollup (migration 025): what each requeued job leaves, by its status and
  // reason as they are before the update, and +1 pending for every job queued.
  const moves: Array<{ eventId: string; status: string; reason: string; n: number }> = [];
  if (page.requeue.length > 0) {
    const before = yield* all(
      db.q
        .selectFrom('forward_jobs')
        .select(['event_id', 'status', 'reason', 'last_error'])
        .where('account_id', '=', d.accountId)
        .where('destination_id', '=', d.id)
        .where('pixel_id', '=', d.pixelId)
        .where('event_id', 'in', padded(page.requeue))
        .where('status', 'in', scope.statuses),
    );
    const was = new Map(before.map((j) => [j.event_id, j]));
    // The statuses and the lease are checked again in the write (a claim made since, on
    // PostgreSQL between the two, is never touched): only the rows it changed are moved.
    const changed = yield* all(
      db.q
        .updateTable('forward_jobs')
        .set({
          status: 'pending',
          reason: null,
          next_attempt_at: at,
          lease_until: null,
          lease_owner: null,
        })
        .where('account_id', '=', d.accountId)
        .where('destination_id', '=', d.id)
        .where('pixel_id', '=', d.pixelId)
        .where('event_id', 'in', padded(page.requeue))
        .where('status', 'in', scope.statuses)
        .where((eb) =>
          eb.or([
            eb('lease_owner', 'is', null),
            eb('lease_until', 'is', null),
            eb('lease_until', '<=', at),
          ]),
        )
        .returning('event_id'),
    );
    queued += changed.length;
    for (const { event_id } of changed) {
      const job = was.get(event_id);
      if (!job || job.status === 'pending') continue;
      const reason = outcomeReason(job.status, job.reason, job.last_error);
      moves.push({ eventId: event_id, status: job.status, reason, n: -1 });
      moves.push({ eventId: event_id, status: 'pending', reason: '', n: 1 });
    }
  }
  if (page.create.length > 0) {
    const created = yield* all(
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
        .expression(
          db.q
            .selectFrom('events as e')
            .select([
              'e.account_id',
              sql.lit(d.id).as('destination_id'),
              'e.pixel_id',
              'e.event_id',
              sql.lit('pending').as('status'),
              sql.lit(0).as('attempts'),
              sql<unknown>`${at}`.as('created_at'),
              sql<unknown>`${at}`.as('next_attempt_at'),
            ])
            // By the (pixel_id, event_id) key alone: the ids come from the account-scoped page
            // and pixel ids are unique, while an account_id term here led SQLite (without
            // statistics) to scan the pixel's events by another index for every chunk.
            .where('e.pixel_id', '=', d.pixelId)
            .where('e.event_id', 'in', padded(page.create)),
        )
        .onConflict((oc) => oc.doNothing())
        .returning('event_id'),
    );
    queued += created.length;
    for (const { event_id } of created) {
      moves.push({ eventId: event_id, status: 'pending', reason: '', n: 1 });
    }
  }
  yield* moveOutcomes(db, d, moves, page.events ?? new Map());
  return queued;
}

/** Adds the moves to the forwarding rollup, one row per key (summed), in key order. */
function* moveOutcomes(
  db: Sql,
  d: Destination,
  moves: Array<{ eventId: string; status: string; reason: string; n: number }>,
  events: Map<string, { hour: number }>,
): Query<void> {
  const rows = new Map<string, Tables['forward_hourly']>();
  for (const m of moves) {
    const e = events.get(m.eventId);
    if (!e) continue;
    const key = `${e.hour}\u0000${m.status}\u0000${m.reason}`;
    const row = rows.get(key);
    if (row) {
      row.n += m.n;
      row.example_event_id = m.eventId;
    } else {
      rows.set(key, {
        pixel_id: d.pixelId,
        account_id: d.accountId,
        destination_id: d.id,
        hour: e.hour,
        status: m.status,
        reason: m.reason,
        n: m.n,
        example_event_id: m.eventId,
      });
    }
  }
  const values = [...rows.values()].filter((r) => r.n !== 0);
  if (values.length === 0) return;
  // In key order, as every writer of the rollup takes its rows (no two can deadlock).
  const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  values.sort((a, b) => a.hour - b.hour || text(a.status, b.status) || text(a.reason, b.reason));
  yield* run(
    db.q
      .insertInto('forward_hourly')
      .values(values)
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'pixel_id', 'hour', 'destination_id', 'status', 'reason'])
          .doUpdateSet({
            n: (eb) => eb('forward_hourly.n', '+', eb.ref('excluded.n')),
            example_event_id: (eb) => eb.ref('excluded.example_event_id'),
          }),
      ),
  );
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
            .whereRef('j.account_id', '=', 'd.account_id')
            .whereRef('j.destination_id', '=', 'd.id')
            .where('j.status', '=', 'pending'),
        )
        .as('due'),
    )
    .where('d.enabled', '=', db.store.bool(true))
    .where('d.state', '<>', 'suspended'),
);
