import type {
  Account,
  ApiKeyRecord,
  KeyScope,
  Pixel,
  TrackedEvent,
  WebhookEvent,
} from '../../domain/model.ts';
import type {
  AccountStore,
  Change,
  EventQuery,
  EventStore,
  InsertOutcome,
  KeyStore,
  LifecycleStore,
  NewApiKeyRow,
  NewEvent,
  Page,
  PixelStore,
  SessionStore,
  StatsStore,
  Store,
} from '../../domain/ports.ts';
import { translateDriverErrors } from '../driver-errors.ts';
import { dayOf, hourOf, planTotal, totalSql } from '../event-totals.ts';
import { GroupCommit } from '../group-commit.ts';
import { getEvent } from '../queries/events.ts';
import * as rows from '../rows.ts';
import {
  type AccountRow,
  type EventRow,
  type KeyRow,
  type PixelRow,
  sqliteCodec,
} from '../rows.ts';
import {
  SqliteEventFeed,
  SqliteKeyStore,
  SqliteSessionStore,
  SqliteStatsStore,
} from './dashboard.ts';
import { migrateSqlite, openSqlite, type SqliteDatabase } from './database.ts';
import {
  forwardJobWriter,
  SqliteDestinationStore,
  SqliteForwardingSource,
  SqliteForwardingStore,
} from './forwarding.ts';
import { SqliteLifecycleStore } from './lifecycle.ts';
import { SqliteRunner } from './runner.ts';
import { type DurableCommit, durableCommit, type Flush, WalSync } from './wal-sync.ts';
import { outboxWriter, SqliteWebhookStore } from './webhooks.ts';

const toAccount = (r: AccountRow) => rows.toAccount(sqliteCodec, r);
const toKey = (r: KeyRow) => rows.toKey(sqliteCodec, r);
const toPixel = (r: PixelRow) => rows.toPixel(sqliteCodec, r);
export const toEvent = (r: EventRow) => rows.toEvent(sqliteCodec, r);
export type { EventRow };

const json = (value: unknown): string | null => (value === null ? null : JSON.stringify(value));

class SqliteAccountStore implements AccountStore {
  private readonly insertAccount;
  private readonly insertKey;
  private readonly selectAccount;
  private readonly updateAccountRow;
  private readonly selectKeys;
  private readonly selectKey;
  private readonly revokeKey;
  private readonly selectByHash;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly outbox: (events: WebhookEvent[]) => void,
  ) {
    this.insertAccount = db.prepare(
      `INSERT INTO accounts (id, name, plan, status, custom_requests_per_minute, custom_daily_limit, created_at)
       VALUES (@id, @name, @plan, @status, @customRequestsPerMinute, @customDailyLimit, @createdAt)`,
    );
    this.insertKey = db.prepare(
      `INSERT INTO api_keys (id, account_id, key_hash, prefix, last4, created_at, revoked_at)
       VALUES (@id, @accountId, @hash, @prefix, @last4, @createdAt, @revokedAt)`,
    );
    this.selectAccount = db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?');
    this.updateAccountRow = db.prepare(
      `UPDATE accounts SET name = @name, plan = @plan, status = @status,
         custom_requests_per_minute = @customRequestsPerMinute, custom_daily_limit = @customDailyLimit
       WHERE id = @id`,
    );
    this.selectKeys = db.prepare<[string], KeyRow>(
      'SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id',
    );
    this.selectKey = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
    this.revokeKey = db.prepare(
      'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
    );
    this.selectByHash = db.prepare<[string], AccountRow & { key_id: string; scope: KeyScope }>(
      `SELECT a.*, k.id AS key_id, k.scope FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
    );
  }

  private accountParams(a: Account) {
    return { ...a, createdAt: a.createdAt.getTime() };
  }

  private keyParams(k: NewApiKeyRow) {
    return { ...k, createdAt: k.createdAt.getTime(), revokedAt: k.revokedAt?.getTime() ?? null };
  }

  async createAccount(account: Account, firstKey: NewApiKeyRow | null): Promise<void> {
    this.db.transaction(() => {
      this.insertAccount.run(this.accountParams(account));
      if (firstKey) this.insertKey.run(this.keyParams(firstKey));
    })();
  }

  async getAccount(accountId: string): Promise<Account | null> {
    const row = this.selectAccount.get(accountId);
    return row ? toAccount(row) : null;
  }

  async countAccounts(): Promise<number> {
    return this.db.prepare('SELECT count(*) FROM accounts').pluck().get() as number;
  }

  async listAccounts(): Promise<Account[]> {
    return this.db
      .prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY created_at, id')
      .all()
      .map(toAccount);
  }

  async updateAccount(accountId: string, change: Change<Account>) {
    return this.db
      .transaction(() => {
        const row = this.selectAccount.get(accountId);
        if (!row) return null;
        const before = toAccount(row);
        const result = change(before);
        if (!result) return { before, after: before };
        this.updateAccountRow.run(this.accountParams(result.next));
        this.outbox(result.emit);
        return { before, after: result.next };
      })
      .immediate();
  }

  async createApiKey(key: NewApiKeyRow): Promise<void> {
    this.insertKey.run(this.keyParams(key));
  }

  async listApiKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return this.selectKeys.all(accountId).map(toKey);
  }

  async revokeApiKey(keyId: string, at: Date): Promise<ApiKeyRecord | null> {
    this.revokeKey.run(at.getTime(), keyId);
    const row = this.selectKey.get(keyId);
    return row ? toKey(row) : null;
  }

  async findByKeyHash(hash: string) {
    const row = this.selectByHash.get(hash);
    return row ? { account: toAccount(row), keyId: row.key_id, scope: row.scope } : null;
  }
}

class SqlitePixelStore implements PixelStore {
  private readonly insert;
  private readonly count;
  private readonly select;
  private readonly page;
  private readonly update;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly outbox: (events: WebhookEvent[]) => void,
  ) {
    this.insert = db.prepare(
      `INSERT INTO pixels (id, account_id, name, domain, tracking_domain, status, created_at, updated_at)
       VALUES (@id, @accountId, @name, @domain, @trackingDomain, @status, @createdAt, @updatedAt)`,
    );
    this.count = db.prepare('SELECT count(*) FROM pixels WHERE account_id = ?').pluck();
    this.select = db.prepare<[string, string], PixelRow>(
      'SELECT * FROM pixels WHERE account_id = ? AND id = ?',
    );
    this.page = db.prepare<[string, number, number], PixelRow>(
      'SELECT * FROM pixels WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?',
    );
    this.update = db.prepare(
      `UPDATE pixels SET name = @name, domain = @domain, tracking_domain = @trackingDomain,
         status = @status, updated_at = @updatedAt WHERE account_id = @accountId AND id = @id`,
    );
  }

  private params(p: Pixel) {
    return { ...p, createdAt: p.createdAt.getTime(), updatedAt: p.updatedAt.getTime() };
  }

  async createPixel(pixel: Pixel, quota: number | null, emit: WebhookEvent[]) {
    // IMMEDIATE: the count and the insert happen under the write lock, so concurrent creates
    // cannot both squeeze under the quota.
    return this.db
      .transaction((): 'created' | 'quota_exceeded' => {
        if (quota !== null && (this.count.get(pixel.accountId) as number) >= quota) {
          return 'quota_exceeded';
        }
        this.insert.run(this.params(pixel));
        this.outbox(emit);
        return 'created';
      })
      .immediate();
  }

  async getPixel(accountId: string, pixelId: string): Promise<Pixel | null> {
    const row = this.select.get(accountId, pixelId);
    return row ? toPixel(row) : null;
  }

  async listPixels(accountId: string, page: Page) {
    const pixels = this.page.all(accountId, page.limit, page.offset).map(toPixel);
    const total = this.count.get(accountId) as number;
    return { pixels, total };
  }

  async updatePixel(accountId: string, pixelId: string, change: Change<Pixel>) {
    return this.db
      .transaction(() => {
        const row = this.select.get(accountId, pixelId);
        if (!row) return null;
        const before = toPixel(row);
        const result = change(before);
        if (!result) return { before, after: before };
        this.update.run(this.params(result.next));
        this.outbox(result.emit);
        return { before, after: result.next };
      })
      .immediate();
  }
}

/**
 * Most events one transaction gathers from concurrent calls. It bounds how long the write lock
 * is held and how long the last caller of a batch waits; a batch request larger than this is
 * still committed whole.
 */
const MAX_BATCH = 512;

/** New events of one (pixel, event name, hour) in a batch; the day follows from the hour. */
interface BucketCount {
  pixelId: string;
  accountId: string;
  eventName: string;
  day: number;
  hour: number;
  n: number;
  valueSum: number;
}

/** The new events of a committed batch, by arrival number: what the live tail hears. */
export type OnEventsCommitted = (inserted: { pixelId: string; seq: number }[]) => void;

/**
 * Inserts go through group commit (../group-commit.ts): better-sqlite3 is synchronous and
 * synchronous=FULL fsyncs every commit, so the win is one fsync per batch instead of one per
 * event. Each caller is answered after the transaction holding its event has committed.
 */
class SqliteEventStore implements EventStore {
  private readonly insert;
  private readonly countAll;
  private readonly countDay;
  private readonly countHour;
  private readonly batches: GroupCommit<NewEvent, InsertOutcome>;
  private readonly runner: SqliteRunner;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly outbox: (events: WebhookEvent[], targets?: Map<string, string[]>) => void,
    durable: DurableCommit,
    onCommitted: OnEventsCommitted,
    private readonly forwardJobs: ReturnType<typeof forwardJobWriter>,
  ) {
    this.runner = new SqliteRunner(db);
    // ON CONFLICT DO NOTHING makes dedup exact under any concurrency: the unique index decides.
    this.insert = db.prepare(
      `INSERT INTO events (account_id, pixel_id, event_id, event_name, value, currency, timestamp,
         received_at, url, referrer, title, search_string, user_data, custom_data)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (pixel_id, event_id) DO NOTHING`,
    );
    this.countAll = db.prepare(
      `INSERT INTO event_totals (pixel_id, account_id, event_name, n)
       VALUES (@pixelId, @accountId, @eventName, @n)
       ON CONFLICT (pixel_id, account_id, event_name) DO UPDATE SET n = n + excluded.n`,
    );
    this.countDay = db.prepare(
      `INSERT INTO event_counts_daily (pixel_id, account_id, event_name, day, n, value_sum)
       VALUES (@pixelId, @accountId, @eventName, @day, @n, @valueSum)
       ON CONFLICT (pixel_id, account_id, event_name, day)
         DO UPDATE SET n = n + excluded.n, value_sum = value_sum + excluded.value_sum`,
    );
    this.countHour = db.prepare(
      `INSERT INTO event_counts (pixel_id, account_id, event_name, hour, n, value_sum)
       VALUES (@pixelId, @accountId, @eventName, @hour, @n, @valueSum)
       ON CONFLICT (pixel_id, account_id, event_name, hour)
         DO UPDATE SET n = n + excluded.n, value_sum = value_sum + excluded.value_sum`,
    );
    // Rows go in in list order, so within one batch the first of equal event ids wins.
    // IMMEDIATE takes the write lock up front, so busy_timeout covers a concurrent CLI writer.
    const insertAll = db.transaction((items: NewEvent[]) => {
      const counts = new Map<string, BucketCount>();
      const targets = new Map<string, string[]>();
      const destinations = new Map();
      const inserted: { pixelId: string; seq: number }[] = [];
      const outcomes = items.map(({ event, emit }) =>
        this.insertOne(event, emit, counts, targets, inserted, destinations),
      );
      // Same transaction as the rows, so the counts can never disagree with the table; added
      // once per (pixel, name, hour) of the batch rather than once per event.
      for (const c of counts.values()) {
        this.countAll.run(c);
        this.countDay.run(c);
        this.countHour.run(c);
      }
      return { outcomes, inserted };
    });
    // Answered once the batch's frames are on disk, flushed off the event loop (wal-sync.ts);
    // the live tail hears of the new events only then, so it never shows an unflushed event.
    this.batches = new GroupCommit(async (items) => {
      const { outcomes, inserted } = await durable(() => insertAll.immediate(items));
      if (inserted.length > 0) onCommitted(inserted);
      return outcomes;
    }, MAX_BATCH);
  }

  /** One row and, when it is new, its outbox messages; runs inside the batch's transaction. */
  private insertOne(
    event: TrackedEvent,
    emit: WebhookEvent[],
    counts: Map<string, BucketCount>,
    targets: Map<string, string[]>,
    inserted: { pixelId: string; seq: number }[],
    destinations: Parameters<ReturnType<typeof forwardJobWriter>>[1],
  ): InsertOutcome {
    // Positional parameters: binding by name from a spread object cost ~2 µs more per event.
    const { changes, lastInsertRowid } = this.insert.run(
      event.accountId,
      event.pixelId,
      event.eventId,
      event.eventName,
      event.value,
      event.currency,
      event.timestamp.getTime(),
      event.receivedAt.getTime(),
      event.url,
      event.referrer,
      event.title,
      event.searchString,
      json(event.userData),
      json(event.customData),
    );
    if (changes === 0) return 'duplicate';
    const ms = event.timestamp.getTime();
    const hour = hourOf(ms);
    const key = `${event.pixelId}\u0000${event.accountId}\u0000${event.eventName}\u0000${hour}`;
    const bucket = counts.get(key);
    const value = event.value ?? 0;
    if (bucket) {
      bucket.n += 1;
      bucket.valueSum += value;
    } else {
      const { pixelId, accountId, eventName } = event;
      counts.set(key, {
        pixelId,
        accountId,
        eventName,
        day: dayOf(ms),
        hour,
        n: 1,
        valueSum: value,
      });
    }
    inserted.push({ pixelId: event.pixelId, seq: Number(lastInsertRowid) });
    this.outbox(emit, targets);
    // The forwarding jobs commit with the event (contract §12: nothing is lost).
    this.forwardJobs(event, destinations);
    return 'inserted';
  }

  insertEvent(event: TrackedEvent, emit: WebhookEvent[]): Promise<InsertOutcome> {
    return this.batches.one({ event, emit });
  }

  insertEvents(events: NewEvent[]): Promise<PromiseSettledResult<InsertOutcome>[]> {
    return this.batches.submit(events);
  }

  /** Resolves once no batch is queued or in flight (used by close()). */
  flushed(): Promise<void> {
    return this.batches.flushed();
  }

  getEvent(accountId: string, pixelId: string, eventId: string): Promise<TrackedEvent | null> {
    return this.runner.read(() => getEvent(this.runner.sql, accountId, pixelId, eventId));
  }

  async listEvents(query: EventQuery) {
    const scope = ['account_id = @accountId', 'pixel_id = @pixelId'];
    if (query.eventName !== undefined) scope.push('event_name = @eventName');
    const where = [...scope];
    if (query.from) where.push('timestamp >= @from');
    if (query.to) where.push('timestamp <= @to');
    const params: Record<string, unknown> = {
      accountId: query.accountId,
      pixelId: query.pixelId,
      ...(query.eventName !== undefined && { eventName: query.eventName }),
    };
    const rows = this.db
      .prepare(
        `SELECT * FROM events WHERE ${where.join(' AND ')}
          ORDER BY timestamp DESC, seq DESC LIMIT @limit OFFSET @offset`,
      )
      .all({
        ...params,
        ...(query.from && { from: query.from.getTime() }),
        ...(query.to && { to: query.to.getTime() }),
        limit: query.limit,
        offset: query.offset,
      }) as EventRow[];
    // One statement: buckets from the count tables, the partial edge hours from the index.
    const bind: Record<string, unknown> = { ...params };
    const sql = totalSql(
      planTotal(query.from, query.to),
      scope.join(' AND '),
      (value) => {
        const name = `p${Object.keys(bind).length}`;
        bind[name] = value;
        return `@${name}`;
      },
      (ms) => ms,
    );
    const total = sql === null ? 0 : (this.db.prepare(`SELECT ${sql}`).pluck().get(bind) as number);
    return { events: rows.map(toEvent), total };
  }
}

export class SqliteStore implements Store {
  readonly accounts: AccountStore;
  readonly pixels: PixelStore;
  readonly events: SqliteEventStore;
  readonly webhooks: SqliteWebhookStore;
  readonly keys: KeyStore;
  readonly stats: StatsStore;
  readonly feed: SqliteEventFeed;
  readonly sessions: SessionStore;
  readonly lifecycle: LifecycleStore;
  readonly destinations: SqliteDestinationStore;
  readonly forwarding: SqliteForwardingStore;
  readonly forwardable: SqliteForwardingSource;

  private constructor(
    readonly db: SqliteDatabase,
    private readonly wal: WalSync | null,
  ) {
    const outbox = outboxWriter(db);
    const write = (events: WebhookEvent[], targets?: Map<string, string[]>) =>
      outbox.write(events, targets);
    const durable = durableCommit(wal);
    this.accounts = new SqliteAccountStore(db, write);
    this.pixels = new SqlitePixelStore(db, write);
    this.feed = new SqliteEventFeed(db, toEvent);
    this.events = new SqliteEventStore(
      db,
      write,
      durable,
      this.feed.announce,
      forwardJobWriter(db),
    );
    this.destinations = new SqliteDestinationStore(db);
    this.forwarding = new SqliteForwardingStore(db, outbox, durable);
    this.forwardable = new SqliteForwardingSource(db);
    this.keys = new SqliteKeyStore(db);
    this.stats = new SqliteStatsStore(db);
    this.sessions = new SqliteSessionStore(db);
    this.lifecycle = new SqliteLifecycleStore(db, durable, toEvent);
    this.webhooks = new SqliteWebhookStore(db, outbox, durable);
  }

  /**
   * Opens the file and applies migrations first: statements are prepared against the schema.
   * `flush` replaces fdatasync for the WAL (fault tests only).
   */
  static open(path: string, options: { flush?: Flush } = {}): SqliteStore {
    const db = openSqlite(path);
    migrateSqlite(db);
    return translateDriverErrors(new SqliteStore(db, WalSync.open(db, path, options.flush)));
  }

  async migrate(): Promise<void> {
    migrateSqlite(this.db);
  }

  async ping(): Promise<void> {
    this.wal?.assertHealthy();
    this.db.prepare('SELECT 1').get();
  }

  /** Commits what is queued (those callers are still answered), then closes the file. */
  async close(): Promise<void> {
    await this.events.flushed();
    await this.webhooks.flushed();
    await this.feed.close();
    if (this.db.open) {
      this.db.close();
      this.wal?.close();
    }
  }
}
