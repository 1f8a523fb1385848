import type { DatabaseTarget } from '../config.ts';
import type { Store } from '../domain/ports.ts';
import { PostgresStore } from './postgres/store.ts';
import { SqliteStore } from './sqlite/store.ts';

export interface StoreOptions {
  /** PostgreSQL connections per process (ignored by SQLite). */
  poolSize?: number;
}

/** Picks the storage adapter for `DATABASE_URL`, parsed once by config.ts (contract §8). */
export async function openStore(
  database: DatabaseTarget,
  options: StoreOptions = {},
): Promise<Store> {
  if (database.kind === 'sqlite') return SqliteStore.open(database.path);
  return PostgresStore.open({
    url: database.url,
    ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
  });
}
