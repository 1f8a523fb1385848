import type pg from 'pg';
import type { IngestChoice } from '../../config.ts';
import type { CommitNotifier } from '../../domain/ports/commit-notifier.ts';
import type { Store, StorePorts } from '../../domain/ports/store.ts';
import { storePorts } from '../sql/ports/index.ts';
import {
  createPool,
  describeTarget,
  migratePostgres,
  type PostgresOptions,
  StorageUnavailableError,
} from './database.ts';
import { requireDurableNodes } from './durable-nodes.ts';
import { PostgresEventStore } from './events.ts';
import { PostgresEventBus } from './feed.ts';
import { PostgresForwardingQueue } from './forwarding.ts';
import { chooseIngestPath, type IngestPath, isSharded } from './ingest-path.ts';
import { PostgresEventDeletes } from './lifecycle.ts';
import { writeOutbox } from './outbox.ts';
import { PostgresRunner } from './runner.ts';
import { PostgresStatsStore } from './stats.ts';
import { PostgresDeliveryQueue } from './webhooks.ts';

/** Its ports, assigned whole by the constructor (sql/ports/index.ts storePorts). */
export interface PostgresStore extends Omit<StorePorts, 'events'> {}

/**
 * The store on PostgreSQL: the shared ports (sql/ports/index.ts storePorts) around its own parts.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every port at once from storePorts, whose result the compiler holds to StorePorts.
export class PostgresStore implements Store {
  readonly events: PostgresEventStore;
  private readonly queue: PostgresDeliveryQueue;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly pool: pg.Pool,
    readonly schema: string | null,
    commits: CommitNotifier | undefined,
    ingest: IngestPath,
    readonly sharded: boolean,
  ) {
    // The one runner: what each write commits is announced to `commits` after its COMMIT.
    const runner = new PostgresRunner(pool, writeOutbox, commits);
    // One channel per schema: deployments sharing a database do not hear each other.
    const channel = `trackway_events${schema === null ? '' : `_${schema}`}`;
    this.events = new PostgresEventStore(pool, channel, runner, ingest);
    this.queue = new PostgresDeliveryQueue(pool);
    Object.assign(
      this,
      storePorts(runner, {
        events: this.events,
        stats: new PostgresStatsStore(pool),
        feed: new PostgresEventBus(pool, channel),
        deliveries: this.queue,
        deletes: new PostgresEventDeletes(pool),
        forwarding: new PostgresForwardingQueue(pool, sharded),
      }),
    );
  }

  /**
   * Connects and checks the server answers, so a wrong DATABASE_URL or a database that is down
   * is reported at boot, in words an operator can act on (never with the password).
   */
  static async open(
    options: PostgresOptions & {
      commits?: CommitNotifier;
      /** How events are written (ingest-path.ts); `auto` by default. */
      ingest?: IngestChoice;
    },
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
    let ingest: IngestPath;
    let sharded: boolean;
    try {
      await requireDurableNodes(pool);
      sharded = await isSharded(pool);
      ingest = chooseIngestPath(sharded, options.ingest ?? 'auto');
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return new PostgresStore(pool, schema, options.commits, ingest, sharded);
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
