import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable, UA } from '../../../../../test/platforms/forwardable.ts';
import {
  type RedditServer,
  startRedditServer,
} from '../../../../../test/platforms/reddit-server.ts';
import { send } from '../../../../../test/platforms/send.ts';
import { sha256Hex } from '../../../events/user-data.ts';
import { isolateRefusal } from '../../batch-isolation.ts';
import type { RedditConfig } from './config.ts';
import { reddit as redditModule } from './index.ts';

const DAY = 86_400_000;
type Built = ReturnType<typeof redditModule.build>;
const eventsOf = (built: Built, index = 0) =>
  built.requests[index]!.body['data'] as {
    test_id?: string;
    events: Array<Record<string, unknown>>;
  };

describe('Reddit Conversions API payload', () => {
  let reddit: RedditServer;
  let config: RedditConfig;
  before(async () => {
    reddit = await startRedditServer();
    config = { pixel_id: reddit.pixelId, access_token: reddit.accessToken };
  });
  after(() => reddit.close());

  const verdictOf = async (built: Built, index = 0) => {
    const answer = await send(reddit.url, built.requests[index]!);
    return redditModule.classify(
      {
        kind: 'response',
        status: answer.status,
        body: answer.body,
        retryAfter: answer.headers['retry-after'] as string | undefined,
      },
      new Date(),
    );
  };

  it('builds the documented request (PURCHASE, epoch ms, conversion_id, hashed user and IP, rdt_cid), and Reddit keeps it', async () => {
    const now = new Date();
    const event = forwardable({
      event: { url: 'https://shop.example/done?rdt_cid=1234567890' },
      userData: { email: ' Jane@Example.COM ', phone: '+1 650 555 1212', external_id: 'u-9' },
      matchKeys: { clientIpAddress: '203.0.113.7', clientUserAgent: UA },
    });
    const built = redditModule.build([event], config, { now });
    assert.deepEqual(built.skipped, []);
    const [request] = built.requests;
    assert.equal(request!.path, `/pixels/${reddit.pixelId}/conversion_events`);
    assert.equal(request!.headers['authorization'], `Bearer ${reddit.accessToken}`);
    const data = eventsOf(built);
    assert.equal(data.test_id, undefined);
    assert.deepEqual(data.events[0], {
      event_at: event.event.timestamp.getTime(),
      action_source: 'WEBSITE',
      type: { tracking_type: 'PURCHASE' },
      metadata: { conversion_id: event.event.eventId, value: 49.9, currency: 'EUR' },
      user: {
        email: sha256Hex('jane@example.com'),
        phone_number: sha256Hex('+16505551212'),
        external_id: sha256Hex('u-9'),
        ip_address: sha256Hex('203.0.113.7'),
        user_agent: UA,
      },
      click_id: '1234567890',
    });
    assert.equal((await verdictOf(built)).kind, 'success');
    const kept = reddit.events.at(-1) as { metadata: { conversion_id: string } };
    assert.equal(kept.metadata.conversion_id, event.event.eventId);
  });

  it('maps our names to Reddit’s tracking types; the others go as CUSTOM with their name, without value where Reddit refuses it', () => {
    const now = new Date();
    const names = ['PageView', 'InitiateCheckout', 'Refund', 'CompleteRegistration'];
    const built = redditModule.build(
      names.map((eventName) => forwardable({ event: { eventName } })),
      config,
      { now },
    );
    assert.deepEqual(
      eventsOf(built).events.map((e) => [e['type'], 'value' in (e['metadata'] as object)]),
      [
        [{ tracking_type: 'PAGE_VISIT' }, false],
        [{ tracking_type: 'CUSTOM', custom_event_name: 'InitiateCheckout' }, true],
        [{ tracking_type: 'CUSTOM', custom_event_name: 'Refund' }, true],
        [{ tracking_type: 'SIGN_UP' }, true],
      ],
    );
    assert.deepEqual(redditModule.eventName('Lead'), { name: 'LEAD' });
    assert.deepEqual(redditModule.eventName('Wish', { Wish: 'ADD_TO_WISHLIST' }), {
      name: 'ADD_TO_WISHLIST',
    });
  });

  it('the stand-in accepts those four (value on PAGE_VISIT would be refused)', async () => {
    const built = redditModule.build(
      ['PageView', 'InitiateCheckout', 'Refund', 'CompleteRegistration'].map((eventName) =>
        forwardable({ event: { eventName } }),
      ),
      config,
      { now: new Date() },
    );
    assert.equal((await verdictOf(built)).kind, 'success');
  });

  it('test mode carries data.test_id; Reddit checks and records nothing', async () => {
    const before = reddit.events.length;
    const built = redditModule.build([forwardable()], config, { now: new Date(), test: {} });
    assert.equal(eventsOf(built).test_id, 'trackway-test');
    assert.equal((await verdictOf(built)).kind, 'success');
    assert.equal(reddit.events.length, before);
    assert.equal(reddit.testEvents, 1);
  });

  it('limited data use goes as user.data_processing_options {modes: ["LDU"]}', async () => {
    const event = forwardable({ event: { consent: { limited_data_use: true } } });
    const built = redditModule.build([event], config, { now: new Date() });
    const user = eventsOf(built).events[0]!['user'] as Record<string, unknown>;
    assert.deepEqual(user['data_processing_options'], { modes: ['LDU'] });
    assert.equal((await verdictOf(built)).kind, 'success');
  });

  it('skips an event older than 7 days, with the reason', () => {
    const now = new Date();
    const old = forwardable({ event: { timestamp: new Date(now.getTime() - 7 * DAY - 60_000) } });
    const built = redditModule.build([old], config, { now });
    assert.deepEqual(built.skipped, [
      {
        eventId: old.event.eventId,
        reason: "outside Reddit's 7-day window: the event is older than 7 days",
      },
    ]);
    assert.deepEqual(built.requests, []);
  });

  it('cuts 1,001 events into requests of at most 1,000, each accepted', async () => {
    const built = redditModule.build(
      Array.from({ length: 1_001 }, () => forwardable()),
      config,
      { now: new Date() },
    );
    assert.deepEqual(
      built.requests.map((r) => r.eventIds.length),
      [1_000, 1],
    );
    assert.equal((await verdictOf(built, 0)).kind, 'success');
    assert.equal((await verdictOf(built, 1)).kind, 'success');
  });

  it('the stand-in refuses a wrong payload (seconds, raw IP, unhashed email, value on a page visit) with 400 invalid_events', async () => {
    const built = redditModule.build([forwardable()], config, { now: new Date() });
    const sent = eventsOf(built).events[0]!;
    const user = sent['user'] as Record<string, unknown>;
    for (const wrong of [
      { event_at: Math.floor((sent['event_at'] as number) / 1000) },
      { user: { ...user, ip_address: '203.0.113.7' } },
      { user: { ...user, email: 'jane@example.com' } },
      { type: { tracking_type: 'PAGE_VISIT' } },
      { type: { tracking_type: 'Purchase' } },
    ]) {
      const request = {
        ...built.requests[0]!,
        body: { data: { events: [{ ...sent, ...wrong }] } },
      };
      const answer = await send(reddit.url, request);
      assert.equal(answer.status, 400, JSON.stringify(wrong));
      assert.equal(JSON.parse(answer.body).invalid_events[0].event_index, 0);
    }
  });

  it('a poisoned event: permanent with Reddit’s message, bisected on data.events; a 2xx listing invalid events is too', async () => {
    reddit.rejectEvent = (e) =>
      (e['metadata'] as { conversion_id: string }).conversion_id === 'poison'
        ? 'bad event'
        : undefined;
    try {
      const events = [forwardable(), forwardable({ event: { eventId: 'poison' } }), forwardable()];
      const built = redditModule.build(events, config, { now: new Date() });
      const verdict = await verdictOf(built);
      assert.deepEqual(verdict, { kind: 'permanent', message: 'Reddit HTTP 400: bad event' });
      const isolation = isolateRefusal(redditModule, verdict, 3);
      assert.equal(isolation.kind, 'split');
      const half = redditModule.subRequest!(built.requests[0]!, 2, 3);
      assert.deepEqual(half.eventIds, [events[2]!.event.eventId]);
      assert.equal(eventsOf({ ...built, requests: [half] }).events.length, 1);
      assert.equal((await send(reddit.url, half)).status, 200);
    } finally {
      delete reddit.rejectEvent;
    }
    const partial = redditModule.classify(
      {
        kind: 'response',
        status: 200,
        body: JSON.stringify({ invalid_events: [{ event_index: 1, error_message: 'stale' }] }),
      },
      new Date(),
    );
    assert.deepEqual(partial, { kind: 'permanent', message: 'Reddit refused events: stale' });
  });

  it('401 and 403 refuse the credentials (suspend); 429 is retried after Retry-After; 500 is retried', async () => {
    const now = new Date();
    const build = (c: RedditConfig) => redditModule.build([forwardable()], c, { now });
    assert.equal((await verdictOf(build({ ...config, access_token: 'wrong' }))).kind, 'auth');
    assert.equal((await verdictOf(build({ ...config, pixel_id: 't2_other' }))).kind, 'auth');
    reddit.mode = 'throttled';
    try {
      const throttled = await verdictOf(build(config));
      assert.equal(throttled.kind, 'transient');
      assert.equal((throttled as { retryAfterMs?: number }).retryAfterMs, 1_000);
      reddit.mode = 'down';
      assert.equal((await verdictOf(build(config))).kind, 'transient');
    } finally {
      reddit.mode = 'normal';
    }
  });

  it('the event’s own rdt_cid is the click_id (the page URL’s only without one); _rdt_uuid goes as user.uuid, its uuid part; the stand-in refuses the whole cookie', async () => {
    const now = new Date();
    const uuid = '70d79c3a-f35a-4733-92d1-b6c196544886';
    const own = forwardable({
      event: { url: 'https://shop.example/p?rdt_cid=from-url' },
      matchKeys: {
        clientIpAddress: '203.0.113.7',
        clientUserAgent: UA,
        rdtCid: 'own-click',
        rdtUuid: `1754915740517.${uuid}`,
      },
    });
    const fromUrl = forwardable({ event: { url: 'https://shop.example/p?rdt_cid=from-url' } });
    const built = redditModule.build([own, fromUrl], config, { now });
    const sent = eventsOf(built).events;
    assert.deepEqual(
      sent.map((e) => [e['click_id'], (e['user'] as Record<string, unknown>)['uuid']]),
      [
        ['own-click', uuid],
        ['from-url', undefined],
      ],
    );
    assert.equal((await verdictOf(built)).kind, 'success');
    const whole = {
      ...built.requests[0]!,
      body: {
        data: {
          events: [
            {
              ...sent[0]!,
              user: { ...(sent[0]!['user'] as object), uuid: `1754915740517.${uuid}` },
            },
          ],
        },
      },
    };
    assert.equal((await send(reddit.url, whole)).status, 400);
  });
});
