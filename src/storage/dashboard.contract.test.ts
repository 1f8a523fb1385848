/**
 * The storage contract of contract §13, on every adapter of the store matrix: keys with names,
 * scopes and last use; stats from the per-bucket counts; the live-tail feed; dashboard sessions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountRecord, bareEvent, pixelRecord, testStores } from '../../test/harness.ts';
import { newId } from '../domain/ids.ts';
import type { Account, Pixel, TrackedEvent } from '../domain/model.ts';
import type { Store } from '../domain/ports/store.ts';

const T0 = new Date('2026-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const HOUR = 3_600_000;

const account = (): Account => accountRecord(T0);
const pixel = (accountId: string): Pixel => pixelRecord(accountId, T0);

function event(p: Pixel, overrides: Partial<TrackedEvent> = {}): TrackedEvent {
  return bareEvent({
    accountId: p.accountId,
    pixelId: p.id,
    eventId: `e-${Math.random().toString(36).slice(2)}`,
    value: 10,
    currency: 'USD',
    timestamp: T0,
    receivedAt: T0,
    ...overrides,
  });
}

const keyRow = (accountId: string, scope: 'full' | 'ingest', n: number) => ({
  id: newId('key'),
  accountId,
  hash: `h-${accountId}-${n}`,
  name: `key ${n}`,
  scope,
  prefix: 'tw_live_abcd',
  last4: 'wxyz',
  createdAt: at(n),
  revokedAt: null,
});

for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`storage contract, dashboard [${kind.name}]`, () => {
    let store: Store;
    before(async () => {
      store = await kind.open();
    });
    after(async () => {
      await store.close();
    });

    const setup = async () => {
      const acct = account();
      await store.accounts.createAccount(acct, null);
      const px = pixel(acct.id);
      await store.pixels.createPixel(px, null, []);
      return { acct, px };
    };

    it('keeps key names, scopes and last use, scoped by account', async () => {
      const { acct } = await setup();
      const other = await setup();
      const full = keyRow(acct.id, 'full', 1);
      const ingest = keyRow(acct.id, 'ingest', 2);
      await store.keys.createKey(full);
      await store.keys.createKey(ingest);
      assert.equal((await store.accounts.findByKeyHash(ingest.hash))?.scope, 'ingest');
      assert.equal((await store.accounts.findByKeyHash(full.hash))?.scope, 'full');

      await store.keys.touchKey(ingest.id, at(5_000));
      await store.keys.touchKey(ingest.id, at(4_000)); // an older touch never moves it back
      const keys = await store.keys.listKeys(acct.id);
      assert.deepEqual(
        keys.map((k) => [k.id, k.name, k.scope, k.lastUsedAt, k.revokedAt]),
        [
          [full.id, 'key 1', 'full', null, null],
          [ingest.id, 'key 2', 'ingest', at(5_000), null],
        ],
      );
      assert.deepEqual(await store.keys.listKeys(other.acct.id), []);

      // Another account cannot revoke it; revoking twice keeps the first time.
      assert.equal(await store.keys.revokeKey(other.acct.id, ingest.id, at(6_000)), null);
      assert.deepEqual(
        (await store.keys.revokeKey(acct.id, ingest.id, at(7_000)))?.revokedAt,
        at(7_000),
      );
      assert.deepEqual(
        (await store.keys.revokeKey(acct.id, ingest.id, at(9_000)))?.revokedAt,
        at(7_000),
      );
      assert.equal(await store.accounts.findByKeyHash(ingest.hash), null);
      // Keys made by the CLI path (no name, no scope) are full and unnamed.
      const cli = { ...keyRow(acct.id, 'full', 3) };
      const { name: _n, scope: _s, ...plain } = cli;
      await store.accounts.createApiKey(plain);
      const listed = (await store.keys.listKeys(acct.id)).find((k) => k.id === cli.id);
      assert.equal(listed?.name, '');
      assert.equal(listed?.scope, 'full');
    });

    it('serves stats per hour and per day from the counts kept at insert', async () => {
      const { acct, px } = await setup();
      const h0 = Math.floor(T0.getTime() / HOUR);
      const events = [
        event(px, { timestamp: at(0), value: 10 }),
        event(px, { timestamp: at(1_000), value: 2.5 }),
        event(px, { timestamp: at(HOUR), value: null }),
        event(px, { timestamp: at(HOUR + 5), eventName: 'Lead', value: 1 }),
        event(px, { timestamp: at(30 * HOUR), value: 4 }),
      ];
      await store.events.insertEvents(events.slice(0, 3).map((e) => ({ event: e, emit: [] })));
      await store.events.insertEvent(events[3]!, []);
      await store.events.insertEvent(events[4]!, []);
      // A duplicate adds nothing.
      await store.events.insertEvent({ ...events[0]!, value: 1_000 }, []);

      const hourly = await store.stats.eventStats({
        accountId: acct.id,
        pixelId: px.id,
        interval: 'hour',
        first: h0,
        last: h0 + 1,
      });
      assert.deepEqual(hourly, [
        { start: at(0), eventName: 'Purchase', count: 2, valueSum: 12.5 },
        { start: at(HOUR), eventName: 'Lead', count: 1, valueSum: 1 },
        { start: at(HOUR), eventName: 'Purchase', count: 1, valueSum: 0 },
      ]);
      const named = await store.stats.eventStats({
        accountId: acct.id,
        pixelId: px.id,
        interval: 'hour',
        first: h0,
        last: h0 + 100,
        eventName: 'Lead',
      });
      assert.deepEqual(
        named.map((b) => b.count),
        [1],
      );
      const d0 = Math.floor(T0.getTime() / (24 * HOUR));
      const daily = await store.stats.eventStats({
        accountId: acct.id,
        pixelId: px.id,
        interval: 'day',
        first: d0,
        last: d0 + 1,
      });
      assert.deepEqual(daily, [
        { start: new Date(d0 * 24 * HOUR), eventName: 'Lead', count: 1, valueSum: 1 },
        { start: new Date(d0 * 24 * HOUR), eventName: 'Purchase', count: 3, valueSum: 12.5 },
        { start: new Date((d0 + 1) * 24 * HOUR), eventName: 'Purchase', count: 1, valueSum: 4 },
      ]);
      const other = await setup();
      assert.deepEqual(
        await store.stats.eventStats({
          accountId: other.acct.id,
          pixelId: px.id,
          interval: 'hour',
          first: h0,
          last: h0 + 1,
        }),
        [],
        'another account sees nothing of the pixel',
      );
    });

    it("writes the stats as JSON with the values of the API's buckets, bit for bit", async () => {
      const { acct, px } = await setup();
      const h0 = Math.floor(T0.getTime() / HOUR);
      // Names JSON must escape (quotes, backslash, controls, the separator byte PostgreSQL's
      // answer uses), non-ASCII, and sums whose shortest exact form is long or tiny.
      const names = ['Purchase', 'say "hi"', 'back\\slash', 'tab\tnew\nline\u0001x', 'Éclair ✓'];
      const values = [0.1, 0.2, 1e-7, -3.25, 123456789.123, null];
      await store.events.insertEvents(
        names.flatMap((eventName, i) =>
          values.map((value, j) => ({
            event: event(px, { timestamp: at(((i + j) % 3) * HOUR + j), eventName, value }),
            emit: [],
          })),
        ),
      );
      // A sum with no short decimal form: 0.1 + 0.2 is 0.30000000000000004.
      await store.events.insertEvents(
        [0.1, 0.2].map((value) => ({
          event: event(px, { timestamp: at(5 * HOUR), eventName: 'Sum', value }),
          emit: [],
        })),
      );
      const d0 = Math.floor(T0.getTime() / (24 * HOUR));
      const queries = [
        { interval: 'hour' as const, first: h0, last: h0 + 5 },
        { interval: 'hour' as const, first: h0 + 1, last: h0 + 1, eventName: 'say "hi"' },
        { interval: 'day' as const, first: d0, last: d0 + 1 },
        { interval: 'hour' as const, first: h0 + 10, last: h0 + 20 },
      ];
      for (const range of queries) {
        const q = { accountId: acct.id, pixelId: px.id, ...range };
        const expected = (await store.stats.eventStats(q)).map((b) => ({
          start: b.start.toISOString(),
          event_name: b.eventName,
          count: b.count,
          value_sum: b.valueSum,
        }));
        const json = await store.stats.eventStatsJson(q);
        assert.deepEqual(JSON.parse(json), expected, JSON.stringify(range));
        // Equal values, bit for bit (deepStrictEqual compares numbers with Object.is); the
        // text may differ in a number's spelling (PostgreSQL writes 1e-7 as 1e-07).
      }
      const all = await store.stats.eventStats({
        accountId: acct.id,
        pixelId: px.id,
        ...queries[0]!,
      });
      assert.equal(all.length, 16);
      assert.equal(all.at(-1)?.valueSum, 0.1 + 0.2);
      assert.equal(
        await store.stats.eventStatsJson({
          accountId: 'acct_other',
          pixelId: px.id,
          ...queries[0]!,
        }),
        '[]',
        'another account sees nothing of the pixel',
      );
    });

    it('orders names within a bucket by their bytes on both stores, whatever the collation', async () => {
      const { acct, px } = await setup();
      const h0 = Math.floor(T0.getTime() / HOUR);
      // Byte order puts capitals before small letters and 'Z' before 'a'; a linguistic
      // collation (en_US) would not. SQLite compares BINARY; PostgreSQL must agree.
      const names = ['add_to_cart', 'Zeta', 'AddToCart', 'lead', 'Éclair', 'Purchase'];
      // The test database collates bytewise (C.UTF-8), which would hide the difference: on
      // PostgreSQL the name columns get a linguistic collation for this test, as on a database
      // created with en_US.UTF-8.
      const pool = (store as { pool?: { query(sql: string): Promise<unknown> } }).pool;
      const collate = async (collation: string) => {
        for (const table of ['event_counts', 'event_counts_daily']) {
          await pool?.query(
            `ALTER TABLE ${table} ALTER COLUMN event_name TYPE text COLLATE ${collation}`,
          );
        }
      };
      await collate('"und-x-icu"');
      try {
        await store.events.insertEvents(
          names.map((eventName, i) => ({
            event: event(px, { timestamp: at(i * 1_000), eventName }),
            emit: [],
          })),
        );
        for (const interval of ['hour', 'day'] as const) {
          const width = interval === 'hour' ? HOUR : 24 * HOUR;
          const first = Math.floor(T0.getTime() / width);
          const buckets = await store.stats.eventStats({
            accountId: acct.id,
            pixelId: px.id,
            interval,
            first: interval === 'hour' ? h0 : first,
            last: (interval === 'hour' ? h0 : first) + 1,
          });
          assert.deepEqual(
            buckets.map((b) => b.eventName),
            ['AddToCart', 'Purchase', 'Zeta', 'add_to_cart', 'lead', 'Éclair'],
            interval,
          );
        }
      } finally {
        await collate('"default"');
      }
    });

    it("announces each commit's new events of a pixel, and reads them back by arrival number", async () => {
      const { acct, px } = await setup();
      const other = await setup();
      const heard: number[][] = [];
      let notify: () => void = () => {};
      const unsubscribe = await store.feed.subscribe(px.id, (seqs) => {
        heard.push(seqs);
        notify();
      });
      const arrived = new Promise<void>((resolve) => {
        notify = () => {
          if (heard.flat().length >= 3) resolve();
        };
      });
      const first = event(px, { eventName: 'A' });
      await store.events.insertEvent(first, []);
      await store.events.insertEvent(event(other.px), []); // another pixel: not heard
      await store.events.insertEvents(
        [event(px, { eventName: 'B' }), event(px, { eventName: 'C' }), first].map((e) => ({
          event: e,
          emit: [],
        })),
      );
      await arrived;
      const seqs = heard.flat();
      assert.equal(seqs.length, 3, 'the duplicate is not announced');
      const read = await store.feed.eventsBySeq(acct.id, px.id, seqs);
      assert.deepEqual(
        read.map((r) => r.event.eventName),
        ['A', 'B', 'C'],
      );
      assert.deepEqual(await store.feed.eventsBySeq(other.acct.id, px.id, seqs), []);
      const after = await store.feed.eventsAfter(acct.id, px.id, seqs[0]!, 10);
      assert.deepEqual(
        after.map((r) => r.event.eventName),
        ['B', 'C'],
      );
      assert.deepEqual(await store.feed.eventsAfter(other.acct.id, px.id, 0, 10), []);
      unsubscribe();
    });

    it('finds a session until it expires or its key is revoked, and forgets it when deleted', async () => {
      const { acct } = await setup();
      const key = keyRow(acct.id, 'full', 1);
      await store.keys.createKey(key);
      const session = {
        tokenHash: `tok-${Math.random().toString(36).slice(2)}`,
        accountId: acct.id,
        keyId: key.id,
        createdAt: at(0),
        expiresAt: at(HOUR),
      };
      await store.sessions.createSession(session);
      assert.deepEqual(await store.sessions.findSession(session.tokenHash, at(1)), session);
      assert.equal(await store.sessions.findSession(session.tokenHash, at(HOUR)), null, 'expired');
      assert.equal(await store.sessions.findSession('tok_other', at(1)), null);
      const second = { ...session, tokenHash: `tok-${Math.random().toString(36).slice(2)}` };
      await store.sessions.createSession(second);
      await store.sessions.deleteSession(second.tokenHash);
      assert.equal(await store.sessions.findSession(second.tokenHash, at(1)), null, 'signed out');
      await store.keys.revokeKey(acct.id, key.id, at(2));
      assert.equal(await store.sessions.findSession(session.tokenHash, at(3)), null, 'key revoked');
    });
  });
}
