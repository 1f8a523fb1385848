import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable, UA } from '../../../../../test/platforms/forwardable.ts';
import { type Ga4Server, startGa4Server } from '../../../../../test/platforms/ga4-server.ts';
import { send } from '../../../../../test/platforms/send.ts';
import type { Ga4Config } from './config.ts';
import { ga4 as ga4Module } from './index.ts';
import { classifyGa4Answer, readGa4ValidationMessages } from './response.ts';

const HOUR = 3_600_000;
const keys = (gaClientId: string) => ({
  clientIpAddress: '203.0.113.7',
  clientUserAgent: UA,
  gaClientId,
});

describe('GA4 Measurement Protocol payload', () => {
  let ga4: Ga4Server;
  let config: Ga4Config;
  before(async () => {
    ga4 = await startGa4Server();
    config = { measurement_id: ga4.measurementId, api_secret: ga4.apiSecret };
  });
  after(() => ga4.close());

  it('builds the documented request, and GA4 keeps the event', async () => {
    const now = new Date();
    const timestamp = new Date(now.getTime() - HOUR);
    const event = forwardable({
      event: {
        timestamp,
        customData: { coupon: 'SPRING', items: [{ item_id: 'sku-1', price: 49.9 }] },
      },
      userData: {
        email: 'Jane.Doe@gmail.com',
        phone: '+1 800 555 0100',
        first_name: 'Jane',
        last_name: 'Doe',
        city: 'Mountain View',
        state: 'CA',
        zip: '94043',
        country: 'US',
        external_id: 'u-7',
      },
      matchKeys: keys('1197596843.1673515099'),
    });
    const built = ga4Module.build([event], config, { now });
    assert.deepEqual(built.skipped, []);
    assert.deepEqual(built.notes, []);
    const request = built.requests[0]!;
    assert.equal(
      request.path,
      `/mp/collect?measurement_id=${ga4.measurementId}&api_secret=${ga4.apiSecret}`,
    );
    assert.equal(
      request.redactedPath,
      `/mp/collect?measurement_id=${ga4.measurementId}&api_secret=****0002`,
    );
    const micros = timestamp.getTime() * 1000;
    assert.deepEqual(request.body, {
      client_id: '1197596843.1673515099',
      user_id: event.hashes['ga4']!.user_id,
      user_data: {
        sha256_email_address: ['d6117306485ed0e50afab3ac871e98f81699151f30281527d63ff5f233656c69'],
        sha256_phone_number: ['fb4f73a6ec5fdb7077d564cdd22c3554b43ce49168550c3b12c547b78c517b30'],
        address: [
          {
            sha256_first_name: event.hashes['ga4']!.sha256_first_name,
            sha256_last_name: event.hashes['ga4']!.sha256_last_name,
            city: 'mountain view',
            region: 'ca',
            country: 'us',
          },
        ],
      },
      ip_override: '203.0.113.7',
      user_agent: UA,
      timestamp_micros: micros,
      events: [
        {
          name: 'purchase',
          timestamp_micros: micros,
          params: {
            page_location: 'https://shop.example/checkout/done',
            page_referrer: 'https://shop.example/cart',
            page_title: 'Thank you',
            value: 49.9,
            currency: 'EUR',
            transaction_id: event.event.eventId,
            coupon: 'SPRING',
            items: [{ item_id: 'sku-1', price: 49.9 }],
          },
        },
      ],
    });
    const answer = await send(ga4.origin, request);
    assert.deepEqual(classifyGa4Answer({ kind: 'response', ...answer }, now), {
      kind: 'success',
      receipt: { status_code: 204 },
    });
    assert.deepEqual(ga4.events.at(-1)?.name, 'purchase');
  });

  it('skips what GA4 would drop in silence: no client id, too old, impossible name', () => {
    const now = new Date();
    const noClient = forwardable({ matchKeys: { clientUserAgent: UA } });
    const old = forwardable({
      event: { timestamp: new Date(now.getTime() - 73 * HOUR) },
      matchKeys: keys('1.1'),
    });
    const badName = forwardable({ event: { eventName: '2FA Enabled' }, matchKeys: keys('1.1') });
    const erased = forwardable({ matchKeys: null });
    const built = ga4Module.build([noClient, old, badName, erased], config, { now });
    assert.deepEqual(built.requests, []);
    assert.deepEqual(built.skipped, [
      {
        eventId: noClient.event.eventId,
        reason: 'missing user_data.ga_client_id, which GA4 requires as client_id',
      },
      {
        eventId: old.event.eventId,
        reason: "outside GA4's 72-hour window: the event is older than 72 hours",
      },
      {
        eventId: badName.event.eventId,
        reason:
          'GA4 event name "2_fa_enabled" must start with a letter and hold only letters, digits and _',
      },
      {
        eventId: erased.event.eventId,
        reason: 'missing user_data.ga_client_id, which GA4 requires as client_id',
      },
    ]);
  });

  it("keeps params within GA4's limits and notes what it dropped, so the debug server is silent", async () => {
    const now = new Date();
    const customData: Record<string, unknown> = {
      long_text: 'x'.repeat(150),
      nested: { a: 1 },
      tags: ['a', 'b'],
      nothing: null,
      'bad-name': 1,
      value: 999,
      items: [{ item_id: 'sku-1' }],
    };
    for (let i = 0; i < 30; i++) customData[`extra_${i}`] = i;
    const event = forwardable({
      event: { eventName: 'AddToCart', customData },
      matchKeys: keys('2.2'),
    });
    const built = ga4Module.build([event], config, { now, test: {} });
    const request = built.requests[0]!;
    assert.ok(request.path.startsWith('/debug/mp/collect?'));
    const params = (request.body['events'] as Array<{ params: Record<string, unknown> }>)[0]!
      .params;
    assert.equal(Object.keys(params).length, 25);
    assert.equal(params['long_text'], 'x'.repeat(100));
    assert.equal(params['value'], 49.9);
    assert.deepEqual(built.notes, [
      {
        eventId: event.event.eventId,
        note:
          'dropped params: nested (object), tags (array), nothing (null), bad-name (name must start with a letter and hold only letters, digits and _), value (set by Trackway); ' +
          'truncated to 100 characters: long_text; ' +
          "dropped over GA4's 25-param limit: extra_18, extra_19, extra_20, extra_21, extra_22, extra_23, extra_24, extra_25, extra_26, extra_27, extra_28, extra_29; " +
          'user_data not sent: GA4 takes it only with a user_id (no external_id)',
      },
    ]);
    const answer = await send(ga4.origin, request);
    assert.deepEqual(readGa4ValidationMessages(answer.body), []);
  });

  it("reports the validation server's messages for a payload that breaks GA4's rules", async () => {
    const built = ga4Module.build([forwardable({ matchKeys: keys('3.3') })], config, {
      now: new Date(),
      test: {},
    });
    const request = built.requests[0]!;
    const broken = {
      ...request,
      body: {
        ...request.body,
        client_id: undefined,
        events: [{ name: 'first_visit', params: { x: { y: 1 } } }],
      },
    };
    const answer = await send(ga4.origin, broken);
    assert.deepEqual(
      readGa4ValidationMessages(answer.body)?.map((m) => [m.fieldPath, m.validationCode]),
      [
        ['client_id', 'VALUE_REQUIRED'],
        ['events[0].name', 'NAME_RESERVED'],
        ['events[0].params.x', 'VALUE_INVALID'],
      ],
    );
  });

  it('puts one visitor per request and at most 25 events in each', () => {
    const now = new Date();
    const events = [
      ...Array.from({ length: 30 }, () => forwardable({ matchKeys: keys('A.1') })),
      forwardable({ matchKeys: keys('B.2') }),
    ];
    const built = ga4Module.build(events, config, { now });
    assert.deepEqual(
      built.requests.map((r) => [r.body['client_id'], r.eventIds.length]),
      [
        ['A.1', 25],
        ['A.1', 5],
        ['B.2', 1],
      ],
    );
  });

  it('classifies outages as transient: GA4 has no other error', () => {
    const now = new Date();
    assert.equal(
      classifyGa4Answer({ kind: 'response', status: 503, body: '' }, now).kind,
      'transient',
    );
    assert.equal(
      classifyGa4Answer({ kind: 'network', message: 'ETIMEDOUT' }, now).kind,
      'transient',
    );
    assert.equal(classifyGa4Answer({ kind: 'response', status: 403, body: '' }, now).kind, 'auth');
  });
});
