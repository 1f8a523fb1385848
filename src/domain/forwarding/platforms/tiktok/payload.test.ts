import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable, UA } from '../../../../../test/platforms/forwardable.ts';
import { send } from '../../../../../test/platforms/send.ts';
import {
  startTiktokServer,
  type TiktokServer,
} from '../../../../../test/platforms/tiktok-server.ts';
import { sha256Hex } from '../../../events/user-data.ts';
import { isolateRefusal } from '../../batch-isolation.ts';
import type { TiktokConfig } from './config.ts';
import { tiktok as tiktokModule } from './index.ts';
import { classifyTiktokAnswer } from './response.ts';

describe('TikTok Events API payload', () => {
  let tiktok: TiktokServer;
  let config: TiktokConfig;
  before(async () => {
    tiktok = await startTiktokServer();
    config = { pixel_code: tiktok.pixelCode, access_token: tiktok.accessToken };
  });
  after(() => tiktok.close());

  async function verdictOf(configuration: TiktokConfig, mode: TiktokServer['mode'] = 'normal') {
    tiktok.mode = mode;
    try {
      const now = new Date();
      const built = tiktokModule.build([forwardable()], configuration, { now });
      const answer = await send(tiktok.url, built.requests[0]!);
      return classifyTiktokAnswer(
        { kind: 'response', status: answer.status, body: answer.body },
        now,
      );
    } finally {
      tiktok.mode = 'normal';
    }
  }

  it('builds the documented request, and TikTok keeps the event', async () => {
    const now = new Date();
    const event = forwardable({
      event: { searchString: 'red shoes' },
      userData: {
        email: 'jane@example.com',
        phone: '+1 650 555 1212',
        first_name: 'Jane',
        zip: '94107',
        city: 'San Francisco',
        state: 'CA',
        country: 'US',
        external_id: 'u-9',
      },
      matchKeys: {
        clientIpAddress: '2001:db8::1',
        clientUserAgent: UA,
        ttclid: 'E.C.P.abc',
        ttp: '2Aq0bnJ6hb',
      },
    });
    const built = tiktokModule.build([event], config, { now });
    const request = built.requests[0]!;
    assert.equal(request.path, '/event/track/');
    assert.equal(request.headers['access-token'], tiktok.accessToken);
    assert.deepEqual(request.body, {
      event_source: 'web',
      event_source_id: tiktok.pixelCode,
      data: [
        {
          event: 'Purchase',
          event_time: Math.floor(event.event.timestamp.getTime() / 1000),
          event_id: event.event.eventId,
          user: {
            email: sha256Hex('jane@example.com'),
            phone: '1e231c66011e7a2d867a9cfae267a6aff103cf4913640b6e71a99850fc0ffbc8', // +16505551212
            external_id: sha256Hex('u-9'),
            first_name: sha256Hex('jane'),
            zip_code: sha256Hex('94107'),
            city: 'sanfrancisco',
            state: 'ca',
            country: 'us',
            ip: '2001:db8::1',
            user_agent: UA,
            ttclid: 'E.C.P.abc',
            ttp: '2Aq0bnJ6hb',
          },
          page: {
            url: 'https://shop.example/checkout/done',
            referrer: 'https://shop.example/cart',
          },
          properties: { order_ref: 'A-1001', value: 49.9, currency: 'EUR', query: 'red shoes' },
        },
      ],
    });
    const answer = await send(tiktok.url, request);
    const verdict = classifyTiktokAnswer(
      { kind: 'response', status: answer.status, body: answer.body },
      now,
    );
    assert.equal(verdict.kind, 'success');
    assert.deepEqual(tiktok.events.at(-1), (request.body['data'] as unknown[])[0]);
  });

  it('maps names by default and by override, and honours the test event code', () => {
    const now = new Date();
    const built = tiktokModule.build(
      [
        forwardable({ event: { eventName: 'Lead' } }),
        forwardable({ event: { eventName: 'Purchase' } }),
      ],
      { ...config, test_event_code: 'TEST42', event_names: { Purchase: 'PlaceAnOrder' } },
      { now },
    );
    const body = built.requests[0]!.body;
    assert.equal(body['test_event_code'], 'TEST42');
    assert.deepEqual(
      (body['data'] as Array<{ event: string }>).map((e) => e.event),
      ['Lead', 'PlaceAnOrder'],
    );
  });

  it('batches at most 1,000 events a request, and TikTok takes each', async () => {
    const now = new Date();
    const built = tiktokModule.build(
      Array.from({ length: 1_500 }, () => forwardable()),
      config,
      { now },
    );
    assert.deepEqual(
      built.requests.map((r) => r.eventIds.length),
      [1_000, 500],
    );
    for (const request of built.requests) {
      const answer = await send(tiktok.url, request);
      assert.equal(JSON.parse(answer.body).code, 0);
    }
  });

  it('reads refusals from the 200-with-code body', async () => {
    assert.deepEqual(await verdictOf({ ...config, access_token: 'wrong' }), {
      kind: 'auth',
      message: 'TikTok code 40105: The access token is invalid or has been revoked.',
    });
    assert.equal((await verdictOf(config, 'expired')).kind, 'auth');
    assert.equal((await verdictOf({ ...config, pixel_code: 'OTHER' })).kind, 'auth');
    assert.equal((await verdictOf(config, 'throttled')).kind, 'transient');
    assert.equal((await verdictOf(config, 'down')).kind, 'transient');
    tiktok.rejectEvent = () => 'properties.contents.0.content_id: Not a valid string.';
    try {
      const verdict = await verdictOf(config);
      assert.deepEqual(verdict, {
        kind: 'permanent',
        message: 'TikTok code 40002: data.0: properties.contents.0.content_id: Not a valid string.',
      });
      assert.equal(isolateRefusal(tiktokModule, verdict, 2).kind, 'split');
    } finally {
      delete tiktok.rejectEvent;
    }
  });
});
