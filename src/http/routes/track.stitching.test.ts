/**
 * Identity stitching: a server event naming a visitor (`anonymous_id`) gets the match keys it
 * lacks from that visitor's browser events; the identity lasts 7 days after the last hit, is
 * erased by the sweep and by an erasure, and never crosses accounts. Both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { eraseExpiredMatchKeys } from '../../domain/lifecycle/match-keys-sweep.ts';

const UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const DAY = 86_400_000;

for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`identity stitching [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let pixelId: string;
    let key: string;
    let n = 0;

    before(async () => {
      h = await startHarness(kind, { trustProxy: 1 });
      acme = await h.account('pro');
      pixelId = await h.pixel(acme, { name: 'Shop', domain: 'shop.example.com' });
      key = (await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}` })).json()
        .publishable_key;
    });
    after(() => h.close());

    const visit = async (anonymousId: string, extra: Record<string, unknown> = {}) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/collect',
        headers: {
          origin: 'https://shop.example.com',
          'user-agent': UA,
          'x-forwarded-for': '198.51.100.23',
        },
        payload: {
          key,
          event_name: 'PageView',
          url: 'https://shop.example.com/?fbclid=IwAR-stitch',
          anonymous_id: anonymousId,
          ids: { fbclid: 'IwAR-stitch', ttclid: 'tt-click-1' },
          cookies: { _fbp: 'fb.1.1732473730000.555', _ga: 'GA1.1.111.222' },
          ...extra,
        },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    const purchase = async (owner: TestAccount, body: Record<string, unknown>) => {
      const eventId = `order-${kind.name}-${++n}`;
      const res = await h.track(owner, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        event_id: eventId,
        value: 10,
        currency: 'EUR',
        ...body,
      });
      assert.equal(res.statusCode, 200, res.body);
      const got = await h.request(owner, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events/${eventId}`,
      });
      return { eventId, record: got.json() };
    };
    const raw = async (eventId: string) =>
      (await h.store.matchKeys.forwardable(acme.account.id, pixelId, [eventId]))[0]?.matchKeys;

    it('fills every match key the server event lacks from the browser, and says which', async () => {
      await visit('visitor-a');
      const { eventId, record } = await purchase(acme, {
        anonymous_id: 'visitor-a',
        user_data: { email: 'jane@example.com' },
      });
      assert.deepEqual(record.match_quality.enriched, [
        'client_ip_address',
        'client_user_agent',
        'fbc',
        'fbp',
        'ttclid',
        'ga_client_id',
      ]);
      assert.ok(record.match_quality.keys.includes('fbc'));
      const keys = await raw(eventId);
      assert.equal(keys?.clientIpAddress, '198.51.100.23');
      assert.equal(keys?.clientUserAgent, UA);
      assert.match(keys?.fbc ?? '', /^fb\.1\.\d+\.IwAR-stitch$/);
      assert.equal(keys?.fbp, 'fb.1.1732473730000.555');
      assert.equal(keys?.gaClientId, '111.222');
      assert.equal(keys?.ttclid, 'tt-click-1');
    });

    it("carries the other platforms' click ids and cookies (contract §18) to a server event", async () => {
      await visit('visitor-clicks', {
        url: 'https://shop.example.com/?gclid=Cj0-g&ScCid=sc-1&rdt_cid=rd-1&li_fat_id=li-1',
        ids: { gclid: 'Cj0-g', gbraid: 'gb-1', ScCid: 'sc-1', rdt_cid: 'rd-1', li_fat_id: 'li-1' },
        cookies: {
          _epik: 'ep-cookie',
          _scid: 'scid-cookie',
          _rdt_uuid: 'rdt-uuid',
          _uetvid: 'uet-vid',
          _uetmsclkid: '_uetms-click',
          _ga_ABC123: 'GS1.1.1732473730.4.1.1732473800.0.0.0',
        },
      });
      const { eventId, record } = await purchase(acme, { anonymous_id: 'visitor-clicks' });
      for (const field of ['gclid', 'gbraid', 'epik', 'ScCid', '_scid', 'rdt_cid', '_rdt_uuid']) {
        assert.ok(record.match_quality.enriched.includes(field), field);
        assert.match(record.user_data[field], /^[0-9a-f]{64}$/, field);
      }
      const keys = await raw(eventId);
      assert.equal(keys?.gclid, 'Cj0-g');
      assert.equal(keys?.gbraid, 'gb-1');
      assert.equal(keys?.epik, 'ep-cookie');
      assert.equal(keys?.scCid, 'sc-1');
      assert.equal(keys?.scid, 'scid-cookie');
      assert.equal(keys?.rdtCid, 'rd-1');
      assert.equal(keys?.rdtUuid, 'rdt-uuid');
      assert.equal(keys?.msclkid, 'ms-click');
      assert.equal(keys?.uetvid, 'uet-vid');
      assert.equal(keys?.liFatId, 'li-1');
      assert.equal(keys?.gaSessionId, '1732473730');
    });

    it("keeps the server event's own values", async () => {
      await visit('visitor-b');
      const { eventId, record } = await purchase(acme, {
        anonymous_id: 'visitor-b',
        user_data: { client_ip_address: '203.0.113.50', fbp: 'fb.1.1.server' },
      });
      assert.ok(!record.match_quality.enriched.includes('client_ip_address'));
      assert.ok(!record.match_quality.enriched.includes('fbp'));
      const keys = await raw(eventId);
      assert.equal(keys?.clientIpAddress, '203.0.113.50');
      assert.equal(keys?.fbp, 'fb.1.1.server');
      assert.equal(keys?.clientUserAgent, UA);
    });

    it('adds nothing for an unknown visitor, another account, or denied consent', async () => {
      const unknown = await purchase(acme, { anonymous_id: 'nobody' });
      assert.equal(unknown.record.match_quality.enriched, undefined);
      await visit('visitor-c');
      const mallory = await h.account('pro');
      // Another account cannot even name this pixel; with a pixel of its own, the id is unknown.
      const res = await h.track(mallory, {
        pixel_id: pixelId,
        event_name: 'Purchase',
        anonymous_id: 'visitor-c',
      });
      assert.equal(res.statusCode, 404);
      assert.equal(
        await h.store.matchKeys.visitorKeys(
          mallory.account.id,
          pixelId,
          'visitor-c',
          h.clock.now(),
        ),
        null,
      );
      await visit('visitor-d', { consent: { ad_user_data: 'denied' } });
      const denied = await purchase(acme, { anonymous_id: 'visitor-d' });
      assert.equal(denied.record.match_quality.enriched, undefined);
    });

    it('keeps the identity 7 days after the last hit; the sweep erases it then', async () => {
      await visit('visitor-e');
      h.clock.advance(6 * DAY);
      await visit('visitor-e'); // a later hit extends it
      h.clock.advance(6 * DAY);
      assert.ok(
        (await purchase(acme, { anonymous_id: 'visitor-e' })).record.match_quality.enriched,
      );
      h.clock.advance(DAY + 1);
      assert.equal(
        (await purchase(acme, { anonymous_id: 'visitor-e' })).record.match_quality.enriched,
        undefined,
      );
      assert.ok((await eraseExpiredMatchKeys({ store: h.store, clock: h.clock })) > 0);
      const stillThere = await h.store.matchKeys.visitorKeys(
        acme.account.id,
        pixelId,
        'visitor-e',
        new Date(0),
      );
      assert.equal(stillThere, null, 'the row itself is gone, not just hidden');
    });

    it("erasing a person's events erases their visitors' identities", async () => {
      await visit('visitor-f');
      await purchase(acme, {
        anonymous_id: 'visitor-f',
        user_data: { email: 'erase@example.com' },
      });
      const now = h.clock.now();
      assert.ok(await h.store.matchKeys.visitorKeys(acme.account.id, pixelId, 'visitor-f', now));
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixelId}/erasure`,
        payload: { user_data: { email: 'erase@example.com' } },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().deleted, 1);
      assert.equal(
        await h.store.matchKeys.visitorKeys(acme.account.id, pixelId, 'visitor-f', now),
        null,
      );
    });

    it('stitches batch events the same way', async () => {
      await visit('visitor-g');
      const res = await h.request(acme, {
        method: 'POST',
        url: '/v1/track/batch',
        payload: {
          events: [
            {
              pixel_id: pixelId,
              event_name: 'Lead',
              event_id: `lead-${kind.name}`,
              anonymous_id: 'visitor-g',
            },
          ],
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const got = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixelId}/events/lead-${kind.name}`,
      });
      assert.ok(got.json().match_quality.enriched.includes('fbc'));
    });
  });
}
