/**
 * PostgreSQL side of contract §13 (keys API, stats, live tail, dashboard sessions), kept apart
 * from the core store so it moves as one piece. Sessions live in the database, so any instance
 * behind the load balancer can serve a signed-in browser; the live tail hears every instance's
 * commits through LISTEN/NOTIFY.
 */
import pg from 'pg';
import type {
  DashboardSession,
  KeyScope,
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
import { type EventRow, toEvent } from './events.ts';

interface ManagedKeyRow {
  id: string;
  account_id: string;
  name: string;
  scope: string;
  prefix: string;
  last4: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const toManagedKey = (r: ManagedKeyRow): ManagedKey => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  scope: r.scope as KeyScope,
  prefix: r.prefix,
  last4: r.last4,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
});

const KEY_COLUMNS =
  'id, account_id, name, scope, prefix, last4, created_at, last_used_at, revoked_at';

export class PostgresKeyStore implements KeyStore {
  constructor(private readonly pool: pg.Pool) {}

  async createKey(k: NewManagedKeyRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO api_keys (id, account_id, key_hash, name, scope, prefix, last4, created_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [k.id, k.accountId, k.hash, k.name, k.scope, k.prefix, k.last4, k.createdAt, k.revokedAt],
    );
  }

  async listKeys(accountId: string): Promise<ManagedKey[]> {
    const { rows } = await this.pool.query<ManagedKeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
      [accountId],
    );
    return rows.map(toManagedKey);
  }

  async revokeKey(accountId: string, keyId: string, at: Date): Promise<ManagedKey | null> {
    // One statement: revoke if live, then read the row either way (a repeat keeps the first time).
    const { rows } = await this.pool.query<ManagedKeyRow>(
      `WITH revoked AS (
         UPDATE api_keys SET revoked_at = $3
          WHERE id = $2 AND account_id = $1 AND revoked_at IS NULL
         RETURNING ${KEY_COLUMNS}
       )
       SELECT * FROM revoked
       UNION ALL
       SELECT ${KEY_COLUMNS} FROM api_keys
        WHERE id = $2 AND account_id = $1 AND NOT EXISTS (SELECT 1 FROM revoked)`,
      [accountId, keyId, at],
    );
    return rows[0] ? toManagedKey(rows[0]) : null;
  }

  async touchKey(keyId: string, at: Date): Promise<void> {
    // Never moves backwards: two instances touching in either order leave the later time.
    await this.pool.query(
      `UPDATE api_keys SET last_used_at = $2
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`,
      [keyId, at],
    );
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
    // Names in byte order, as SQLite's BINARY compares them, and as migration 011's index
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

  async eventsBySeq(accountId: string, pixelId: string, seqs: number[]): Promise<SequencedEvent[]> {
    if (seqs.length === 0) return [];
    const { rows } = await this.pool.query<EventRow & { arrival: string }>(
      `SELECT *, seq::text AS arrival FROM events
        WHERE pixel_id = $1 AND account_id = $2 AND seq = ANY($3::bigint[]) ORDER BY seq`,
      [pixelId, accountId, seqs],
    );
    return rows.map((r) => ({ seq: Number(r.arrival), event: toEvent(r) }));
  }

  async eventsAfter(
    accountId: string,
    pixelId: string,
    afterSeq: number,
    limit: number,
  ): Promise<SequencedEvent[]> {
    const { rows } = await this.pool.query<EventRow & { arrival: string }>(
      `SELECT *, seq::text AS arrival FROM events
        WHERE pixel_id = $1 AND account_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
      [pixelId, accountId, afterSeq, limit],
    );
    return rows.map((r) => ({ seq: Number(r.arrival), event: toEvent(r) }));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    const client = this.client ?? (await this.connecting?.catch(() => null));
    this.client = null;
    await client?.end().catch(() => {});
  }
}

export class PostgresSessionStore implements SessionStore {
  constructor(private readonly pool: pg.Pool) {}

  async createSession(s: DashboardSession): Promise<void> {
    // Expired sessions are swept as new ones arrive: the table stays the size of its use.
    await this.pool.query('DELETE FROM dashboard_sessions WHERE expires_at <= $1', [s.createdAt]);
    await this.pool.query(
      `INSERT INTO dashboard_sessions (token_hash, account_id, key_id, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5)`,
      [s.tokenHash, s.accountId, s.keyId, s.createdAt, s.expiresAt],
    );
  }

  async findSession(tokenHash: string, now: Date): Promise<DashboardSession | null> {
    const { rows } = await this.pool.query<{
      token_hash: string;
      account_id: string;
      key_id: string;
      created_at: Date;
      expires_at: Date;
    }>(
      `SELECT s.* FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id
        WHERE s.token_hash = $1 AND s.expires_at > $2 AND k.revoked_at IS NULL`,
      [tokenHash, now],
    );
    const row = rows[0];
    return row
      ? {
          tokenHash: row.token_hash,
          accountId: row.account_id,
          keyId: row.key_id,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
        }
      : null;
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.pool.query('DELETE FROM dashboard_sessions WHERE token_hash = $1', [tokenHash]);
  }
}
