/**
 * Consent and platform fidelity end to end, on both stores: events tracked through the app,
 * forwarded by the worker to the local Meta, GA4 and TikTok stand-ins (test/platforms/), which
 * refuse or drop what their platform documents it refuses or drops.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';
import { testLogger } from '../../test/log-capture.ts';
import { type Ga4Server, startGa4Server } from '../../test/platforms/ga4-server.ts';
import { type MetaServer, startMetaServer } from '../../test/platforms/meta-server.ts';
import { baseUrlsFor } from '../../test/platforms/stand-ins.ts';
import { startTiktokServer, type TiktokServer } from '../../test/platforms/tiktok-server.ts';
import { sha256Hex } from '../domain/events/user-data.ts';
import { systemClock } from '../domain/ports/clock.ts';
import { ForwardingWorker } from './forwarding-worker.ts';
import { createPlatformSender, type PlatformSender } from './platform-sender.ts';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) Fidelity test';

const waitUntil = async (check: () => boolean | Promise<boolean>, ms = 15_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
};

for (const kind of await testStores()) {
  describe(`forwarding fidelity and consent [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let meta: MetaServer;
    let ga4: Ga4Server;
    let tiktok: TiktokServer;
    let sender: PlatformSender;
    let worker: ForwardingWorker;

    before(async () => {
      meta = await startMetaServer();
      ga4 = await startGa4Server();
      tiktok = await startTiktokServer();
      const platformUrls = baseUrlsFor(
        { meta: meta.url, ga4: ga4.origin, tiktok: tiktok.url },
        meta.origin,
      );
      h = await startHarness(kind, { platformUrls });
      acme = await h.account('enterprise');
      sender = createPlatformSender({ timeoutMs: 2_000 });
      worker = new ForwardingWorker({
        store: h.store.forwarding,
        source: h.store.matchKeys,
        clock: systemClock,
        sender,
        logger: testLogger(),
        schedule: [0.05, 0.05, 0.05],
        baseUrls: platformUrls,
        pollMs: 50,
      });
      worker.start();
    });
    after(async () => {
      await worker.stop();
      await sender.close();
      await meta.close();
      await ga4.close();
      await tiktok.close();
      await h.close();
    });

    const configOf = (type: 'meta' | 'ga4' | 'tiktok'): Record<string, unknown> =>
      ({
        meta: { pixel_id: meta.pixelId, access_token: meta.accessToken },
        ga4: { measurement_id: ga4.measurementId, api_secret: ga4.apiSecret },
        tiktok: { pixel_code: tiktok.pixelCode, access_token: tiktok.accessToken },
      })[type];

    const destination = async (
      pixel: string,
      type: 'meta' | 'ga4' | 'tiktok',
      extra: Record<string, unknown> = {},
    ) => {
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations`,
        payload: { type, config: { ...configOf(type), ...extra } },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };

    /** A website event every platform can take, with `extra` merged over it. */
    const event = (pixel: string, id: string, extra: Record<string, unknown> = {}) => {
      const { user_data: userData, ...rest } = extra;
      return {
        pixel_id: pixel,
        event_name: 'Lead',
        event_id: id,
        url: `https://shop.example/${id}`,
        ...rest,
        user_data: {
          email: `${id}@example.com`,
          external_id: `user-${id}`,
          client_ip_address: '203.0.113.7',
          client_user_agent: UA,
          ga_client_id: '1234567890.1700000000',
          ...(userData as Record<string, string> | undefined),
        },
      };
    };

    const track = async (body: Record<string, unknown>) => {
      const res = await h.request(acme, { method: 'POST', url: '/v1/track', payload: body });
      assert.equal(res.statusCode, 200, res.body);
    };

    const outcome = async (pixel: string, eventId: string, platform: string) => {
      const map = await h.store.forwarding.eventForwarding(acme.account.id, pixel, [eventId], true);
      return (map.get(eventId) ?? []).find((e) => e.platform === platform);
    };
    const settled = (pixel: string, eventId: string, platforms: string[]) =>
      waitUntil(async () => {
        for (const p of platforms) {
          const status = (await outcome(pixel, eventId, p))?.status;
          if (status === undefined || status === 'pending') return false;
        }
        return true;
      });
    const metaEvent = (id: string) => meta.events.find((e) => e['event_id'] === id);
    const tiktokEvent = (id: string) => tiktok.events.find((e) => e['event_id'] === id);
    const ga4Event = (id: string) =>
      ga4.events.find((e) => e.params['page_location'] === `https://shop.example/${id}`);

    describe('TikTok', () => {
      it("sends TikTok's current names, the URL's ttclid, and retries code 40700", async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, 'tiktok');
        tiktok.answerNext.push(40700);
        await track(
          event(pixel, 't-buy', {
            event_name: 'Purchase',
            value: 10,
            currency: 'EUR',
            url: 'https://shop.example/t-buy?ttclid=E.C.P.abc123',
          }),
        );
        await track(event(pixel, 't-lead'));
        await settled(pixel, 't-buy', ['tiktok']);
        await settled(pixel, 't-lead', ['tiktok']);
        const buy = await outcome(pixel, 't-buy', 'tiktok');
        assert.equal(buy?.status, 'forwarded', buy?.lastError ?? '');
        assert.ok((buy?.attempts ?? 0) >= 2, 'retried after 40700');
        assert.equal(tiktokEvent('t-buy')!['event'], 'Purchase');
        assert.equal(tiktokEvent('t-lead')!['event'], 'Lead');
        const user = tiktokEvent('t-buy')!['user'] as Record<string, unknown>;
        assert.equal(user['ttclid'], 'E.C.P.abc123');
      });
    });

    describe('Meta', () => {
      it('makes fbc from the fbclid in the URL, keeps the token out of the URL', async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, 'meta');
        const at = new Date(Date.now() - 60_000);
        await track(
          event(pixel, 'm-click', {
            url: 'https://shop.example/m-click?fbclid=IwAR2xYzAbC_dEf',
            timestamp: at.toISOString(),
          }),
        );
        await settled(pixel, 'm-click', ['meta']);
        const sent = metaEvent('m-click')!;
        const userData = sent['user_data'] as Record<string, unknown>;
        assert.equal(userData['fbc'], `fb.1.${at.getTime()}.IwAR2xYzAbC_dEf`);
        const request = meta.requests.find((r) => r.body.includes('"m-click"'))!;
        assert.equal(request.query.get('access_token'), null);
        assert.equal(request.headers['authorization'], `Bearer ${meta.accessToken}`);
        const record = await h.request(acme, {
          method: 'GET',
          url: `/v1/pixels/${pixel}/events/m-click`,
        });
        assert.ok(record.json().match_quality.keys.includes('fbc'), 'the estimate counts it');
      });

      it('sends a 10-day-old physical_store event, skips an app event without app data', async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, 'meta');
        // Stored with a past timestamp through the store (the API refuses none in the past).
        await track(
          event(pixel, 'm-app', { action_source: 'app', user_data: { client_user_agent: UA } }),
        );
        const tenDays = new Date(Date.now() - 10 * 86_400_000);
        await track(
          event(pixel, 'm-store', {
            action_source: 'physical_store',
            timestamp: tenDays.toISOString(),
          }),
        );
        await track(event(pixel, 'm-old-web', { timestamp: tenDays.toISOString() }));
        await settled(pixel, 'm-store', ['meta']);
        await settled(pixel, 'm-app', ['meta']);
        await settled(pixel, 'm-old-web', ['meta']);
        assert.equal((await outcome(pixel, 'm-store', 'meta'))?.status, 'forwarded');
        assert.ok(metaEvent('m-store'));
        const app = await outcome(pixel, 'm-app', 'meta');
        assert.equal(app?.status, 'skipped');
        assert.match(app!.reason!, /action_source app needs app_data/);
        assert.match(
          (await outcome(pixel, 'm-old-web', 'meta'))!.reason!,
          /outside Meta's 7-day window/,
        );
      });

      it('hashes US state and Canadian province names as their 2-letter codes', async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, 'meta');
        await track(event(pixel, 'm-state', { user_data: { state: 'California', country: 'US' } }));
        await track(event(pixel, 'm-prov', { user_data: { state: 'British Columbia' } }));
        await settled(pixel, 'm-state', ['meta']);
        await settled(pixel, 'm-prov', ['meta']);
        const st = (id: string) => (metaEvent(id)!['user_data'] as Record<string, string[]>)['st'];
        assert.deepEqual(st('m-state'), [sha256Hex('ca')]);
        assert.deepEqual(st('m-prov'), [sha256Hex('bc')]);
      });
    });

    describe('GA4', () => {
      it('sends session_id, the shop’s transaction_id, the _ga id, IP and user agent', async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, 'ga4');
        await track(
          event(pixel, 'g-buy', {
            event_name: 'Purchase',
            value: 20,
            currency: 'EUR',
            custom_data: { order_id: 'SO-1001', transaction_id: 'T-1001' },
            user_data: { ga_client_id: 'GA1.1.987654321.1700000000', ga_session_id: '1732600000' },
          }),
        );
        await settled(pixel, 'g-buy', ['ga4']);
        const sent = ga4Event('g-buy')!;
        assert.equal(sent.client_id, '987654321.1700000000');
        assert.equal(sent.params['transaction_id'], 'T-1001');
        assert.equal(sent.params['session_id'], '1732600000');
        assert.equal(sent.params['engagement_time_msec'], 1);
        assert.equal(sent.request['ip_override'], '203.0.113.7');
        assert.equal(sent.request['user_agent'], UA);
        assert.equal(sent.user_id, sha256Hex('user-g-buy'));
        assert.ok(sent.request['user_data'], 'user_data goes with the user_id');
        await track(
          event(pixel, 'g-order', {
            event_name: 'Purchase',
            value: 5,
            currency: 'EUR',
            custom_data: { order_id: 'SO-1002' },
          }),
        );
        await settled(pixel, 'g-order', ['ga4']);
        assert.equal(ga4Event('g-order')!.params['transaction_id'], 'SO-1002');
      });

      it('sends user_data only with a user_id, and the ledger says why not', async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, 'ga4');
        const body = event(pixel, 'g-anon');
        delete (body.user_data as Record<string, unknown>)['external_id'];
        await track(body);
        await settled(pixel, 'g-anon', ['ga4']);
        const sent = ga4Event('g-anon')!;
        assert.equal(sent.user_id, undefined);
        assert.equal(sent.request['user_data'], undefined);
        const o = await outcome(pixel, 'g-anon', 'ga4');
        assert.equal(o?.status, 'forwarded');
        assert.match(
          o!.attemptLog![0]!.note!,
          /user_data not sent: GA4 takes it only with a user_id/,
        );
      });

      it('cuts page params to their limits, splits bodies of 130 kB, skips reserved names', async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, 'ga4', { event_names: { Lead: 'ad_reward' } });
        await track(event(pixel, 'g-reserved'));
        const other = await h.pixel(acme);
        await destination(other, 'ga4');
        await track(
          event(other, 'g-long', { url: `https://shop.example/g-long?${'q'.repeat(1500)}` }),
        );
        // 25 events of one visitor with ~9 kB of items each: one request would be ~230 kB.
        const big = {
          items: Array.from({ length: 60 }, (_, i) => ({
            item_id: `SKU-${i}`,
            item_name: 'x'.repeat(120),
          })),
        };
        const events = Array.from({ length: 25 }, (_, i) =>
          event(other, `g-big-${i}`, {
            title: 'T'.repeat(300),
            custom_data: big,
            user_data: { email: 'same@example.com', external_id: 'same' },
          }),
        );
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/track/batch',
          payload: { events },
        });
        assert.equal(res.statusCode, 200, res.body);
        await settled(pixel, 'g-reserved', ['ga4']);
        assert.match(
          (await outcome(pixel, 'g-reserved', 'ga4'))!.reason!,
          /"ad_reward" is reserved/,
        );
        await settled(other, 'g-long', ['ga4']);
        const long = await outcome(other, 'g-long', 'ga4');
        const longSent = ga4.events.find((e) =>
          String(e.params['page_location']).startsWith('https://shop.example/g-long?'),
        )!;
        assert.equal([...String(longSent.params['page_location'])].length, 1000);
        assert.match(long!.attemptLog![0]!.note!, /page_location to 1000/);
        for (let i = 0; i < 25; i++) await settled(other, `g-big-${i}`, ['ga4']);
        const kept = ga4.events.filter((e) =>
          String(e.params['page_location']).startsWith('https://shop.example/g-big-'),
        );
        assert.equal(kept.length, 25, 'every event arrives');
        const bodies = ga4.requests.filter((r) => r.body.includes('g-big-'));
        assert.ok(bodies.length >= 2, 'split');
        assert.ok(bodies.every((r) => Buffer.byteLength(r.body) < 130_000));
      });
    });

    describe('consent', () => {
      it('refuses an unknown consent key or value with the field named', async () => {
        const pixel = await h.pixel(acme);
        for (const [consent, message] of [
          [{ ad_storage: 'granted' }, 'Unknown field: consent.ad_storage'],
          [{ ad_user_data: 'yes' }, 'Invalid field: consent.ad_user_data'],
          [{ limited_data_use: 'true' }, 'Invalid field: consent.limited_data_use'],
        ] as const) {
          const res = await h.request(acme, {
            method: 'POST',
            url: '/v1/track',
            payload: { pixel_id: pixel, event_name: 'Lead', consent },
          });
          assert.equal(res.statusCode, 400, res.body);
          assert.match(res.json().message, new RegExp(`^${message.replace('.', '\\.')}`));
        }
        const batch = await h.request(acme, {
          method: 'POST',
          url: '/v1/track/batch',
          payload: { events: [{ pixel_id: pixel, event_name: 'Lead', consent: { x: true } }] },
        });
        assert.match(batch.body, /Unknown field: consent\.x/);
      });

      it('keeps the consent with the record and shows it', async () => {
        const pixel = await h.pixel(acme);
        const consent = { ad_user_data: 'granted', ad_personalization: 'denied' };
        await track(event(pixel, 'c-kept', { consent }));
        await track(event(pixel, 'c-none'));
        const one = await h.request(acme, {
          method: 'GET',
          url: `/v1/pixels/${pixel}/events/c-kept`,
        });
        assert.equal(one.statusCode, 200, one.body);
        assert.deepEqual(one.json().consent, consent);
        const list = await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixel}/events` });
        const byId = new Map(
          list.json().events.map((e: { event_id: string; consent: unknown }) => [e.event_id, e]),
        );
        assert.deepEqual((byId.get('c-kept') as { consent: unknown }).consent, consent);
        assert.equal((byId.get('c-none') as { consent: unknown }).consent, null);
      });

      it('ad_user_data denied: GA4 gets the signal and no identifier, Meta and TikTok skip it', async () => {
        const pixel = await h.pixel(acme);
        for (const type of ['meta', 'ga4', 'tiktok'] as const) await destination(pixel, type);
        await track(
          event(pixel, 'c-denied', {
            consent: { ad_user_data: 'denied', ad_personalization: 'denied' },
          }),
        );
        await settled(pixel, 'c-denied', ['meta', 'ga4', 'tiktok']);
        for (const p of ['meta', 'tiktok']) {
          const o = await outcome(pixel, 'c-denied', p);
          assert.equal(o?.status, 'skipped', p);
          assert.equal(o?.reason, 'consent denied: ad_user_data');
        }
        assert.equal(metaEvent('c-denied'), undefined);
        assert.equal(tiktokEvent('c-denied'), undefined);
        assert.equal((await outcome(pixel, 'c-denied', 'ga4'))?.status, 'forwarded');
        const sent = ga4Event('c-denied')!;
        assert.deepEqual(sent.request['consent'], {
          ad_user_data: 'DENIED',
          ad_personalization: 'DENIED',
        });
        assert.equal(sent.client_id, '1234567890.1700000000');
        for (const key of ['user_id', 'user_data', 'ip_override', 'user_agent']) {
          assert.equal(sent.request[key], undefined, key);
        }
      });

      it('limited_data_use: Meta LDU with country and state 0, TikTok limited_data_use, GA4 personalisation denied', async () => {
        const pixel = await h.pixel(acme);
        for (const type of ['meta', 'ga4', 'tiktok'] as const) await destination(pixel, type);
        await track(
          event(pixel, 'c-ldu', { consent: { ad_user_data: 'granted', limited_data_use: true } }),
        );
        await settled(pixel, 'c-ldu', ['meta', 'ga4', 'tiktok']);
        const m = metaEvent('c-ldu')!;
        assert.deepEqual(m['data_processing_options'], ['LDU']);
        assert.equal(m['data_processing_options_country'], 0);
        assert.equal(m['data_processing_options_state'], 0);
        assert.equal(tiktokEvent('c-ldu')!['limited_data_use'], true);
        assert.deepEqual(ga4Event('c-ldu')!.request['consent'], {
          ad_user_data: 'GRANTED',
          ad_personalization: 'DENIED',
        });
      });

      it('require_consent: only events with ad_user_data granted reach the destination', async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, 'meta', { require_consent: true });
        await track(event(pixel, 'c-req-none'));
        await track(event(pixel, 'c-req-ok', { consent: { ad_user_data: 'granted' } }));
        await settled(pixel, 'c-req-none', ['meta']);
        await settled(pixel, 'c-req-ok', ['meta']);
        const none = await outcome(pixel, 'c-req-none', 'meta');
        assert.equal(none?.status, 'skipped');
        assert.equal(none?.reason, 'no consent: the destination requires ad_user_data granted');
        assert.equal((await outcome(pixel, 'c-req-ok', 'meta'))?.status, 'forwarded');
        assert.ok(metaEvent('c-req-ok'));
        assert.equal(metaEvent('c-req-none'), undefined);
      });

      it('/v1/track/validate shows each destination its consent outcome', async () => {
        const pixel = await h.pixel(acme);
        const ids = {
          meta: await destination(pixel, 'meta'),
          ga4: await destination(pixel, 'ga4'),
          strict: await destination(pixel, 'tiktok', { require_consent: true }),
        };
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/track/validate',
          payload: event(pixel, 'c-validate', { consent: { ad_user_data: 'denied' } }),
        });
        assert.equal(res.statusCode, 200, res.body);
        const verdicts = new Map(
          res.json().destinations.map((d: { destination_id: string }) => [d.destination_id, d]),
        ) as Map<string, { would_forward: boolean; reason?: string; consent: string }>;
        assert.equal(verdicts.get(ids.meta)!.would_forward, false);
        assert.equal(verdicts.get(ids.meta)!.consent, 'skipped: consent denied: ad_user_data');
        assert.equal(verdicts.get(ids.ga4)!.would_forward, true);
        assert.match(verdicts.get(ids.ga4)!.consent, /"ad_user_data":"DENIED"/);
        assert.match(verdicts.get(ids.ga4)!.consent, /no user identifier/);
        assert.equal(
          verdicts.get(ids.strict)!.consent,
          'skipped: no consent: the destination requires ad_user_data granted',
        );
      });
    });
  });
}
