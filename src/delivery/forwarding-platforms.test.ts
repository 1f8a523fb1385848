/**
 * GA4 and TikTok end to end, on both stores: the forwarding worker against the local GA4 and
 * TikTok stand-ins (test/platforms/), which judge our payloads by the platforms' documented
 * rules. The same faults as Meta's (forwarding-worker.test.ts): down then up, a poisoned event,
 * an expired token; and one pixel on all three platforms with one of them down.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';
import { testLogger } from '../../test/log-capture.ts';
import { type Ga4Server, startGa4Server } from '../../test/platforms/ga4-server.ts';
import { type MetaServer, startMetaServer } from '../../test/platforms/meta-server.ts';
import { startTiktokServer, type TiktokServer } from '../../test/platforms/tiktok-server.ts';
import { systemClock } from '../domain/ports.ts';
import { createMetrics } from '../http/metrics.ts';
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
  describe(`forwarding to GA4 and TikTok [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let meta: MetaServer;
    let ga4: Ga4Server;
    let tiktok: TiktokServer;
    let sender: PlatformSender;
    const workers: ForwardingWorker[] = [];

    before(async () => {
      meta = await startMetaServer();
      ga4 = await startGa4Server();
      tiktok = await startTiktokServer();
      // The test send (POST …/test) goes through the app's own gateway: to these servers too.
      h = await startHarness(kind, {
        platformUrls: { meta: meta.url, ga4: ga4.origin, tiktok: tiktok.url },
      });
      acme = await h.account('pro');
      sender = createPlatformSender({ timeoutMs: 2_000 });
    });
    after(async () => {
      for (const w of workers) await w.stop();
      await sender.close();
      await meta.close();
      await ga4.close();
      await tiktok.close();
      await h.close();
    });

    /** A worker with a compressed retry schedule; the previous test's is stopped first. */
    const startWorker = async (schedule = [0.05, 0.05, 0.05, 0.05, 0.05]) => {
      for (const w of workers.splice(0)) await w.stop();
      const worker = new ForwardingWorker({
        store: h.store.forwarding,
        source: h.store.matchKeys,
        clock: systemClock,
        sender,
        logger: testLogger(),
        schedule,
        baseUrls: { meta: meta.url, ga4: ga4.origin, tiktok: tiktok.url },
        pollMs: 50,
        metrics: createMetrics(),
      });
      workers.push(worker);
      worker.start();
      return worker;
    };

    const destination = async (pixel: string, type: 'meta' | 'ga4' | 'tiktok') => {
      const config =
        type === 'meta'
          ? { pixel_id: meta.pixelId, access_token: meta.accessToken }
          : type === 'ga4'
            ? { measurement_id: ga4.measurementId, api_secret: ga4.apiSecret }
            : { pixel_code: tiktok.pixelCode, access_token: tiktok.accessToken };
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations`,
        payload: { type, config },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };

    const track = async (
      pixel: string,
      prefix: string,
      n: number,
      options: { name?: string; gaClientId?: boolean; value?: number; sameVisitor?: boolean } = {},
    ) => {
      const events = Array.from({ length: n }, (_, i) => ({
        pixel_id: pixel,
        event_name: options.name ?? 'Lead',
        event_id: `${prefix}-${i}`,
        url: `https://shop.example/${prefix}`,
        ...(options.value !== undefined ? { value: options.value, currency: 'EUR' } : {}),
        user_data: {
          email: options.sameVisitor ? 'same@example.com' : `p${i}@example.com`,
          client_user_agent: 'Mozilla/5.0 (test)',
          ...(options.gaClientId === false
            ? {}
            : { ga_client_id: `${options.sameVisitor ? 1000 : 1000 + i}.1700000000` }),
        },
      }));
      for (let i = 0; i < events.length; i += 1000) {
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/track/batch',
          payload: { events: events.slice(i, i + 1000) },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
    };

    const forwarding = async (pixel: string, eventId: string, platform?: string) => {
      const map = await h.store.forwarding.eventForwarding(acme.account.id, pixel, [eventId], true);
      const entries = map.get(eventId) ?? [];
      return platform ? entries.filter((e) => e.platform === platform) : entries;
    };
    const statusOf = async (pixel: string, eventId: string, platform: string) =>
      (await forwarding(pixel, eventId, platform))[0]?.status;

    /** GA4 events carry no event id: each test's events carry their own page URL. */
    const ga4Events = (prefix: string) =>
      ga4.events.filter((e) => e.params['page_location'] === `https://shop.example/${prefix}`);
    const ga4Collects = (prefix: string) =>
      ga4.requests
        .filter((r) => r.path === '/mp/collect')
        .map(
          (r) =>
            r.json as {
              client_id: string;
              timestamp_micros: number;
              events: Array<{
                name: string;
                timestamp_micros: number;
                params: Record<string, unknown>;
              }>;
            },
        )
        .filter((b) =>
          b.events.some((e) => e.params['page_location'] === `https://shop.example/${prefix}`),
        );
    const tiktokReceived = (prefix: string) =>
      tiktok.events.filter((e) => String(e['event_id']).startsWith(`${prefix}-`)).length;
    const metaReceived = (prefix: string) =>
      meta.events.filter((e) => String(e['event_id']).startsWith(`${prefix}-`)).length;
    const state = async (pixel: string, dst: string) =>
      (
        await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixel}/destinations/${dst}` })
      ).json();

    it('GA4: forwards with client_id, measurement_id, api_secret, ≤ 25 events a request', async () => {
      const pixel = await h.pixel(acme);
      await destination(pixel, 'ga4');
      // One visitor (same ga_client_id, same email): 30 events, so two requests.
      await track(pixel, 'ga', 30, { name: 'Purchase', value: 12.5, sameVisitor: true });
      await track(pixel, 'ga-anon', 1, { gaClientId: false });
      await startWorker();
      await waitUntil(() => ga4Events('ga').length === 30);
      const collects = ga4Collects('ga');
      assert.equal(collects.length, 2);
      assert.ok(collects.every((b) => b.events.length <= 25));
      const query = ga4.requests.find((r) => r.path === '/mp/collect')!.query;
      assert.equal(query.get('measurement_id'), ga4.measurementId);
      assert.equal(query.get('api_secret'), ga4.apiSecret);
      const first = collects[0]!;
      assert.equal(first.client_id, '1000.1700000000');
      const event = first.events[0]!;
      assert.equal(event.name, 'purchase');
      assert.equal(event.params['value'], 12.5);
      assert.equal(event.params['currency'], 'EUR');
      assert.match(String(event.params['transaction_id']), /^ga-\d+$/);
      assert.ok(Number.isInteger(event.timestamp_micros));
      assert.ok(Math.abs(event.timestamp_micros / 1000 - Date.now()) < 60_000);
      await waitUntil(async () => (await statusOf(pixel, 'ga-29', 'ga4')) === 'forwarded');
      const [entry] = await forwarding(pixel, 'ga-0', 'ga4');
      assert.equal(entry!.attemptLog![0]!.statusCode, 204);
      // No ga_client_id: skipped, with the reason, and never sent.
      await waitUntil(async () => (await statusOf(pixel, 'ga-anon-0', 'ga4')) === 'skipped');
      const [skipped] = await forwarding(pixel, 'ga-anon-0', 'ga4');
      assert.match(skipped!.reason!, /missing user_data\.ga_client_id/);
      assert.equal(ga4Events('ga-anon').length, 0);
    });

    it('GA4: the test send uses /debug/mp/collect and reports its validationMessages', async () => {
      const pixel = await h.pixel(acme);
      const dst = await destination(pixel, 'ga4');
      const url = `/v1/pixels/${pixel}/destinations/${dst}/test`;
      const res = await h.request(acme, { method: 'POST', url });
      assert.equal(res.statusCode, 200, res.body);
      const ok = res.json();
      assert.equal(ok.ok, true, res.body);
      assert.deepEqual(ok.platform_response.validationMessages, []);
      assert.equal(ok.payload.events[0].name, 'purchase');
      assert.equal(ga4.requests.at(-1)!.path, '/debug/mp/collect');
      // GA4's collect endpoint would take this with a 2xx and drop it; the test send says why.
      const patched = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}/destinations/${dst}`,
        payload: { config: { measurement_id: 'G-UNKNOWN1' } },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      const refused = (await h.request(acme, { method: 'POST', url })).json();
      assert.equal(refused.ok, false, JSON.stringify(refused));
      assert.deepEqual(
        refused.platform_response.validationMessages.map((m: { fieldPath: string }) => m.fieldPath),
        ['measurement_id'],
      );
    });

    it('GA4: retries while GA4 answers 5xx, then delivers everything', async () => {
      const pixel = await h.pixel(acme);
      const dst = await destination(pixel, 'ga4');
      ga4.mode = 'down';
      try {
        await track(pixel, 'gadown', 10);
        await startWorker([0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]);
        await waitUntil(
          async () => ((await forwarding(pixel, 'gadown-0', 'ga4'))[0]?.attempts ?? 0) >= 2,
        );
        const [waiting] = await forwarding(pixel, 'gadown-0', 'ga4');
        assert.equal(waiting!.status, 'pending');
        assert.match(waiting!.lastError!, /503/);
        assert.equal((await state(pixel, dst)).state, 'failing');
      } finally {
        ga4.mode = 'normal';
      }
      await waitUntil(() => ga4Events('gadown').length === 10);
      await waitUntil(async () => (await statusOf(pixel, 'gadown-9', 'ga4')) === 'forwarded');
      assert.equal((await state(pixel, dst)).state, 'active');
    });

    it('TikTok: forwards with TikTok’s names (Purchase → CompletePayment)', async () => {
      const pixel = await h.pixel(acme);
      await destination(pixel, 'tiktok');
      await track(pixel, 'tt', 3, { name: 'Purchase', value: 9.99 });
      await startWorker();
      await waitUntil(() => tiktokReceived('tt') === 3);
      const request = tiktok.requests.find((r) => JSON.stringify(r.json).includes('"tt-0"'))!;
      assert.equal(request.headers['access-token'], tiktok.accessToken);
      const body = request.json as Record<string, unknown>;
      assert.equal(body['event_source_id'], tiktok.pixelCode);
      const sent = tiktok.events.find((e) => e['event_id'] === 'tt-0')!;
      assert.equal(sent['event'], 'CompletePayment');
      assert.equal((sent['properties'] as Record<string, unknown>)['value'], 9.99);
      const user = sent['user'] as Record<string, unknown>;
      assert.match(String(user['email']), /^[0-9a-f]{64}$/);
      assert.equal(user['user_agent'], 'Mozilla/5.0 (test)');
      await waitUntil(async () => (await statusOf(pixel, 'tt-2', 'tiktok')) === 'forwarded');
    });

    it('TikTok: isolates a poisoned event in a batch: the rest forwarded, 1 failed with TikTok’s message', async () => {
      const pixel = await h.pixel(acme);
      await destination(pixel, 'tiktok');
      tiktok.rejectEvent = (e) =>
        e['event_id'] === 'ttpoison-37' ? 'properties.value: Not a valid number.' : undefined;
      try {
        await track(pixel, 'ttpoison', 100);
        await startWorker();
        await waitUntil(() => tiktokReceived('ttpoison') === 99);
        await waitUntil(async () => (await statusOf(pixel, 'ttpoison-37', 'tiktok')) === 'failed');
        const [bad] = await forwarding(pixel, 'ttpoison-37', 'tiktok');
        assert.match(bad!.lastError!, /TikTok code 40002: .*Not a valid number/);
        assert.equal(tiktokReceived('ttpoison'), 99);
        await waitUntil(
          async () => (await statusOf(pixel, 'ttpoison-99', 'tiktok')) === 'forwarded',
        );
      } finally {
        delete tiktok.rejectEvent;
      }
    });

    it('TikTok: an expired token (code 40105) suspends the destination; PATCH resumes it', async () => {
      const pixel = await h.pixel(acme);
      const dst = await destination(pixel, 'tiktok');
      tiktok.mode = 'expired';
      try {
        await track(pixel, 'ttexp', 4);
        await startWorker();
        await waitUntil(async () => (await state(pixel, dst)).state === 'suspended');
        assert.match((await state(pixel, dst)).last_error, /TikTok code 40105/);
        const before = tiktok.requests.length;
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(tiktok.requests.length, before, 'nothing sent while suspended');
        assert.equal(await statusOf(pixel, 'ttexp-0', 'tiktok'), 'pending');
      } finally {
        tiktok.mode = 'normal';
      }
      const res = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}/destinations/${dst}`,
        payload: { enabled: true },
      });
      assert.equal(res.json().state, 'active');
      await waitUntil(() => tiktokReceived('ttexp') === 4);
    });

    for (const down of ['meta', 'ga4', 'tiktok'] as const) {
      it(`one pixel on all three platforms: ${down} down, the other two keep flowing`, async () => {
        const pixel = await h.pixel(acme);
        await destination(pixel, 'meta');
        await destination(pixel, 'ga4');
        await destination(pixel, 'tiktok');
        const prefix = `all-${down}`;
        const server = { meta, ga4, tiktok }[down];
        server.mode = 'down';
        const count = {
          meta: () => metaReceived(prefix),
          ga4: () => ga4Events(prefix).length,
          tiktok: () => tiktokReceived(prefix),
        };
        try {
          await track(pixel, prefix, 5);
          await startWorker([0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]);
          for (const up of (['meta', 'ga4', 'tiktok'] as const).filter((p) => p !== down)) {
            await waitUntil(() => count[up]() === 5);
          }
          await waitUntil(
            async () => ((await forwarding(pixel, `${prefix}-0`, down))[0]?.attempts ?? 0) >= 2,
          );
          assert.equal(count[down](), 0);
          assert.equal(await statusOf(pixel, `${prefix}-0`, down), 'pending');
        } finally {
          server.mode = 'normal';
        }
        await waitUntil(() => count[down]() === 5);
        await waitUntil(async () => (await statusOf(pixel, `${prefix}-4`, down)) === 'forwarded');
      });
    }
  });
}
