/**
 * Durable commits without blocking the event loop. better-sqlite3 is synchronous, so with
 * synchronous=FULL every commit's fsync stops the whole process: no request is read, parsed or
 * answered while the disk flushes. On this VM a flush usually takes under a millisecond but
 * now and then tens, and every connection waits through each of them (wrk's p99 at 100
 * connections: 80–110 ms against 14–16 ms with the flush moved off the loop, in the same
 * bare-server experiment).
 *
 * So the hot write paths (event batches, webhook attempt records) commit with
 * synchronous=NORMAL, which in WAL mode writes the transaction's frames to the WAL file but
 * does not flush it, and then flush the WAL themselves with fdatasync on libuv's thread pool.
 * Callers are answered only once a flush that *started after their commit returned* has
 * succeeded: the frames are then on disk, exactly what synchronous=FULL would have made sure
 * of before the commit returned. While one flush runs, the loop keeps parsing requests and
 * committing the next batches; they share the next flush (group commit for the fsync too).
 *
 * Why this is as durable as FULL (sqlite.org/pragma.html#pragma_synchronous, wal.html): in WAL
 * mode, NORMAL differs from FULL only in not syncing the WAL after each commit; SQLite itself
 * still syncs the WAL before every checkpoint, the database after it, and the WAL header when
 * the file is reused, so the file stays consistent on its own. What a flush of ours adds is
 * that every frame written before it began is on disk. The one other thing FULL does, syncing
 * the directory once after creating the WAL file, is done here when the file is opened.
 *
 * The flushes go to the WAL file opened once here. SQLite deletes that file only when the last
 * connection to the database closes (after checkpointing all of it into the database file and
 * syncing that); the store's connection stays open until after its last flush, so the file
 * flushed is always the one SQLite writes (a CLI process closing its own connection leaves it).
 *
 * Other writes (pixels, accounts, keys, webhook endpoints, the CLI) are rare and stay at
 * synchronous=FULL, flushed inside their commit as before.
 *
 * A failed flush is not retried: after fdatasync fails, Linux may have dropped the dirty pages
 * it could not write, so a later flush could succeed without them (the "fsyncgate" lesson that
 * made PostgreSQL panic instead). The waiting callers get 503 (nothing was acknowledged), and
 * every later durable write is refused with 503 until the process restarts and SQLite recovers
 * from what is really on disk; the readiness check reports the store down meanwhile.
 */
import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { TrackwayError } from '../../domain/errors.ts';
import { Checkpoints } from './checkpoints.ts';
import { commitWithoutFlush, type SqliteDatabase } from './database.ts';

export type Flush = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

const storageFailed = (cause: unknown) =>
  new TrackwayError(
    'service_unavailable',
    'Storage could not write to disk, so this request was not acknowledged. The service needs a restart; retrying then is safe (event ids deduplicate).',
    undefined,
    { cause },
  );

export class WalSync {
  private readonly fd: number;
  /** The flush in progress, if any. */
  private running: Promise<void> | null = null;
  /** The flush queued behind it, which every commit made meanwhile waits for. */
  private queued: Promise<void> | null = null;
  private failure: unknown = null;

  private constructor(
    private readonly db: SqliteDatabase,
    walPath: string,
    private readonly flush: Flush,
    /** The WAL's checkpoints, run off the event loop (checkpoints.ts). */
    private readonly checkpoints: Checkpoints | null,
  ) {
    this.fd = openWal(walPath);
  }

  /**
   * For a database file in WAL mode; null for `:memory:` (nothing to flush), in which case the
   * store commits synchronously as before. `flush` is replaceable for fault tests only.
   */
  static open(db: SqliteDatabase, path: string, flush: Flush = fdatasync): WalSync | null {
    if (db.memory) return null;
    const mode = db.pragma('journal_mode', { simple: true });
    if (mode !== 'wal') return null;
    // The WAL file exists once a connection in WAL mode has read the database (the
    // migrations have); reading the schema makes sure of it.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return new WalSync(db, `${path}-wal`, flush, Checkpoints.start(db, path));
  }

  /** Throws once a flush has failed: the store is down until restarted (readiness check). */
  assertHealthy(): void {
    if (this.failure !== null) throw storageFailed(this.failure);
  }

  /**
   * Runs `transaction` (which commits, e.g. `db.transaction(fn).immediate`) without a flush
   * inside it, and resolves with its result once its frames are on disk. A transaction that
   * throws rolls back and throws here, synchronously, as it would have at FULL.
   */
  commit<R>(transaction: () => R): Promise<R> {
    if (this.failure !== null) return Promise.reject(storageFailed(this.failure));
    const result = commitWithoutFlush(this.db, transaction);
    this.checkpoints?.committed();
    return this.synced().then(() => result);
  }

  /** Resolves after a flush that starts now or later has succeeded. */
  private synced(): Promise<void> {
    if (this.running === null) {
      this.running = this.flushOnce();
      return this.running;
    }
    // The running flush may have begun before this commit wrote its frames: wait for the next.
    this.queued ??= this.running.then(
      () => this.startQueued(),
      () => this.startQueued(),
    );
    return this.queued;
  }

  private startQueued(): Promise<void> {
    this.queued = null;
    this.running = this.flushOnce();
    return this.running;
  }

  private flushOnce(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.failure !== null) {
        reject(storageFailed(this.failure));
        return;
      }
      this.flush(this.fd, (error) => {
        if (error) {
          this.failure = error;
          this.running = null;
          reject(storageFailed(error));
          return;
        }
        // With a flush queued behind this one, startQueued replaces `running` in a moment.
        if (this.queued === null) this.running = null;
        resolve();
      });
    });
  }

  /** Stops the background checkpoints; before the database closes (its close checkpoints). */
  stopCheckpoints(): Promise<void> {
    return this.checkpoints?.stop() ?? Promise.resolve();
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Opens the WAL file for flushing and makes its directory entry durable (FULL does once). */
function openWal(walPath: string): number {
  const fd = openSync(walPath, 'r');
  const dir = openSync(dirname(walPath), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
  return fd;
}

/** How a store commits a hot-path transaction: flushed off the loop when it can be (WalSync). */
export type DurableCommit = <R>(transaction: () => R) => R | Promise<R>;

export function durableCommit(wal: WalSync | null): DurableCommit {
  return wal ? (transaction) => wal.commit(transaction) : (transaction) => transaction();
}
