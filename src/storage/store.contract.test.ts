/**
 * The storage contract: the same behaviour, asserted through the ports, on every adapter in
 * the store matrix (SQLite, and PostgreSQL when it answers). The HTTP suites cover the same
 * ground from the outside; this suite pins down what only the store can guarantee: exact
 * round trips, atomic quota and dedup under concurrency, and the delivery queue's leases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { accountRecord, pixelRecord, testStores, webhookEndpoint } from '../../test/harness.ts';
import { matchQualityOfRecord } from '../domain/forwarding/match-quality.ts';
import { newId } from '../domain/ids.ts';
import type {
  Account,
  Pixel,
  TrackedEvent,
  WebhookEndpoint,
  WebhookEvent,
  WebhookEventType,
} from '../domain/model.ts';
import type { EventQuery } from '../domain/ports/event-store.ts';
import type { Store } from '../domain/ports/store.ts';
import { PostgresStore } from './postgres/store.ts';
import { SqliteStore } from './sqlite/store.ts';

const T0 = new Date('2026-03-01T12:00:00.123Z');
const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs);

const account = (overrides: Partial<Account> = {}): Account => accountRecord(T0, overrides);
const pixel = (accountId: string, overrides: Partial<Pixel> = {}): Pixel =>
  pixelRecord(accountId, T0, overrides);

function event(p: Pixel, overrides: Partial<TrackedEvent> = {}): TrackedEvent {
  return {
    accountId: p.accountId,
    pixelId: p.id,
    eventId: `e-${Math.random().toString(36).slice(2)}`,
    eventName: 'Purchase',
    value: 49.99,
    currency: 'USD',
    timestamp: T0,
    receivedAt: at(5),
    url: 'https://shop.example.com/checkout',
    referrer: null,
    title: 'Checkout',
    searchString: null,
    userData: { em: 'a'.repeat(64) },
    customData: { z: 1, a: [true, null, 'x'], nested: { b: 2, a: 1 } },
    ...overrides,
  };
}

const endpoint = (accountId: string, overrides: Partial<WebhookEndpoint> = {}) =>
  webhookEndpoint(accountId, T0, overrides);

const tracked = (e: TrackedEvent): WebhookEvent => ({
  accountId: e.accountId,
  type: 'event.tracked',
  data: { event_id: e.eventId },
  occurredAt: e.receivedAt,
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A UTC midnight, so an hour and a day boundary: bounds near it exercise every edge case. */
const H = Date.parse('2026-03-01T00:00:00.000Z');

/** What `total` must be: a count over the events the store said it inserted. */
const bruteForce = (stored: TrackedEvent[], q: Omit<EventQuery, 'limit' | 'offset'>) =>
  stored.filter(
    (e) =>
      e.accountId === q.accountId &&
      e.pixelId === q.pixelId &&
      (q.eventName === undefined || e.eventName === q.eventName) &&
      (q.from === undefined || e.timestamp.getTime() >= q.from.getTime()) &&
      (q.to === undefined || e.timestamp.getTime() <= q.to.getTime()),
  );

const claim = (store: Store, owner: string, now: Date, extra: { limit?: number } = {}) =>
  store.webhooks.claimDue({
    now,
    limit: extra.limit ?? 1000,
    perEndpoint: 100,
    open: {},
    leaseMs: 30_000,
    owner,
  });

const succeeded = () => ({
  status: 'succeeded' as const,
  responseStatusCode: 200,
  durationMs: 12,
  error: null,
  responseBody: 'ok',
  outcome: { kind: 'succeeded' as const },
});

for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`storage contract [${kind.name}]`, () => {
    let store: Store;
    before(async () => {
      store = await kind.open();
    });
    after(async () => {
      await store.close();
    });

    /** A fresh account with one pixel, so tests never see each other's rows. */
    const setup = async (a: Partial<Account> = {}) => {
      const acct = account(a);
      await store.accounts.createAccount(acct, null);
      const px = pixel(acct.id);
      assert.equal(await store.pixels.createPixel(px, null, []), 'created');
      return { acct, px };
    };
    const subscribe = async (accountId: string, events: WebhookEventType[] = ['event.tracked']) => {
      const e = endpoint(accountId, { events });
      await store.webhooks.createEndpoint(e, null);
      return e;
    };
    /** A new event of `px`, stored with its event.tracked message. */
    const track = async (px: Pixel) => {
      const e = event(px);
      await store.events.insertEvent(e, [tracked(e)]);
      return e;
    };
    /** What `owner` claims at `now` for `hook` alone. */
    const claimFor = async (hook: WebhookEndpoint, owner: string, now: Date) =>
      (await claim(store, owner, now)).filter((d) => d.endpoint.id === hook.id);

    describe('accounts and keys', () => {
      it('round-trips accounts and finds them by unrevoked key hash only', async () => {
        // Custom limits past 2^31 (a big enterprise's day) must round-trip as numbers.
        const acct = account({
          plan: 'enterprise',
          customRequestsPerMinute: 3_000_000_000,
          customDailyLimit: 1_000_000_000_000,
        });
        const key = {
          id: newId('key'),
          accountId: acct.id,
          prefix: 'tw_live_abcd',
          last4: 'wxyz',
          createdAt: at(1),
          revokedAt: null,
          hash: `h-${acct.id}`,
        };
        await store.accounts.createAccount(acct, key);
        assert.deepEqual(await store.accounts.getAccount(acct.id), acct);
        assert.equal(await store.accounts.getAccount('acct_missing'), null);
        const found = await store.accounts.findByKeyHash(key.hash);
        assert.deepEqual(found, { account: acct, keyId: key.id, scope: 'full' });

        const second = { ...key, id: newId('key'), createdAt: at(2), hash: `h2-${acct.id}` };
        await store.accounts.createApiKey(second);
        const revoked = await store.accounts.revokeApiKey(key.id, at(10));
        assert.deepEqual(revoked?.revokedAt, at(10));
        // Revoking again keeps the first revocation time.
        assert.deepEqual((await store.accounts.revokeApiKey(key.id, at(20)))?.revokedAt, at(10));
        assert.equal(await store.accounts.revokeApiKey('key_missing', at(10)), null);
        assert.equal(await store.accounts.findByKeyHash(key.hash), null);
        const { hash: _h1, ...firstRecord } = key;
        const { hash: _h2, ...secondRecord } = second;
        assert.deepEqual(await store.accounts.listApiKeys(acct.id), [
          { ...firstRecord, revokedAt: at(10) },
          secondRecord,
        ]);
        assert.ok((await store.accounts.countAccounts()) >= 1);
      });

      it('lists every account, oldest first, then by id', async () => {
        const later = account({ createdAt: at(5), name: 'Later' });
        const earlier = account({ createdAt: at(3), plan: 'ultra', status: 'past_due' });
        await store.accounts.createAccount(later, null);
        await store.accounts.createAccount(earlier, null);
        const listed = await store.accounts.listAccounts();
        assert.equal(listed.length, await store.accounts.countAccounts());
        const ours = listed.filter((a) => a.id === later.id || a.id === earlier.id);
        assert.deepEqual(ours, [earlier, later]);
        const order = listed.map((a) => [a.createdAt.getTime(), a.id] as const);
        const sorted = [...order].sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : 1));
        assert.deepEqual(order, sorted);
      });

      it('applies account changes atomically and writes their webhook messages', async () => {
        const { acct } = await setup();
        const hook = await subscribe(acct.id, ['subscription.updated']);
        const result = await store.accounts.updateAccount(acct.id, (current) => ({
          next: { ...current, plan: 'ultra' },
          emit: [
            {
              accountId: acct.id,
              type: 'subscription.updated',
              data: { plan: 'ultra' },
              occurredAt: at(100),
            },
          ],
        }));
        assert.equal(result?.before.plan, 'pro');
        assert.equal(result?.after.plan, 'ultra');
        assert.equal((await store.accounts.getAccount(acct.id))?.plan, 'ultra');
        const unchanged = await store.accounts.updateAccount(acct.id, () => null);
        assert.equal(unchanged?.after.plan, 'ultra');
        assert.equal(await store.accounts.updateAccount('acct_missing', () => null), null);
        const claimed = (await claim(store, 'w', at(1_000))).filter(
          (d) => d.endpoint.id === hook.id,
        );
        assert.equal(claimed.length, 1);
        assert.equal(claimed[0]?.eventType, 'subscription.updated');
      });
    });

    describe('pixels', () => {
      it('never lets concurrent creates exceed the quota', async () => {
        const acct = account();
        await store.accounts.createAccount(acct, null);
        const results = await Promise.all(
          Array.from({ length: 20 }, () => store.pixels.createPixel(pixel(acct.id), 5, [])),
        );
        assert.equal(results.filter((r) => r === 'created').length, 5);
        assert.equal((await store.pixels.listPixels(acct.id, { limit: 100, offset: 0 })).total, 5);
      });

      it('lists newest first with a total, scoped to the account', async () => {
        const acct = account();
        await store.accounts.createAccount(acct, null);
        const made = [0, 1, 2].map((i) => pixel(acct.id, { createdAt: at(i), updatedAt: at(i) }));
        for (const p of made) await store.pixels.createPixel(p, null, []);
        const page = await store.pixels.listPixels(acct.id, { limit: 2, offset: 1 });
        assert.equal(page.total, 3);
        assert.deepEqual(page.pixels, [made[1], made[0]]);
        assert.equal(await store.pixels.getPixel('acct_other', made[0]!.id), null);
        const updated = await store.pixels.updatePixel(acct.id, made[0]!.id, (p) => ({
          next: { ...p, status: 'paused', updatedAt: at(50) },
          emit: [],
        }));
        assert.equal(updated?.before.status, 'active');
        assert.deepEqual(await store.pixels.getPixel(acct.id, made[0]!.id), {
          ...made[0],
          status: 'paused',
          updatedAt: at(50),
        });
        assert.equal(await store.pixels.updatePixel('acct_other', made[0]!.id, () => null), null);
      });
    });

    describe('events', () => {
      it('round-trips every field exactly, key order of custom_data included', async () => {
        const { acct, px } = await setup();
        const e = event(px, {
          actionSource: 'physical_store',
          matchQuality: { score: 2.5, keys: ['email'], missing: ['fbc', 'phone'] },
          source: 'browser',
        });
        assert.equal(await store.events.insertEvent(e, []), 'inserted');
        const sparse = event(px, {
          value: null,
          currency: null,
          url: null,
          title: null,
          userData: null,
          customData: null,
          timestamp: at(-1),
        });
        assert.equal(await store.events.insertEvent(sparse, []), 'inserted');
        const { events } = await store.events.listEvents({
          accountId: acct.id,
          pixelId: px.id,
          limit: 10,
          offset: 0,
        });
        // An event built without them reads back with the defaults: action_source `website`,
        // source `server` and the estimate ingestion would have made from its user_data.
        assert.deepEqual(events, [
          e,
          {
            ...sparse,
            actionSource: 'website',
            source: 'server',
            matchQuality: matchQualityOfRecord(null),
          },
        ]);
        assert.equal(JSON.stringify(events[0]?.customData), JSON.stringify(e.customData));
      });

      it('keeps the first of two events with one event_id and emits nothing for the second', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        const first = event(px, { eventId: 'order-1', value: 1 });
        const second = event(px, { eventId: 'order-1', value: 2 });
        assert.equal(await store.events.insertEvent(first, [tracked(first)]), 'inserted');
        assert.equal(await store.events.insertEvent(second, [tracked(second)]), 'duplicate');
        // The same event_id on another pixel is another event.
        const { px: other } = await setup();
        assert.equal(
          await store.events.insertEvent(event(other, { eventId: 'order-1' }), []),
          'inserted',
        );
        const { events, total } = await store.events.listEvents({
          accountId: acct.id,
          pixelId: px.id,
          limit: 10,
          offset: 0,
        });
        assert.equal(total, 1);
        assert.equal(events[0]?.value, 1);
        const claimed = (await claim(store, 'w', at(60_000))).filter(
          (d) => d.endpoint.id === hook.id,
        );
        assert.equal(claimed.length, 1);
      });

      it('stores exactly one of 50 concurrent inserts with the same event_id', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        const attempts = Array.from({ length: 50 }, (_, i) =>
          event(px, { eventId: 'same', value: i }),
        );
        // Unrelated events in the same burst must not be affected by the duplicates.
        const others = Array.from({ length: 20 }, (_, i) => event(px, { eventId: `other-${i}` }));
        const outcomes = await Promise.all(
          [...attempts, ...others].map((e) => store.events.insertEvent(e, [tracked(e)])),
        );
        assert.equal(outcomes.slice(0, 50).filter((o) => o === 'inserted').length, 1);
        assert.deepEqual(outcomes.slice(50), Array(20).fill('inserted'));
        const listed = await store.events.listEvents({
          accountId: acct.id,
          pixelId: px.id,
          limit: 100,
          offset: 0,
        });
        assert.equal(listed.total, 21);
        const winner = attempts[outcomes.indexOf('inserted')]!;
        assert.equal(listed.events.find((e) => e.eventId === 'same')?.value, winner.value);
        const claimed = (await claim(store, 'w', at(60_000))).filter(
          (d) => d.endpoint.id === hook.id,
        );
        assert.equal(claimed.length, 21, 'one message per stored event, none for duplicates');
      });

      it('filters by name and inclusive time bounds, newest first then latest arrival, with totals and pages', async () => {
        const { acct, px } = await setup();
        const rows = [
          event(px, { eventId: 'a', eventName: 'Lead', timestamp: at(0) }),
          event(px, { eventId: 'b', eventName: 'Purchase', timestamp: at(1000) }),
          event(px, { eventId: 'c', eventName: 'Lead', timestamp: at(1000) }),
          event(px, { eventId: 'd', eventName: 'Lead', timestamp: at(2000) }),
          event(px, { eventId: 'e', eventName: 'Purchase', timestamp: at(3000) }),
        ];
        // One after the other: arrival order is the tie-breaker for b and c.
        for (const e of rows) await store.events.insertEvent(e, []);
        const ids = async (q: Partial<Parameters<Store['events']['listEvents']>[0]>) => {
          const r = await store.events.listEvents({
            accountId: acct.id,
            pixelId: px.id,
            limit: 50,
            offset: 0,
            ...q,
          });
          return { ids: r.events.map((e) => e.eventId).join(''), total: r.total };
        };
        assert.deepEqual(await ids({}), { ids: 'edcba', total: 5 });
        assert.deepEqual(await ids({ eventName: 'Lead' }), { ids: 'dca', total: 3 });
        assert.deepEqual(await ids({ from: at(1000), to: at(2000) }), { ids: 'dcb', total: 3 });
        assert.deepEqual(await ids({ eventName: 'Lead', from: at(1000), to: at(2000) }), {
          ids: 'dc',
          total: 2,
        });
        assert.deepEqual(await ids({ limit: 2, offset: 2 }), { ids: 'cb', total: 5 });
        assert.deepEqual(await ids({ offset: 10 }), { ids: '', total: 5 });
        assert.deepEqual(await ids({ eventName: 'Nope' }), { ids: '', total: 0 });
        assert.deepEqual(await ids({ accountId: 'acct_other' }), { ids: '', total: 0 });
      });

      it('keeps arrival order within one batch, whatever order the ids sort in', async () => {
        const { acct, px } = await setup();
        // One timestamp, so arrival alone orders them; ids that sort against arrival order.
        const arrival = ['m', 'z', 'a', 'q', 'b'];
        const results = await store.events.insertEvents(
          arrival.map((eventId) => ({ event: event(px, { eventId, timestamp: at(0) }), emit: [] })),
        );
        assert.ok(results.every((r) => r.status === 'fulfilled' && r.value === 'inserted'));
        const { events } = await store.events.listEvents({
          accountId: acct.id,
          pixelId: px.id,
          limit: 10,
          offset: 0,
        });
        assert.deepEqual(
          events.map((e) => e.eventId),
          [...arrival].reverse(),
        );
      });
    });

    describe('event totals', () => {
      /** Inserts one after the other and keeps the events the store reports as inserted. */
      const insertAll = async (events: TrackedEvent[]) => {
        const stored: TrackedEvent[] = [];
        for (const e of events) {
          if ((await store.events.insertEvent(e, [])) === 'inserted') stored.push(e);
        }
        return stored;
      };

      /** Checks `total` and the page (every match fits in one) against the brute force. */
      const check = async (stored: TrackedEvent[], q: Omit<EventQuery, 'limit' | 'offset'>) => {
        const expected = bruteForce(stored, q);
        const { events, total } = await store.events.listEvents({ ...q, limit: 100, offset: 0 });
        const label = JSON.stringify(q);
        assert.equal(total, expected.length, `total for ${label}`);
        assert.deepEqual(
          events.map((e) => e.eventId).sort(),
          expected.map((e) => e.eventId).sort(),
          `page for ${label}`,
        );
      };
      /** `check` for each name (undefined: any) and each window from one point to another. */
      const checkWindows = async (
        stored: TrackedEvent[],
        px: Pixel,
        names: (string | undefined)[],
        points: (number | undefined)[],
      ) => {
        for (const eventName of names) {
          for (const from of points) {
            for (const to of points) {
              if (from !== undefined && to !== undefined && from > to) continue;
              await check(stored, {
                accountId: px.accountId,
                pixelId: px.id,
                ...(eventName !== undefined && { eventName }),
                ...(from !== undefined && { from: new Date(from) }),
                ...(to !== undefined && { to: new Date(to) }),
              });
            }
          }
        }
      };

      it('is exact for every filter combination, bounds mid-hour and on hour boundaries', async () => {
        const { acct, px } = await setup();
        const ts = [
          H - 2 * HOUR - 1, // two buckets back, last millisecond
          H - HOUR,
          H - 1,
          H, // exactly on the boundary, three times: identical timestamps
          H,
          H,
          H + 1,
          H + HOUR / 2,
          H + HOUR - 1,
          H + HOUR,
          H + 3 * HOUR + 17,
          H + DAY - 1,
          H + DAY,
          H + 2 * DAY + 5 * HOUR + 3,
          H - DAY - 7 * HOUR - 11,
          H + 30 * DAY, // a month later
          H - 400 * DAY, // a year earlier
        ];
        const names = ['Lead', 'Purchase', 'PageView'];
        const stored = await insertAll(
          ts.map((t, i) =>
            event(px, { eventId: `e${i}`, eventName: names[i % 3]!, timestamp: new Date(t) }),
          ),
        );
        // Duplicates (another name and time, same event_id) are not stored and not counted.
        const dups = await insertAll([
          event(px, { eventId: 'e0', eventName: 'Lead', timestamp: new Date(H) }),
          event(px, { eventId: 'e3', eventName: 'Other', timestamp: new Date(H + 5) }),
        ]);
        assert.deepEqual(dups, []);
        // Another pixel of the same account in the same buckets must not leak in.
        const other = pixel(acct.id);
        await store.pixels.createPixel(other, null, []);
        await insertAll([event(other, { eventId: 'x', timestamp: new Date(H) })]);

        const points = [
          undefined,
          H - 2 * HOUR - 1,
          H - HOUR - 1,
          H - HOUR,
          H - 1,
          H,
          H + 1,
          H + HOUR / 2,
          H + HOUR - 1,
          H + HOUR,
          H + HOUR + 1,
          H + 5 * HOUR,
          H - DAY - 1,
          H - DAY + HOUR + 1,
          H + DAY - 1,
          H + DAY,
          H + 2 * DAY + 6 * HOUR,
          H + 40 * DAY,
        ];
        await checkWindows(stored, px, [undefined, 'Lead', 'Purchase', 'Nope'], points);
        // Another account asking for this pixel sees nothing, counts included.
        await check(stored, { accountId: 'acct_other', pixelId: px.id });
      });

      it('are rebuilt exactly by the migration from the events already stored', async (t) => {
        // On Citus the counts are distributed by migration 024, which a rerun of their own
        // migrations (below) would not redo: nothing to learn there.
        if (
          store instanceof PostgresStore &&
          (await store.pool.query("SELECT 1 FROM pg_extension WHERE extname = 'citus'")).rowCount
        ) {
          t.skip('Citus: the count tables are distributed by migration 024');
          return;
        }
        const { acct, px } = await setup();
        // Before 1970 too: the backfill's bucket arithmetic must floor, not truncate.
        const times = [
          '1900-01-01T00:00:00.000Z',
          '1969-12-30T05:00:00.001Z',
          '1969-12-31T23:30:00.000Z',
          '1970-01-01T00:00:00.000Z',
          '2026-02-28T23:59:59.999Z',
          '2026-03-01T00:00:00.000Z',
          '2026-03-01T00:00:00.000Z',
          '2026-03-02T13:14:15.016Z',
        ];
        const stored = await insertAll(
          times.map((t, i) =>
            event(px, {
              eventId: `m${i}`,
              eventName: i % 2 ? 'Lead' : 'Purchase',
              timestamp: new Date(t),
              // An email hash scores 2.5 (match quality), so the rebuilt sums can be checked.
              ...(i % 3 === 0 && { userData: { email: 'a'.repeat(64) } }),
            }),
          ),
        );
        // Forget the counts and run the migrations again, as on an existing database (027,
        // which keys the tables by account, too: it copies the rebuilt rows).
        const forget = `DROP TABLE event_totals; DROP TABLE event_counts_daily; DROP TABLE event_counts;
          DELETE FROM schema_migrations WHERE version IN ('004_event_counts', '006_event_value_sums',
            '011_match_quality_sums', '012_stats_index', '027_event_counts_account_keys');`;
        if (store instanceof SqliteStore) {
          store.db.exec(forget);
        } else if (store instanceof PostgresStore) {
          await store.pool.query(forget);
        } else {
          assert.fail('unknown store');
        }
        await store.migrate();
        const points = [
          undefined,
          ...times.map(Date.parse),
          Date.parse('1969-12-31T00:00:00.000Z'),
        ];
        await checkWindows(stored, px, [undefined, 'Lead'], points);
        // The revenue beside each hourly count is rebuilt too (stats API).
        const hours = stored.map((e) => Math.floor(e.timestamp.getTime() / HOUR));
        const buckets = await store.stats.eventStats({
          accountId: acct.id,
          pixelId: px.id,
          interval: 'hour',
          first: Math.min(...hours),
          last: Math.max(...hours),
        });
        const expected = new Map<string, number>();
        stored.forEach((e, i) => {
          const k = `${hours[i]! * HOUR} ${e.eventName}`;
          expected.set(k, (expected.get(k) ?? 0) + (e.value ?? 0));
        });
        assert.deepEqual(
          new Map(buckets.map((b) => [`${b.start.getTime()} ${b.eventName}`, b.valueSum])),
          expected,
        );
        // And the match quality sums (011): 3 of the 8 events score 2.5, the others 0.
        assert.equal(
          await store.matchKeys.averageMatchQuality(acct.id, px.id, Math.min(...hours)),
          Math.round((7.5 / 8) * 10) / 10,
        );
      });

      it('matches a brute-force count over random events and random ranges', async () => {
        // Times cluster around hour and day boundaries so bounds often fall on or next to
        // one, over a few days so ranges hold whole days, leftover hours and partial hours.
        const offset = fc.oneof(
          fc.constantFrom(
            -DAY - 1,
            -DAY,
            -HOUR - 1,
            -HOUR,
            -1,
            0,
            1,
            HOUR - 1,
            HOUR,
            DAY - 1,
            DAY,
            DAY + HOUR,
            2 * DAY + 1,
          ),
          fc.integer({ min: -3 * HOUR, max: 3 * HOUR }),
          fc.integer({ min: -4 * DAY, max: 4 * DAY }),
        );
        const arbEvent = fc.record({
          id: fc.integer({ min: 0, max: 40 }), // small range: duplicate event_ids happen
          name: fc.constantFrom('Lead', 'Purchase', 'Search'),
          at: offset,
        });
        const arbQuery = fc.record({
          name: fc.option(fc.constantFrom('Lead', 'Purchase', 'Search'), { nil: undefined }),
          from: fc.option(offset, { nil: undefined }),
          to: fc.option(offset, { nil: undefined }),
        });
        await fc.assert(
          fc.asyncProperty(
            fc.array(arbEvent, { maxLength: 60 }),
            fc.array(arbQuery, { minLength: 1, maxLength: 8 }),
            fc.constantFrom('one by one', 'concurrently', 'as one batch'),
            async (rows, queries, mode) => {
              const { acct, px } = await setup();
              const events = rows.map((r) =>
                event(px, {
                  eventId: `r${r.id}`,
                  eventName: r.name,
                  timestamp: new Date(H + r.at),
                }),
              );
              // Concurrent inserts and batch requests go through group commit as batches
              // that carry duplicates of each other; whichever wins, only the winner counts.
              let stored: TrackedEvent[];
              if (mode === 'one by one') stored = await insertAll(events);
              else {
                const outcomes =
                  mode === 'concurrently'
                    ? await Promise.all(events.map((e) => store.events.insertEvent(e, [])))
                    : (
                        await store.events.insertEvents(events.map((e) => ({ event: e, emit: [] })))
                      ).map((r) => (r.status === 'fulfilled' ? r.value : 'failed'));
                stored = events.filter((_, i) => outcomes[i] === 'inserted');
              }
              for (const q of queries) {
                const [from, to] =
                  q.from !== undefined && q.to !== undefined && q.from > q.to
                    ? [q.to, q.from]
                    : [q.from, q.to];
                await check(stored, {
                  accountId: acct.id,
                  pixelId: px.id,
                  ...(q.name !== undefined && { eventName: q.name }),
                  ...(from !== undefined && { from: new Date(H + from) }),
                  ...(to !== undefined && { to: new Date(H + to) }),
                });
              }
            },
          ),
          { numRuns: 40 },
        );
      });
    });

    describe('group commit', () => {
      const listAll = async (accountId: string, pixelId: string) =>
        store.events.listEvents({ accountId, pixelId, limit: 100, offset: 0 });
      const messagesFor = async (endpointId: string) =>
        (await claim(store, `w-${endpointId}`, at(60_000))).filter(
          (d) => d.endpoint.id === endpointId,
        );
      /** A row both databases refuse: an invalid Date binds as NULL on SQLite, bad text on PostgreSQL. */
      const unstorable = (p: Pixel) =>
        event(p, { eventId: 'bad', timestamp: new Date(Number.NaN) });

      it('stores every acknowledged event of a burst of single and batch inserts', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        const singles = Array.from({ length: 60 }, (_, i) => event(px, { eventId: `s-${i}` }));
        const batch = Array.from({ length: 40 }, (_, i) => event(px, { eventId: `b-${i}` }));
        const [outcomes, batchResults] = await Promise.all([
          Promise.all(singles.map((e) => store.events.insertEvent(e, [tracked(e)]))),
          store.events.insertEvents(batch.map((e) => ({ event: e, emit: [tracked(e)] }))),
        ]);
        assert.deepEqual(outcomes, Array(60).fill('inserted'));
        assert.deepEqual(batchResults, Array(40).fill({ status: 'fulfilled', value: 'inserted' }));
        const { total } = await listAll(acct.id, px.id);
        assert.equal(total, 100);
        assert.equal((await messagesFor(hook.id)).length, 100);
      });

      it('keeps the first of equal event ids within one batch and against stored events', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        const stored = event(px, { eventId: 'old', value: 1 });
        assert.equal(await store.events.insertEvent(stored, [tracked(stored)]), 'inserted');
        const batch = [
          event(px, { eventId: 'new', value: 2 }),
          event(px, { eventId: 'old', value: 3 }),
          event(px, { eventId: 'new', value: 4 }),
        ];
        const results = await store.events.insertEvents(
          batch.map((e) => ({ event: e, emit: [tracked(e)] })),
        );
        assert.deepEqual(
          results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected')),
          ['inserted', 'duplicate', 'duplicate'],
        );
        const { events } = await listAll(acct.id, px.id);
        assert.deepEqual(events.map((e) => [e.eventId, e.value]).sort(), [
          ['new', 2],
          ['old', 1],
        ]);
        assert.equal((await messagesFor(hook.id)).length, 2);
      });

      it('fails only the row the database refuses, not its neighbours', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        const good = [event(px, { eventId: 'good-1' }), event(px, { eventId: 'good-2' })];
        const bad = unstorable(px);
        // Concurrent singles share one transaction; so does one batch.
        const singles = await Promise.allSettled(
          [good[0]!, bad, good[1]!].map((e) => store.events.insertEvent(e, [tracked(e)])),
        );
        assert.deepEqual(
          singles.map((r) => r.status),
          ['fulfilled', 'rejected', 'fulfilled'],
        );
        const more = [event(px, { eventId: 'good-3' }), bad, event(px, { eventId: 'good-4' })];
        const results = await store.events.insertEvents(
          more.map((e) => ({ event: e, emit: [tracked(e)] })),
        );
        assert.deepEqual(
          results.map((r) => r.status),
          ['fulfilled', 'rejected', 'fulfilled'],
        );
        const { events } = await listAll(acct.id, px.id);
        assert.deepEqual(events.map((e) => e.eventId).sort(), [
          'good-1',
          'good-2',
          'good-3',
          'good-4',
        ]);
        assert.equal((await messagesFor(hook.id)).length, 4);
      });

      it('answers and stores what was queued when close() is called', async () => {
        const own = await kind.open();
        const acct = account();
        await own.accounts.createAccount(acct, null);
        const px = pixel(acct.id);
        await own.pixels.createPixel(px, null, []);
        const single = own.events.insertEvent(event(px, { eventId: 'at-close-1' }), []);
        const batch = own.events.insertEvents([
          { event: event(px, { eventId: 'at-close-2' }), emit: [] },
        ]);
        await own.close();
        // Settled, not failed with "database closed": each settles only after its commit.
        assert.equal(await single, 'inserted');
        assert.deepEqual(await batch, [{ status: 'fulfilled', value: 'inserted' }]);
      });
    });

    describe('webhook outbox and delivery queue', () => {
      it('never lets concurrent registrations exceed the endpoint limit; deleted ones free a place', async () => {
        const { acct } = await setup();
        const results = await Promise.all(
          Array.from({ length: 12 }, () => store.webhooks.createEndpoint(endpoint(acct.id), 5)),
        );
        assert.equal(results.filter((r) => r === 'created').length, 5);
        const made = await store.webhooks.listEndpoints(acct.id);
        assert.equal(made.length, 5);
        assert.equal(await store.webhooks.createEndpoint(endpoint(acct.id), 5), 'limit_exceeded');
        assert.ok(await store.webhooks.deleteEndpoint(acct.id, made[0]!.id, at(1)));
        assert.equal(await store.webhooks.createEndpoint(endpoint(acct.id), 5), 'created');
        const { acct: other } = await setup();
        assert.equal(await store.webhooks.createEndpoint(endpoint(other.id), 5), 'created');
      });

      it('writes one delivery per subscribed, enabled endpoint in the same transaction', async () => {
        const { acct, px } = await setup();
        const wanted = await subscribe(acct.id, ['event.tracked']);
        const unrelated = await subscribe(acct.id, ['pixel.updated']);
        const off = endpoint(acct.id, { enabled: false });
        await store.webhooks.createEndpoint(off, null);
        const e = await track(px);
        const claimed = (await claim(store, 'w', at(60_000))).filter((d) =>
          [wanted.id, unrelated.id, off.id].includes(d.endpoint.id),
        );
        assert.equal(claimed.length, 1);
        const [d] = claimed;
        assert.equal(d?.endpoint.id, wanted.id);
        assert.deepEqual(d?.endpoint, wanted);
        assert.equal(d?.attempt, 1);
        assert.deepEqual(d?.createdAt, e.receivedAt);
        const body = JSON.parse(d!.body);
        // Contract §6: the payload's timestamp is when the message was first sent.
        assert.deepEqual(body, {
          id: d?.messageId,
          event: 'event.tracked',
          data: { event_id: e.eventId },
          webhook_id: wanted.id,
          timestamp: at(60_000).toISOString(),
        });
      });

      it('gives a due delivery to exactly one of two concurrent claimers', async () => {
        const { acct, px } = await setup();
        const hooks = [await subscribe(acct.id), await subscribe(acct.id)];
        const mine = new Set(hooks.map((h) => h.id));
        for (let i = 0; i < 30; i++) await track(px);
        const now = at(60_000);
        const [a, b] = await Promise.all([
          claim(store, 'worker-a', now),
          claim(store, 'worker-b', now),
        ]);
        const keys = [...a!, ...b!]
          .filter((d) => mine.has(d.endpoint.id))
          .map((d) => `${d.messageId}/${d.endpoint.id}`);
        assert.equal(keys.length, 60, 'every delivery claimed');
        assert.equal(new Set(keys).size, 60, 'none claimed twice');
        // While the leases hold nobody gets them again; once they lapse, someone can.
        assert.equal(
          (await claim(store, 'worker-c', at(61_000))).filter((d) => mine.has(d.endpoint.id))
            .length,
          0,
        );
        const again = (await claim(store, 'worker-c', at(91_000))).filter((d) =>
          mine.has(d.endpoint.id),
        );
        assert.equal(again.length, 60);
        assert.ok(again.every((d) => d.attempt === 2));
      });

      it('caps claims per endpoint, counting what the worker already has open', async () => {
        const { acct, px } = await setup();
        const [x, y] = [await subscribe(acct.id), await subscribe(acct.id)];
        for (let i = 0; i < 5; i++) await track(px);
        const options = { now: at(60_000), limit: 100, leaseMs: 30_000, owner: 'w' };
        const others = (
          await store.webhooks.claimDue({
            ...options,
            perEndpoint: 100,
            open: { [x!.id]: 100, [y!.id]: 100 },
          })
        ).length;
        // Everything else due in this store is now leased: what follows sees only x and y.
        assert.ok(others >= 0);
        // y is full (3 of 3 open), x has 1 of 3 open: room for two more at x, none at y.
        const capped = await store.webhooks.claimDue({
          ...options,
          perEndpoint: 3,
          open: { [x!.id]: 1, [y!.id]: 3 },
        });
        assert.deepEqual(
          capped.map((d) => d.endpoint.id),
          [x!.id, x!.id],
        );
        // Nothing open any more: up to the cap at each.
        const rest = await store.webhooks.claimDue({ ...options, perEndpoint: 3, open: {} });
        assert.deepEqual(
          rest.map((d) => d.endpoint.id).sort(),
          [x!.id, x!.id, x!.id, y!.id, y!.id, y!.id].sort(),
        );
      });

      it('lets only the lease owner decide what happens next', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        await track(px);
        const [first] = await claimFor(hook, 'slow', at(60_000));
        assert.ok(first);
        // The lease lapses; another worker takes over.
        const [second] = await claimFor(hook, 'fast', at(100_000));
        assert.equal(second?.attempt, 2);
        // The slow worker finishes late: the queue is not touched (its attempt was already
        // logged as interrupted when the lease was taken over).
        await store.webhooks.recordAttempt(first, 'slow', succeeded(), at(100_001));
        await store.webhooks.recordAttempt(
          second!,
          'fast',
          {
            status: 'failed',
            responseStatusCode: 500,
            durationMs: 3,
            error: 'HTTP 500',
            responseBody: 'boom',
            outcome: { kind: 'retry', at: at(200_000) },
          },
          at(100_002),
        );
        assert.equal((await claimFor(hook, 'x', at(199_999))).length, 0);
        const log = await store.webhooks.listAttempts(acct.id, hook.id, { limit: 10, offset: 0 });
        assert.equal(log.total, 2);
        assert.deepEqual(
          log.attempts.map((a) => [a.attempt, a.status, a.responseStatusCode, a.error]),
          [
            [2, 'failed', 500, 'HTTP 500'],
            [1, 'failed', null, 'Interrupted: the worker stopped before the attempt finished'],
          ],
        );
        const [third] = await claimFor(hook, 'x', at(200_000));
        assert.equal(third?.attempt, 3);
        assert.equal(third?.body, first.body, 'every attempt sends the same bytes');
        assert.deepEqual(
          (await store.webhooks.getEndpoint(acct.id, hook.id))?.failingSince,
          at(100_002),
        );
      });

      it('records a response holding NUL or a lone surrogate, as U+FFFD, and ends the delivery', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        await track(px);
        const [d] = await claimFor(hook, 'w', at(60_000));
        await store.webhooks.recordAttempt(
          d!,
          'w',
          { ...succeeded(), responseBody: 'ok\u0000', error: null },
          at(60_001),
        );
        const [f] = await claimFor(hook, 'w', at(60_000));
        assert.equal(f, undefined, 'succeeded: nothing left to claim');
        await track(px);
        const [d2] = await claimFor(hook, 'w', at(70_000));
        await store.webhooks.recordAttempt(
          d2!,
          'w',
          {
            ...succeeded(),
            status: 'failed',
            responseStatusCode: 500,
            responseBody: 'x\ud800y',
            error: 'HTTP 500\u0000',
            outcome: { kind: 'failed' },
          },
          at(70_001),
        );
        const log = await store.webhooks.listAttempts(acct.id, hook.id, { limit: 10, offset: 0 });
        assert.deepEqual(
          log.attempts.map((a) => [a.status, a.responseBody, a.error]),
          [
            ['failed', 'x\uFFFDy', 'HTTP 500\uFFFD'],
            ['succeeded', 'ok\uFFFD', null],
          ],
        );
      });

      it('marks an attempt cut short by a dead worker as failed when the delivery is claimed again', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        await track(px);
        await claim(store, 'dead', at(60_000));
        await claim(store, 'alive', at(100_000));
        const log = await store.webhooks.listAttempts(acct.id, hook.id, { limit: 10, offset: 0 });
        assert.deepEqual(
          log.attempts.map((a) => a.status),
          ['pending', 'failed'],
        );
        assert.match(log.attempts[1]?.error ?? '', /^Interrupted/);
      });

      it('retries a delivery by hand, due at once, only for the endpoint that had it', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        await track(px);
        const [d] = await claimFor(hook, 'w', at(60_000));
        await store.webhooks.recordAttempt(
          d!,
          'w',
          { ...succeeded(), status: 'failed', outcome: { kind: 'failed' } },
          at(60_001),
        );
        const mine = (now: Date) => claimFor(hook, 'w', now);
        assert.equal((await mine(at(10_000_000))).length, 0, 'failed for good');
        assert.equal(
          await store.webhooks.retryDelivery(acct.id, hook.id, 'msg_nope', at(1)),
          'not_found',
        );
        assert.equal(
          await store.webhooks.retryDelivery('acct_other', hook.id, d!.messageId, at(1)),
          'not_found',
        );
        assert.equal(
          await store.webhooks.retryDelivery(acct.id, hook.id, d!.messageId, at(70_000)),
          'queued',
        );
        const [retried] = await mine(at(70_000));
        assert.equal(retried?.messageId, d!.messageId);
        assert.equal(retried?.attempt, 2);
        // While that attempt is being sent (its lease is live) a retry changes nothing: the
        // message must not go out twice at once, and the attempt must not be cut off.
        assert.equal(
          await store.webhooks.retryDelivery(acct.id, hook.id, d!.messageId, at(70_001)),
          'in_flight',
        );
        assert.equal((await mine(at(70_002))).length, 0, 'not claimable again meanwhile');
        await store.webhooks.recordAttempt(
          retried!,
          'w',
          { ...succeeded(), status: 'failed', outcome: { kind: 'failed' } },
          at(70_003),
        );
        const log = await store.webhooks.listAttempts(acct.id, hook.id, { limit: 10, offset: 0 });
        assert.deepEqual(
          log.attempts.map((a) => a.status),
          ['failed', 'failed'],
          'the attempt under way was recorded as it ended, not as interrupted',
        );
        assert.equal(
          await store.webhooks.retryDelivery(acct.id, hook.id, d!.messageId, at(70_004)),
          'queued',
        );
      });

      it('cancels pending deliveries of a deleted endpoint', async () => {
        const { acct, px } = await setup();
        const hook = await subscribe(acct.id);
        await track(px);
        assert.equal(await store.webhooks.deleteEndpoint(acct.id, hook.id, at(1)), true);
        assert.equal(await store.webhooks.deleteEndpoint(acct.id, hook.id, at(2)), false);
        assert.equal(await store.webhooks.getEndpoint(acct.id, hook.id), null);
        const claimed = await claim(store, 'w', at(60_000));
        assert.ok(claimed.every((d) => d.endpoint.id !== hook.id));
      });

      it('addresses a test send to one endpoint whatever its filter', async () => {
        const { acct } = await setup();
        const hook = await subscribe(acct.id, ['pixel.created']);
        const id = await store.webhooks.enqueueFor(hook.id, {
          accountId: acct.id,
          type: 'event.tracked',
          data: { sample: true },
          occurredAt: at(7),
        });
        assert.match(id, /^msg_/);
        const [d] = await claimFor(hook, 'w', at(60_000));
        assert.equal(d?.messageId, id);
        assert.equal(d?.eventType, 'event.tracked');
      });
    });
  });
}

/** nextDueAt looks at the whole queue, so it gets a store of its own per adapter. */
for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`storage contract: next due time [${kind.name}]`, () => {
    let store: Store;
    before(async () => {
      store = await kind.open();
    });
    after(async () => {
      await store.close();
    });

    it('is null on an empty queue, then the earliest pending delivery of an enabled endpoint', async () => {
      assert.equal(await store.webhooks.nextDueAt(), null);
      const acct = account();
      await store.accounts.createAccount(acct, null);
      const live = endpoint(acct.id, { events: ['pixel.created'] });
      await store.webhooks.createEndpoint(live, null);
      const created = (p: Pixel, occurredAt: Date): WebhookEvent[] => [
        { accountId: acct.id, type: 'pixel.created', data: { id: p.id }, occurredAt },
      ];
      const p1 = pixel(acct.id);
      const p2 = pixel(acct.id);
      await store.pixels.createPixel(p1, null, created(p1, at(5_000)));
      await store.pixels.createPixel(p2, null, created(p2, at(3_000)));
      assert.deepEqual(await store.webhooks.nextDueAt(), at(3_000));
      await store.webhooks.updateEndpoint(acct.id, live.id, (e) => ({
        next: { ...e, enabled: false },
        emit: [],
      }));
      assert.equal(await store.webhooks.nextDueAt(), null, 'disabled endpoints are not due');
    });
  });
}

/** The outbox backlog counts the whole queue too: a store of its own per adapter. */
for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`storage contract: outbox backlog [${kind.name}]`, () => {
    let store: Store;
    before(async () => {
      store = await kind.open();
    });
    after(async () => {
      await store.close();
    });

    it('counts pending deliveries of enabled endpoints and dates the oldest message', async () => {
      assert.deepEqual(await store.webhooks.backlog(), {
        pending: 0,
        oldestCreatedAt: null,
        nextDueAt: null,
      });
      const acct = account();
      await store.accounts.createAccount(acct, null);
      const live = endpoint(acct.id, { events: ['pixel.created'] });
      const paused = endpoint(acct.id, { events: ['pixel.created'] });
      await store.webhooks.createEndpoint(live, null);
      await store.webhooks.createEndpoint(paused, null);
      const created = (p: Pixel, occurredAt: Date): WebhookEvent[] => [
        { accountId: acct.id, type: 'pixel.created', data: { id: p.id }, occurredAt },
      ];
      const p1 = pixel(acct.id);
      const p2 = pixel(acct.id);
      await store.pixels.createPixel(p1, null, created(p1, at(5_000)));
      await store.pixels.createPixel(p2, null, created(p2, at(3_000)));
      // Two messages, each to two endpoints.
      assert.deepEqual(await store.webhooks.backlog(), {
        pending: 4,
        oldestCreatedAt: at(3_000),
        nextDueAt: at(3_000),
      });

      await store.webhooks.updateEndpoint(acct.id, paused.id, (e) => ({
        next: { ...e, enabled: false },
        emit: [],
      }));
      assert.deepEqual(
        await store.webhooks.backlog(),
        { pending: 2, oldestCreatedAt: at(3_000), nextDueAt: at(3_000) },
        'a switched-off endpoint waits for its owner, not for the worker',
      );

      const [first] = await store.webhooks.claimDue({
        now: at(60_000),
        limit: 1,
        perEndpoint: 1,
        open: {},
        leaseMs: 20_000,
        owner: 'w',
      });
      assert.ok(first);
      assert.deepEqual(first.createdAt, at(3_000));
      await store.webhooks.recordAttempt(
        first,
        'w',
        {
          status: 'succeeded',
          responseStatusCode: 200,
          durationMs: 5,
          error: null,
          responseBody: 'ok',
          outcome: { kind: 'succeeded' },
        },
        at(61_000),
      );
      assert.deepEqual(await store.webhooks.backlog(), {
        pending: 1,
        oldestCreatedAt: at(5_000),
        nextDueAt: at(5_000),
      });
    });
  });
}
