/**
 * SQLite side of contract §13 that is its own: the stats read and the live tail's in-process
 * bus. Keys, sessions and the tail's reads are shared queries (sql/ports.ts).
 */
import { EventEmitter } from 'node:events';
import type { StatsBucket } from '../../domain/model.ts';
import type {
  ExplorerPage,
  ExplorerQuery,
  RevenueRow,
  StatsQuery,
  StatsStore,
  TopEventStats,
} from '../../domain/ports/stats-store.ts';
import type { DiagnosticsQuery, DiagnosticsRollup } from '../../domain/stats/diagnostics.ts';
import { HOUR_MS } from '../event-totals.ts';
import { explorePage } from '../queries/explorer.ts';
import type { FeedBus } from '../sql/ports.ts';
import type { SqliteDatabase } from './database.ts';
import { exampleLacking, readDiagnostics } from './diagnostics.ts';
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

/**
 * One process owns a SQLite file, so the bus is in-process: the event store calls `announce`
 * after each commit is durable.
 */
export class SqliteEventBus implements FeedBus {
  private readonly bus = new EventEmitter().setMaxListeners(0);

  readonly announce = (inserted: { pixelId: string; seq: number }[]): void => {
    if (this.bus.eventNames().length === 0) return;
    const byPixel = new Map<string, number[]>();
    for (const { pixelId, seq } of inserted) {
      const seqs = byPixel.get(pixelId);
      if (seqs) seqs.push(seq);
      else byPixel.set(pixelId, [seq]);
    }
    for (const [pixelId, seqs] of byPixel) this.bus.emit(pixelId, seqs);
  };

  async subscribe(pixelId: string, listener: (seqs: number[]) => void): Promise<() => void> {
    this.bus.on(pixelId, listener);
    return () => {
      this.bus.off(pixelId, listener);
    };
  }

  async close(): Promise<void> {
    this.bus.removeAllListeners();
  }
}
