import type { Store } from '../domain/ports.ts';
import { sqlitePath } from './sqlite/database.ts';
import { SqliteStore } from './sqlite/store.ts';

/** Picks the storage adapter from `DATABASE_URL` (contract §8). */
export async function openStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) return SqliteStore.open(sqlitePath(databaseUrl));
  throw new Error(`PostgreSQL storage is not available yet (DATABASE_URL=${databaseUrl})`);
}
