import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';

for (const kind of await testStores()) {
  describe(`GET /v1/pixels/:id/events [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let pixelId: string;

    const list = async (query = '') => {
      const res = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events${query}`,
      });
      return { status: res.statusCode, body: res.json() };
    };
    const ids = (body: { events: Array<{ event_id: string }> }) =>
      body.events.map((e) => e.event_id);

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      pixelId = await h.pixel(acme);
      // Arrival order differs from event time on purpose; e3 and e4 share a timestamp.
      const events: Array<[string, string, string]> = [
        ['e1', 'PageView', '2026-03-01T00:00:00.000Z'],
        ['e2', 'Purchase', '2026-03-02T23:59:59.999Z'],
        ['e3', 'PageView', '2026-03-03T12:00:00.000Z'],
        ['e4', 'Purchase', '2026-03-03T12:00:00.000Z'],
        ['e5', 'Lead', '2026-02-28T08:00:00.000Z'],
      ];
      for (const [event_id, event_name, timestamp] of events) {
        const res = await h.track(acme, { pixel_id: pixelId, event_name, event_id, timestamp });
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(() => h.close());

    it('returns newest first: timestamp desc, then arrival desc', async () => {
      const { status, body } = await list();
      assert.equal(status, 200);
      assert.deepEqual(ids(body), ['e4', 'e3', 'e2', 'e1', 'e5']);
      assert.equal(body.total, 5);
      assert.equal(body.limit, 50);
      assert.equal(body.offset, 0);
    });

    it('returns the full event record with nulls for what was not sent', async () => {
      const { body } = await list('?event_name=Lead');
      assert.deepEqual(body.events[0], {
        event_id: 'e5',
        event_name: 'Lead',
        value: null,
        currency: null,
        timestamp: '2026-02-28T08:00:00.000Z',
        status: 'processed',
        pixel_id: pixelId,
        url: null,
        referrer: null,
        title: null,
        search_string: null,
        custom_data: null,
        user_data: null,
        // Contract §11's default, and the estimate of an event with no key at all.
        action_source: 'website',
        match_quality: {
          score: 0,
          keys: [],
          missing: [
            'email',
            'fbc',
            'phone',
            'external_id',
            'fbp',
            'client_ip_address',
            'client_user_agent',
            'country',
            'first_name',
            'last_name',
            'city',
            'state',
            'zip',
          ],
        },
        source: 'server',
        // None was given.
        consent: null,
        received_at: body.events[0].received_at,
        // Every user_data value it carried could be used (it carried none): nothing dropped.
        dropped: [],
        // The pixel has no destination: nothing is forwarded.
        forwarding: [],
      });
      assert.match(body.events[0].received_at, /Z$/);
    });

    it('filters by event_name and paginates with a total of all matches', async () => {
      assert.deepEqual(ids((await list('?event_name=PageView')).body), ['e3', 'e1']);
      const page = (await list('?limit=2&offset=1')).body;
      assert.deepEqual(ids(page), ['e3', 'e2']);
      assert.equal(page.total, 5);
      assert.equal(page.limit, 2);
      assert.equal(page.offset, 1);
    });

    it('treats date bounds as inclusive, a date alone as the whole UTC day', async () => {
      assert.deepEqual(ids((await list('?start_date=2026-03-02&end_date=2026-03-02')).body), [
        'e2',
      ]);
      assert.deepEqual(ids((await list('?start_date=2026-03-03T12:00:00Z')).body), ['e4', 'e3']);
      assert.deepEqual(ids((await list('?end_date=2026-03-01T00:00:00Z')).body), ['e1', 'e5']);
      // Bounds finer than the stored millisecond: a start just after it excludes the event, an
      // end just after it still includes it.
      assert.deepEqual(ids((await list('?start_date=2026-03-03T12:00:00.0001Z')).body), []);
      assert.deepEqual(ids((await list('?end_date=2026-03-01T00:00:00.0009Z')).body), ['e1', 'e5']);
      const both = (await list('?event_name=Purchase&start_date=2026-03-01&end_date=2026-03-03'))
        .body;
      assert.deepEqual(ids(both), ['e4', 'e2']);
      assert.equal(both.total, 2);
    });

    it('applies a limit above 100 as 100 and says so', async () => {
      const { status, body } = await list('?limit=1000');
      assert.equal(status, 200);
      assert.equal(body.limit, 100);
    });

    it('rejects bad parameters with 400 naming the parameter', async () => {
      const cases: Array<[string, string, string]> = [
        ['?limit=0', 'Invalid parameter: limit must be at least 1', 'limit'],
        ['?limit=-5', 'Invalid parameter: limit must be at least 1', 'limit'],
        ['?limit=2.5', 'Invalid parameter: limit must be an integer', 'limit'],
        ['?limit=abc', 'Invalid parameter: limit must be an integer', 'limit'],
        ['?offset=-1', 'Invalid parameter: offset must be at least 0', 'offset'],
        [
          '?start_date=last-week',
          'Invalid parameter: start_date must be an ISO 8601 date or date-time',
          'start_date',
        ],
        [
          '?end_date=2026-13-01',
          'Invalid parameter: end_date must be an ISO 8601 date or date-time',
          'end_date',
        ],
        [
          '?start_date=2026-03-05&end_date=2026-03-01',
          'Invalid parameter: start_date must not be after end_date',
          'start_date',
        ],
        ['?page=2', 'Unknown parameter: page', 'page'],
      ];
      for (const [query, message, field] of cases) {
        const { status, body } = await list(query);
        assert.equal(status, 400, query);
        assert.deepEqual(body, { error: 'Invalid request', message, field }, query);
      }
    });

    it('is 404 for an unknown pixel', async () => {
      const res = await h.request(acme, { method: 'GET', url: '/v1/pixels/px_nope/events' });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { error: 'Not found', message: 'Pixel not found: px_nope' });
    });
  });
}
