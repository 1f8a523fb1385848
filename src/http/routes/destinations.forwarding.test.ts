import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { testLogger } from '../../../test/log-capture.ts';
import { type MetaServer, startMetaServer } from '../../../test/platforms/meta-server.ts';
import { baseUrlsFor } from '../../../test/platforms/stand-ins.ts';
import { ForwardingWorker } from '../../delivery/forwarding-worker.ts';
import { createPlatformSender, type PlatformSender } from '../../delivery/platform-sender.ts';
import { systemClock } from '../../domain/ports/clock.ts';

const waitUntil = async (check: () => Promise<boolean>, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
};

// Covers what an operator sees and does around forwarding: `forwarding` on the event records
// (list, export), GET of one event with its attempt ledger, replay and the test send.
for (const kind of await testStores({ perAccountIngest: true })) {
  describe(`forwarding routes [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let meta: MetaServer;
    let sender: PlatformSender;
    const workers: ForwardingWorker[] = [];

    before(async () => {
      meta = await startMetaServer();
      h = await startHarness(kind, {
        platformUrls: baseUrlsFor({ meta: meta.url }, meta.origin),
      });
      acme = await h.account('pro');
      other = await h.account('pro');
      sender = createPlatformSender({ timeoutMs: 2_000 });
    });
    after(async () => {
      for (const w of workers) await w.stop();
      await sender.close();
      await h.close();
      await meta.close();
    });

    const startWorker = () => {
      const worker = new ForwardingWorker({
        store: h.store.forwarding,
        source: h.store.matchKeys,
        clock: systemClock,
        sender,
        logger: testLogger(),
        schedule: [0.05],
        baseUrls: baseUrlsFor({ meta: meta.url }, meta.origin),
        pollMs: 50,
      });
      workers.push(worker);
      worker.start();
    };

    const setup = async () => {
      const pixel = await h.pixel(acme);
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations`,
        payload: {
          type: 'meta',
          config: { pixel_id: meta.pixelId, access_token: meta.accessToken },
        },
      });
      return { pixel, dst: res.json().id as string };
    };

    it('shows forwarding on each record and the attempt ledger on GET of one event', async () => {
      const { pixel, dst } = await setup();
      const tracked = await h.track(acme, {
        pixel_id: pixel,
        event_name: 'Lead',
        event_id: 'lead-1',
        url: 'https://shop.example/checkout',
        // A website event reaches Meta only with the visitor's user agent (Meta's rule).
        user_data: { email: 'jane@example.com', client_user_agent: 'Mozilla/5.0 (test)' },
      });
      assert.equal(tracked.statusCode, 200, tracked.body);
      const list = await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixel}/events` });
      assert.deepEqual(list.json().events[0].forwarding, [
        {
          destination_id: dst,
          platform: 'meta',
          status: 'pending',
          attempts: 0,
          reason: null,
          last_error: null,
          forwarded_at: null,
        },
      ]);
      startWorker();
      const url = `/v1/pixels/${pixel}/events/lead-1`;
      await waitUntil(
        async () =>
          (await h.request(acme, { method: 'GET', url })).json().forwarding[0].status ===
          'forwarded',
      );
      const one = (await h.request(acme, { method: 'GET', url })).json();
      assert.equal(one.event_id, 'lead-1');
      assert.equal(one.forwarding[0].attempts, 1);
      assert.equal(one.forwarding[0].attempt_log.length, 1);
      assert.equal(one.forwarding[0].attempt_log[0].status_code, 200);
      assert.match(one.forwarding[0].attempt_log[0].platform_response, /"events_received":1/);
      assert.ok(one.forwarding[0].forwarded_at);
      const exported = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/events/export`,
      });
      assert.equal(JSON.parse(exported.body.split('\n')[0]!).forwarding[0].status, 'forwarded');
      // Not found: another account, an unknown event.
      assert.equal((await h.request(other, { method: 'GET', url })).statusCode, 404);
      const missing = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/events/nope`,
      });
      assert.deepEqual(missing.json(), { error: 'Not found', message: 'Event not found: nope' });
    });

    it('replays a time range: failed events and events stored before the destination', async () => {
      const pixel = await h.pixel(acme);
      // Stored before any destination exists: no job.
      await h.track(acme, {
        pixel_id: pixel,
        event_name: 'Lead',
        event_id: 'early-1',
        url: 'https://shop.example/checkout',
        // A website event reaches Meta only with the visitor's user agent (Meta's rule).
        user_data: { email: 'early@example.com', client_user_agent: 'Mozilla/5.0 (test)' },
      });
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations`,
        payload: {
          type: 'meta',
          config: { pixel_id: meta.pixelId, access_token: meta.accessToken },
        },
      });
      const dst = res.json().id;
      const day = h.clock.now().toISOString().slice(0, 10);
      const replay = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations/${dst}/replay`,
        payload: { start_date: day, end_date: day },
      });
      assert.equal(replay.statusCode, 202, replay.body);
      assert.deepEqual(replay.json(), { queued: 1 });
      startWorker();
      await waitUntil(async () => meta.events.some((e) => e['event_id'] === 'early-1'));
      const bad = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations/${dst}/replay`,
        payload: { start_date: day },
      });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().message, 'Missing required field: end_date');
      const foreign = await h.request(other, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations/${dst}/replay`,
        payload: { start_date: day, end_date: day },
      });
      assert.equal(foreign.statusCode, 404);
    });

    it('sends a test event with test_event_code and answers with what Meta said', async () => {
      const { pixel, dst } = await setup();
      const before = meta.requests.length;
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/destinations/${dst}/test`,
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.ok, true);
      assert.equal(body.status_code, 200);
      assert.equal(body.platform_response.events_received, 1);
      assert.equal(body.payload.test_event_code, 'TEST_TRACKWAY');
      assert.equal(body.payload.data[0].event_name, 'Purchase');
      assert.equal(meta.requests.length, before + 1);
      assert.equal(
        meta.requests.at(-1)!.json &&
          (meta.requests.at(-1)!.json as { test_event_code: string }).test_event_code,
        'TEST_TRACKWAY',
      );
      // A refusal is reported, not thrown.
      await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}/destinations/${dst}`,
        payload: { config: { access_token: 'EAAB-wrong-9999' } },
      });
      const refused = (
        await h.request(acme, {
          method: 'POST',
          url: `/v1/pixels/${pixel}/destinations/${dst}/test`,
        })
      ).json();
      assert.equal(refused.ok, false);
      assert.equal(refused.status_code, 400);
      assert.equal(refused.platform_response.error.code, 190);
      assert.doesNotMatch(JSON.stringify(refused), /EAAB-wrong/);
    });
  });
}
