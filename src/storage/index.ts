import type { DatabaseTarget, IngestChoice } from '../config.ts';
import type { CommitNotifier } from '../domain/ports/commit-notifier.ts';
import type { Store } from '../domain/ports/store.ts';
import { PostgresStore } from './postgres/store.ts';
import { SqliteStore } from './sqlite/store.ts';

export interface StoreOptions {
  /** PostgreSQL connections per process (ignored by SQLite). */
  poolSize?: number;
  /** PostgreSQL's ingest path (postgres/ingest-path.ts; ignored by SQLite). */
  ingest?: IngestChoice;
  /**
   * Told of every commit that wrote webhook messages, queued forwarding work or stored events:
   * by the store's runner, after the COMMIT (sql/committed.ts).
   */
  commits?: CommitNotifier;
}

/** Picks the storage adapter for `DATABASE_URL`, parsed once by config.ts (contract §8). */
export async function openStore(
  database: DatabaseTarget,
  options: StoreOptions = {},
): Promise<Store> {
  const commits = options.commits === undefined ? {} : { commits: options.commits };
  if (database.kind === 'sqlite') return SqliteStore.open(database.path, commits);
  return PostgresStore.open({
    url: database.url,
    ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
    ...(options.ingest !== undefined && { ingest: options.ingest }),
    ...commits,
  });
}
