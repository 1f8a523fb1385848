import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';
import { testLogger } from '../../test/log-capture.ts';
import { type MetaServer, startMetaServer } from '../../test/platforms/meta-server.ts';
import { baseUrlsFor } from '../../test/platforms/stand-ins.ts';
import { systemClock } from '../domain/ports/clock.ts';
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
  describe(`forwarding worker [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let meta: MetaServer;
    const second = { pixelId: '222', accessToken: 'EAAB-second-0002' } as MetaServer;
    let sender: PlatformSender;
    const workers: ForwardingWorker[] = [];

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      meta = await startMetaServer();
      // Short, so stopping the workers does not wait long for the hanging request.
      sender = createPlatformSender({ timeoutMs: 2_000 });
    });
    after(async () => {
      for (const w of workers) await w.stop();
      meta.mode = 'normal';
      await sender.close();
      await meta.close();
      await h.close();
    });

    /** A worker on the harness's store, with a compressed retry schedule. */
    const startWorker = (options: { schedule?: number[] } = {}) => {
      const metrics = createMetrics();
      const worker = new ForwardingWorker({
        store: h.store.forwarding,
        source: h.store.matchKeys,
        clock: systemClock,
        sender,
        logger: testLogger(),
        schedule: options.schedule ?? [0.05, 0.05, 0.05, 0.05, 0.05],
        baseUrls: baseUrlsFor({ meta: meta.url }, meta.origin),
        pollMs: 50,
        metrics,
      });
      workers.push(worker);
      worker.start();
      return { worker, metrics };
    };

    const destination = async (pixel: string, server: MetaServer, extra = {}) => {
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations`,
        payload: {
          type: 'meta',
          config: { pixel_id: server.pixelId, access_token: server.accessToken },
          ...extra,
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };

    const trackMany = async (pixel: string, prefix: string, n: number, name = 'Lead') => {
      const events = Array.from({ length: n }, (_, i) => ({
        pixel_id: pixel,
        event_name: name,
        event_id: `${prefix}-${i}`,
        url: 'https://shop.example/checkout',
        // A website event reaches Meta only with the visitor's user agent (Meta's rule).
        user_data: { email: `p${i}@example.com`, client_user_agent: 'Mozilla/5.0 (test)' },
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

    const forwarding = async (pixel: string, eventId: string) => {
      const map = await h.store.forwarding.eventForwarding(acme.account.id, pixel, [eventId], true);
      return map.get(eventId) ?? [];
    };

    const received = (server: MetaServer, prefix: string) =>
      server.events.filter((e) => String(e['event_id']).startsWith(`${prefix}-`)).length;

    it('forwards stored events to Meta, records the outcome and emits event.forwarded', async () => {
      const pixel = await h.pixel(acme);
      const dst = await destination(pixel, meta, { events: ['Lead'] });
      await h.request(acme, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: { url: 'http://127.0.0.1:9/hooks', events: ['event.forwarded'] },
      });
      await trackMany(pixel, 'a', 3);
      await trackMany(pixel, 'skipme', 1, 'PageView');
      const { metrics } = startWorker();
      await waitUntil(() => received(meta, 'a') === 3);
      const sent = meta.events.find((e) => e['event_id'] === 'a-0')!;
      assert.equal(sent['event_name'], 'Lead');
      assert.equal(typeof sent['event_time'], 'number');
      assert.equal((sent['user_data'] as Record<string, unknown>)['em'] !== undefined, true);
      await waitUntil(async () => (await forwarding(pixel, 'a-0'))[0]?.status === 'forwarded');
      const [entry] = await forwarding(pixel, 'a-0');
      assert.equal(entry!.destinationId, dst);
      assert.equal(entry!.platform, 'meta');
      assert.equal(entry!.attempts, 1);
      assert.equal(entry!.attemptLog!.length, 1);
      assert.equal(entry!.attemptLog![0]!.statusCode, 200);
      assert.match(entry!.attemptLog![0]!.platformResponse, /fbtrace_id/);
      // Outside the destination's filter: no job at all.
      assert.deepEqual(await forwarding(pixel, 'skipme-0'), []);
      // event.forwarded committed with the outcome, one per (event, destination).
      const claimed = await h.store.webhooks.claimDue({
        now: new Date(Date.now() + 1000),
        limit: 100,
        perEndpoint: 100,
        open: {},
        leaseMs: 10_000,
        owner: 'test',
      });
      const forwardedMessages = claimed
        .map((c) => JSON.parse(c.body))
        .filter((m) => m.event === 'event.forwarded' && m.data.pixel_id === pixel);
      assert.equal(forwardedMessages.length, 3);
      const data = forwardedMessages.find((m) => m.data.event_id === 'a-1').data;
      assert.equal(data.destination_id, dst);
      assert.equal(data.platform, 'meta');
      assert.equal(data.event_name, 'Lead');
      assert.match(data.platform_response.fbtrace_id, /^A/);
      assert.equal(data.platform_response.events_received, 3);
      const counter = async (labels: string) =>
        (await metrics.registry.metrics())
          .split('\n')
          .find((line) => line.startsWith(`trackway_forwarded_events_total{${labels}}`));
      // Counted once the settlement has committed.
      await waitUntil(
        async () => (await counter('platform="meta",outcome="forwarded"'))?.endsWith(' 3') === true,
      );
      assert.equal(
        await counter('platform="tiktok",outcome="skipped"'),
        'trackway_forwarded_events_total{platform="tiktok",outcome="skipped"} 0',
      );
    });

    it('isolates one poisoned event in a batch of 500: 499 forwarded, 1 failed with Meta’s message', async () => {
      const pixel = await h.pixel(acme);
      await destination(pixel, meta);
      meta.rejectEvent = (e) =>
        e['event_id'] === 'poison-137' ? 'The parameter custom_data.value is invalid.' : undefined;
      try {
        await trackMany(pixel, 'poison', 500);
        startWorker();
        await waitUntil(() => received(meta, 'poison') === 499);
        await waitUntil(
          async () => (await forwarding(pixel, 'poison-137'))[0]?.status === 'failed',
        );
        const [bad] = await forwarding(pixel, 'poison-137');
        assert.match(bad!.lastError!, /custom_data\.value is invalid/);
        assert.ok(bad!.attempts > 1, 'sent in the batch, then alone');
        assert.equal(received(meta, 'poison'), 499);
        assert.equal((await forwarding(pixel, 'poison-3'))[0]!.status, 'forwarded');
      } finally {
        delete meta.rejectEvent;
      }
    });

    it('retries while the platform is down, then delivers everything', async () => {
      const pixel = await h.pixel(acme);
      await destination(pixel, meta);
      meta.mode = 'down';
      await trackMany(pixel, 'down', 20);
      startWorker({ schedule: [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2] });
      await waitUntil(async () => ((await forwarding(pixel, 'down-0'))[0]?.attempts ?? 0) >= 2);
      const [waiting] = await forwarding(pixel, 'down-0');
      assert.equal(waiting!.status, 'pending');
      assert.match(waiting!.lastError!, /Meta error 2/);
      const got = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/destinations/${waiting!.destinationId}`,
      });
      assert.equal(got.json().state, 'failing');
      meta.mode = 'normal';
      await waitUntil(() => received(meta, 'down') === 20);
      await waitUntil(async () => (await forwarding(pixel, 'down-19'))[0]?.status === 'forwarded');
      const back = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/destinations/${waiting!.destinationId}`,
      });
      assert.equal(back.json().state, 'active');
    });

    it('suspends on an expired token, keeps the events waiting, resumes on PATCH', async () => {
      const pixel = await h.pixel(acme);
      const dst = await destination(pixel, meta);
      meta.mode = 'expired';
      await trackMany(pixel, 'expired', 5);
      startWorker();
      const url = `/v1/pixels/${pixel}/destinations/${dst}`;
      await waitUntil(
        async () => (await h.request(acme, { method: 'GET', url })).json().state === 'suspended',
      );
      const suspended = (await h.request(acme, { method: 'GET', url })).json();
      assert.match(suspended.last_error, /Meta error 190\/463/);
      await trackMany(pixel, 'expired-later', 2);
      const requestsBefore = meta.requests.length;
      await new Promise((r) => setTimeout(r, 300));
      // Nothing more is sent while suspended; the events wait.
      assert.equal(meta.requests.length, requestsBefore);
      assert.equal((await forwarding(pixel, 'expired-0'))[0]!.status, 'pending');
      assert.equal(received(meta, 'expired'), 0);
      meta.mode = 'normal';
      const res = await h.request(acme, { method: 'PATCH', url, payload: { enabled: true } });
      assert.equal(res.json().state, 'active');
      await waitUntil(() => received(meta, 'expired') === 7);
    });

    it('a hanging destination does not delay another one', async () => {
      const pixel = await h.pixel(acme);
      // Both on the one local Meta: requests for pixel 222 are never answered.
      await destination(pixel, second);
      await destination(pixel, meta);
      meta.hangIf = (request) => request.path.includes('/222/');
      try {
        startWorker();
        await trackMany(pixel, 'iso', 10);
        await waitUntil(() => received(meta, 'iso') === 10, 5_000);
        await waitUntil(() => meta.requests.some((r) => r.path.includes('/222/')), 5_000);
        // And it keeps being served while the other still hangs.
        await trackMany(pixel, 'iso2', 5);
        await waitUntil(() => received(meta, 'iso2') === 5, 5_000);
      } finally {
        delete meta.hangIf;
      }
    });
  });
}
