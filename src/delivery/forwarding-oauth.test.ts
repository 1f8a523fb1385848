/**
 * The platforms whose access token the service obtains (module `auth`), end to end on both
 * stores, with Google Ads' stand-in: its token expires mid-stream (the stand-in answers 401 to
 * the old one) and the worker renews it and delivers; its refresh is refused and the
 * destination is suspended with its events kept, then resumed by new credentials. The
 * destination's secrets, nested in `oauth`, are masked in every answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';
import { testLogger } from '../../test/log-capture.ts';
import {
  type GoogleAdsServer,
  startGoogleAdsServer,
} from '../../test/platforms/google-ads-server.ts';
import { baseUrlsFor } from '../../test/platforms/stand-ins.ts';
import { systemClock } from '../domain/ports/clock.ts';
import { type AccessTokens, createAccessTokens } from './access-tokens.ts';
import { ForwardingWorker } from './forwarding-worker.ts';
import { createPlatformSender, type PlatformSender } from './platform-sender.ts';

const waitUntil = async (check: () => boolean | Promise<boolean>, ms = 15_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
};

for (const kind of await testStores()) {
  describe(`forwarding with OAuth access tokens [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let google: GoogleAdsServer;
    let sender: PlatformSender;
    let tokens: AccessTokens;
    let worker: ForwardingWorker;

    before(async () => {
      google = await startGoogleAdsServer();
      const urls = baseUrlsFor({ google_ads: google.url }, google.origin);
      h = await startHarness(kind, {
        platformUrls: urls,
        tokenUrls: { google_ads: google.tokenUrl },
      });
      acme = await h.account('enterprise');
      sender = createPlatformSender({ timeoutMs: 2_000 });
      tokens = createAccessTokens({ urls: { google_ads: google.tokenUrl } });
      worker = new ForwardingWorker({
        store: h.store.forwarding,
        source: h.store.matchKeys,
        clock: systemClock,
        sender,
        logger: testLogger(),
        schedule: [0.05, 0.05, 0.05],
        baseUrls: urls,
        tokens,
        pollMs: 50,
      });
      worker.start();
    });
    after(async () => {
      await worker.stop();
      await sender.close();
      await tokens.close();
      await google.close();
      await h.close();
    });

    const setUp = async () => {
      const pixel = await h.pixel(acme);
      const created = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations`,
        payload: {
          type: 'google_ads',
          config: {
            customer_id: google.customerId,
            conversion_actions: { Purchase: '111111' },
            oauth: google.oauth,
          },
        },
      });
      assert.equal(created.statusCode, 201, created.body);
      return {
        pixel,
        destination: created.json() as { id: string; config: Record<string, unknown> },
      };
    };
    const track = async (pixel: string, ids: string[]) => {
      const res = await h.request(acme, {
        method: 'POST',
        url: '/v1/track/batch',
        payload: {
          events: ids.map((event_id) => ({
            pixel_id: pixel,
            event_name: 'Purchase',
            event_id,
            value: 10,
            currency: 'EUR',
            url: 'https://shop.example/done?gclid=abc',
            user_data: { email: `${event_id}@example.com`, client_ip_address: '203.0.113.9' },
          })),
        },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    const statusOf = async (pixel: string, id: string) =>
      (await h.store.forwarding.eventForwarding(acme.account.id, pixel, [id], true))
        .get(id)
        ?.find((f) => f.platform === 'google_ads');
    const kept = (id: string) => google.events.some((e) => e['transactionId'] === id);

    it('masks the nested secrets in every answer', async () => {
      const { destination } = await setUp();
      assert.deepEqual(destination.config.oauth, {
        client_id: google.oauth.client_id,
        client_secret: `****${google.oauth.client_secret.slice(-4)}`,
        refresh_token: `****${google.oauth.refresh_token.slice(-4)}`,
      });
    });

    it('refuses a config with both credentials or neither, and a private key that is none', async () => {
      const pixel = await h.pixel(acme);
      const post = (config: Record<string, unknown>) =>
        h.request(acme, {
          method: 'POST',
          url: `/v1/pixels/${pixel}/destinations`,
          payload: {
            type: 'google_ads',
            config: {
              customer_id: google.customerId,
              conversion_actions: { Lead: '1' },
              ...config,
            },
          },
        });
      const both = await post({ oauth: google.oauth, service_account: google.serviceAccount });
      assert.equal(both.statusCode, 400);
      assert.equal(both.json().field, 'config.oauth');
      assert.equal((await post({})).statusCode, 400);
      const bad = await post({
        service_account: { client_email: 'a@b.iam.gserviceaccount.com', private_key: 'nope' },
      });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().field, 'config.service_account.private_key');
      assert.equal((await post({ service_account: google.serviceAccount })).statusCode, 201);
    });

    it('an access token that expires mid-stream is renewed after the 401, and the events are delivered', async () => {
      const { pixel } = await setUp();
      await track(pixel, [`${kind.name}-tok-1`]);
      await waitUntil(
        async () => (await statusOf(pixel, `${kind.name}-tok-1`))?.status === 'forwarded',
      );
      const issued = google.tokensIssued.refresh_token;
      google.expireTokens();
      await track(pixel, [`${kind.name}-tok-2`, `${kind.name}-tok-3`]);
      await waitUntil(
        async () => (await statusOf(pixel, `${kind.name}-tok-3`))?.status === 'forwarded',
      );
      assert.equal((await statusOf(pixel, `${kind.name}-tok-2`))?.status, 'forwarded');
      assert.ok(kept(`${kind.name}-tok-2`) && kept(`${kind.name}-tok-3`));
      assert.equal(google.tokensIssued.refresh_token, issued + 1);
    });

    it('a refused refresh suspends the destination and keeps its events; new credentials resume it', async () => {
      const { pixel, destination } = await setUp();
      google.expireTokens();
      google.refuseGrants = true;
      try {
        await track(pixel, [`${kind.name}-ref-1`]);
        await waitUntil(async () => {
          const d = await h.request(acme, {
            method: 'GET',
            url: `/v1/pixels/${pixel}/destinations/${destination.id}`,
          });
          return d.json().state === 'suspended';
        });
        const d = await h.request(acme, {
          method: 'GET',
          url: `/v1/pixels/${pixel}/destinations/${destination.id}`,
        });
        assert.equal(
          d.json().last_error,
          'Google Ads OAuth token refused: HTTP 400 invalid_grant: Token has been expired or revoked.',
        );
        assert.equal((await statusOf(pixel, `${kind.name}-ref-1`))?.status, 'pending');
        assert.ok(!kept(`${kind.name}-ref-1`));
      } finally {
        google.refuseGrants = false;
      }
      const patched = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}/destinations/${destination.id}`,
        // Only the new refresh token: the client id and secret are kept.
        payload: { config: { oauth: { refresh_token: google.oauth.refresh_token } } },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(patched.json().state, 'active');
      worker.wake();
      await waitUntil(
        async () => (await statusOf(pixel, `${kind.name}-ref-1`))?.status === 'forwarded',
      );
      assert.ok(kept(`${kind.name}-ref-1`));
    });
  });
}
