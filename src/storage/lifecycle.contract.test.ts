/**
 * The storage contract of contract §15 on every adapter of the store matrix: bulk deletes take
 * their events off every count table in the same transaction (an emptied bucket disappears),
 * erasure is bounded by arrival numbers, exports page oldest first by keyset.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bareEvent, destinationRecord, storedPixel, testStores } from '../../test/harness.ts';
import { newId } from '../domain/ids.ts';
import type { Pixel, TrackedEvent } from '../domain/model.ts';
import type { Store } from '../domain/ports/store.ts';
import type { PostgresStore } from './postgres/store.ts';
import { migrateSqlite } from './sqlite/database.ts';
import { SqliteStore } from './sqlite/store.ts';

const T0 = new Date('2026-03-01T12:00:00.000Z');
const HOUR = 3_600_000;
const at = (ms: number) => new Date(T0.getTime() + ms);
const T0_HOUR = T0.getTime() / HOUR;

for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`lifecycle store contract [${kind.name}]`, () => {
    let store: Store;
    before(async () => {
      store = await kind.open();
    });
    after(() => store.close());

    const pixel = () => storedPixel(store, T0);
    const ev = (p: Pixel, eventId: string, fields: Partial<TrackedEvent> = {}) =>
      bareEvent({ accountId: p.accountId, pixelId: p.id, eventId, timestamp: T0, ...fields });
    const insert = async (events: TrackedEvent[]) => {
      for (const r of await store.events.insertEvents(events.map((event) => ({ event, emit: [] }))))
        assert.equal(r.status, 'fulfilled');
    };
    const stats = (p: Pixel, interval: 'hour' | 'day') =>
      store.stats.eventStats({
        accountId: p.accountId,
        pixelId: p.id,
        interval,
        first: -1e6,
        last: 1e7,
      });
    /** revenue_hourly's rows of `p`, as [hour, currency, n, value_sum], in order. */
    const revenue = async (p: Pixel) =>
      (
        await store.stats.revenue({
          accountId: p.accountId,
          pixelId: p.id,
          firstHour: -1e6,
          lastHour: 1e7,
        })
      )
        .map((r) => [r.hour, r.currency, r.n, r.valueSum])
        .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    const total = async (p: Pixel) =>
      (
        await store.events.listEvents({
          accountId: p.accountId,
          pixelId: p.id,
          limit: 1,
          offset: 0,
        })
      ).total;

    it('erases only matching events within the arrival window, and uncounts them', async () => {
      const p = await pixel();
      const first = await store.lifecycle.lastSeq(p.accountId);
      await insert([
        ev(p, 'a', { userData: { em: 'x', email: 'h1' }, value: 5, currency: 'EUR' }),
        ev(p, 'b', { userData: { phone: 'h2' }, value: 7, currency: 'EUR', timestamp: at(HOUR) }),
        ev(p, 'c', { userData: { email: 'other' }, value: 1, currency: 'EUR' }),
        ev(p, 'd', { value: 2, currency: 'USD' }),
      ]);
      const last = await store.lifecycle.lastSeq(p.accountId);
      assert.equal(last - first, 4);
      const erase = (afterSeq: number, throughSeq: number) =>
        store.lifecycle.erasePerson({
          accountId: p.accountId,
          pixelIds: [p.id],
          keys: { email: 'h1', phone: 'h2' },
          afterSeq,
          throughSeq,
        });
      // A window that ends before the matches, then another account's scope: nothing.
      assert.equal(await erase(first, first), 0);
      assert.equal(
        await store.lifecycle.erasePerson({
          accountId: newId('acct'),
          pixelIds: null,
          keys: { email: 'h1' },
          afterSeq: 0,
          throughSeq: last,
        }),
        0,
      );
      assert.equal(await erase(first, last), 2);
      assert.equal(await total(p), 2);
      assert.deepEqual(
        (await stats(p, 'hour')).map((b) => [b.start.toISOString(), b.count, b.valueSum]),
        [[T0.toISOString(), 2, 3]],
      );
      assert.deepEqual(
        (await stats(p, 'day')).map((b) => [b.count, b.valueSum]),
        [[2, 3]],
      );
      // Revenue per currency is taken off too: the dashboard shows it beside the counts.
      assert.deepEqual(await revenue(p), [
        [T0_HOUR, 'EUR', 1, 1],
        [T0_HOUR, 'USD', 1, 2],
      ]);
    });

    it('purges the oldest events first in batches of at most the limit, counts included', async () => {
      const p = await pixel();
      await insert(
        Array.from({ length: 5 }, (_, i) =>
          ev(p, `old-${i}`, { timestamp: at(-i * 24 * HOUR), value: 10, currency: 'EUR' }),
        ),
      );
      await insert([ev(p, 'new', { timestamp: at(HOUR), value: 3, currency: 'EUR' })]);
      const cutoff = at(1);
      assert.equal(await store.lifecycle.purgeBatch(p.accountId, p.id, cutoff, 2), 2);
      assert.equal(await store.lifecycle.purgeBatch(p.accountId, p.id, cutoff, 2), 2);
      // The oldest went first: what is left of the old ones is the newest of them.
      const left = await store.events.listEvents({
        accountId: p.accountId,
        pixelId: p.id,
        limit: 10,
        offset: 0,
      });
      assert.deepEqual(
        left.events.map((e) => e.eventId),
        ['new', 'old-0'],
      );
      assert.equal(await store.lifecycle.purgeBatch(p.accountId, p.id, cutoff, 2), 1);
      assert.equal(await store.lifecycle.purgeBatch(p.accountId, p.id, cutoff, 2), 0);
      assert.equal(await total(p), 1);
      assert.deepEqual(
        (await stats(p, 'day')).map((b) => b.count),
        [1],
      );
      assert.deepEqual(await revenue(p), [[T0_HOUR + 1, 'EUR', 1, 3]]);
    });

    it('pages an export oldest first by (timestamp, arrival), within the bounds', async () => {
      const p = await pixel();
      await insert([
        ev(p, 'late', { timestamp: at(2 * HOUR) }),
        ev(p, 'tie-1', { timestamp: at(HOUR), customData: { n: 1 } }),
        ev(p, 'tie-2', { timestamp: at(HOUR) }),
        ev(p, 'early', { timestamp: at(0) }),
        ev(p, 'outside', { timestamp: at(-HOUR) }),
      ]);
      const seen: string[] = [];
      let after = null;
      for (;;) {
        const page = await store.lifecycle.exportPage({
          accountId: p.accountId,
          pixelId: p.id,
          from: at(0),
          to: at(2 * HOUR),
          after,
          limit: 2,
        });
        seen.push(...page.events.map((e) => e.eventId));
        if (!page.next) break;
        after = page.next;
      }
      assert.deepEqual(seen, ['early', 'tie-1', 'tie-2', 'late']);
    });

    /** The event ids that still have rows in a forwarding table, read straight from the table. */
    const rowsLeft = async (table: 'forward_jobs' | 'forward_attempts', p: Pixel) => {
      const sql = `SELECT event_id FROM ${table} WHERE pixel_id = $1 ORDER BY event_id`;
      const ids =
        store instanceof SqliteStore
          ? (store.db.prepare(sql.replace('$1', '?')).pluck().all(p.id) as string[])
          : (await (store as PostgresStore).pool.query<{ event_id: string }>(sql, [p.id])).rows.map(
              (r) => r.event_id,
            );
      return [...new Set(ids)];
    };

    it('purge and erasure delete the events’ forwarding jobs and attempts with them', async () => {
      const p = await pixel();
      const destination = destinationRecord(p, T0);
      assert.equal(await store.destinations.createDestination(destination, 10), 'created');
      await insert([
        ev(p, 'old-1', { timestamp: at(-48 * HOUR) }),
        ev(p, 'old-2', { timestamp: at(-47 * HOUR) }),
        ev(p, 'jane', { userData: { email: 'h-jane' } }),
        ev(p, 'keep', { userData: { email: 'h-bob' } }),
      ]);
      // Each job sent once: a ledger row per event, as the worker leaves it.
      const [batch] = await store.forwarding.claim({
        now: new Date(),
        take: () => 10,
        busy: [],
        leaseMs: 60_000,
        owner: 'test',
        only: destination.id,
      });
      assert.equal(batch?.jobs.length, 4);
      await store.forwarding.settle({
        destination,
        owner: 'test',
        state: null,
        emit: [],
        outcomes: batch.jobs.map((j) => ({
          pixelId: j.pixelId,
          eventId: j.eventId,
          ...(j.ref !== undefined && { ref: j.ref }),
          status: 'forwarded',
          reason: null,
          lastError: null,
          forwardedAt: new Date(),
          nextAttemptAt: null,
          attempts: [
            {
              attemptedAt: new Date(),
              statusCode: 200,
              durationMs: 5,
              platformResponse: '{"events_received":1,"fbtrace_id":"A1"}',
              note: null,
            },
          ],
        })),
      });
      const all = ['jane', 'keep', 'old-1', 'old-2'];
      assert.deepEqual(await rowsLeft('forward_jobs', p), all);
      assert.deepEqual(await rowsLeft('forward_attempts', p), all);

      assert.equal(await store.lifecycle.purgeBatch(p.accountId, p.id, at(-HOUR), 100), 2);
      assert.deepEqual(await rowsLeft('forward_jobs', p), ['jane', 'keep']);
      assert.deepEqual(await rowsLeft('forward_attempts', p), ['jane', 'keep']);

      const erased = await store.lifecycle.erasePerson({
        accountId: p.accountId,
        pixelIds: [p.id],
        keys: { email: 'h-jane' },
        afterSeq: 0,
        throughSeq: await store.lifecycle.lastSeq(p.accountId),
      });
      assert.equal(erased, 1);
      assert.deepEqual(await rowsLeft('forward_jobs', p), ['keep']);
      assert.deepEqual(await rowsLeft('forward_attempts', p), ['keep']);
      // The event's record no longer lists a ledger for the erased id.
      const left = await store.forwarding.eventForwarding(
        p.accountId,
        p.id,
        ['jane', 'keep'],
        true,
      );
      assert.deepEqual([...left.keys()], ['keep']);
    });

    it('migration 015 removes forwarding rows left behind by earlier purges, keeps the rest', async () => {
      const p = await pixel();
      // What an older purge left: a job and an attempt of an event that is gone, beside a live
      // event's own (written by the store when the event went in, with a destination).
      const destination = newId('dst');
      assert.equal(
        await store.destinations.createDestination(
          destinationRecord(p, T0, { id: destination }),
          10,
        ),
        'created',
      );
      await insert([ev(p, 'live')]);
      const orphan = [p.accountId, destination, p.id, 'gone'];
      const job = `INSERT INTO forward_jobs (account_id, destination_id, pixel_id, event_id, status,
          created_at) VALUES ($1, $2, $3, $4, 'forwarded', $5)`;
      const attempt = `INSERT INTO forward_attempts (account_id, destination_id, pixel_id, event_id,
          attempted_at, platform_response) VALUES ($1, $2, $3, $4, $5, '{"fbtrace_id":"A"}')`;
      const forget = `DELETE FROM schema_migrations WHERE version = '015_forwarding_orphans'`;
      if (store instanceof SqliteStore) {
        const sqlite = (sql: string) => sql.replace(/\$\d/g, '?');
        store.db.prepare(sqlite(job)).run(...orphan, T0.getTime());
        store.db.prepare(sqlite(attempt)).run(...orphan, T0.getTime());
        store.db.exec(forget);
        assert.deepEqual(migrateSqlite(store.db), ['015_forwarding_orphans']);
      } else {
        const pg = store as PostgresStore;
        await pg.pool.query(job, [...orphan, T0]);
        await pg.pool.query(attempt, [...orphan, T0]);
        await pg.pool.query(forget);
        await pg.migrate();
      }
      assert.deepEqual(await rowsLeft('forward_jobs', p), ['live']);
      assert.deepEqual(await rowsLeft('forward_attempts', p), []);
    });
  });
}
