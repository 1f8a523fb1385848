import type { CommitNotifier, Store } from '../domain/ports.ts';
import { announceCommits } from './announce.ts';
import { PostgresStore } from './postgres/store.ts';
import { sqlitePath } from './sqlite/database.ts';
import { SqliteStore } from './sqlite/store.ts';

export interface StoreOptions {
  /** PostgreSQL connections per process (ignored by SQLite). */
  poolSize?: number;
  /** Told of every commit that wrote webhook messages or events (announce.ts). */
  commits?: CommitNotifier;
}

/** Picks the storage adapter from `DATABASE_URL` (contract §8). */
export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  const store = await openAdapter(databaseUrl, options);
  return options.commits ? announceCommits(store, options.commits) : store;
}

async function openAdapter(databaseUrl: string, options: StoreOptions): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) return SqliteStore.open(sqlitePath(databaseUrl));
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    return PostgresStore.open({
      url: databaseUrl,
      ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
    });
  }
  throw new Error('DATABASE_URL must start with sqlite:, postgres:// or postgresql://');
}
