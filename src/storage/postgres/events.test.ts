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
  storedPixel,
  webhookEndpoint,
} from '../../../test/harness.ts';
import { newId } from '../../domain/ids.ts';
import type {
  TrackedEvent,
  WebhookEndpoint,
  WebhookEvent,
  WebhookEventType,
} from '../../domain/model.ts';
import { PostgresStore } from './store.ts';

// Never skipped under CI: there PostgreSQL must be up, and its absence is a failure. Both ingest
// paths (ingest-path.ts): what they share must hold on each.
for (const ingest of ['statement', 'per-account'] as const)
  describe(`PostgreSQL group commit [${ingest}]`, await postgresSuite(), () => {
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
      store = await PostgresStore.open({ url, ingest });
      await store.migrate();
      assert.equal(store.events.ingest, ingest);
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

    it('reports an event of another account in a failed batch as inserted, counted once', async () => {
      // The per-account path commits the other account's transaction while this one's fails
      // (group-commit.ts PartlyCommitted): only this account's events may be retried, or the
      // other's would come back as a duplicate of itself and be counted as one. The
      // one-statement path fails the whole batch and retries every event alone: the same.
      const other = newId('acct');
      const otherPixel = newId('px');
      const failedBefore = store.events.failedBatches;
      const results = await Promise.allSettled([
        store.events.insertEvent(event('mixed-1'), []),
        store.events.insertEvent(event('mixed-bad', { title: 'a\u0000b' }), []),
        store.events.insertEvent(
          event('mixed-other', { accountId: other, pixelId: otherPixel }),
          [],
        ),
        store.events.insertEvent(event('mixed-1'), []),
      ]);
      assert.deepEqual(
        results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected')),
        ['inserted', 'rejected', 'inserted', 'duplicate'],
      );
      assert.equal(store.events.failedBatches - failedBefore, 1);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(
          `SELECT account_id = $1 AS other, sum(n)::int AS n, sum(duplicates)::int AS duplicates
             FROM ${schema}.diag_hourly WHERE pixel_id IN ($2, $3) GROUP BY 1 ORDER BY 1`,
          [other, pixelId, otherPixel],
        );
        const mine = await client.query(
          `SELECT count(*)::int AS n FROM ${schema}.events
            WHERE pixel_id = $1 AND event_id LIKE 'mixed-%'`,
          [pixelId],
        );
        assert.equal(mine.rows[0].n, 1);
        // This account: good-1/2 and the tests before are in the same rows; the other
        // account's row holds its one event, stored once and never a duplicate.
        assert.deepEqual(rows.at(-1), { other: true, n: 1, duplicates: 0 });
      } finally {
        await client.end();
      }
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
      const other = await PostgresStore.open({ url, ingest });
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
          ...[...events.slice(100), ...shared]
            .reverse()
            .map((e) => other.events.insertEvent(e, [])),
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

    it('announces a batch too long for one NOTIFY in several, every payload under the limit', async () => {
      // The live tail's notices are built by the batch's statement itself (events.ts
      // INSERT_BATCH): 1,000 seqs of one pixel do not fit in one payload (PostgreSQL refuses
      // 8,000 bytes), so they are split, and every one arrives, once, after the commit.
      const listener = new pg.Client({ connectionString: url });
      await listener.connect();
      const payloads: string[] = [];
      listener.on('notification', (n) => payloads.push(n.payload ?? ''));
      try {
        await listener.query(`LISTEN trackway_events_${schema}`);
        const px = newId('px');
        const events = Array.from({ length: 1_000 }, (_, i) => event(`many-${i}`, { pixelId: px }));
        // One submission is one transaction (group-commit.ts), whatever its size; a duplicate
        // inside it is neither stored nor announced.
        const outcomes = await store.events.insertEvents(
          [...events, events[0]!].map((e) => ({ event: e, emit: [] })),
        );
        assert.equal(
          outcomes.filter((o) => o.status === 'fulfilled' && o.value === 'inserted').length,
          1_000,
        );
        await listener.query('SELECT 1'); // the notices precede the answer to a later query
        assert.ok(payloads.length > 1, 'split');
        const seqs = payloads.flatMap((p) => {
          assert.ok(Buffer.byteLength(p) <= 7_000, `${Buffer.byteLength(p)} bytes`);
          const [pixel, list] = p.split(' ');
          assert.equal(pixel, px);
          return list!.split(',').map(Number);
        });
        assert.equal(new Set(seqs).size, 1_000);
        assert.deepEqual(
          seqs,
          [...seqs].sort((a, b) => a - b),
          'in arrival order',
        );
      } finally {
        await listener.end();
      }
    });

    it('writes the messages of the new events of a batch only, one delivery per subscribed endpoint', async () => {
      // The outbox is written by the batch's statement (events.ts INSERT_BATCH): of two equal
      // event_ids in one batch only the first emits, a duplicate of a stored event emits
      // nothing, and only enabled, undeleted endpoints subscribed to the type get a delivery.
      const pixel = await storedPixel(store, now);
      const endpoint = (events: WebhookEventType[], more: Partial<WebhookEndpoint> = {}) =>
        webhookEndpoint(pixel.accountId, now, { events, ...more });
      const wanted = [endpoint(['event.tracked']), endpoint(['pixel.updated', 'event.tracked'])];
      const others = [
        endpoint(['pixel.updated']),
        endpoint(['event.tracked'], { enabled: false }),
        endpoint(['event.tracked']),
      ];
      for (const e of [...wanted, ...others]) await store.webhooks.createEndpoint(e, null);
      assert.ok(await store.webhooks.deleteEndpoint(pixel.accountId, others[2]!.id, now));
      const mine = (eventId: string, value = 1) =>
        event(eventId, { accountId: pixel.accountId, pixelId: pixel.id, value });
      const tracked = (e: TrackedEvent): WebhookEvent => ({
        accountId: e.accountId,
        type: 'event.tracked',
        data: { event_id: e.eventId, value: e.value },
        occurredAt: e.receivedAt,
      });
      assert.equal(await store.events.insertEvent(mine('old'), []), 'inserted');
      const batch = [mine('a', 1), mine('b'), mine('a', 2), mine('old')];
      const outcomes = await Promise.all(
        batch.map((e) => store.events.insertEvent(e, [tracked(e)])),
      );
      assert.deepEqual(outcomes, ['inserted', 'inserted', 'duplicate', 'duplicate']);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(
          `SELECT m.data, m.event_type, m.created_at, d.endpoint_id, d.status
           FROM ${schema}.webhook_messages m
           JOIN ${schema}.webhook_deliveries d
              ON d.account_id = m.account_id AND d.message_id = m.id
          WHERE m.account_id = $1 ORDER BY m.data, d.endpoint_id`,
          [pixel.accountId],
        );
        const expected = [
          { event_id: 'a', value: 1 },
          { event_id: 'b', value: 1 },
        ].flatMap((data) =>
          wanted
            .map((w) => w.id)
            .sort()
            .map((endpointId) => ({
              data: JSON.stringify(data),
              event_type: 'event.tracked',
              created_at: now,
              endpoint_id: endpointId,
              status: 'pending',
            })),
        );
        assert.deepEqual(rows, expected);
        const messages = await client.query(
          `SELECT count(*)::int AS n FROM ${schema}.webhook_messages WHERE account_id = $1`,
          [pixel.accountId],
        );
        assert.equal(messages.rows[0].n, 2, 'no message without a delivery');
      } finally {
        await client.end();
      }
    });

    it('commits what was queued before close() returns', async () => {
      const other = await PostgresStore.open({ url, ingest });
      const pending = other.events.insertEvent(event('at-close'), []);
      await other.close();
      assert.equal(await pending, 'inserted');
      assert.ok((await stored()).some((e) => e.eventId === 'at-close'));
    });
  });
