import assert from 'node:assert/strict';
import { fstatSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { accountRecord, bareEvent, pixelRecord, tempDir } from '../../../test/harness.ts';
import { TrackwayError } from '../../domain/errors.ts';
import type { TrackedEvent } from '../../domain/model.ts';
import { openSqlite, type SqliteDatabase } from './database.ts';
import { SqliteStore } from './store.ts';
import { WalSync } from './wal-sync.ts';

/** A flush the test completes by hand, so it can look at what is answered in between. */
class HeldFlushes {
  readonly pending: Array<(error: NodeJS.ErrnoException | null) => void> = [];
  started = 0;
  /** @param dbPath the database file: every flush must be of its WAL file, no other. */
  constructor(private readonly dbPath: string) {}
  flush = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => {
    assert.equal(fstatSync(fd).ino, statSync(`${this.dbPath}-wal`).ino, 'flushes the WAL file');
    this.started += 1;
    this.pending.push(done);
  };
  finish(error: NodeJS.ErrnoException | null = null): void {
    const done = this.pending.shift();
    assert.ok(done, 'no flush is running');
    done(error);
  }
}

/** Settles pending callbacks and promise chains. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function tracked<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

describe('WalSync: commits answered only once flushed, off the event loop', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  let db: SqliteDatabase;
  let flushes: HeldFlushes;
  let wal: WalSync;
  const insert = (value: number) => () =>
    db.transaction(() => db.prepare('INSERT INTO t (v) VALUES (?)').run(value).changes).immediate();
  const rows = () => db.prepare('SELECT count(*) FROM t').pluck().get();

  beforeEach(() => {
    dir = tempDir();
    path = join(dir.path, 'w.db');
    db = openSqlite(path);
    db.exec('CREATE TABLE t (v INTEGER)');
    flushes = new HeldFlushes(path);
    wal = WalSync.open(db, path, flushes.flush)!;
    assert.ok(wal, 'a WAL-mode file gets a WalSync');
  });
  afterEach(async () => {
    // As SqliteStore.close does: the checkpoint thread's connection ends first.
    await wal.stopCheckpoints();
    wal.close();
    db.close();
    dir.remove();
  });

  it('answers a commit after the flush that followed it, not before', async () => {
    const first = tracked(wal.commit(insert(1)));
    await settle();
    assert.equal(rows(), 1, 'committed at once (readers see it)');
    assert.equal(first.settled, false, 'but not answered while its flush runs');
    flushes.finish();
    await settle();
    assert.deepEqual(first, { settled: true, value: 1 });
  });

  it('makes a commit during a running flush wait for the next one, shared by all such commits', async () => {
    const a = tracked(wal.commit(insert(1)));
    const b = tracked(wal.commit(insert(2)));
    const c = tracked(wal.commit(insert(3)));
    await settle();
    assert.equal(flushes.started, 1);
    flushes.finish();
    await settle();
    assert.equal(a.settled, true);
    // b and c wrote after the first flush began: it may not have covered them.
    assert.equal(b.settled, false);
    assert.equal(c.settled, false);
    assert.equal(flushes.started, 2, 'one more flush for both');
    flushes.finish();
    await settle();
    assert.equal(b.settled && c.settled, true);
    assert.equal(flushes.started, 2);
  });

  it('commits without a flush inside (NORMAL), from the first commit on, and returns to FULL', async () => {
    const level = () => db.pragma('synchronous', { simple: true });
    for (let i = 0; i < 3; i++) {
      let inside: unknown;
      const done = wal.commit(() =>
        db
          .transaction(() => {
            inside = level();
            db.prepare('INSERT INTO t (v) VALUES (?)').run(i);
          })
          .immediate(),
      );
      assert.equal(inside, 1, `commit ${i} ran at NORMAL`);
      assert.equal(level(), 2, `back to FULL after commit ${i}`);
      flushes.finish();
      await done;
    }
    assert.throws(() =>
      wal.commit(() => {
        throw new Error('constraint');
      }),
    );
    assert.equal(level(), 2, 'also after a failed write');
  });

  it('after a failed flush, refuses its waiters and every later write with 503 until restart', async () => {
    const waiting = tracked(wal.commit(insert(1)));
    const queued = tracked(wal.commit(insert(2)));
    flushes.finish(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await settle();
    for (const state of [waiting, queued]) {
      assert.ok(state.error instanceof TrackwayError);
      assert.equal(state.error.code, 'service_unavailable');
    }
    assert.equal(flushes.started, 1, 'a failed flush is never retried');
    const before = rows();
    await assert.rejects(wal.commit(insert(3)), { code: 'service_unavailable' });
    assert.equal(rows(), before, 'nothing more written');
    assert.throws(() => wal.assertHealthy(), { code: 'service_unavailable' });
  });

  it('has nothing to flush for an in-memory database', () => {
    const memory = openSqlite(':memory:');
    assert.equal(WalSync.open(memory, ':memory:'), null);
    memory.close();
  });
});

/** An account with one pixel in `store`, and events for it (ids repeat every 40). */
async function seeded(store: SqliteStore) {
  const now = new Date();
  const account = accountRecord(now, { id: 'acct_walsync' });
  await store.accounts.createAccount(account, null);
  const pixel = pixelRecord(account.id, now, { id: 'px_walsync' });
  await store.pixels.createPixel(pixel, null, []);
  const event = (i: number): TrackedEvent =>
    bareEvent({ accountId: account.id, pixelId: pixel.id, eventId: `e-${i % 40}`, value: i });
  return { account, pixel, event };
}

describe('SqliteStore on a file: tracked events go through the WAL flush', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  beforeEach(() => {
    dir = tempDir();
    path = join(dir.path, 's.db');
  });
  afterEach(() => dir.remove());

  it('answers an insert only after its flush, and keeps every answered event across a reopen', async () => {
    const flushes = new HeldFlushes(path);
    let store = SqliteStore.open(path, { flush: flushes.flush });
    const { account, pixel, event } = await seeded(store);
    const answers = Array.from({ length: 50 }, (_, i) =>
      tracked(store.events.insertEvent(event(i), [])),
    );
    await settle();
    assert.equal(flushes.started, 1, 'one group commit, one flush');
    assert.ok(
      answers.every((a) => !a.settled),
      'nothing answered before the flush',
    );
    flushes.finish();
    await settle();
    assert.equal(answers.filter((a) => a.value === 'inserted').length, 40);
    assert.equal(answers.filter((a) => a.value === 'duplicate').length, 10);
    await store.close();
    store = SqliteStore.open(path);
    const { total } = await store.events.listEvents({
      accountId: account.id,
      pixelId: pixel.id,
      limit: 100,
      offset: 0,
    });
    assert.equal(total, 40);
    await store.close();
  });

  it('reports itself down (readiness) once a flush has failed', async () => {
    const flushes = new HeldFlushes(path);
    const store = SqliteStore.open(path, { flush: flushes.flush });
    const { event } = await seeded(store);
    await store.ping();
    const answer = tracked(store.events.insertEvent(event(1), []));
    await settle();
    flushes.finish(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await settle();
    assert.equal((answer.error as TrackwayError).code, 'service_unavailable');
    await assert.rejects(store.ping(), { code: 'service_unavailable' });
    await store.close();
  });
});
