/**
 * What only the PostgreSQL adapter has: group commit of concurrent inserts, and several
 * instances sharing one database. The shared behaviour (dedup, ordering, outbox, totals) is in
 * store.contract.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import {
  bareEvent,
  dropSchema,
  freshSchemaName,
  postgresSuite,
  postgresUrl,
} from '../../../test/harness.ts';
import { newId } from '../../domain/ids.ts';
import type { TrackedEvent } from '../../domain/model.ts';
import { PostgresStore } from './store.ts';

// Never skipped under CI: there PostgreSQL must be up, and its absence is a failure.
describe('PostgreSQL group commit', await postgresSuite(), () => {
  const schema = freshSchemaName();
  const url = postgresUrl(schema);
  let store: PostgresStore;
  const accountId = newId('acct');
  const pixelId = newId('px');
  const now = new Date('2026-03-01T00:00:00.000Z');
  const event = (eventId: string, overrides: Partial<TrackedEvent> = {}): TrackedEvent =>
    bareEvent({
      accountId,
      pixelId,
      eventId,
      eventName: 'Lead',
      timestamp: now,
      receivedAt: now,
      ...overrides,
    });
  const stored = async () =>
    (await store.events.listEvents({ accountId, pixelId, limit: 100, offset: 0 })).events;

  before(async () => {
    store = await PostgresStore.open({ url });
    await store.migrate();
  });
  after(async () => {
    await store.close();
    await dropSchema(schema);
  });

  it('keeps the first of equal event_ids sent in one burst', async () => {
    const outcomes = await Promise.all(
      [1, 2, 3].map((value) => store.events.insertEvent(event('burst', { value }), [])),
    );
    assert.deepEqual(outcomes, ['inserted', 'duplicate', 'duplicate']);
    assert.equal((await stored()).find((e) => e.eventId === 'burst')?.value, 1);
  });

  it('fails only the event PostgreSQL cannot store, not its neighbours in the batch', async () => {
    // A NUL character is valid in a JavaScript string but not in PostgreSQL text.
    const results = await Promise.allSettled([
      store.events.insertEvent(event('good-1'), []),
      store.events.insertEvent(event('bad', { title: 'a\u0000b' }), []),
      store.events.insertEvent(event('good-2'), []),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    const ids = (await stored()).map((e) => e.eventId);
    assert.ok(ids.includes('good-1') && ids.includes('good-2') && !ids.includes('bad'));
  });

  it('stores text and JSON exactly as given, and absent values as SQL NULL', async () => {
    // Text and JSON columns travel as one JSON array per column (events.ts `texts`,
    // `documents`): quotes, backslashes, commas, braces and non-ASCII must come back as sent,
    // documents keep their key order, and null stays SQL NULL, never the JSON literal null.
    const awkward = 'a "quoted", back\\slash \\" {brace} [x] é 😀 \u2028 \u0001 \'q\' null';
    const full = event('awkward', {
      url: `https://example.com/?q=${encodeURIComponent(awkward)}`,
      title: awkward,
      referrer: 'null',
      searchString: '',
      currency: 'EUR',
      userData: { em: 'h"1', ph: 'h\\2' },
      customData: { z: 1, a: { y: awkward, x: [null, 'null', 2.5] }, m: null },
    });
    const empty = event('nulls');
    await Promise.all([store.events.insertEvent(full, []), store.events.insertEvent(empty, [])]);
    const back = await store.events.getEvent(accountId, pixelId, 'awkward');
    assert.equal(back?.title, awkward);
    assert.equal(back?.url, full.url);
    assert.equal(back?.referrer, 'null');
    assert.equal(back?.searchString, '');
    assert.deepEqual(back?.userData, full.userData);
    assert.equal(JSON.stringify(back?.customData), JSON.stringify(full.customData));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT event_id, user_data IS NULL AS no_user_data, custom_data IS NULL AS no_custom,
                platform_hashes IS NULL AS no_hashes, title IS NULL AS no_title,
                custom_data::text AS custom_text
           FROM ${schema}.events WHERE pixel_id = $1 AND event_id IN ('awkward', 'nulls')
          ORDER BY event_id`,
        [pixelId],
      );
      assert.deepEqual(rows, [
        {
          event_id: 'awkward',
          no_user_data: false,
          no_custom: false,
          no_hashes: true,
          no_title: false,
          custom_text: JSON.stringify(full.customData),
        },
        {
          event_id: 'nulls',
          no_user_data: true,
          no_custom: true,
          no_hashes: true,
          no_title: true,
          custom_text: null,
        },
      ]);
    } finally {
      await client.end();
    }
  });

  it('keeps counts exact when two instances batch into the same buckets at once', async () => {
    // Each batch upserts many (pixel, name, hour) keys, and 100 event_ids go to both
    // instances, the second getting everything in the opposite order. Rows and count buckets
    // are locked in sorted order, so the two transactions wait for each other instead of
    // deadlocking (PostgreSQL would abort one after a second, and its batch would be retried
    // event by event), and an event_id sent to both instances is counted once.
    const other = await PostgresStore.open({ url });
    const failedBefore = store.events.failedBatches;
    try {
      const pixels = [newId('px'), newId('px'), newId('px')];
      const names = ['Lead', 'Purchase', 'Search', 'AddToCart'];
      const events = Array.from({ length: 600 }, (_, i) =>
        event(`two-${i}`, {
          pixelId: pixels[i % 3]!,
          eventName: names[i % 4]!,
          timestamp: new Date(now.getTime() + (i % 7) * 3_600_000 + i),
        }),
      );
      const shared = events.slice(0, 100); // sent to both instances
      const outcomes = await Promise.all([
        ...events.map((e) => store.events.insertEvent(e, [])),
        ...[...events.slice(100), ...shared].reverse().map((e) => other.events.insertEvent(e, [])),
      ]);
      const inserted = outcomes.filter((o) => o === 'inserted').length;
      assert.equal(inserted, 600, 'each event stored once, none failed');
      // Whole batches committed: none was aborted (a deadlock) and retried event by event.
      assert.equal(store.events.failedBatches - failedBefore + other.events.failedBatches, 0);
      for (const px of pixels) {
        for (const eventName of [undefined, ...names]) {
          const query = { accountId, pixelId: px, limit: 1, offset: 0 };
          const { total } = await store.events.listEvents(
            eventName === undefined ? query : { ...query, eventName },
          );
          const expected = events.filter(
            (e) => e.pixelId === px && (eventName === undefined || e.eventName === eventName),
          ).length;
          assert.equal(total, expected, `${px} ${eventName ?? '(all)'}`);
        }
        const { total } = await store.events.listEvents({
          accountId,
          pixelId: px,
          from: new Date(now.getTime() + 3_600_000),
          to: new Date(now.getTime() + 3 * 3_600_000 + 99),
          limit: 1,
          offset: 0,
        });
        const expected = events.filter(
          (e) =>
            e.pixelId === px &&
            e.timestamp.getTime() >= now.getTime() + 3_600_000 &&
            e.timestamp.getTime() <= now.getTime() + 3 * 3_600_000 + 99,
        ).length;
        assert.equal(total, expected, `${px} range`);
      }
    } finally {
      await other.close();
    }
  });

  it('commits what was queued before close() returns', async () => {
    const other = await PostgresStore.open({ url });
    const pending = other.events.insertEvent(event('at-close'), []);
    await other.close();
    assert.equal(await pending, 'inserted');
    assert.ok((await stored()).some((e) => e.eventId === 'at-close'));
  });
});
