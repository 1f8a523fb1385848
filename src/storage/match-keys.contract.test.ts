/**
 * The match keys storage contract (contract §11) on every adapter of the store matrix: the raw
 * keys are written apart from the record with the event, read back by `forwardable` with every
 * platform's hashes, erased once expired (in bounded batches), and deleted with their event by
 * erasure and retention; the hourly rollup's match score sums follow inserts and deletes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bareEvent, storedPixel, testStores } from '../../test/harness.ts';
import { prepareEvent } from '../domain/events/track-event.ts';
import { sha256Hex } from '../domain/events/user-data.ts';
import { RAW_MATCH_KEYS_TTL_MS } from '../domain/forwarding/match-keys.ts';
import { platformUserData } from '../domain/forwarding/platform-user-data.ts';
import { PLATFORM_MODULES } from '../domain/forwarding/platforms/registry.ts';
import type { Pixel, TrackedEvent } from '../domain/model.ts';
import type { Store } from '../domain/ports/store.ts';

const T0 = new Date('2026-03-01T12:00:00.000Z');
const HOUR = 3_600_000;
const FAR_FUTURE = new Date('2100-01-01T00:00:00.000Z');
const UA = 'Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/133.0';

for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`match keys store contract [${kind.name}]`, () => {
    let store: Store;
    before(async () => {
      store = await kind.open();
    });
    after(() => store.close());

    const pixel = () => storedPixel(store, T0);

    /** An event exactly as ingestion prepares it (validation, hashing, the split of keys). */
    const prepared = (p: Pixel, body: Record<string, unknown>, at = T0): TrackedEvent =>
      prepareEvent(p.accountId, { pixel_id: p.id, event_name: 'Purchase', ...body }, at);
    const insert = async (events: TrackedEvent[]) => {
      for (const r of await store.events.insertEvents(events.map((event) => ({ event, emit: [] }))))
        assert.equal(r.status, 'fulfilled');
    };
    /** Rows of raw keys left in the whole store: what a sweep at the end of time would erase. */
    const countRawRows = async () => {
      // Erasing everything is the only read of the table the port offers; callers of this
      // helper expect it to be destructive and use it last.
      return store.matchKeys.eraseExpired(FAR_FUTURE, 1_000_000);
    };

    it('writes the raw keys apart and reads them back with every platform hash', async () => {
      const p = await pixel();
      const full = prepared(p, {
        event_id: 'full',
        action_source: 'physical_store',
        timestamp: T0.toISOString(),
        user_data: {
          email: 'Jane.Doe@gmail.com',
          phone: '+1 650 555 1212',
          first_name: 'Jane',
          city: 'San Francisco',
          country: 'US',
          client_ip_address: '203.0.113.7',
          client_user_agent: UA,
          fbc: 'fb.1.1732473730000.AbCdEf',
          fbp: 'fb.1.1732473730000.1098115397',
          ttclid: 'E.C.P.abc',
          ttp: 'ttp-cookie',
          ga_client_id: '1234567890.1732473730',
        },
      });
      const bare = prepared(p, { event_id: 'bare' });
      const contactOnly = prepared(p, { event_id: 'contact', user_data: { email: 'a@b.co' } });
      await insert([full, bare, contactOnly]);

      const got = await store.matchKeys.forwardable(p.accountId, p.id, [
        'contact',
        'missing',
        'full',
        'bare',
      ]);
      assert.deepEqual(
        got.map((f) => f.event.eventId),
        ['contact', 'full', 'bare'],
        'in the order asked, ids not stored left out',
      );
      const f = got[1]!;
      assert.equal(f.actionSource, 'physical_store');
      assert.deepEqual(f.matchKeys, {
        clientIpAddress: '203.0.113.7',
        clientUserAgent: UA,
        fbc: 'fb.1.1732473730000.AbCdEf',
        fbp: 'fb.1.1732473730000.1098115397',
        ttclid: 'E.C.P.abc',
        ttp: 'ttp-cookie',
        gaClientId: '1234567890.1732473730',
      });
      const expected = platformUserData({
        email: 'Jane.Doe@gmail.com',
        phone: '+1 650 555 1212',
        first_name: 'Jane',
        city: 'San Francisco',
        country: 'US',
      });
      assert.deepEqual(f.hashes, expected.hashes);
      assert.deepEqual(f.location, expected.location);
      // The record itself holds hashes only: the IP and the user agent as their SHA-256.
      assert.equal(f.event.userData?.['client_ip_address'], sha256Hex('203.0.113.7'));
      assert.equal(f.event.userData?.['client_user_agent'], sha256Hex(UA));
      assert.ok(!JSON.stringify(f.event).includes('203.0.113.7'));
      assert.deepEqual(f.event.matchQuality, full.matchQuality);
      assert.equal(f.event.ingested, undefined, 'reads never fill the ingestion-only data');

      const [c, , b] = got;
      assert.equal(c!.matchKeys, null);
      assert.equal(c!.location, null);
      assert.equal(c!.hashes['meta']?.['em'], c!.event.userData?.['email']);
      assert.equal(b!.actionSource, 'website');
      // Platforms whose hashes are the record's own (Meta, Microsoft) read back an empty set.
      assert.deepEqual(
        b!.hashes,
        Object.fromEntries(
          Object.values(PLATFORM_MODULES)
            .filter((platform) => platform.hashesOfRecord !== undefined)
            .map((platform) => [platform.type, {}]),
        ),
      );
      assert.equal(b!.matchKeys, null);

      // Tenant isolation: another account asking for this pixel's events gets nothing.
      const other = await pixel();
      assert.deepEqual(await store.matchKeys.forwardable(other.accountId, p.id, ['full']), []);
      assert.deepEqual(await store.matchKeys.forwardable(p.accountId, p.id, []), []);
      // Only the event that carried keys has a row (the contact-only one has no location).
      assert.equal(await countRawRows(), 1);
    });

    it('keeps the first event’s raw keys when a duplicate arrives', async () => {
      const p = await pixel();
      const first = prepared(p, { event_id: 'dup', user_data: { client_ip_address: '192.0.2.1' } });
      const second = prepared(p, {
        event_id: 'dup',
        user_data: { client_ip_address: '192.0.2.99' },
      });
      await insert([first]);
      assert.equal(await store.events.insertEvent(second, []), 'duplicate');
      const [f] = await store.matchKeys.forwardable(p.accountId, p.id, ['dup']);
      assert.equal(f!.matchKeys?.clientIpAddress, '192.0.2.1');
      assert.equal(await countRawRows(), 1);
    });

    it('erases raw keys once past the event timestamp + 7 days, in bounded batches', async () => {
      const p = await pixel();
      const events = ['a', 'b', 'c'].map((id, i) =>
        prepared(
          p,
          {
            event_id: id,
            timestamp: new Date(T0.getTime() + i * HOUR).toISOString(),
            user_data: { email: `${id}@example.com`, fbp: 'fb.1.1732473730000.42' },
          },
          new Date(T0.getTime() + 3 * HOUR),
        ),
      );
      await insert(events);
      const expiry = T0.getTime() + RAW_MATCH_KEYS_TTL_MS;
      // One millisecond before the first expiry: nothing goes.
      assert.equal(await store.matchKeys.eraseExpired(new Date(expiry - 1), 10), 0);
      const present = await store.matchKeys.forwardable(p.accountId, p.id, ['a', 'b', 'c']);
      assert.ok(present.every((f) => f.matchKeys?.fbp === 'fb.1.1732473730000.42'));
      // At a's expiry only a goes; then b and c, at most one row per call when asked so.
      assert.equal(await store.matchKeys.eraseExpired(new Date(expiry), 10), 1);
      const later = new Date(expiry + 2 * HOUR);
      assert.equal(await store.matchKeys.eraseExpired(later, 1), 1);
      assert.equal(await store.matchKeys.eraseExpired(later, 1), 1);
      assert.equal(await store.matchKeys.eraseExpired(later, 1), 0);
      const erased = await store.matchKeys.forwardable(p.accountId, p.id, ['a', 'b', 'c']);
      assert.equal(erased.length, 3, 'the events stay; only their raw keys are gone');
      for (const f of erased) {
        assert.equal(f.matchKeys, null);
        assert.equal(f.location, null);
        assert.ok(f.hashes['meta']?.['em'], 'the hashes stay with the event');
        assert.equal(f.event.userData?.['fbp'], sha256Hex('fb.1.1732473730000.42'));
      }
    });

    it('deletes an event’s raw keys with it: erasure and the retention purge', async () => {
      const p = await pixel();
      const jane = prepared(p, {
        event_id: 'jane',
        user_data: { email: 'jane@example.com', client_ip_address: '198.51.100.4' },
      });
      const old = prepared(p, {
        event_id: 'old',
        timestamp: new Date(T0.getTime() - 2 * HOUR).toISOString(),
        user_data: { client_user_agent: UA, city: 'Paris' },
      });
      const kept = prepared(p, { event_id: 'kept', user_data: { ttp: 'keep-me' } });
      await insert([jane, old, kept]);
      const erased = await store.lifecycle.erasePerson({
        accountId: p.accountId,
        pixelIds: [p.id],
        keys: { email: jane.userData!['email']! },
        afterSeq: 0,
        throughSeq: await store.lifecycle.lastSeq(p.accountId),
      });
      assert.equal(erased, 1);
      assert.equal(
        await store.lifecycle.purgeBatch(p.accountId, p.id, new Date(T0.getTime() - HOUR), 10),
        1,
      );
      const left = await store.matchKeys.forwardable(p.accountId, p.id, ['jane', 'old', 'kept']);
      assert.deepEqual(
        left.map((f) => [f.event.eventId, f.matchKeys]),
        [['kept', { ttp: 'keep-me' }]],
      );
      // Only kept's row is left: the erased and purged events' rows went with them.
      assert.equal(await countRawRows(), 1);
    });

    it('averages match quality per pixel from the hourly rollup, following deletes', async () => {
      const p = await pixel();
      const hour = Math.floor(T0.getTime() / HOUR);
      assert.equal(await store.matchKeys.averageMatchQuality(p.accountId, p.id, hour), null);
      const strong = prepared(p, {
        event_id: 'strong',
        user_data: { email: 'x@example.com', fbc: 'fb.1.1732473730000.Zz' },
      });
      const weak = prepared(p, {
        event_id: 'weak',
        timestamp: new Date(T0.getTime() - 10 * HOUR).toISOString(),
        user_data: { external_id: 'u-1' },
      });
      const none = prepared(p, { event_id: 'none' });
      await insert([strong, weak, none]);
      assert.equal(strong.matchQuality!.score, 4);
      assert.equal(weak.matchQuality!.score, 1);
      assert.equal(none.matchQuality!.score, 0);
      const avg = (fromHour: number) =>
        store.matchKeys.averageMatchQuality(p.accountId, p.id, fromHour);
      assert.equal(await avg(hour - 24), Math.round((5 / 3) * 10) / 10);
      assert.equal(await avg(hour), 2, 'the hour bound leaves the older event out');
      assert.equal(await avg(hour + 1), null);
      // Another account never sees this pixel's average.
      const other = await pixel();
      assert.equal(await store.matchKeys.averageMatchQuality(other.accountId, p.id, 0), null);
      // The purge takes the weak event off the sums.
      assert.equal(
        await store.lifecycle.purgeBatch(p.accountId, p.id, new Date(T0.getTime() - HOUR), 10),
        1,
      );
      assert.equal(await avg(hour - 24), 2);
      // An event built by hand (no ingestion data) still gets its estimate stored and counted.
      await insert([
        bareEvent({
          accountId: p.accountId,
          pixelId: p.id,
          eventId: 'hand',
          timestamp: T0,
          userData: { email: sha256Hex('hand@example.com') },
        }),
      ]);
      assert.equal(await avg(hour - 24), Math.round((6.5 / 3) * 10) / 10);
      await countRawRows();
    });
  });
}
