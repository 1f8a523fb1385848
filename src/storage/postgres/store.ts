import type pg from 'pg';
import type {
  AccountStore,
  CommitNotifier,
  DestinationStore,
  EventFeed,
  ForwardingStore,
  KeyStore,
  LifecycleStore,
  MatchKeyStore,
  PixelStore,
  SessionStore,
  StatsStore,
  Store,
  WebhookStore,
} from '../../domain/ports.ts';
import {
  accountStore,
  destinationStore,
  eventFeed,
  forwardingStore,
  keyStore,
  lifecycleStore,
  matchKeyStore,
  pixelStore,
  sessionStore,
  statsStore,
  webhookStore,
} from '../sql/ports.ts';
import { PostgresEventBus, PostgresStatsStore } from './dashboard.ts';
import {
  createPool,
  describeTarget,
  migratePostgres,
  type PostgresOptions,
  StorageUnavailableError,
} from './database.ts';
import { requireDurableNodes } from './durable-nodes.ts';
import { PostgresEventStore } from './events.ts';
import { PostgresForwardingQueue } from './forwarding.ts';
import { PostgresEventDeletes } from './lifecycle.ts';
import { writeOutbox } from './outbox.ts';
import { PostgresRunner } from './runner.ts';
import { PostgresDeliveryQueue } from './webhooks.ts';

export class PostgresStore implements Store {
  readonly accounts: AccountStore;
  readonly pixels: PixelStore;
  readonly events: PostgresEventStore;
  readonly webhooks: WebhookStore;
  readonly keys: KeyStore;
  readonly stats: StatsStore;
  readonly feed: EventFeed;
  private readonly bus: PostgresEventBus;
  private readonly queue: PostgresDeliveryQueue;
  readonly sessions: SessionStore;
  readonly lifecycle: LifecycleStore;
  readonly matchKeys: MatchKeyStore;
  readonly destinations: DestinationStore;
  readonly forwarding: ForwardingStore;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly pool: pg.Pool,
    readonly schema: string | null,
    commits: CommitNotifier | undefined,
  ) {
    // The one runner: what each write commits is announced to `commits` after its COMMIT.
    const runner = new PostgresRunner(pool, writeOutbox, commits);
    this.accounts = accountStore(runner);
    this.pixels = pixelStore(runner);
    // One channel per schema: deployments sharing a database do not hear each other.
    const channel = `trackway_events${schema === null ? '' : `_${schema}`}`;
    this.events = new PostgresEventStore(pool, channel, runner);
    this.bus = new PostgresEventBus(pool, channel);
    this.feed = eventFeed(runner, this.bus);
    this.keys = keyStore(runner);
    this.stats = statsStore(runner, new PostgresStatsStore(pool));
    this.sessions = sessionStore(runner);
    this.lifecycle = lifecycleStore(runner, new PostgresEventDeletes(pool));
    this.matchKeys = matchKeyStore(runner);
    this.queue = new PostgresDeliveryQueue(pool);
    this.webhooks = webhookStore(runner, this.queue);
    this.destinations = destinationStore(runner);
    this.forwarding = forwardingStore(runner, new PostgresForwardingQueue(pool));
  }

  /**
   * Connects and checks the server answers, so a wrong DATABASE_URL or a database that is down
   * is reported at boot, in words an operator can act on (never with the password).
   */
  static async open(
    options: PostgresOptions & { commits?: CommitNotifier },
  ): Promise<PostgresStore> {
    const { pool, schema } = createPool(options);
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      await pool.end().catch(() => {});
      throw new StorageUnavailableError(
        `Cannot connect to PostgreSQL at ${describeTarget(options.url)}: ${(error as Error).message}. Check DATABASE_URL and that the server is running.`,
      );
    }
    try {
      await requireDurableNodes(pool);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return new PostgresStore(pool, schema, options.commits);
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
      await this.queue.flushed();
      await this.feed.close();
      await this.pool.end();
    })();
    return this.closed;
  }
}
