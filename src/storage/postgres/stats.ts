/**
 * The stats port on PostgreSQL (contract §13): the dashboard's charts, diagnostics, revenue and
 * events explorer, read from the count tables and the diagnostics rollups (migration 025).
 */
import type pg from 'pg';
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
import { PostgresRunner } from './runner.ts';

/** The counts table, its bucket column and the bucket's width for the query's interval. */
const source = (q: StatsQuery) =>
  q.interval === 'hour'
    ? (['event_counts', 'hour', HOUR_MS] as const)
    : (['event_counts_daily', 'day', 24 * HOUR_MS] as const);

export class PostgresStatsStore implements StatsStore {
  private readonly runner: PostgresRunner;

  constructor(private readonly pool: pg.Pool) {
    this.runner = new PostgresRunner(pool);
  }

  async revenue(q: DiagnosticsQuery, names?: readonly string[]): Promise<RevenueRow[]> {
    if (names !== undefined && names.length === 0) return [];
    const scope = 'pixel_id = $1 AND account_id = $2 AND hour BETWEEN $3 AND $4';
    const { rows } = await this.pool.query<[string, string | null, string, string, number]>({
      text:
        names === undefined
          ? `SELECT hour, NULL, currency, sum(n), sum(value_sum) FROM revenue_hourly
              WHERE ${scope} GROUP BY hour, currency`
          : `SELECT 0, event_name, currency, sum(n), sum(value_sum) FROM revenue_hourly
              WHERE ${scope} AND event_name = ANY ($5::text[]) GROUP BY event_name, currency`,
      values: [q.pixelId, q.accountId, q.firstHour, q.lastHour, ...(names ? [names] : [])],
      rowMode: 'array',
    });
    return rows.map(([hour, eventName, currency, n, valueSum]) => ({
      hour: Number(hour),
      eventName,
      currency,
      n: Number(n),
      valueSum: Number(valueSum),
    }));
  }

  explore(q: ExplorerQuery): Promise<ExplorerPage> {
    return this.runner.read(() => explorePage(this.runner.sql, q));
  }

  /** The diagnostics rollups (migration 025) over the hours: four grouped sums, in parallel. */
  async diagnostics(q: DiagnosticsQuery): Promise<DiagnosticsRollup> {
    const scope = 'pixel_id = $1 AND account_id = $2 AND hour BETWEEN $3 AND $4';
    const params = [q.pixelId, q.accountId, q.firstHour, q.lastHour];
    const query = <T extends unknown[]>(text: string) =>
      this.pool.query<T>({ text, values: params, rowMode: 'array' }).then((r) => r.rows);
    const [events, dropped, revenue, forwarding] = await Promise.all([
      query<[string, string, string, string, ...string[]]>(
        `SELECT event_name, source, sum(n), sum(duplicates),
                ${DIAG_FLAGS.map((f) => `sum(${f})`).join(', ')}
           FROM diag_hourly WHERE ${scope} GROUP BY event_name, source`,
      ),
      query<[string, string]>(
        `SELECT field, sum(n) FROM diag_dropped_hourly WHERE ${scope}
          GROUP BY field HAVING sum(n) > 0`,
      ),
      query<[string, string, string, number]>(
        `SELECT event_name, currency, sum(n), sum(value_sum) FROM revenue_hourly WHERE ${scope}
          GROUP BY event_name, currency`,
      ),
      // Each group's example is the latest hour's (the row holding max(hour)).
      query<[string, string, string, string, string]>(
        `SELECT destination_id, status, reason, sum(n),
                (array_agg(example_event_id ORDER BY hour DESC))[1]
           FROM forward_hourly WHERE ${scope}
          GROUP BY destination_id, status, reason`,
      ),
    ]);
    return {
      events: events.map(([eventName, source, n, duplicates, ...flags]) => ({
        eventName,
        source,
        n: Number(n),
        duplicates: Number(duplicates),
        flags: Object.fromEntries(DIAG_FLAGS.map((f, i) => [f, Number(flags[i] ?? 0)])) as Record<
          DiagFlag,
          number
        >,
      })),
      dropped: dropped.map(([field, n]) => ({ field, n: Number(n) })),
      revenue: revenue.map(([eventName, currency, n, valueSum]) => ({
        eventName,
        currency,
        n: Number(n),
        valueSum: Number(valueSum),
      })),
      forwarding: forwarding.map(([destinationId, status, reason, n, example]) => ({
        destinationId,
        status,
        reason,
        n: Number(n),
        exampleEventId: example,
      })),
    };
  }

  async exampleLacking(
    q: DiagnosticsQuery & { eventName: string; qualityKey: string },
  ): Promise<string | null> {
    const { rows } = await this.pool.query<{ event_id: string }>(
      `SELECT event_id FROM (
         SELECT event_id, match_quality, timestamp, seq FROM events
          WHERE account_id = $1 AND pixel_id = $2 AND event_name = $3
            AND timestamp >= to_timestamp($4::float8 * 3600)
            AND timestamp < to_timestamp(($5::float8 + 1) * 3600)
          ORDER BY timestamp DESC, seq DESC LIMIT 50) recent
        WHERE NOT coalesce((match_quality -> 'keys')::jsonb ? $6, false)
        ORDER BY timestamp DESC, seq DESC LIMIT 1`,
      [q.accountId, q.pixelId, q.eventName, q.firstHour, q.lastHour, q.qualityKey],
    );
    return rows[0]?.event_id ?? null;
  }

  async eventStatsJson(q: StatsQuery): Promise<string> {
    const [table, column, width] = source(q);
    const params: unknown[] = [q.pixelId, q.accountId, q.first, q.last];
    if (q.eventName !== undefined) params.push(q.eventName);
    // One row per bucket holding its entries as JSON, minus the start: PostgreSQL escapes the
    // names (to_json) and prints the numbers (bigint, and float8 in its shortest exact form, as
    // the driver reads it for eventStats); the start is formatted here once per bucket instead
    // of 10,000 times in SQL. Entries are joined by a U+0001 byte, which to_json always escapes
    // inside a name, so it can only be a separator. Measured on 1,000 hours × 10 names: about
    // half the CPU (database and Node together) of rows → objects → serializer, and a tenth of
    // Node's (docs/decisions.md, "Stats p95").
    const { rows } = await this.pool.query<[bucket: string, entries: string]>({
      text: `SELECT ${column}, string_agg(
          '"event_name":' || to_json(event_name) || ',"count":' || n || ',"value_sum":' || value_sum,
          E'}\\x01' ORDER BY event_name COLLATE "C")
        FROM ${table}
        WHERE pixel_id = $1 AND account_id = $2 AND ${column} >= $3 AND ${column} <= $4
        ${q.eventName === undefined ? '' : 'AND event_name = $5'}
        GROUP BY ${column} ORDER BY ${column}`,
      values: params,
      rowMode: 'array',
    });
    const parts = rows.map(([bucket, entries]) => {
      const head = `{"start":"${new Date(Number(bucket) * width).toISOString()}",`;
      return `${head}${entries.replaceAll('\u0001', `,${head}`)}}`;
    });
    return `[${parts.join(',')}]`;
  }

  async topEventStats(q: StatsQuery, top: number): Promise<TopEventStats> {
    const [table, column, width] = source(q);
    const range = `WITH r AS (SELECT ${column} AS bucket, event_name, n, value_sum FROM ${table}
        WHERE pixel_id = $1 AND account_id = $2 AND ${column} >= $3 AND ${column} <= $4)`;
    const params = [q.pixelId, q.accountId, q.first, q.last];
    // The busiest names first (ties by name, for a stable chart); the rest fold into NULL.
    const { rows } = await this.pool.query<[string, string | null, string, number]>({
      text: `${range}, t AS (SELECT event_name FROM r GROUP BY event_name
            ORDER BY sum(n) DESC, event_name COLLATE "C" LIMIT $5)
         SELECT r.bucket, t.event_name, sum(r.n), sum(r.value_sum)::float8
           FROM r LEFT JOIN t ON t.event_name = r.event_name
          GROUP BY r.bucket, t.event_name
          ORDER BY r.bucket, t.event_name COLLATE "C" NULLS FIRST`,
      values: [...params, top],
      rowMode: 'array',
    });
    const names = await this.pool.query<{ n: number }>(
      `${range} SELECT count(DISTINCT event_name)::int AS n FROM r`,
      params,
    );
    return {
      buckets: rows.map(([b, eventName, n, valueSum]) => ({
        start: new Date(Number(b) * width),
        eventName,
        count: Number(n),
        valueSum,
      })),
      otherNames: Math.max(0, (names.rows[0]?.n ?? 0) - top),
    };
  }

  async eventStats(q: StatsQuery): Promise<StatsBucket[]> {
    const [table, column, width] = source(q);
    const params: unknown[] = [q.pixelId, q.accountId, q.first, q.last];
    // Names in byte order, as SQLite's BINARY compares them, and as migration 012's index
    // holds them: the range is read in order, not sorted under the database's collation.
    if (q.eventName !== undefined) params.push(q.eventName);
    // Rows as arrays, and one Date for every name of a bucket: a 1,000-hour range over ten
    // names is 10,000 rows.
    const { rows } = await this.pool.query<[bucket: string, name: string, n: string, sum: number]>({
      text: `SELECT ${column} AS bucket, event_name, n, value_sum FROM ${table}
        WHERE pixel_id = $1 AND account_id = $2 AND ${column} >= $3 AND ${column} <= $4
        ${q.eventName === undefined ? '' : 'AND event_name = $5'}
        ORDER BY ${column}, event_name COLLATE "C"`,
      values: params,
      rowMode: 'array',
    });
    // bigint columns arrive as text; bucket numbers and counts fit a double exactly.
    let bucket = '';
    let start = new Date(0);
    return rows.map(([b, eventName, n, valueSum]) => {
      if (b !== bucket) {
        bucket = b;
        start = new Date(Number(b) * width);
      }
      return { start, eventName, count: Number(n), valueSum };
    });
  }
}
