import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable, UA } from '../../../../../test/platforms/forwardable.ts';
import {
  type PinterestServer,
  startPinterestServer,
} from '../../../../../test/platforms/pinterest-server.ts';
import { send } from '../../../../../test/platforms/send.ts';
import { sha256Hex } from '../../../events/user-data.ts';
import { isolateRefusal } from '../../batch-isolation.ts';
import type { PinterestConfig } from './config.ts';
import { pinterest as pinterestModule } from './index.ts';

const DAY = 86_400_000;

describe('Pinterest Conversions API payload', () => {
  let pinterest: PinterestServer;
  let config: PinterestConfig;
  before(async () => {
    pinterest = await startPinterestServer();
    config = { ad_account_id: pinterest.adAccountId, access_token: pinterest.accessToken };
  });
  after(() => pinterest.close());

  const verdictOf = async (built: ReturnType<typeof pinterestModule.build>, index = 0) => {
    const now = new Date();
    const answer = await send(pinterest.url, built.requests[index]!);
    return pinterestModule.classify(
      {
        kind: 'response',
        status: answer.status,
        body: answer.body,
        retryAfter: answer.headers['retry-after'] as string | undefined,
      },
      now,
    );
  };

  it('builds the documented request (checkout, hashed arrays, string value, epik), and Pinterest keeps it', async () => {
    const now = new Date();
    const event = forwardable({
      event: { url: 'https://shop.example/done?epik=dj0yJnU9abc' },
      userData: {
        email: ' Jane@Example.COM ',
        phone: '+1 (650) 555-1212',
        first_name: 'Jane',
        city: 'San Francisco',
        state: 'California',
        country: 'US',
        zip: '94107',
        external_id: 'u-9',
      },
      matchKeys: { clientIpAddress: '203.0.113.7', clientUserAgent: UA },
    });
    const built = pinterestModule.build([event], config, { now });
    assert.deepEqual(built.skipped, []);
    const [request] = built.requests;
    assert.equal(request!.path, `/ad_accounts/${pinterest.adAccountId}/events`);
    assert.equal(request!.headers['authorization'], `Bearer ${pinterest.accessToken}`);
    const sent = (request!.body['data'] as Array<Record<string, unknown>>)[0]!;
    assert.equal(sent['event_name'], 'checkout');
    assert.equal(sent['action_source'], 'web');
    assert.equal(sent['event_time'], Math.floor(event.event.timestamp.getTime() / 1000));
    assert.equal(sent['event_id'], event.event.eventId);
    assert.deepEqual(sent['user_data'], {
      em: [sha256Hex('jane@example.com')],
      ph: [sha256Hex('16505551212')],
      fn: [sha256Hex('jane')],
      ct: [sha256Hex('sanfrancisco')],
      st: [sha256Hex('ca')],
      zp: [sha256Hex('94107')],
      country: [sha256Hex('us')],
      external_id: [sha256Hex('u-9')],
      client_ip_address: '203.0.113.7',
      client_user_agent: UA,
      click_id: 'dj0yJnU9abc',
    });
    assert.deepEqual(sent['custom_data'], { order_ref: 'A-1001', value: '49.9', currency: 'EUR' });
    assert.deepEqual(await verdictOf(built), {
      kind: 'success',
      receipt: { num_events_received: 1, num_events_processed: 1 },
    });
    assert.equal(pinterest.events.at(-1)?.['event_id'], event.event.eventId);
  });

  it('maps our names to Pinterest’s enum; other names are its `custom` event; overrides win', () => {
    assert.deepEqual(pinterestModule.eventName('Purchase'), { name: 'checkout' });
    assert.deepEqual(pinterestModule.eventName('CompleteRegistration'), { name: 'signup' });
    assert.deepEqual(pinterestModule.eventName('PageView'), { name: 'page_visit' });
    assert.deepEqual(pinterestModule.eventName('Refund'), { name: 'custom' });
    assert.deepEqual(pinterestModule.eventName('Wish', { Wish: 'add_to_wishlist' }), {
      name: 'add_to_wishlist',
    });
  });

  it('test mode: `?test=true`, which Pinterest validates and does not record', async () => {
    const before = pinterest.events.length;
    const built = pinterestModule.build([forwardable()], config, { now: new Date(), test: {} });
    assert.equal(built.requests[0]!.path, `/ad_accounts/${pinterest.adAccountId}/events?test=true`);
    assert.equal((await verdictOf(built)).kind, 'success');
    assert.equal(pinterest.events.length, before);
    assert.equal(pinterest.testEvents, 1);
  });

  it('limited data use goes as custom_data.opt_out_type "LDP"', async () => {
    const event = forwardable({ event: { consent: { limited_data_use: true } } });
    const built = pinterestModule.build([event], config, { now: new Date() });
    const sent = (built.requests[0]!.body['data'] as Array<Record<string, unknown>>)[0]!;
    assert.equal((sent['custom_data'] as Record<string, unknown>)['opt_out_type'], 'LDP');
    assert.equal((await verdictOf(built)).kind, 'success');
    assert.equal(pinterest.events.at(-1)?.['event_id'], event.event.eventId);
  });

  it('skips, with a reason, what Pinterest would refuse: older than 7 days, an app event, no usable identifier', () => {
    const now = new Date();
    const old = forwardable({ event: { timestamp: new Date(now.getTime() - 7 * DAY - 60_000) } });
    const app = forwardable({ actionSource: 'app' });
    const bare = forwardable({ userData: { first_name: 'Jane' }, matchKeys: null });
    const store = forwardable({ actionSource: 'physical_store' });
    const built = pinterestModule.build([old, app, bare, store], config, { now });
    assert.deepEqual(
      built.skipped.map((s) => [s.eventId, s.reason]),
      [
        [old.event.eventId, "outside Pinterest's 7-day window: the event is older than 7 days"],
        [
          app.event.eventId,
          'Pinterest needs the app event’s OS (app_android or app_ios), which Trackway does not know',
        ],
        [bare.event.eventId, 'Pinterest needs an email, or the IP address and user agent together'],
      ],
    );
    const sent = (built.requests[0]!.body['data'] as Array<Record<string, unknown>>)[0]!;
    assert.equal(sent['action_source'], 'offline');
  });

  it('cuts 1,001 events into requests of at most 1,000, each accepted', async () => {
    const events = Array.from({ length: 1_001 }, () => forwardable());
    const built = pinterestModule.build(events, config, { now: new Date() });
    assert.deepEqual(
      built.requests.map((r) => r.eventIds.length),
      [1_000, 1],
    );
    assert.equal((await verdictOf(built, 0)).kind, 'success');
    assert.equal((await verdictOf(built, 1)).kind, 'success');
  });

  it('the stand-in refuses a wrong payload (unhashed email, milliseconds, numeric value) with 422', async () => {
    const built = pinterestModule.build([forwardable()], config, { now: new Date() });
    const sent = (built.requests[0]!.body['data'] as Array<Record<string, unknown>>)[0]!;
    for (const wrong of [
      { user_data: { ...(sent['user_data'] as object), em: ['jane@example.com'] } },
      { event_time: (sent['event_time'] as number) * 1000 },
      { custom_data: { value: 49.9 } },
      { event_name: 'Purchase' },
    ]) {
      const request = { ...built.requests[0]!, body: { data: [{ ...sent, ...wrong }] } };
      const answer = await send(pinterest.url, request);
      assert.equal(answer.status, 422, JSON.stringify(wrong));
    }
  });

  it('a poisoned event gets a 422 for its request: permanent, and the request is bisected', async () => {
    pinterest.rejectEvent = (e) => (e['event_id'] === 'poison' ? 'Invalid event' : undefined);
    try {
      const events = [forwardable(), forwardable({ event: { eventId: 'poison' } }), forwardable()];
      const built = pinterestModule.build(events, config, { now: new Date() });
      const verdict = await verdictOf(built);
      assert.equal(verdict.kind, 'permanent');
      assert.match((verdict as { message: string }).message, /Pinterest HTTP 422 code 953/);
      assert.deepEqual(isolateRefusal(pinterestModule, verdict, 3).kind, 'split');
    } finally {
      delete pinterest.rejectEvent;
    }
  });

  it('401 and 403 refuse the credentials (suspend); 429 is retried after Retry-After; 503 is retried', async () => {
    const now = new Date();
    const build = (c: PinterestConfig) => pinterestModule.build([forwardable()], c, { now });
    assert.equal((await verdictOf(build({ ...config, access_token: 'wrong' }))).kind, 'auth');
    assert.equal((await verdictOf(build({ ...config, ad_account_id: '1' }))).kind, 'auth');
    pinterest.mode = 'throttled';
    try {
      const throttled = await verdictOf(build(config));
      assert.equal(throttled.kind, 'transient');
      assert.equal((throttled as { retryAfterMs?: number }).retryAfterMs, 1_000);
      pinterest.mode = 'down';
      assert.equal((await verdictOf(build(config))).kind, 'transient');
    } finally {
      pinterest.mode = 'normal';
    }
  });

  it('the event’s own epik (user_data.epik) is the click_id, before the page URL’s; the stand-in refuses a hashed one', async () => {
    const now = new Date();
    const own = forwardable({
      event: { url: 'https://shop.example/p?epik=from-url' },
      matchKeys: { clientIpAddress: '203.0.113.7', clientUserAgent: UA, epik: 'dj0yJnU9own' },
    });
    const fromUrl = forwardable({ event: { url: 'https://shop.example/p?epik=from-url' } });
    const built = pinterestModule.build([own, fromUrl], config, { now });
    const data = built.requests[0]!.body['data'] as Array<{ user_data: Record<string, unknown> }>;
    assert.deepEqual(
      data.map((e) => e.user_data['click_id']),
      ['dj0yJnU9own', 'from-url'],
    );
    assert.equal((await verdictOf(built)).kind, 'success');
    const hashed = {
      ...built.requests[0]!,
      body: {
        data: [{ ...data[0]!, user_data: { ...data[0]!.user_data, click_id: sha256Hex('x') } }],
      },
    };
    assert.equal((await send(pinterest.url, hashed)).status, 422);
  });
});
