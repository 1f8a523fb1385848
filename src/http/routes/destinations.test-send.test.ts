/**
 * The test send of a stored event (contract §21): its answer shows the payload that was sent,
 * but no raw match key comes back in the clear (IP, user agent, fbc, fbp, ttclid, ttp, GA
 * client id, unhashed location): each is `****` + its last 4, and hashes stay hashes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { type Ga4Server, startGa4Server } from '../../../test/platforms/ga4-server.ts';
import { type MetaServer, startMetaServer } from '../../../test/platforms/meta-server.ts';
import { baseUrlsFor } from '../../../test/platforms/stand-ins.ts';
import { startTiktokServer, type TiktokServer } from '../../../test/platforms/tiktok-server.ts';
import { sha256Hex } from '../../domain/events/user-data.ts';

const RAW = {
  client_ip_address: '203.0.113.77',
  client_user_agent: 'Mozilla/5.0 (X11; Linux x86_64) RawAgent/9.1',
  fbc: 'fb.1.1700000000000.IwAR2rawclickid7788',
  fbp: 'fb.1.1700000000000.1234567890',
  ttclid: 'E.C.P.rawTikTokClickId4455',
  ttp: 'rawTtpCookie-3322',
  ga_client_id: '987654321.1700009999',
};

for (const kind of await testStores()) {
  describe(`destination test send masks raw identifiers [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let meta: MetaServer;
    let ga4: Ga4Server;
    let tiktok: TiktokServer;
    let pixel: string;

    before(async () => {
      meta = await startMetaServer();
      ga4 = await startGa4Server();
      tiktok = await startTiktokServer();
      h = await startHarness(kind, {
        platformUrls: baseUrlsFor(
          { meta: meta.url, ga4: ga4.origin, tiktok: tiktok.url },
          meta.origin,
        ),
      });
      acme = await h.account('pro');
      pixel = await h.pixel(acme);
      const tracked = await h.track(acme, {
        pixel_id: pixel,
        event_name: 'Purchase',
        event_id: 'leak-1',
        value: 10,
        currency: 'EUR',
        url: 'https://shop.example.com/thanks',
        user_data: { ...RAW, email: 'jane@example.com', city: 'Springfield', country: 'US' },
      });
      assert.equal(tracked.statusCode, 200, tracked.body);
    });
    after(async () => {
      await h.close();
      await meta.close();
      await ga4.close();
      await tiktok.close();
    });

    const configs = () => ({
      meta: { pixel_id: meta.pixelId, access_token: meta.accessToken },
      ga4: { measurement_id: ga4.measurementId, api_secret: ga4.apiSecret },
      tiktok: { pixel_code: tiktok.pixelCode, access_token: tiktok.accessToken },
    });

    for (const type of ['meta', 'ga4', 'tiktok'] as const) {
      it(`${type}: the payload shows every raw key as ****last4, hashes as they are`, async () => {
        const created = await h.request(acme, {
          method: 'POST',
          url: `/v1/pixels/${pixel}/destinations`,
          payload: { type, config: configs()[type] },
        });
        assert.equal(created.statusCode, 201, created.body);
        const res = await h.request(acme, {
          method: 'POST',
          url: `/v1/pixels/${pixel}/destinations/${created.json().id}/test`,
          payload: { event: 'leak-1' },
        });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().ok, true, res.body);
        const shown = JSON.stringify(res.json());
        for (const [field, value] of Object.entries(RAW)) {
          assert.ok(!shown.includes(value), `${type} shows raw ${field}: ${shown}`);
        }
        assert.ok(!shown.includes('Springfield'.toLowerCase()), `${type} shows the raw city`);
        // What the platform takes of each key is there, masked (GA4 takes only the client id).
        const expected =
          type === 'meta'
            ? ['client_ip_address', 'client_user_agent', 'fbc', 'fbp']
            : type === 'tiktok'
              ? ['client_ip_address', 'client_user_agent', 'ttclid', 'ttp']
              : ['ga_client_id'];
        for (const field of expected) {
          const value = RAW[field as keyof typeof RAW];
          assert.ok(shown.includes(`****${value.slice(-4)}`), `${type} masks ${field}`);
        }
        // Hashes stay hashes: the email's SHA-256 is shown whole.
        if (type !== 'ga4' || shown.includes('sha256_email_address')) {
          assert.ok(shown.includes(sha256Hex('jane@example.com')), `${type} keeps the hash`);
        }
      });
    }
  });
}
