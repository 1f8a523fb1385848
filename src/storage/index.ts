import type { DatabaseTarget } from '../config.ts';
import type { CommitNotifier, Store } from '../domain/ports.ts';
import { announceCommits } from './announce.ts';
import { PostgresStore } from './postgres/store.ts';
import { SqliteStore } from './sqlite/store.ts';

export interface StoreOptions {
  /** PostgreSQL connections per process (ignored by SQLite). */
  poolSize?: number;
  /** Told of every commit that wrote webhook messages or events (announce.ts). */
  commits?: CommitNotifier;
}

/** Picks the storage adapter for `DATABASE_URL`, parsed once by config.ts (contract §8). */
export async function openStore(
  database: DatabaseTarget,
  options: StoreOptions = {},
): Promise<Store> {
  const store = await openAdapter(database, options);
  return options.commits ? announceCommits(store, options.commits) : store;
}

async function openAdapter(database: DatabaseTarget, options: StoreOptions): Promise<Store> {
  if (database.kind === 'sqlite') return SqliteStore.open(database.path);
  return PostgresStore.open({
    url: database.url,
    ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
  });
}
