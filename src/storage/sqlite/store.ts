import type { WebhookEvent } from '../../domain/model.ts';
import type { CommitNotifier } from '../../domain/ports/commit-notifier.ts';
import type { Store, StorePorts } from '../../domain/ports/store.ts';
import { storePorts } from '../sql/ports/index.ts';
import { migrateSqlite, openSqlite, type SqliteDatabase } from './database.ts';
import { SqliteEventStore } from './events.ts';
import { SqliteEventBus } from './feed.ts';
import { forwardJobWriter, SqliteForwardingQueue } from './forwarding.ts';
import { SqliteEventDeletes } from './lifecycle.ts';
import { outboxWriter } from './outbox.ts';
import { SqliteRunner } from './runner.ts';
import { SqliteStatsStore } from './stats.ts';
import { durableCommit, type Flush, WalSync } from './wal-sync.ts';
import { SqliteDeliveryQueue } from './webhooks.ts';

/** Its ports, assigned whole by the constructor (sql/ports/index.ts storePorts). */
export interface SqliteStore extends Omit<StorePorts, 'events'> {}

/** The store on SQLite: the shared ports (sql/ports/index.ts storePorts) around its own parts. */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every port at once from storePorts, whose result the compiler holds to StorePorts.
export class SqliteStore implements Store {
  readonly events: SqliteEventStore;
  /** One file: never sharded. */
  readonly sharded = false;
  private readonly queue: SqliteDeliveryQueue;

  private constructor(
    readonly db: SqliteDatabase,
    private readonly wal: WalSync | null,
    commits: CommitNotifier | undefined,
  ) {
    const outbox = outboxWriter(db);
    const write = (events: WebhookEvent[], targets?: Map<string, string[]>) =>
      outbox.write(events, targets);
    const durable = durableCommit(wal);
    // One runner, so each statement is prepared once for the whole store; what each write
    // commits is announced to `commits` after its COMMIT.
    const runner = new SqliteRunner(db, write, commits);
    const bus = new SqliteEventBus();
    this.events = new SqliteEventStore(
      db,
      write,
      durable,
      bus.announce,
      forwardJobWriter(db),
      runner,
    );
    this.queue = new SqliteDeliveryQueue(db, runner, outbox, durable);
    Object.assign(
      this,
      storePorts(runner, {
        events: this.events,
        stats: new SqliteStatsStore(db),
        feed: bus,
        deliveries: this.queue,
        deletes: new SqliteEventDeletes(db, durable),
        forwarding: new SqliteForwardingQueue(db, outbox, durable),
      }),
    );
  }

  /**
   * Opens the file and applies migrations first: statements are prepared against the schema.
   * `flush` replaces fdatasync for the WAL (fault tests only).
   */
  static open(
    path: string,
    options: { flush?: Flush; commits?: CommitNotifier } = {},
  ): SqliteStore {
    const db = openSqlite(path);
    migrateSqlite(db);
    return new SqliteStore(db, WalSync.open(db, path, options.flush), options.commits);
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
    await this.queue.flushed();
    await this.feed.close();
    await this.wal?.stopCheckpoints();
    if (this.db.open) {
      this.db.close();
      this.wal?.close();
    }
  }
}
