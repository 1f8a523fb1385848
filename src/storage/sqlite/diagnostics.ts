/**
 * SQLite's side of the diagnostics rollups (migration 025): what a batch of inserted events
 * adds, gathered per row key in memory and upserted once per key inside the batch's
 * transaction (as event_counts is), what a settlement moves between forwarding statuses, and
 * the period's read.
 */
import {
  DIAG_FLAGS,
  type DiagFlag,
  type DiagnosticsQuery,
  type DiagnosticsRollup,
  outcomeReason,
} from '../../domain/stats/diagnostics.ts';
import { hourOf } from '../event-totals.ts';
import type { SqliteDatabase } from './database.ts';

interface EventRow {
  pixelId: string;
  accountId: string;
  hour: number;
  eventName: string;
  source: string;
  n: number;
  duplicates: number;
  flags: number[];
}

const FLAG_COLUMNS = DIAG_FLAGS.join(', ');
const HOUR_SQL = '(timestamp - ((timestamp % 3600000) + 3600000) % 3600000) / 3600000';

/** One batch's additions; `write` upserts them (call it inside the batch's transaction). */
export class DiagBatch {
  private readonly events = new Map<string, EventRow>();
  private readonly dropped = new Map<string, [string, string, number, string, number]>();
  private readonly revenue = new Map<
    string,
    [string, string, number, string, string, number, number]
  >();
  private readonly jobs = new Map<string, [string, string, string, number, number, string]>();

  /** An event of the batch, stored (`inserted`) or refused as a duplicate. */
  event(
    e: {
      pixelId: string;
      accountId: string;
      eventName: string;
      timestamp: Date;
      value: number | null;
      currency: string | null;
      dropped?: readonly string[] | undefined;
      eventId: string;
    },
    source: string,
    flags: number,
    inserted: boolean,
  ): void {
    const hour = hourOf(e.timestamp.getTime());
    const key = `${e.pixelId}\u0000${e.accountId}\u0000${hour}\u0000${e.eventName}\u0000${source}`;
    let row = this.events.get(key);
    if (!row) {
      row = {
        pixelId: e.pixelId,
        accountId: e.accountId,
        hour,
        eventName: e.eventName,
        source,
        n: 0,
        duplicates: 0,
        flags: DIAG_FLAGS.map(() => 0),
      };
      this.events.set(key, row);
    }
    if (!inserted) {
      row.duplicates += 1;
      return;
    }
    row.n += 1;
    for (let i = 0; i < DIAG_FLAGS.length; i++) if (flags & (1 << i)) row.flags[i]! += 1;
    for (const field of e.dropped ?? []) {
      const k = `${e.pixelId}\u0000${e.accountId}\u0000${hour}\u0000${field}`;
      const d = this.dropped.get(k);
      if (d) d[4] += 1;
      else this.dropped.set(k, [e.pixelId, e.accountId, hour, field, 1]);
    }
    if (e.value !== null) {
      const currency = e.currency ?? '';
      const k = `${e.pixelId}\u0000${e.accountId}\u0000${hour}\u0000${e.eventName}\u0000${currency}`;
      const r = this.revenue.get(k);
      if (r) {
        r[5] += 1;
        r[6] += e.value;
      } else this.revenue.set(k, [e.pixelId, e.accountId, hour, e.eventName, currency, 1, e.value]);
    }
  }

  /** A forwarding job written for a new event: +1 pending for its destination. */
  job(
    e: { pixelId: string; accountId: string; timestamp: Date; eventId: string },
    destinationId: string,
  ): void {
    const hour = hourOf(e.timestamp.getTime());
    const k = `${e.pixelId}\u0000${hour}\u0000${destinationId}`;
    const j = this.jobs.get(k);
    if (j) {
      j[4] += 1;
      j[5] = e.eventId;
    } else this.jobs.set(k, [e.pixelId, e.accountId, destinationId, hour, 1, e.eventId]);
  }

  /** The gathered rows, as the upserts take them (the diagnostics bench seeds PostgreSQL so). */
  rows() {
    return {
      events: [...this.events.values()],
      dropped: [...this.dropped.values()],
      revenue: [...this.revenue.values()],
      jobs: [...this.jobs.values()],
    };
  }

  write(statements: DiagStatements): void {
    for (const r of this.events.values()) {
      statements.events.run(
        r.pixelId,
        r.accountId,
        r.hour,
        r.eventName,
        r.source,
        r.n,
        r.duplicates,
        ...r.flags,
      );
    }
    for (const d of this.dropped.values()) statements.dropped.run(...d);
    for (const r of this.revenue.values()) statements.revenue.run(...r);
    for (const j of this.jobs.values()) {
      statements.forward.run(j[0], j[1], j[2], j[3], 'pending', '', j[4], j[5]);
    }
  }
}

export type DiagStatements = ReturnType<typeof diagStatements>;

export function diagStatements(db: SqliteDatabase) {
  const flagSets = DIAG_FLAGS.map((f) => `${f} = ${f} + excluded.${f}`).join(', ');
  return {
    events: db.prepare(
      `INSERT INTO diag_hourly (pixel_id, account_id, hour, event_name, source, n, duplicates,
         ${FLAG_COLUMNS})
       VALUES (?, ?, ?, ?, ?, ?, ?, ${DIAG_FLAGS.map(() => '?').join(', ')})
       ON CONFLICT (account_id, pixel_id, hour, event_name, source) DO UPDATE SET
         n = n + excluded.n, duplicates = duplicates + excluded.duplicates, ${flagSets}`,
    ),
    dropped: db.prepare(
      `INSERT INTO diag_dropped_hourly (pixel_id, account_id, hour, field, n) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (account_id, pixel_id, hour, field) DO UPDATE SET n = n + excluded.n`,
    ),
    revenue: db.prepare(
      `INSERT INTO revenue_hourly (pixel_id, account_id, hour, event_name, currency, n, value_sum)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, pixel_id, hour, event_name, currency)
         DO UPDATE SET n = n + excluded.n, value_sum = value_sum + excluded.value_sum`,
    ),
    forward: db.prepare(
      `INSERT INTO forward_hourly (pixel_id, account_id, destination_id, hour, status, reason, n,
         example_event_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, pixel_id, hour, destination_id, status, reason)
         DO UPDATE SET n = n + excluded.n,
           example_event_id = CASE WHEN excluded.n > 0 THEN excluded.example_event_id
                                   ELSE example_event_id END`,
    ),
  };
}

/**
 * A settlement's moves, inside its transaction: each job settled from `pending` to another
 * status takes 1 from pending and gives it to the status and reason, in the hour and name of
 * its event (one probe of the events' (pixel_id, event_id) key per outcome).
 */
export function settlementMover(db: SqliteDatabase) {
  const move = db.prepare(
    `INSERT INTO forward_hourly (pixel_id, account_id, destination_id, hour, status, reason, n,
       example_event_id)
     SELECT pixel_id, account_id, @destinationId, ${HOUR_SQL}, @status, @reason, @n, event_id
       FROM events WHERE pixel_id = @pixelId AND event_id = @eventId
     ON CONFLICT (account_id, pixel_id, hour, destination_id, status, reason)
       DO UPDATE SET n = n + excluded.n,
         example_event_id = CASE WHEN excluded.n > 0 THEN excluded.example_event_id
                                 ELSE example_event_id END`,
  );
  return (
    destinationId: string,
    o: {
      pixelId: string;
      eventId: string;
      status: string;
      reason: string | null;
      lastError: string | null;
    },
  ): void => {
    if (o.status === 'pending') return;
    const at = { destinationId, pixelId: o.pixelId, eventId: o.eventId };
    move.run({ ...at, status: 'pending', reason: '', n: -1 });
    move.run({
      ...at,
      status: o.status,
      reason: outcomeReason(o.status, o.reason, o.lastError),
      n: 1,
    });
  };
}

/** The period's sums (inclusive hours), read from the rollups alone. */
export function readDiagnostics(db: SqliteDatabase, q: DiagnosticsQuery): DiagnosticsRollup {
  const scope = 'pixel_id = @pixelId AND account_id = @accountId AND hour BETWEEN @first AND @last';
  const params = {
    pixelId: q.pixelId,
    accountId: q.accountId,
    first: q.firstHour,
    last: q.lastHour,
  };
  const events = db
    .prepare(
      `SELECT event_name, source, sum(n), sum(duplicates), ${DIAG_FLAGS.map((f) => `sum(${f})`).join(', ')}
         FROM diag_hourly WHERE ${scope} GROUP BY event_name, source`,
    )
    .raw()
    .all(params) as Array<[string, string, number, number, ...number[]]>;
  const dropped = db
    .prepare(
      `SELECT field, sum(n) FROM diag_dropped_hourly WHERE ${scope} GROUP BY field HAVING sum(n) > 0`,
    )
    .raw()
    .all(params) as Array<[string, number]>;
  const revenue = db
    .prepare(
      `SELECT event_name, currency, sum(n), sum(value_sum) FROM revenue_hourly WHERE ${scope}
        GROUP BY event_name, currency`,
    )
    .raw()
    .all(params) as Array<[string, string, number, number]>;
  // The latest hour's example of each group: max(hour) picks the row's example (SQLite's bare
  // column with max()).
  const forwarding = db
    .prepare(
      `SELECT destination_id, status, reason, sum(n), example_event_id, max(hour)
         FROM forward_hourly WHERE ${scope}
        GROUP BY destination_id, status, reason`,
    )
    .raw()
    .all(params) as Array<[string, string, string, number, string, number]>;
  return {
    events: events.map(([eventName, source, n, duplicates, ...flags]) => ({
      eventName,
      source,
      n,
      duplicates,
      flags: Object.fromEntries(DIAG_FLAGS.map((f, i) => [f, flags[i] ?? 0])) as Record<
        DiagFlag,
        number
      >,
    })),
    dropped: dropped.map(([field, n]) => ({ field, n })),
    revenue: revenue.map(([eventName, currency, n, valueSum]) => ({
      eventName,
      currency,
      n,
      valueSum,
    })),
    forwarding: forwarding.map(([destinationId, status, reason, n, exampleEventId]) => ({
      destinationId,
      status,
      reason,
      n,
      exampleEventId,
    })),
  };
}

/**
 * The newest event of a name in the period that was stored without a key, among the newest 50
 * of that name (a bounded read of the events' index, never a scan): the example a finding
 * links to. Null when none of those lacks it.
 */
export function exampleLacking(
  db: SqliteDatabase,
  q: DiagnosticsQuery & { eventName: string; qualityKey: string },
): string | null {
  const row = db
    .prepare(
      `SELECT event_id FROM (
         SELECT event_id, match_quality, timestamp, seq FROM events
          WHERE account_id = @accountId AND pixel_id = @pixelId AND event_name = @eventName
            AND timestamp >= @from AND timestamp < @to
          ORDER BY timestamp DESC, seq DESC LIMIT 50)
        WHERE NOT EXISTS (SELECT 1 FROM json_each(match_quality, '$.keys') WHERE value = @key)
        ORDER BY timestamp DESC, seq DESC LIMIT 1`,
    )
    .pluck()
    .get({
      accountId: q.accountId,
      pixelId: q.pixelId,
      eventName: q.eventName,
      from: q.firstHour * 3_600_000,
      to: (q.lastHour + 1) * 3_600_000,
      key: q.qualityKey,
    }) as string | undefined;
  return row ?? null;
}
