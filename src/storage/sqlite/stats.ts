/**
 * The stats port on SQLite (contract §13): the dashboard's charts, diagnostics, revenue and
 * events explorer, read from the count tables and the diagnostics rollups (migration 025).
 */
import type { StatsBucket } from '../../domain/model.ts';
import type {
  ExplorerPage,
  ExplorerQuery,
  RevenueRow,
  StatsQuery,
  StatsStore,
  TopEventStats,
} from '../../domain/ports/stats-store.ts';
import {
  DIAG_FLAGS,
  type DiagFlag,
  type DiagnosticsQuery,
  type DiagnosticsRollup,
} from '../../domain/stats/diagnostics.ts';
import { HOUR_MS } from '../event-totals.ts';
import { explorePage } from '../queries/explorer.ts';
import type { SqliteDatabase } from './database.ts';
import { SqliteRunner } from './runner.ts';

export class SqliteStatsStore implements StatsStore {
  private readonly runner: SqliteRunner;

  constructor(private readonly db: SqliteDatabase) {
    this.runner = new SqliteRunner(db);
  }

  async revenue(q: DiagnosticsQuery, names?: readonly string[]): Promise<RevenueRow[]> {
    const scope = 'pixel_id = ? AND account_id = ? AND hour BETWEEN ? AND ?';
    const params: unknown[] = [q.pixelId, q.accountId, q.firstHour, q.lastHour];
    const rows = (
      names === undefined
        ? this.db
            .prepare(
              `SELECT hour, NULL, currency, sum(n), sum(value_sum) FROM revenue_hourly
                WHERE ${scope} GROUP BY hour, currency`,
            )
            .raw()
            .all(...params)
        : names.length === 0
          ? []
          : this.db
              .prepare(
                `SELECT 0, event_name, currency, sum(n), sum(value_sum) FROM revenue_hourly
                  WHERE ${scope} AND event_name IN (SELECT value FROM json_each(?))
                  GROUP BY event_name, currency`,
              )
              .raw()
              .all(...params, JSON.stringify(names))
    ) as Array<[number, string | null, string, number, number]>;
    return rows.map(([hour, eventName, currency, n, valueSum]) => ({
      hour,
      eventName,
      currency,
      n,
      valueSum,
    }));
  }

  explore(q: ExplorerQuery): Promise<ExplorerPage> {
    return this.runner.read(() => explorePage(this.runner.sql, q));
  }

  async eventStats(q: StatsQuery): Promise<StatsBucket[]> {
    const width = q.interval === 'hour' ? HOUR_MS : 24 * HOUR_MS;
    let bucket = Number.NaN;
    let start = new Date(0);
    return this.rows(q).map(([b, eventName, count, valueSum]) => {
      if (b !== bucket) {
        bucket = b;
        start = new Date(b * width);
      }
      return { start, eventName, count, valueSum };
    });
  }

  /**
   * Written straight from the rows, no objects in between: the start formatted once per
   * bucket and each name escaped once (JSON.stringify, as the serializer would). Not SQLite's
   * JSON functions: the database runs on this same thread, so they would save little, and
   * JavaScript prints every number exactly as the serializer does (SQLite writes 1e20 as
   * `1.0e+20`).
   */
  async eventStatsJson(q: StatsQuery): Promise<string> {
    const width = q.interval === 'hour' ? HOUR_MS : 24 * HOUR_MS;
    const names = new Map<string, string>();
    let bucket = Number.NaN;
    let head = '';
    const parts = this.rows(q).map(([b, eventName, count, valueSum]) => {
      if (b !== bucket) {
        bucket = b;
        head = `{"start":"${new Date(b * width).toISOString()}","event_name":`;
      }
      let name = names.get(eventName);
      if (name === undefined) {
        name = JSON.stringify(eventName);
        names.set(eventName, name);
      }
      return `${head}${name},"count":${count},"value_sum":${JSON.stringify(valueSum)}}`;
    });
    return `[${parts.join(',')}]`;
  }

  async topEventStats(q: StatsQuery, top: number): Promise<TopEventStats> {
    const [table, column] =
      q.interval === 'hour' ? ['event_counts', 'hour'] : ['event_counts_daily', 'day'];
    const width = q.interval === 'hour' ? HOUR_MS : 24 * HOUR_MS;
    const range = `WITH r AS (SELECT ${column} AS bucket, event_name, n, value_sum FROM ${table}
        WHERE pixel_id = @pixelId AND account_id = @accountId
          AND ${column} >= @first AND ${column} <= @last)`;
    const params = { pixelId: q.pixelId, accountId: q.accountId, first: q.first, last: q.last };
    // The busiest names first (ties by name, for a stable chart); the rest fold into NULL.
    const rows = this.db
      .prepare(
        `${range}, t AS (SELECT event_name FROM r GROUP BY event_name
            ORDER BY sum(n) DESC, event_name LIMIT @top)
         SELECT bucket, CASE WHEN event_name IN (SELECT event_name FROM t) THEN event_name END
             AS name, sum(n), sum(value_sum)
           FROM r GROUP BY bucket, name ORDER BY bucket, name`,
      )
      .raw()
      .all({ ...params, top }) as [number, string | null, number, number][];
    const names = this.db
      .prepare(`${range} SELECT count(DISTINCT event_name) FROM r`)
      .pluck()
      .get(params) as number;
    return {
      buckets: rows.map(([b, eventName, count, valueSum]) => ({
        start: new Date(b * width),
        eventName,
        count,
        valueSum,
      })),
      otherNames: Math.max(0, names - top),
    };
  }

  async diagnostics(q: DiagnosticsQuery): Promise<DiagnosticsRollup> {
    return readDiagnostics(this.db, q);
  }

  async exampleLacking(
    q: DiagnosticsQuery & { eventName: string; qualityKey: string },
  ): Promise<string | null> {
    return exampleLacking(this.db, q);
  }

  private rows(q: StatsQuery) {
    const [table, column] =
      q.interval === 'hour' ? ['event_counts', 'hour'] : ['event_counts_daily', 'day'];
    const byName = q.eventName === undefined ? '' : ' AND event_name = @eventName';
    // Read from migration 012's covering index alone, already in (bucket, name) order. Rows
    // come as arrays, and one Date serves every name of a bucket: a 1,000-hour range over ten
    // names is 10,000 rows, and per-row objects were a third of its cost.
    return this.db
      .prepare(
        `SELECT ${column} AS bucket, event_name, n, value_sum FROM ${table}
          WHERE pixel_id = @pixelId AND account_id = @accountId AND ${column} >= @first
            AND ${column} <= @last${byName}
          ORDER BY ${column}, event_name`,
      )
      .raw()
      .all({
        pixelId: q.pixelId,
        accountId: q.accountId,
        first: q.first,
        last: q.last,
        ...(q.eventName !== undefined && { eventName: q.eventName }),
      }) as [bucket: number, eventName: string, n: number, valueSum: number][];
  }
}

/** The period's sums (inclusive hours), read from the rollups alone. */
function readDiagnostics(db: SqliteDatabase, q: DiagnosticsQuery): DiagnosticsRollup {
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
function exampleLacking(
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
