import type pg from 'pg';
import type { Account, ApiKeyRecord, KeyScope, Pixel, WebhookEvent } from '../../domain/model.ts';
import type {
  AccountStore,
  Change,
  KeyStore,
  LifecycleStore,
  NewApiKeyRow,
  Page,
  PixelStore,
  SessionStore,
  StatsStore,
  Store,
} from '../../domain/ports.ts';
import { translateDriverErrors } from '../driver-errors.ts';
import * as rows from '../rows.ts';
import { type AccountRow, type KeyRow, type PixelRow, postgresCodec } from '../rows.ts';
import {
  PostgresEventFeed,
  PostgresKeyStore,
  PostgresSessionStore,
  PostgresStatsStore,
} from './dashboard.ts';
import {
  createPool,
  describeTarget,
  inTransaction,
  migratePostgres,
  type PostgresOptions,
  StorageUnavailableError,
} from './database.ts';
import { PostgresEventStore, toEvent } from './events.ts';
import {
  PostgresDestinationStore,
  PostgresForwardingSource,
  PostgresForwardingStore,
} from './forwarding.ts';
import { PostgresLifecycleStore } from './lifecycle.ts';
import { PostgresWebhookStore, writeOutbox } from './webhooks.ts';

const toAccount = (r: AccountRow) => rows.toAccount(postgresCodec, r);
const toKey = (r: KeyRow) => rows.toKey(postgresCodec, r);
const toPixel = (r: PixelRow) => rows.toPixel(postgresCodec, r);

const INSERT_KEY = `INSERT INTO api_keys (id, account_id, key_hash, prefix, last4, created_at, revoked_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7)`;
const keyParams = (k: NewApiKeyRow) => [
  k.id,
  k.accountId,
  k.hash,
  k.prefix,
  k.last4,
  k.createdAt,
  k.revokedAt,
];

class PostgresAccountStore implements AccountStore {
  constructor(private readonly pool: pg.Pool) {}

  async createAccount(a: Account, firstKey: NewApiKeyRow | null): Promise<void> {
    await inTransaction(this.pool, async (db) => {
      await db.query(
        `INSERT INTO accounts (id, name, plan, status, custom_requests_per_minute, custom_daily_limit, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          a.id,
          a.name,
          a.plan,
          a.status,
          a.customRequestsPerMinute,
          a.customDailyLimit,
          a.createdAt,
        ],
      );
      if (firstKey) await db.query(INSERT_KEY, keyParams(firstKey));
    });
  }

  async getAccount(accountId: string): Promise<Account | null> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [
      accountId,
    ]);
    return rows[0] ? toAccount(rows[0]) : null;
  }

  async countAccounts(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM accounts',
    );
    return rows[0]?.n ?? 0;
  }

  async listAccounts(): Promise<Account[]> {
    const { rows } = await this.pool.query<AccountRow>(
      // COLLATE "C": ids sort by their bytes, as on SQLite, whatever the database's locale.
      'SELECT * FROM accounts ORDER BY created_at, id COLLATE "C"',
    );
    return rows.map(toAccount);
  }

  async updateAccount(accountId: string, change: Change<Account>) {
    return inTransaction(this.pool, async (db) => {
      // FOR UPDATE: two plan changes at once apply in turn, each seeing the other's result.
      const { rows } = await db.query<AccountRow>(
        'SELECT * FROM accounts WHERE id = $1 FOR UPDATE',
        [accountId],
      );
      if (!rows[0]) return null;
      const before = toAccount(rows[0]);
      const result = change(before);
      if (!result) return { before, after: before };
      const a = result.next;
      await db.query(
        `UPDATE accounts SET name = $2, plan = $3, status = $4, custom_requests_per_minute = $5,
           custom_daily_limit = $6 WHERE id = $1`,
        [a.id, a.name, a.plan, a.status, a.customRequestsPerMinute, a.customDailyLimit],
      );
      await writeOutbox(db, result.emit);
      return { before, after: result.next };
    });
  }

  async createApiKey(key: NewApiKeyRow): Promise<void> {
    await this.pool.query(INSERT_KEY, keyParams(key));
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>(
      'SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, id',
      [accountId],
    );
    return rows.map(toKey);
  }

  async revokeApiKey(keyId: string, at: Date): Promise<ApiKeyRecord | null> {
    await this.pool.query(
      'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL',
      [at, keyId],
    );
    const { rows } = await this.pool.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [keyId]);
    return rows[0] ? toKey(rows[0]) : null;
  }

  async findByKeyHash(hash: string) {
    const { rows } = await this.pool.query<AccountRow & { key_id: string; scope: KeyScope }>(
      `SELECT a.*, k.id AS key_id, k.scope FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    const row = rows[0];
    return row ? { account: toAccount(row), keyId: row.key_id, scope: row.scope } : null;
  }
}

const pixelParams = (p: Pixel) => [
  p.id,
  p.accountId,
  p.name,
  p.domain,
  p.trackingDomain,
  p.status,
  p.createdAt,
  p.updatedAt,
];

class PostgresPixelStore implements PixelStore {
  constructor(private readonly pool: pg.Pool) {}

  async createPixel(pixel: Pixel, quota: number | null, emit: WebhookEvent[]) {
    return inTransaction(this.pool, async (db): Promise<'created' | 'quota_exceeded'> => {
      // Locking the account row serialises pixel creation per account, so the count below
      // cannot be stale by the time the insert commits: concurrent creates cannot both
      // squeeze under the quota, on any number of instances.
      await db.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [pixel.accountId]);
      if (quota !== null) {
        const { rows } = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pixels WHERE account_id = $1',
          [pixel.accountId],
        );
        if ((rows[0]?.n ?? 0) >= quota) return 'quota_exceeded';
      }
      await db.query(
        `INSERT INTO pixels (id, account_id, name, domain, tracking_domain, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        pixelParams(pixel),
      );
      await writeOutbox(db, emit);
      return 'created';
    });
  }

  async getPixel(accountId: string, pixelId: string): Promise<Pixel | null> {
    const { rows } = await this.pool.query<PixelRow>(
      'SELECT * FROM pixels WHERE account_id = $1 AND id = $2',
      [accountId, pixelId],
    );
    return rows[0] ? toPixel(rows[0]) : null;
  }

  async listPixels(accountId: string, page: Page) {
    const [list, count] = await Promise.all([
      this.pool.query<PixelRow>(
        'SELECT * FROM pixels WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3',
        [accountId, page.limit, page.offset],
      ),
      this.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pixels WHERE account_id = $1',
        [accountId],
      ),
    ]);
    return { pixels: list.rows.map(toPixel), total: count.rows[0]?.n ?? 0 };
  }

  async updatePixel(accountId: string, pixelId: string, change: Change<Pixel>) {
    return inTransaction(this.pool, async (db) => {
      const { rows } = await db.query<PixelRow>(
        'SELECT * FROM pixels WHERE account_id = $1 AND id = $2 FOR UPDATE',
        [accountId, pixelId],
      );
      if (!rows[0]) return null;
      const before = toPixel(rows[0]);
      const result = change(before);
      if (!result) return { before, after: before };
      const p = result.next;
      await db.query(
        `UPDATE pixels SET name = $3, domain = $4, tracking_domain = $5, status = $6, updated_at = $7
          WHERE id = $1 AND account_id = $2`,
        [p.id, p.accountId, p.name, p.domain, p.trackingDomain, p.status, p.updatedAt],
      );
      await writeOutbox(db, result.emit);
      return { before, after: result.next };
    });
  }
}

export class PostgresStore implements Store {
  readonly accounts: AccountStore;
  readonly pixels: PixelStore;
  readonly events: PostgresEventStore;
  readonly webhooks: PostgresWebhookStore;
  readonly keys: KeyStore;
  readonly stats: StatsStore;
  readonly feed: PostgresEventFeed;
  readonly sessions: SessionStore;
  readonly lifecycle: LifecycleStore;
  readonly destinations: PostgresDestinationStore;
  readonly forwarding: PostgresForwardingStore;
  readonly forwardable: PostgresForwardingSource;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly pool: pg.Pool,
    readonly schema: string | null,
  ) {
    this.accounts = new PostgresAccountStore(pool);
    this.pixels = new PostgresPixelStore(pool);
    // One channel per schema: deployments sharing a database do not hear each other.
    const channel = `trackway_events${schema === null ? '' : `_${schema}`}`;
    this.events = new PostgresEventStore(pool, channel);
    this.feed = new PostgresEventFeed(pool, channel);
    this.keys = new PostgresKeyStore(pool);
    this.stats = new PostgresStatsStore(pool);
    this.sessions = new PostgresSessionStore(pool);
    this.lifecycle = new PostgresLifecycleStore(pool, toEvent);
    this.webhooks = new PostgresWebhookStore(pool);
    this.destinations = new PostgresDestinationStore(pool);
    this.forwarding = new PostgresForwardingStore(pool);
    this.forwardable = new PostgresForwardingSource(pool);
  }

  /**
   * Connects and checks the server answers, so a wrong DATABASE_URL or a database that is down
   * is reported at boot, in words an operator can act on (never with the password).
   */
  static async open(options: PostgresOptions): Promise<PostgresStore> {
    const { pool, schema } = createPool(options);
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      await pool.end().catch(() => {});
      throw new StorageUnavailableError(
        `Cannot connect to PostgreSQL at ${describeTarget(options.url)}: ${(error as Error).message}. Check DATABASE_URL and that the server is running.`,
      );
    }
    return translateDriverErrors(new PostgresStore(pool, schema));
  }

  async migrate(): Promise<void> {
    await migratePostgres(this.pool, this.schema);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** Waits for queued event batches to commit, then closes the pool. Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.events.flushed();
      await this.webhooks.flushed();
      await this.feed.close();
      await this.pool.end();
    })();
    return this.closed;
  }
}
