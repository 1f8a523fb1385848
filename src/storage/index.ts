import type { Store } from '../domain/ports.ts';
import { PostgresStore } from './postgres/store.ts';
import { sqlitePath } from './sqlite/database.ts';
import { SqliteStore } from './sqlite/store.ts';

export interface StoreOptions {
  /** PostgreSQL connections per process (ignored by SQLite). */
  poolSize?: number;
}

/** Picks the storage adapter from `DATABASE_URL` (contract §8). */
export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) return SqliteStore.open(sqlitePath(databaseUrl));
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    return PostgresStore.open({
      url: databaseUrl,
      ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
    });
  }
  throw new Error('DATABASE_URL must start with sqlite:, postgres:// or postgresql://');
}
