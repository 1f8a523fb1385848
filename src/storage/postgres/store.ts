import type pg from 'pg';
import type { Account, ApiKeyRecord, Pixel, WebhookEvent } from '../../domain/model.ts';
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
import * as accounts from '../queries/accounts.ts';
import * as keys from '../queries/api-keys.ts';
import * as pixels from '../queries/pixels.ts';
import type { Sql } from '../sql/query.ts';
import {
  PostgresEventFeed,
  PostgresKeyStore,
  PostgresSessionStore,
  PostgresStatsStore,
} from './dashboard.ts';
import {
  createPool,
  describeTarget,
  migratePostgres,
  type PostgresOptions,
  StorageUnavailableError,
} from './database.ts';
import { PostgresEventStore } from './events.ts';
import { PostgresLifecycleStore } from './lifecycle.ts';
import { writeOutbox } from './outbox.ts';
import { PostgresRunner } from './runner.ts';
import { PostgresWebhookStore } from './webhooks.ts';

/** Accounts and their first keys: shared queries (queries/accounts.ts, queries/api-keys.ts). */
class PostgresAccountStore implements AccountStore {
  private readonly sql: Sql;
  constructor(private readonly runner: PostgresRunner) {
    this.sql = runner.sql;
  }

  createAccount(account: Account, firstKey: NewApiKeyRow | null): Promise<void> {
    return this.runner.transaction(() => accounts.createAccount(this.sql, account, firstKey));
  }

  getAccount(accountId: string): Promise<Account | null> {
    return this.runner.read(() => accounts.getAccount(this.sql, accountId));
  }

  countAccounts(): Promise<number> {
    return this.runner.read(() => accounts.countAccounts(this.sql));
  }

  listAccounts(): Promise<Account[]> {
    return this.runner.read(() => accounts.listAccounts(this.sql));
  }

  updateAccount(accountId: string, change: Change<Account>) {
    return this.runner.transaction(() => accounts.updateAccount(this.sql, accountId, change));
  }

  createApiKey(key: NewApiKeyRow): Promise<void> {
    return this.runner.read(() => keys.insertKey(this.sql, key));
  }

  listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return this.runner.read(() => keys.listApiKeys(this.sql, accountId));
  }

  revokeApiKey(keyId: string, at: Date): Promise<ApiKeyRecord | null> {
    return this.runner.transaction(() => keys.revokeApiKey(this.sql, keyId, at));
  }

  findByKeyHash(hash: string) {
    return this.runner.read(() => accounts.findByKeyHash(this.sql, hash));
  }
}

/** Pixels: shared queries (queries/pixels.ts). */
class PostgresPixelStore implements PixelStore {
  private readonly sql: Sql;
  constructor(private readonly runner: PostgresRunner) {
    this.sql = runner.sql;
  }

  createPixel(pixel: Pixel, quota: number | null, emit: WebhookEvent[]) {
    return this.runner.transaction(() => pixels.createPixel(this.sql, pixel, quota, emit));
  }

  getPixel(accountId: string, pixelId: string): Promise<Pixel | null> {
    return this.runner.read(() => pixels.getPixel(this.sql, accountId, pixelId));
  }

  listPixels(accountId: string, page: Page) {
    return this.runner.read(() => pixels.listPixels(this.sql, accountId, page));
  }

  updatePixel(accountId: string, pixelId: string, change: Change<Pixel>) {
    return this.runner.transaction(() => pixels.updatePixel(this.sql, accountId, pixelId, change));
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
  private closed: Promise<void> | undefined;

  private constructor(
    readonly pool: pg.Pool,
    readonly schema: string | null,
  ) {
    const runner = new PostgresRunner(pool, writeOutbox);
    this.accounts = new PostgresAccountStore(runner);
    this.pixels = new PostgresPixelStore(runner);
    // One channel per schema: deployments sharing a database do not hear each other.
    const channel = `trackway_events${schema === null ? '' : `_${schema}`}`;
    this.events = new PostgresEventStore(pool, channel);
    this.feed = new PostgresEventFeed(pool, runner, channel);
    this.keys = new PostgresKeyStore(runner);
    this.stats = new PostgresStatsStore(pool);
    this.sessions = new PostgresSessionStore(runner);
    this.lifecycle = new PostgresLifecycleStore(pool, runner);
    this.webhooks = new PostgresWebhookStore(pool, runner);
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
