import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';

for (const kind of await testStores()) {
  describe(`GET /v1/pixels/:pixel_id/stats [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let pixelId: string;

    before(async () => {
      h = await startHarness(kind);
      h.clock.set('2026-03-02T12:30:00.000Z');
      acme = await h.account('pro');
      other = await h.account('pro');
      pixelId = await h.pixel(acme);
      const events = [
        ['2026-03-01T10:05:00Z', 'Purchase', 10],
        ['2026-03-01T10:55:00Z', 'Purchase', 5.5],
        ['2026-03-01T10:59:59.999Z', 'Lead', undefined],
        ['2026-03-01T11:00:00Z', 'Purchase', 1],
        ['2026-03-02T09:00:00Z', 'Purchase', 100],
      ] as const;
      for (const [i, [timestamp, event_name, value]] of events.entries()) {
        const res = await h.track(acme, {
          pixel_id: pixelId,
          event_name,
          event_id: `e${i}`,
          timestamp,
          ...(value !== undefined && { value, currency: 'USD' }),
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      // A duplicate counts once.
      await h.track(acme, { pixel_id: pixelId, event_name: 'Purchase', event_id: 'e0', value: 99 });
    });
    after(() => h.close());

    const stats = (owner: TestAccount, query: string, id = pixelId) =>
      h.request(owner, { method: 'GET', url: `/v1/pixels/${id}/stats?${query}` });

    it('counts events and sums value per UTC hour and name, empty buckets left out', async () => {
      const res = await stats(
        acme,
        'start_date=2026-03-01T10:30:00Z&end_date=2026-03-01T11:10:00Z',
      );
      assert.equal(res.statusCode, 200);
      // The store's JSON text is sent as is: still typed as JSON, in UTF-8.
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(res.json(), {
        interval: 'hour',
        buckets: [
          { start: '2026-03-01T10:00:00.000Z', event_name: 'Lead', count: 1, value_sum: 0 },
          { start: '2026-03-01T10:00:00.000Z', event_name: 'Purchase', count: 2, value_sum: 15.5 },
          { start: '2026-03-01T11:00:00.000Z', event_name: 'Purchase', count: 1, value_sum: 1 },
        ],
      });
      const named = await stats(acme, 'start_date=2026-03-01&end_date=2026-03-02&event_name=Lead');
      assert.deepEqual(
        named.json().buckets.map((b: { event_name: string }) => b.event_name),
        ['Lead'],
      );
    });

    it('counts per UTC day, and defaults to the last 24 hours by hour', async () => {
      const daily = await stats(acme, 'interval=day&start_date=2026-03-01&end_date=2026-03-02');
      assert.deepEqual(daily.json().buckets, [
        { start: '2026-03-01T00:00:00.000Z', event_name: 'Lead', count: 1, value_sum: 0 },
        { start: '2026-03-01T00:00:00.000Z', event_name: 'Purchase', count: 3, value_sum: 16.5 },
        { start: '2026-03-02T00:00:00.000Z', event_name: 'Purchase', count: 1, value_sum: 100 },
      ]);
      // Now is 2026-03-02T12:30Z: the last 24 hours start at 2026-03-01T13:00Z.
      const recent = await stats(acme, '');
      assert.deepEqual(recent.json(), {
        interval: 'hour',
        buckets: [
          { start: '2026-03-02T09:00:00.000Z', event_name: 'Purchase', count: 1, value_sum: 100 },
        ],
      });
    });

    it('refuses more than 1,000 buckets and bad parameters with 400', async () => {
      const ok = await stats(acme, 'start_date=2026-01-01T00:00:00Z&end_date=2026-02-11T15:00:00Z');
      assert.equal(ok.statusCode, 200, '1,000 hours exactly');
      const cases: Array<[string, string]> = [
        [
          'start_date=2026-01-01T00:00:00Z&end_date=2026-02-11T16:00:00Z',
          'Invalid parameter: start_date the range spans 1001 hours',
        ],
        ['interval=minute', 'Invalid parameter: interval'],
        [
          'start_date=yesterday',
          'Invalid parameter: start_date must be an ISO 8601 date or date-time',
        ],
        [
          'start_date=2026-03-02&end_date=2026-03-01',
          'Invalid parameter: start_date must not be after end_date',
        ],
        ['limit=5', 'Unknown parameter: limit'],
      ];
      for (const [query, message] of cases) {
        const res = await stats(acme, query);
        assert.equal(res.statusCode, 400, query);
        assert.ok(res.json().message.startsWith(message), `${res.json().message} / ${message}`);
      }
    });

    it("is 404 for another account's pixel and for an unknown one", async () => {
      for (const [owner, id] of [
        [other, pixelId],
        [acme, 'px_missing'],
      ] as const) {
        const res = await stats(owner, '', id);
        assert.equal(res.statusCode, 404);
        assert.deepEqual(res.json(), { error: 'Not found', message: `Pixel not found: ${id}` });
      }
    });

    it('carries the rate-limit headers like every route', async () => {
      const res = await stats(acme, '');
      assert.ok(res.headers['x-ratelimit-limit']);
      assert.ok(res.headers['x-ratelimit-remaining']);
    });
  });
}
