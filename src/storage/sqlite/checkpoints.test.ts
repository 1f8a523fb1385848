import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempDir } from '../../../test/harness.ts';
import { CATCH_UP_PAGES, Checkpoints } from './checkpoints.ts';
import { openSqlite, type SqliteDatabase } from './database.ts';

describe('Checkpoints: the WAL copied into the database file off the event loop', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  let db: SqliteDatabase;
  let checkpoints: Checkpoints;

  beforeEach(() => {
    dir = tempDir();
    path = join(dir.path, 'c.db');
    db = openSqlite(path);
    db.exec('CREATE TABLE t (v TEXT)');
    checkpoints = Checkpoints.start(db, path)!;
  });
  afterEach(async () => {
    await checkpoints.stop();
    db.close();
    dir.remove();
  });

  /** Commits about `pages` pages of rows, a transaction at a time, telling the checkpointer. */
  function commitPages(pages: number): void {
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const row = 'x'.repeat(3_000);
    for (let i = 0; i < pages; i++) {
      db.transaction(() => insert.run(row)).immediate();
      checkpoints.committed();
    }
  }

  async function until(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 200 && !condition(); i++) await sleep(25);
    assert.ok(condition(), 'in time');
  }

  it('leaves the committing connection its checkpoints only as a last resort', () => {
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), CATCH_UP_PAGES);
  });

  it("copies committed pages into the database file below the connection's own threshold", async () => {
    const before = statSync(path).size;
    // Past SQLite's default threshold (1,000 pages), far below the connection's own.
    commitPages(1_500);
    await until(() => checkpoints.completed > 0 && statSync(path).size > before);
    // Every row is there for a reader of the file, and the next commit may rewind the WAL.
    assert.equal(db.prepare('SELECT count(*) FROM t').pluck().get(), 1_500);
    await until(() => {
      const [result] = db.pragma('wal_checkpoint(PASSIVE)') as [
        { log: number; checkpointed: number },
      ];
      return result.log === result.checkpointed;
    });
  });

  it('hands checkpoints back to SQLite when the thread stops', async () => {
    await checkpoints.stop();
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1_000);
    commitPages(10);
    assert.equal(checkpoints.completed, 0, 'nothing asked of a stopped thread');
  });

  it('never keeps the process alive while it runs (a store left open must not hang a test)', async () => {
    const keepingAlive = () =>
      process.getActiveResourcesInfo().filter((resource) => resource === 'MessagePort').length;
    await checkpoints.stop();
    const without = keepingAlive();
    const running = Checkpoints.start(db, path)!;
    try {
      running.committed();
      await sleep(150);
      assert.equal(keepingAlive(), without, "the thread's port is not among them");
    } finally {
      await running.stop();
    }
  });

  it('is not started for a database in memory', () => {
    const memory = openSqlite(':memory:');
    assert.equal(Checkpoints.start(memory, ':memory:'), null);
    memory.close();
  });
});
