/**
 * SQLite side of contract §13 (keys API, stats, live tail, dashboard sessions), kept apart from
 * the core store so it moves as one piece. Times are integer milliseconds, as everywhere here.
 */
import { EventEmitter } from 'node:events';
import type {
  DashboardSession,
  ManagedKey,
  SequencedEvent,
  StatsBucket,
} from '../../domain/model.ts';
import type {
  EventFeed,
  KeyStore,
  NewManagedKeyRow,
  SessionStore,
  StatsQuery,
  StatsStore,
} from '../../domain/ports.ts';
import { HOUR_MS } from '../event-totals.ts';
import * as keys from '../queries/api-keys.ts';
import * as sessions from '../queries/dashboard-sessions.ts';
import * as events from '../queries/events.ts';
import type { SqliteDatabase } from './database.ts';
import type { SqliteRunner } from './runner.ts';

/** Keys API: shared queries (queries/api-keys.ts). */
export class SqliteKeyStore implements KeyStore {
  constructor(private readonly runner: SqliteRunner) {}

  createKey(k: NewManagedKeyRow): Promise<void> {
    return this.runner.read(() => keys.createKey(this.runner.sql, k));
  }

  listKeys(accountId: string): Promise<ManagedKey[]> {
    return this.runner.read(() => keys.listKeys(this.runner.sql, accountId));
  }

  revokeKey(accountId: string, keyId: string, at: Date): Promise<ManagedKey | null> {
    return this.runner.transaction(() => keys.revokeKey(this.runner.sql, accountId, keyId, at));
  }

  touchKey(keyId: string, at: Date): Promise<void> {
    return this.runner.read(() => keys.touchKey(this.runner.sql, keyId, at));
  }
}

export class SqliteStatsStore implements StatsStore {
  constructor(private readonly db: SqliteDatabase) {}

  async eventStats(q: StatsQuery): Promise<StatsBucket[]> {
    const [table, column, width] =
      q.interval === 'hour'
        ? ['event_counts', 'hour', HOUR_MS]
        : ['event_counts_daily', 'day', 24 * HOUR_MS];
    const byName = q.eventName === undefined ? '' : ' AND event_name = @eventName';
    const rows = this.db
      .prepare(
        `SELECT ${column} AS bucket, event_name, n, value_sum FROM ${table}
          WHERE pixel_id = @pixelId AND account_id = @accountId AND ${column} >= @first
            AND ${column} <= @last${byName}
          ORDER BY ${column}, event_name`,
      )
      .all({
        pixelId: q.pixelId,
        accountId: q.accountId,
        first: q.first,
        last: q.last,
        ...(q.eventName !== undefined && { eventName: q.eventName }),
      }) as { bucket: number; event_name: string; n: number; value_sum: number }[];
    return rows.map((r) => ({
      start: new Date(r.bucket * width),
      eventName: r.event_name,
      count: r.n,
      valueSum: r.value_sum,
    }));
  }
}

/**
 * One process owns a SQLite file, so the bus is in-process: the event store calls `announce`
 * after each commit is durable.
 */
export class SqliteEventFeed implements EventFeed {
  private readonly bus = new EventEmitter().setMaxListeners(0);

  constructor(private readonly runner: SqliteRunner) {}

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

  eventsBySeq(accountId: string, pixelId: string, seqs: number[]): Promise<SequencedEvent[]> {
    return this.runner.read(() => events.eventsBySeq(this.runner.sql, accountId, pixelId, seqs));
  }

  eventsAfter(
    accountId: string,
    pixelId: string,
    afterSeq: number,
    limit: number,
  ): Promise<SequencedEvent[]> {
    return this.runner.read(() =>
      events.eventsAfter(this.runner.sql, accountId, pixelId, afterSeq, limit),
    );
  }

  async close(): Promise<void> {
    this.bus.removeAllListeners();
  }
}

/** Dashboard sessions: shared queries (queries/dashboard-sessions.ts). */
export class SqliteSessionStore implements SessionStore {
  constructor(private readonly runner: SqliteRunner) {}

  createSession(s: DashboardSession): Promise<void> {
    return this.runner.transaction(() => sessions.createSession(this.runner.sql, s));
  }

  findSession(tokenHash: string, now: Date): Promise<DashboardSession | null> {
    return this.runner.read(() => sessions.findSession(this.runner.sql, tokenHash, now));
  }

  deleteSession(tokenHash: string): Promise<void> {
    return this.runner.read(() => sessions.deleteSession(this.runner.sql, tokenHash));
  }
}
