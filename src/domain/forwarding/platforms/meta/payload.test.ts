import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable, UA } from '../../../../../test/platforms/forwardable.ts';
import { type MetaServer, startMetaServer } from '../../../../../test/platforms/meta-server.ts';
import { send } from '../../../../../test/platforms/send.ts';
import { sha256Hex } from '../../../events/user-data.ts';
import type { MetaConfig } from './config.ts';
import { meta as metaModule } from './index.ts';

const HOUR = 3_600_000;

describe('Meta Conversions API payload', () => {
  let meta: MetaServer;
  let config: MetaConfig;
  before(async () => {
    meta = await startMetaServer();
    config = { pixel_id: meta.pixelId, access_token: meta.accessToken };
  });
  after(() => meta.close());

  it('builds the documented server event, and Meta accepts it', async () => {
    const now = new Date();
    const event = forwardable({
      event: {
        timestamp: new Date(now.getTime() - HOUR),
        customData: { order_ref: 'A-1', value: 1 },
      },
      userData: {
        email: 'John_Smith@gmail.com',
        phone: '+1 650 555 1212',
        first_name: 'John',
        external_id: 'u-1',
      },
      matchKeys: {
        clientIpAddress: '203.0.113.7',
        clientUserAgent: UA,
        fbc: 'fb.1.1554763741205.AbCdEf',
        fbp: 'fb.1.1558571054389.1098115397',
      },
    });
    const built = metaModule.build([event], config, { now });
    assert.deepEqual(built.skipped, []);
    assert.equal(built.requests.length, 1);
    const request = built.requests[0]!;
    // The token in a header, never in the URL (which proxies and servers log).
    assert.equal(request.path, `/${meta.pixelId}/events`);
    assert.equal(request.redactedPath, `/${meta.pixelId}/events`);
    assert.equal(request.headers['authorization'], `Bearer ${meta.accessToken}`);
    assert.deepEqual(request.body, {
      data: [
        {
          event_name: 'Purchase',
          event_time: Math.floor((now.getTime() - HOUR) / 1000),
          event_id: event.event.eventId,
          action_source: 'website',
          event_source_url: 'https://shop.example/checkout/done',
          user_data: {
            em: ['62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f'],
            ph: ['e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176'],
            fn: ['96d9632f363564cc3032521409cf22a852f2032eec099ed5967c0d000cec607a'],
            external_id: [sha256Hex('u-1')],
            client_ip_address: '203.0.113.7',
            client_user_agent: UA,
            fbc: 'fb.1.1554763741205.AbCdEf',
            fbp: 'fb.1.1558571054389.1098115397',
          },
          // Trackway's value wins over the caller's key of the same name.
          custom_data: { order_ref: 'A-1', value: 49.9, currency: 'EUR' },
        },
      ],
    });
    const answer = await send(meta.url, request);
    assert.equal(answer.status, 200);
    assert.equal(JSON.parse(answer.body).events_received, 1);
    assert.deepEqual(meta.events.at(-1), (request.body['data'] as unknown[])[0]);
  });

  it('skips, with the reason, every event Meta would reject (so no batch fails for it)', () => {
    const now = new Date();
    const old = forwardable({
      event: { timestamp: new Date(now.getTime() - 7 * 24 * HOUR - 1000) },
    });
    const noUa = forwardable({ matchKeys: { clientIpAddress: '203.0.113.7' } });
    const noUrl = forwardable({ event: { url: null } });
    const noValue = forwardable({ event: { value: null } });
    const onlyLocation = forwardable({
      actionSource: 'physical_store',
      userData: { city: 'Paris', country: 'FR' },
      matchKeys: null,
    });
    const erased = forwardable({ actionSource: 'website', matchKeys: null });
    const fine = forwardable({ actionSource: 'physical_store', matchKeys: null });
    const built = metaModule.build(
      [old, noUa, noUrl, noValue, onlyLocation, erased, fine],
      config,
      {
        now,
      },
    );
    assert.deepEqual(built.skipped, [
      {
        eventId: old.event.eventId,
        reason: "outside Meta's 7-day window: the event is older than 7 days",
      },
      {
        eventId: noUa.event.eventId,
        reason: 'missing client_user_agent, which Meta requires for a website event',
      },
      {
        eventId: noUrl.event.eventId,
        reason: 'missing url (event_source_url), which Meta requires for a website event',
      },
      {
        eventId: noValue.event.eventId,
        reason: 'missing value or currency, which Meta requires for a Purchase event',
      },
      {
        eventId: onlyLocation.event.eventId,
        reason: 'Meta refuses user_data holding only country, ct',
      },
      {
        eventId: erased.event.eventId,
        reason: 'missing client_user_agent, which Meta requires for a website event',
      },
    ]);
    assert.deepEqual(built.requests[0]?.eventIds, [fine.event.eventId]);
  });

  it('batches at most 1,000 events a request, each accepted by Meta', async () => {
    const now = new Date();
    const events = Array.from({ length: 1_001 }, () => forwardable());
    const built = metaModule.build(events, config, { now });
    assert.deepEqual(
      built.requests.map((r) => r.eventIds.length),
      [1_000, 1],
    );
    for (const request of built.requests) assert.equal((await send(meta.url, request)).status, 200);
  });

  it("uses the config's test_event_code, or the test send's own", () => {
    const now = new Date();
    const withCode = metaModule.build(
      [forwardable()],
      { ...config, test_event_code: 'TEST123' },
      { now },
    );
    assert.equal(withCode.requests[0]?.body['test_event_code'], 'TEST123');
    const testSend = metaModule.build([forwardable()], config, {
      now,
      test: { testEventCode: 'TEST9' },
    });
    assert.equal(testSend.requests[0]?.body['test_event_code'], 'TEST9');
    const live = metaModule.build([forwardable()], config, { now });
    assert.equal('test_event_code' in (live.requests[0]?.body ?? {}), false);
  });

  it('applies event name overrides and passes custom names through', () => {
    const now = new Date();
    const built = metaModule.build(
      [
        forwardable({ event: { eventName: 'Lead', value: null, currency: null } }),
        forwardable({ event: { eventName: 'WishlistShared' } }),
      ],
      { ...config, event_names: { Lead: 'QualifiedLead' } },
      { now },
    );
    const names = (built.requests[0]!.body['data'] as Array<{ event_name: string }>).map(
      (e) => e.event_name,
    );
    assert.deepEqual(names, ['QualifiedLead', 'WishlistShared']);
  });
});
