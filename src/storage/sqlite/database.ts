import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../../config.ts';
import { pendingMigrations } from '../migration-files.ts';
import { prepareSqlitePath } from './writable.ts';

export type SqliteDatabase = Database.Database;

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** `sqlite:./data/trackway.db` → `./data/trackway.db`; `sqlite::memory:` → `:memory:`. */
export function sqlitePath(databaseUrl: string): string {
  return databaseUrl.replace(/^sqlite:/, '');
}

export function openSqlite(path: string): SqliteDatabase {
  if (path !== ':memory:') prepareSqlitePath(path);
  let db: SqliteDatabase;
  try {
    db = new Database(path);
  } catch (error) {
    // SQLite's own words ("unable to open database file") name no file.
    throw new ConfigError(`SQLite database ${resolve(path)}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  // WAL lets readers run beside the writer. synchronous=FULL makes every commit survive power
  // loss, not just a process crash: a 200 from /v1/track means the event is on disk.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  // The CLI may write while the server runs; wait for the lock instead of failing.
  db.pragma('busy_timeout = 5000');
  return db;
}

/**
 * Runs `transaction` (which commits) at synchronous=NORMAL: in WAL mode its frames reach the
 * WAL file but are not flushed, so the event loop does not wait for the disk. The caller either
 * flushes the WAL itself (wal-sync.ts) or accepts losing the write in a crash (the webhook
 * claim). The connection is back at FULL afterwards, a transaction that throws included.
 *
 * A fresh PRAGMA each time, not a statement kept: SQLite applies PRAGMA synchronous when the
 * statement is prepared, and a kept one re-prepares only from its second run on, so the first
 * commit would still have flushed inside itself (caught by test/durability.process.test.ts).
 */
export function commitWithoutFlush<R>(db: SqliteDatabase, transaction: () => R): R {
  db.pragma('synchronous = NORMAL');
  try {
    return transaction();
  } finally {
    db.pragma('synchronous = FULL');
  }
}

/** Applies every numbered migration not yet applied, each in its own transaction. */
export function migrateSqlite(db: SqliteDatabase): string[] {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const applied = new Set(
    db.prepare('SELECT version FROM schema_migrations').pluck().all() as string[],
  );
  const ran: string[] = [];
  for (const { version, sql } of pendingMigrations(MIGRATIONS_DIR, applied)) {
    // IMMEDIATE takes the write lock first, so two processes starting at once cannot both
    // apply the same migration.
    db.transaction(() => {
      const again = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(version);
      if (again) return;
      db.exec(sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
        version,
        Date.now(),
      );
      ran.push(version);
    }).immediate();
  }
  return ran;
}
