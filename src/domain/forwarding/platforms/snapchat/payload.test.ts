import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable, UA } from '../../../../../test/platforms/forwardable.ts';
import { send } from '../../../../../test/platforms/send.ts';
import {
  type SnapchatServer,
  startSnapchatServer,
} from '../../../../../test/platforms/snapchat-server.ts';
import { sha256Hex } from '../../../events/user-data.ts';
import { isolateRefusal } from '../../batch-isolation.ts';
import type { SnapchatConfig } from './config.ts';
import { snapchat as snapchatModule } from './index.ts';

const DAY = 86_400_000;
type Built = ReturnType<typeof snapchatModule.build>;
const firstEvent = (built: Built) =>
  (built.requests[0]!.body['data'] as Array<Record<string, unknown>>)[0]!;

describe('Snapchat Conversions API payload', () => {
  let snap: SnapchatServer;
  let config: SnapchatConfig;
  before(async () => {
    snap = await startSnapchatServer();
    config = { pixel_id: snap.pixelId, access_token: snap.accessToken };
  });
  after(() => snap.close());

  const verdictOf = async (built: Built, index = 0) => {
    const answer = await send(snap.url, built.requests[index]!);
    return snapchatModule.classify(
      {
        kind: 'response',
        status: answer.status,
        body: answer.body,
        retryAfter: answer.headers['retry-after'] as string | undefined,
      },
      new Date(),
    );
  };

  it('builds the documented request (PURCHASE, hashed arrays, ScCid, token in the query only), and Snapchat keeps it', async () => {
    const now = new Date();
    const event = forwardable({
      event: { url: 'https://shop.example/done?ScCid=6f1e-click' },
      userData: {
        email: ' Jane@Example.COM ',
        phone: '+44 20 7946 0958',
        last_name: 'Doe',
        zip: '94107',
        country: 'GB',
      },
      matchKeys: { clientIpAddress: '203.0.113.7', clientUserAgent: UA },
    });
    const built = snapchatModule.build([event], config, { now });
    assert.deepEqual(built.skipped, []);
    const [request] = built.requests;
    assert.equal(request!.path, `/${snap.pixelId}/events?access_token=${snap.accessToken}`);
    assert.equal(request!.redactedPath, `/${snap.pixelId}/events?access_token=****`);
    assert.ok(!JSON.stringify(request!.headers).includes(snap.accessToken));
    const sent = firstEvent(built);
    assert.equal(sent['event_name'], 'PURCHASE');
    assert.equal(sent['action_source'], 'WEB');
    assert.equal(sent['event_time'], Math.floor(event.event.timestamp.getTime() / 1000));
    assert.deepEqual(sent['user_data'], {
      em: [sha256Hex('jane@example.com')],
      ph: [sha256Hex('442079460958')],
      ln: [sha256Hex('doe')],
      zp: [sha256Hex('94107')],
      country: [sha256Hex('gb')],
      client_ip_address: '203.0.113.7',
      client_user_agent: UA,
      sc_click_id: '6f1e-click',
    });
    assert.deepEqual(sent['custom_data'], { order_ref: 'A-1001', value: 49.9, currency: 'EUR' });
    assert.deepEqual(await verdictOf(built), { kind: 'success', receipt: { status: 'VALID' } });
    assert.equal(snap.events.at(-1)?.['event_id'], event.event.eventId);
  });

  it('maps our names to Snapchat’s upper-case ones; a name it does not take is skipped unless mapped', () => {
    assert.deepEqual(snapchatModule.eventName('Purchase'), { name: 'PURCHASE' });
    assert.deepEqual(snapchatModule.eventName('AddToCart'), { name: 'ADD_CART' });
    assert.deepEqual(snapchatModule.eventName('Lead'), { name: 'SIGN_UP' });
    assert.match(
      (snapchatModule.eventName('Refund') as { skipped: string }).skipped,
      /only its standard event names/,
    );
    assert.deepEqual(snapchatModule.eventName('Refund', { Refund: 'CUSTOM_EVENT_1' }), {
      name: 'CUSTOM_EVENT_1',
    });
  });

  it('test mode goes to /events/validate, which checks and records nothing', async () => {
    const before = snap.events.length;
    const built = snapchatModule.build([forwardable()], config, { now: new Date(), test: {} });
    assert.match(built.requests[0]!.path, /^\/[^/]+\/events\/validate\?access_token=/);
    const verdict = await verdictOf(built);
    assert.deepEqual(verdict, { kind: 'success', receipt: { status: 'VALID', test_event: true } });
    assert.equal(snap.events.length, before);
    assert.equal(snap.testEvents, 1);
  });

  it('limited data use goes as data_processing_options ["LDU"], country and state 0', async () => {
    const event = forwardable({ event: { consent: { limited_data_use: true } } });
    const built = snapchatModule.build([event], config, { now: new Date() });
    const sent = firstEvent(built);
    assert.deepEqual(sent['data_processing_options'], ['LDU']);
    assert.equal(sent['data_processing_options_country'], 0);
    assert.equal(sent['data_processing_options_state'], 0);
    assert.equal((await verdictOf(built)).kind, 'success');
  });

  it('skips, with a reason: older than 37 days, an app event, a purchase without value, no usable identifier', () => {
    const now = new Date();
    const old = forwardable({ event: { timestamp: new Date(now.getTime() - 37 * DAY - 60_000) } });
    const recent = forwardable({ event: { timestamp: new Date(now.getTime() - 30 * DAY) } });
    const app = forwardable({ actionSource: 'app' });
    const free = forwardable({ event: { value: null } });
    const bare = forwardable({ userData: { first_name: 'Jane' }, matchKeys: null });
    const built = snapchatModule.build([old, recent, app, free, bare], config, { now });
    assert.deepEqual(
      built.skipped.map((s) => [s.eventId, s.reason]),
      [
        [old.event.eventId, "outside Snapchat's 37-day window: the event is older than 37 days"],
        [app.event.eventId, 'Snapchat takes app events for a Snap App ID, not for this pixel'],
        [free.event.eventId, 'Snapchat needs a purchase’s value and currency'],
        [
          bare.event.eventId,
          'Snapchat needs an email, a phone, or the IP address and user agent together',
        ],
      ],
    );
    assert.deepEqual(built.requests[0]!.eventIds, [recent.event.eventId]);
  });

  it('cuts 2,001 events into requests of at most 2,000, each accepted', async () => {
    const built = snapchatModule.build(
      Array.from({ length: 2_001 }, () => forwardable()),
      config,
      { now: new Date() },
    );
    assert.deepEqual(
      built.requests.map((r) => r.eventIds.length),
      [2_000, 1],
    );
    assert.equal((await verdictOf(built, 0)).kind, 'success');
    assert.equal((await verdictOf(built, 1)).kind, 'success');
  });

  it('the stand-in refuses a wrong payload (unhashed email, milliseconds, lower-case name) with 400 INVALID', async () => {
    const built = snapchatModule.build([forwardable()], config, { now: new Date() });
    const sent = firstEvent(built);
    for (const wrong of [
      { user_data: { ...(sent['user_data'] as object), em: ['jane@example.com'] } },
      { event_time: (sent['event_time'] as number) * 1000 },
      { event_name: 'purchase' },
      { custom_data: {} },
    ]) {
      const request = { ...built.requests[0]!, body: { data: [{ ...sent, ...wrong }] } };
      const answer = await send(snap.url, request);
      assert.equal(answer.status, 400, JSON.stringify(wrong));
      assert.equal(JSON.parse(answer.body).status, 'INVALID');
    }
  });

  it('a poisoned event refuses its request: permanent with Snap’s reason, and bisected', async () => {
    snap.rejectEvent = (e) => (e['event_id'] === 'poison' ? 'unhashed PII' : undefined);
    try {
      const events = [forwardable(), forwardable({ event: { eventId: 'poison' } })];
      const built = snapchatModule.build(events, config, { now: new Date() });
      const verdict = await verdictOf(built);
      assert.deepEqual(verdict, { kind: 'permanent', message: 'Snapchat HTTP 400: unhashed PII' });
      assert.equal(isolateRefusal(snapchatModule, verdict, 2).kind, 'split');
    } finally {
      delete snap.rejectEvent;
    }
  });

  it('401 and 403 refuse the credentials (suspend); 429 is retried after Retry-After; 500 is retried', async () => {
    const now = new Date();
    const build = (c: SnapchatConfig) => snapchatModule.build([forwardable()], c, { now });
    assert.equal((await verdictOf(build({ ...config, access_token: 'wrong' }))).kind, 'auth');
    assert.equal((await verdictOf(build({ ...config, pixel_id: 'other' }))).kind, 'auth');
    snap.mode = 'throttled';
    try {
      const throttled = await verdictOf(build(config));
      assert.equal(throttled.kind, 'transient');
      assert.equal((throttled as { retryAfterMs?: number }).retryAfterMs, 1_000);
      snap.mode = 'down';
      assert.equal((await verdictOf(build(config))).kind, 'transient');
    } finally {
      snap.mode = 'normal';
    }
  });

  it('the event’s own ScCid and _scid go as sc_click_id and sc_cookie1 (the page URL’s ScCid only without one); the stand-in refuses them hashed', async () => {
    const now = new Date();
    const own = forwardable({
      event: { url: 'https://shop.example/p?ScCid=from-url' },
      matchKeys: {
        clientIpAddress: '203.0.113.7',
        clientUserAgent: UA,
        scCid: 'own-click',
        scid: '2e1c6d0a-cookie',
      },
    });
    const fromUrl = forwardable({ event: { url: 'https://shop.example/p?ScCid=from-url' } });
    const built = snapchatModule.build([own, fromUrl], config, { now });
    const data = built.requests[0]!.body['data'] as Array<{ user_data: Record<string, unknown> }>;
    assert.deepEqual(
      data.map((e) => [e.user_data['sc_click_id'], e.user_data['sc_cookie1']]),
      [
        ['own-click', '2e1c6d0a-cookie'],
        ['from-url', undefined],
      ],
    );
    assert.equal((await verdictOf(built)).kind, 'success');
    const hashed = {
      ...built.requests[0]!,
      body: {
        data: [{ ...data[0]!, user_data: { ...data[0]!.user_data, sc_cookie1: sha256Hex('x') } }],
      },
    };
    assert.equal((await send(snap.url, hashed)).status, 400);
  });
});
