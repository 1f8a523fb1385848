/**
 * WAL checkpoints on a thread of their own. SQLite checkpoints in the connection that commits
 * once the WAL passes 1,000 pages: at ingest rates that is several times a second, each one
 * copying megabytes into the database file and syncing both files while the event loop waits —
 * no request parsed, no answer written. Here the service's connection checkpoints only as a
 * last resort (past CATCH_UP_PAGES) and a worker thread with its own connection
 * (WORKER below) runs a PASSIVE checkpoint at most every INTERVAL_MS while commits
 * come in. Durability does not change: a checkpoint only copies frames that are already in the
 * WAL, and SQLite syncs around it as before; what a 200 waits for is still the flush of the WAL
 * (wal-sync.ts).
 *
 * Why the last resort stays: a PASSIVE checkpoint copies the frames present when it started,
 * and the WAL is rewound from its start only once every frame has been copied. Under steady
 * load new frames may always be arriving as a background checkpoint ends, so without it the
 * WAL could grow without bound. SQLite's own checkpoint past CATCH_UP_PAGES finds nearly every
 * frame already copied by the worker, so it is short.
 *
 * Measured (bench/ingest-store.ts, docs/decisions.md "Checkpoints off the event loop"): with
 * the main connection's checkpoints gone, bytes written by the loop's thread per event 5,042 →
 * 3,231 and wall time per event about 30 % lower at 100 in flight.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from './database.ts';

/** Least time between two background checkpoints, while commits keep coming. */
const INTERVAL_MS = 100;
/**
 * WAL pages past which the committing connection checkpoints itself (SQLite's own rule, at
 * 16× its default): reached only when the worker falls behind or is gone.
 */
export const CATCH_UP_PAGES = 16_000;
/** SQLite's default, restored when the worker stops for any reason. */
const SQLITE_DEFAULT_PAGES = 1_000;
/** Frames in the WAL before the thread checkpoints: SQLite's own default threshold. */
const MIN_FRAMES = SQLITE_DEFAULT_PAGES;

/**
 * The thread: its own connection to the file, one PASSIVE checkpoint per message, the result
 * posted back. PASSIVE copies what it can without waiting for the writer or any reader, so the
 * service's connection never waits on this one. SQLite syncs the WAL before copying and the
 * database file after (this connection is at its default synchronous=FULL), as the
 * checkpoints it replaces did.
 *
 * Only once the WAL holds MIN_FRAMES frames (SQLite's own threshold), read from the wal-index
 * header (the -shm file, `mxFrame` at byte 16, native byte order: sqlite.org/walformat.html):
 * a WAL checkpointed whole is rewound by the next commit, which syncs its header on the
 * committing thread, so checkpointing a small WAL would bring the event loop more syncs, not
 * fewer. Plain CommonJS source, evaluated: the same code whether the
 * service runs built or from its TypeScript source, where a worker file could not be loaded.
 */
const WORKER = `
const { openSync, readSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
const shm = openSync(workerData.path + '-shm', 'r');
const header = Buffer.alloc(4);
const readFrames = require('node:os').endianness() === 'LE' ? 'readUInt32LE' : 'readUInt32BE';
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  readSync(shm, header, 0, 4, 16);
  if (header[readFrames](0) < workerData.minFrames) {
    parentPort.postMessage(null);
    return;
  }
  parentPort.postMessage(db.pragma('wal_checkpoint(PASSIVE)')[0]);
});
`;
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

export class Checkpoints {
  private readonly worker: Worker;
  private running = false;
  private due = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly exited: Promise<void>;
  /** Checkpoints the worker has finished (read by tests). */
  completed = 0;

  private constructor(
    private readonly db: SqliteDatabase,
    path: string,
  ) {
    this.worker = new Worker(WORKER, {
      eval: true,
      workerData: { path, driver: DRIVER, minFrames: MIN_FRAMES },
    });
    this.worker.on('message', (result: unknown) => {
      this.running = false;
      if (result !== null) this.completed += 1;
      if (this.due) this.schedule();
    });
    // Never what keeps the process alive: a store left open must not hang a CLI or a test.
    // After the 'message' listener: adding the first one refs the worker's port again.
    this.worker.unref();
    this.exited = new Promise((resolve) => {
      // A worker that failed or exited leaves checkpoints to SQLite's own rule, as before.
      const fallBack = () => {
        this.stopped = true;
        if (this.timer) clearTimeout(this.timer);
        if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
        resolve();
      };
      this.worker.once('error', fallBack);
      this.worker.once('exit', fallBack);
    });
    db.pragma(`wal_autocheckpoint = ${CATCH_UP_PAGES}`);
  }

  /** For a file database in WAL mode (null otherwise: nothing to checkpoint). */
  static start(db: SqliteDatabase, path: string): Checkpoints | null {
    if (db.memory) return null;
    if (db.pragma('journal_mode', { simple: true }) !== 'wal') return null;
    return new Checkpoints(db, path);
  }

  /** After a commit: a checkpoint within INTERVAL_MS, unless one is already on its way. */
  committed(): void {
    if (this.stopped) return;
    this.due = true;
    if (!this.running) this.schedule();
  }

  private schedule(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.running || this.stopped) return;
      this.running = true;
      this.due = false;
      this.worker.postMessage('checkpoint');
    }, INTERVAL_MS);
    this.timer.unref();
  }

  /** Ends the worker's connection (before the store's own, so the last close checkpoints). */
  async stop(): Promise<void> {
    // Held open until the thread has closed its connection, or the process could end first.
    this.worker.ref();
    if (!this.stopped) this.worker.postMessage('close');
    await this.exited;
  }
}
