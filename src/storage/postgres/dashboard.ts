/**
 * PostgreSQL side of contract §13 (keys API, stats, live tail, dashboard sessions), kept apart
 * from the core store so it moves as one piece. Sessions live in the database, so any instance
 * behind the load balancer can serve a signed-in browser; the live tail hears every instance's
 * commits through LISTEN/NOTIFY.
 */
import pg from 'pg';
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
import type { PostgresRunner } from './runner.ts';

/** Keys API: shared queries (queries/api-keys.ts). */
export class PostgresKeyStore implements KeyStore {
  constructor(private readonly runner: PostgresRunner) {}

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

export class PostgresStatsStore implements StatsStore {
  constructor(private readonly pool: pg.Pool) {}

  async eventStats(q: StatsQuery): Promise<StatsBucket[]> {
    const [table, column, width] =
      q.interval === 'hour'
        ? ['event_counts', 'hour', HOUR_MS]
        : ['event_counts_daily', 'day', 24 * HOUR_MS];
    const params: unknown[] = [q.pixelId, q.accountId, q.first, q.last];
    if (q.eventName !== undefined) params.push(q.eventName);
    const { rows } = await this.pool.query<{
      bucket: string;
      event_name: string;
      n: string;
      value_sum: number;
    }>(
      `SELECT ${column} AS bucket, event_name, n, value_sum FROM ${table}
        WHERE pixel_id = $1 AND account_id = $2 AND ${column} >= $3 AND ${column} <= $4
        ${q.eventName === undefined ? '' : 'AND event_name = $5'}
        ORDER BY ${column}, event_name`,
      params,
    );
    // bigint columns arrive as text; bucket numbers and counts fit a double exactly.
    return rows.map((r) => ({
      start: new Date(Number(r.bucket) * width),
      eventName: r.event_name,
      count: Number(r.n),
      valueSum: r.value_sum,
    }));
  }
}

/** How long the listener waits before reconnecting after its connection dropped. */
const RECONNECT_MS = 1_000;

/**
 * One LISTEN connection per process, opened at the first subscription. Payloads are
 * `<pixel_id> <seq>,<seq>…` (events.ts announceInserted); only the ids travel, the records are
 * read by the subscriber, account-scoped.
 */
export class PostgresEventFeed implements EventFeed {
  private readonly listeners = new Map<string, Set<(seqs: number[]) => void>>();
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly runner: PostgresRunner,
    private readonly channel: string,
  ) {}

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client(this.pool.options);
      client.on('notification', (message) => this.dispatch(message.payload ?? ''));
      const lost = () => {
        if (this.client !== client) return;
        this.client = null;
        client.end().catch(() => {});
        if (!this.closed && this.listeners.size > 0) {
          setTimeout(() => void this.connect().catch(lost), RECONNECT_MS).unref();
        }
      };
      client.on('error', lost);
      client.on('end', lost);
      try {
        await client.connect();
        await client.query(`LISTEN ${pg.escapeIdentifier(this.channel)}`);
      } catch (error) {
        client.end().catch(() => {});
        throw error;
      } finally {
        this.connecting = null;
      }
      this.client = client;
      return client;
    })();
    return this.connecting;
  }

  private dispatch(payload: string): void {
    const space = payload.indexOf(' ');
    const subscribers = this.listeners.get(payload.slice(0, space));
    if (!subscribers || space < 0) return;
    const seqs = payload
      .slice(space + 1)
      .split(',')
      .map(Number);
    for (const listener of subscribers) listener(seqs);
  }

  async subscribe(pixelId: string, listener: (seqs: number[]) => void): Promise<() => void> {
    await this.connect();
    let set = this.listeners.get(pixelId);
    if (!set) {
      set = new Set();
      this.listeners.set(pixelId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(pixelId) === set) this.listeners.delete(pixelId);
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
    this.closed = true;
    this.listeners.clear();
    const client = this.client ?? (await this.connecting?.catch(() => null));
    this.client = null;
    await client?.end().catch(() => {});
  }
}

/** Dashboard sessions: shared queries (queries/dashboard-sessions.ts). */
export class PostgresSessionStore implements SessionStore {
  constructor(private readonly runner: PostgresRunner) {}

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
