/**
 * SQLite's side of the diagnostics rollups (migration 025): what a batch of inserted events
 * adds, gathered per row key in memory and upserted once per key inside the batch's
 * transaction (as event_counts is), and what a settlement moves between forwarding statuses.
 * The period's read is the stats store's (stats.ts).
 */
import { DIAG_FLAGS, outcomeReason } from '../../domain/stats/diagnostics.ts';
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
