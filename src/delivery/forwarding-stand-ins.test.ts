/**
 * Every platform of the registry end to end, on both stores: events tracked through the app
 * are forwarded by the worker to the platform's stand-in (test/platforms/stand-ins.ts), which
 * keeps them only if the payload honours what the platform documents; the record shows them
 * `forwarded`, and the destination's test send (the platform's test mode) is accepted, or, for a
 * platform without one, built and checked and not sent. A
 * platform added to the registry runs here as soon as its stand-in is listed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';
import { testLogger } from '../../test/log-capture.ts';
import { STAND_INS, type StandIn, tokenUrlsOf } from '../../test/platforms/stand-ins.ts';
import {
  PLATFORMS,
  type Platform,
  platformModule,
} from '../domain/forwarding/platforms/registry.ts';
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
  describe(`forwarding to every platform's stand-in [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let sender: PlatformSender;
    let worker: ForwardingWorker;
    let tokens: AccessTokens;
    const standIns = {} as Record<Platform, StandIn>;

    before(async () => {
      for (const type of PLATFORMS) standIns[type] = await STAND_INS[type]();
      const urls = Object.fromEntries(PLATFORMS.map((t) => [t, standIns[t].baseUrl])) as Record<
        Platform,
        string
      >;
      const tokenUrls = tokenUrlsOf(standIns);
      tokens = createAccessTokens({ urls: tokenUrls });
      h = await startHarness(kind, { platformUrls: urls, tokenUrls });
      acme = await h.account('enterprise');
      sender = createPlatformSender({ timeoutMs: 2_000 });
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
      for (const type of PLATFORMS) await standIns[type].close();
      await h.close();
    });

    for (const type of PLATFORMS) {
      it(`${type}: a purchase, a lead and a page view reach the stand-in and are forwarded; the test send is accepted`, async () => {
        const standIn = standIns[type];
        const pixel = await h.pixel(acme);
        const created = await h.request(acme, {
          method: 'POST',
          url: `/v1/pixels/${pixel}/destinations`,
          payload: { type, config: standIn.config },
        });
        assert.equal(created.statusCode, 201, created.body);
        const names = ['Purchase', 'Lead', 'PageView'];
        const events = names.map((name, i) => ({
          pixel_id: pixel,
          event_name: name,
          event_id: `${type}-all-${i}`,
          url: `https://shop.example/${type}?n=${i}`,
          ...(name === 'Purchase' ? { value: 19.5, currency: 'EUR' } : {}),
          user_data: {
            email: `${type}${i}@example.com`,
            phone: '+16505551212',
            client_ip_address: '203.0.113.9',
            client_user_agent: 'Mozilla/5.0 (stand-in test)',
            ...standIn.userData(`${4000 + i}`),
          },
        }));
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/track/batch',
          payload: { events },
        });
        assert.equal(res.statusCode, 200, res.body);
        const statuses = async () => {
          const map = await h.store.forwarding.eventForwarding(
            acme.account.id,
            pixel,
            events.map((e) => e.event_id),
            true,
          );
          return events.map((e) => map.get(e.event_id)?.find((f) => f.platform === type));
        };
        await waitUntil(async () => (await statuses()).every((s) => s?.status === 'forwarded'));
        // Each event reached the platform with the click ids and cookies it was tracked with,
        // in the platform's own fields (contract §18).
        events.forEach((e, i) => {
          const person = `${4000 + i}`;
          const kept = standIn.events.find(
            (k) => standIn.personOf(k) === (standIn.keepsEventId ? e.event_id : person),
          );
          assert.ok(kept, `${e.event_id} kept`);
          assert.deepEqual(standIn.keysOf(kept), standIn.expectedKeys(person), e.event_id);
        });
        // `/v1/track/validate` describes the destination: it would forward, with the payload
        // and what the consent becomes (contract §12, §16).
        const validated = await h.request(acme, {
          method: 'POST',
          url: '/v1/track/validate',
          payload: {
            ...events[0]!,
            event_id: `${type}-validate`,
            consent: { ad_user_data: 'granted' },
          },
        });
        assert.equal(validated.statusCode, 200, validated.body);
        const [verdict] = validated.json().destinations;
        assert.equal(verdict.platform, type);
        assert.equal(verdict.would_forward, true, validated.body);
        assert.equal(typeof verdict.payload, 'object');
        assert.notEqual(verdict.payload, null);
        assert.equal(
          verdict.consent,
          platformModule(type).consent.describe({ ad_user_data: 'granted' }),
        );
        const keptBefore = standIn.events.length;
        const duplicatesBefore = standIn.duplicates();
        const test = await h.request(acme, {
          method: 'POST',
          url: `/v1/pixels/${pixel}/destinations/${created.json().id}/test`,
          payload: { event: events[0]!.event_id },
        });
        assert.equal(test.statusCode, 200, test.body);
        assert.equal(test.json().ok, true, test.body);
        if (platformModule(type).testMode === false) {
          // No test mode: built and checked, never sent (a live conversion is not a test).
          assert.equal(test.json().status_code, null, test.body);
          assert.equal(test.json().platform_response, null, test.body);
          assert.equal(typeof test.json().payload, 'object', test.body);
          assert.notEqual(test.json().payload, null, test.body);
          assert.equal(standIn.events.length, keptBefore);
          assert.equal(standIn.duplicates(), duplicatesBefore);
        } else {
          assert.equal(typeof test.json().status_code, 'number', test.body);
        }
      });
    }
  });
}
