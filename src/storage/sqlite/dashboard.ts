/**
 * SQLite side of contract §13 (keys API, stats, live tail, dashboard sessions), kept apart from
 * the core store so it moves as one piece. Times are integer milliseconds, as everywhere here.
 */
import { EventEmitter } from 'node:events';
import type {
  DashboardSession,
  KeyScope,
  ManagedKey,
  SequencedEvent,
  StatsBucket,
  TrackedEvent,
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
import type { EventRow } from '../rows.ts';
import type { SqliteDatabase } from './database.ts';

interface ManagedKeyRow {
  id: string;
  account_id: string;
  name: string;
  scope: string;
  prefix: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

const toManagedKey = (r: ManagedKeyRow): ManagedKey => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  scope: r.scope as KeyScope,
  prefix: r.prefix,
  last4: r.last4,
  createdAt: new Date(r.created_at),
  lastUsedAt: r.last_used_at === null ? null : new Date(r.last_used_at),
  revokedAt: r.revoked_at === null ? null : new Date(r.revoked_at),
});

const KEY_COLUMNS =
  'id, account_id, name, scope, prefix, last4, created_at, last_used_at, revoked_at';

export class SqliteKeyStore implements KeyStore {
  constructor(private readonly db: SqliteDatabase) {}

  async createKey(k: NewManagedKeyRow): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO api_keys (id, account_id, key_hash, name, scope, prefix, last4, created_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        k.id,
        k.accountId,
        k.hash,
        k.name,
        k.scope,
        k.prefix,
        k.last4,
        k.createdAt.getTime(),
        k.revokedAt?.getTime() ?? null,
      );
  }

  async listKeys(accountId: string): Promise<ManagedKey[]> {
    const rows = this.db
      .prepare<[string], ManagedKeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at, id`,
      )
      .all(accountId);
    return rows.map(toManagedKey);
  }

  async revokeKey(accountId: string, keyId: string, at: Date): Promise<ManagedKey | null> {
    return this.db.transaction(() => {
      this.db
        .prepare(
          'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND account_id = ? AND revoked_at IS NULL',
        )
        .run(at.getTime(), keyId, accountId);
      const row = this.db
        .prepare<[string, string], ManagedKeyRow>(
          `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ? AND account_id = ?`,
        )
        .get(keyId, accountId);
      return row ? toManagedKey(row) : null;
    })();
  }

  async touchKey(keyId: string, at: Date): Promise<void> {
    // Never moves backwards: two instances touching in either order leave the later time.
    this.db
      .prepare(
        'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
      )
      .run(at.getTime(), keyId, at.getTime());
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
    // Read from migration 011's covering index alone, already in (bucket, name) order. Rows
    // come as arrays, and one Date serves every name of a bucket: a 1,000-hour range over ten
    // names is 10,000 rows, and per-row objects were a third of its cost.
    const rows = this.db
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
    let bucket = Number.NaN;
    let start = new Date(0);
    return rows.map(([b, eventName, count, valueSum]) => {
      if (b !== bucket) {
        bucket = b;
        start = new Date(b * width);
      }
      return { start, eventName, count, valueSum };
    });
  }
}

/**
 * One process owns a SQLite file, so the bus is in-process: the event store calls `announce`
 * after each commit is durable.
 */
export class SqliteEventFeed implements EventFeed {
  private readonly bus = new EventEmitter().setMaxListeners(0);

  constructor(
    private readonly db: SqliteDatabase,
    private readonly toEvent: (row: EventRow) => TrackedEvent,
  ) {}

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

  async eventsBySeq(accountId: string, pixelId: string, seqs: number[]): Promise<SequencedEvent[]> {
    if (seqs.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT * FROM events WHERE account_id = ? AND pixel_id = ?
            AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq`,
      )
      .all(accountId, pixelId, JSON.stringify(seqs)) as (EventRow & { seq: number })[];
    return rows.map((r) => ({ seq: r.seq, event: this.toEvent(r) }));
  }

  async eventsAfter(
    accountId: string,
    pixelId: string,
    afterSeq: number,
    limit: number,
  ): Promise<SequencedEvent[]> {
    const rows = this.db
      .prepare(
        `SELECT * FROM events WHERE account_id = ? AND pixel_id = ? AND seq > ?
          ORDER BY seq LIMIT ?`,
      )
      .all(accountId, pixelId, afterSeq, limit) as (EventRow & { seq: number })[];
    return rows.map((r) => ({ seq: r.seq, event: this.toEvent(r) }));
  }

  async close(): Promise<void> {
    this.bus.removeAllListeners();
  }
}

interface SessionRow {
  token_hash: string;
  account_id: string;
  key_id: string;
  created_at: number;
  expires_at: number;
}

export class SqliteSessionStore implements SessionStore {
  constructor(private readonly db: SqliteDatabase) {}

  async createSession(s: DashboardSession): Promise<void> {
    const now = s.createdAt.getTime();
    this.db.transaction(() => {
      // Expired sessions are swept as new ones arrive: the table stays the size of its use.
      this.db.prepare('DELETE FROM dashboard_sessions WHERE expires_at <= ?').run(now);
      this.db
        .prepare(
          `INSERT INTO dashboard_sessions (token_hash, account_id, key_id, created_at, expires_at)
           VALUES (?, ?, ?, ?, ?)`,
        )
        .run(s.tokenHash, s.accountId, s.keyId, now, s.expiresAt.getTime());
    })();
  }

  async findSession(tokenHash: string, now: Date): Promise<DashboardSession | null> {
    const row = this.db
      .prepare<[string, number], SessionRow>(
        `SELECT s.* FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id
          WHERE s.token_hash = ? AND s.expires_at > ? AND k.revoked_at IS NULL`,
      )
      .get(tokenHash, now.getTime());
    return row
      ? {
          tokenHash: row.token_hash,
          accountId: row.account_id,
          keyId: row.key_id,
          createdAt: new Date(row.created_at),
          expiresAt: new Date(row.expires_at),
        }
      : null;
  }

  async deleteSession(tokenHash: string): Promise<void> {
    this.db.prepare('DELETE FROM dashboard_sessions WHERE token_hash = ?').run(tokenHash);
  }
}
