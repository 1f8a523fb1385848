import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable, UA } from '../../../../../test/platforms/forwardable.ts';
import {
  type MicrosoftAdsServer,
  startMicrosoftAdsServer,
} from '../../../../../test/platforms/microsoft-ads-server.ts';
import { send } from '../../../../../test/platforms/send.ts';
import { sha256Hex } from '../../../events/user-data.ts';
import { isolateRefusal } from '../../batch-isolation.ts';
import { buildForDestination } from '../../consent-gate.ts';
import type { MicrosoftAdsConfig } from './config.ts';
import { microsoftAds } from './index.ts';

const DAY = 86_400_000;
type Built = ReturnType<typeof microsoftAds.build>;
const dataOf = (built: Built, index = 0) =>
  built.requests[index]!.body['data'] as Array<Record<string, unknown>>;

describe('Microsoft UET Conversions API payload', () => {
  let microsoft: MicrosoftAdsServer;
  let config: MicrosoftAdsConfig;
  before(async () => {
    microsoft = await startMicrosoftAdsServer();
    config = { tag_id: microsoft.tagId, access_token: microsoft.accessToken };
  });
  after(() => microsoft.close());

  const verdictOf = async (built: Built, index = 0) => {
    const answer = await send(microsoft.url, built.requests[index]!);
    return microsoftAds.classify(
      {
        kind: 'response',
        status: answer.status,
        body: answer.body,
        retryAfter: answer.headers['retry-after'] as string | undefined,
      },
      new Date(),
    );
  };

  it('builds the documented request (custom purchase, Unix seconds, eventId, hashed em/ph/externalId, raw IP/UA/msclkid, pageType, transactionId), and Microsoft keeps it', async () => {
    const now = new Date();
    const event = forwardable({
      event: {
        url: 'https://shop.example/done?msclkid=4a5b6c7d',
        customData: {
          order_id: 'A-1001',
          contents: [{ id: 'sku-1', quantity: 2, item_price: 9.5 }],
        },
        consent: { ad_user_data: 'granted' },
      },
      userData: { email: ' Jane@Example.COM ', phone: '+1 650 555 1212', external_id: 'u-9' },
      matchKeys: { clientIpAddress: '203.0.113.7', clientUserAgent: UA },
    });
    const built = microsoftAds.build([event], config, { now });
    assert.deepEqual(built.skipped, []);
    const [request] = built.requests;
    assert.equal(request!.path, `/${microsoft.tagId}/events`);
    assert.equal(request!.headers['authorization'], `Bearer ${microsoft.accessToken}`);
    assert.equal(request!.body['continueOnValidationError'], true);
    assert.deepEqual(dataOf(built)[0], {
      eventType: 'custom',
      eventId: event.event.eventId,
      eventTime: Math.floor(event.event.timestamp.getTime() / 1000),
      eventName: 'purchase',
      eventSourceUrl: 'https://shop.example/done?msclkid=4a5b6c7d',
      referrerUrl: 'https://shop.example/cart',
      pageTitle: 'Thank you',
      adStorageConsent: 'G',
      userData: {
        em: sha256Hex('jane@example.com'),
        ph: sha256Hex('16505551212'),
        externalId: sha256Hex('u-9'),
        clientIpAddress: '203.0.113.7',
        clientUserAgent: UA,
        msclkid: '4a5b6c7d',
      },
      customData: {
        value: 49.9,
        currency: 'EUR',
        pageType: 'purchase',
        transactionId: 'A-1001',
        items: [{ id: 'sku-1', price: 9.5, quantity: 2 }],
        itemIds: ['sku-1'],
      },
    });
    const verdict = await verdictOf(built);
    assert.equal(verdict.kind, 'success');
    assert.equal((verdict as { refused?: unknown }).refused, undefined);
    const kept = microsoft.events.at(-1) as { eventId: string };
    assert.equal(kept.eventId, event.event.eventId);
  });

  it('a page view is a pageLoad with its URL; others are custom with UET’s names; a page load without URL is skipped', async () => {
    const now = new Date();
    const events = ['PageView', 'ViewContent', 'Search', 'Refund'].map((eventName) =>
      forwardable({ event: { eventName, searchString: eventName === 'Search' ? 'shoes' : null } }),
    );
    const noUrl = forwardable({ event: { eventName: 'PageView', url: null } });
    const built = microsoftAds.build([...events, noUrl], config, { now });
    assert.deepEqual(
      dataOf(built).map((e) => [
        e['eventType'],
        e['eventName'],
        (e['customData'] as Record<string, unknown> | undefined)?.['pageType'],
      ]),
      [
        ['pageLoad', undefined, undefined],
        ['custom', 'view_item', 'product'],
        ['custom', 'search', 'searchresults'],
        ['custom', 'Refund', undefined],
      ],
    );
    assert.equal(
      (dataOf(built)[2]!['customData'] as Record<string, unknown>)['searchTerm'],
      'shoes',
    );
    assert.deepEqual(built.skipped, [
      { eventId: noUrl.event.eventId, reason: 'Microsoft needs the page URL (url) of a page load' },
    ]);
    assert.deepEqual(microsoftAds.eventName('Lead'), { name: 'generate_lead' });
    assert.deepEqual(microsoftAds.eventName('Lead', { Lead: 'contact' }), { name: 'contact' });
    assert.equal((await verdictOf(built)).kind, 'success');
  });

  it('consent: granted → adStorageConsent "G"; denied and limited data use are skipped before the builder; none → no field', () => {
    const now = new Date();
    const granted = forwardable({ event: { consent: { ad_user_data: 'granted' } } });
    const denied = forwardable({ event: { consent: { ad_user_data: 'denied' } } });
    const ldu = forwardable({ event: { consent: { limited_data_use: true } } });
    const none = forwardable();
    const built = buildForDestination(microsoftAds, config, [granted, denied, ldu, none], { now });
    assert.deepEqual(
      built.skipped.map((s) => s.reason),
      [
        'consent denied: ad_user_data',
        'limited data use: Microsoft has no restricted-processing mode',
      ],
    );
    assert.deepEqual(
      dataOf(built).map((e) => e['adStorageConsent']),
      ['G', undefined],
    );
  });

  it('skips an event older than 90 days, with the reason', () => {
    const now = new Date();
    const old = forwardable({ event: { timestamp: new Date(now.getTime() - 90 * DAY - 60_000) } });
    const built = microsoftAds.build([old], config, { now });
    assert.deepEqual(built.skipped, [
      {
        eventId: old.event.eventId,
        reason: "outside Microsoft's 90-day window: the event is older than 90 days",
      },
    ]);
  });

  it('cuts 1,001 events into requests of at most 1,000, each accepted', async () => {
    const built = microsoftAds.build(
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

  it('the stand-in refuses a wrong payload (milliseconds, unhashed or upper-case em, a pageLoad without URL, an unknown key, 1,001 events)', async () => {
    const built = microsoftAds.build([forwardable()], config, { now: new Date() });
    const sent = dataOf(built)[0]!;
    const user = sent['userData'] as Record<string, unknown>;
    for (const wrong of [
      { eventTime: (sent['eventTime'] as number) * 1000 },
      { userData: { ...user, em: 'jane@example.com' } },
      { userData: { ...user, em: String(user['em']).toUpperCase() } },
      { eventType: 'pageLoad', eventSourceUrl: undefined },
      { event_name: 'purchase' },
      { adStorageConsent: 'granted' },
    ]) {
      const request = {
        ...built.requests[0]!,
        body: { data: [{ ...sent, ...wrong }], continueOnValidationError: true },
      };
      const verdict = await verdictOf({ ...built, requests: [request] });
      assert.equal(verdict.kind, 'success', JSON.stringify(wrong));
      assert.equal((verdict as { refused?: unknown[] }).refused?.length, 1, JSON.stringify(wrong));
    }
    const tooMany = {
      ...built.requests[0]!,
      body: { data: Array(1_001).fill(sent), continueOnValidationError: true },
    };
    assert.equal((await send(microsoft.url, tooMany)).status, 400);
  });

  it('a poisoned event: refused by its index, the others forwarded in the same request; a 400 without continueOnValidationError is bisected', async () => {
    microsoft.rejectEvent = (e) => (e['eventId'] === 'poison' ? 'bad event' : undefined);
    try {
      const events = [forwardable(), forwardable({ event: { eventId: 'poison' } }), forwardable()];
      const built = microsoftAds.build(events, config, { now: new Date() });
      const before = microsoft.events.length;
      const verdict = await verdictOf(built);
      assert.deepEqual(verdict, {
        kind: 'success',
        receipt: {
          eventsReceived: 2,
          traceId: (verdict as unknown as { receipt: { traceId: string } }).receipt.traceId,
        },
        refused: [{ index: 1, message: 'Microsoft refused the event: eventId: bad event' }],
      });
      assert.equal(microsoft.events.length, before + 2);
      const strict = {
        ...built.requests[0]!,
        body: { data: dataOf(built), continueOnValidationError: false },
      };
      const whole = await verdictOf({ ...built, requests: [strict] });
      assert.equal(whole.kind, 'permanent');
      assert.equal(isolateRefusal(microsoftAds, whole, 3).kind, 'split');
    } finally {
      delete microsoft.rejectEvent;
    }
  });

  it('401 (wrong token or another tag) refuses the credentials (suspend); 429 is retried after Retry-After; 500 is retried', async () => {
    const now = new Date();
    const build = (c: MicrosoftAdsConfig) => microsoftAds.build([forwardable()], c, { now });
    const refused = await verdictOf(build({ ...config, access_token: 'wrong' }));
    assert.deepEqual(refused, {
      kind: 'auth',
      message: 'Microsoft HTTP 401: Unauthorized: The access token is invalid for this tag.',
    });
    assert.equal((await verdictOf(build({ ...config, tag_id: '999' }))).kind, 'auth');
    microsoft.mode = 'throttled';
    try {
      const throttled = await verdictOf(build(config));
      assert.equal(throttled.kind, 'transient');
      assert.equal((throttled as { retryAfterMs?: number }).retryAfterMs, 1_000);
      microsoft.mode = 'down';
      assert.equal((await verdictOf(build(config))).kind, 'transient');
    } finally {
      microsoft.mode = 'normal';
    }
  });

  it('a warning in the details refuses nothing', () => {
    const verdict = microsoftAds.classify(
      {
        kind: 'response',
        status: 200,
        body: JSON.stringify({
          eventsReceived: 1,
          error: { details: [{ index: 0, errorMessage: 'unused field', isWarning: true }] },
        }),
      },
      new Date(),
    );
    assert.deepEqual(verdict, { kind: 'success', receipt: { eventsReceived: 1 } });
  });

  it('the event’s own msclkid (the page URL’s only without one) and _uetvid as anonymousId; the stand-in refuses them hashed', async () => {
    const now = new Date();
    const own = forwardable({
      event: { url: 'https://shop.example/p?msclkid=from-url' },
      matchKeys: {
        clientIpAddress: '203.0.113.7',
        clientUserAgent: UA,
        msclkid: 'own-click',
        uetvid: '738e0780e74d11ee909e71b092db6616',
      },
    });
    const fromUrl = forwardable({ event: { url: 'https://shop.example/p?msclkid=from-url' } });
    const built = microsoftAds.build([own, fromUrl], config, { now });
    const sent = dataOf(built);
    assert.deepEqual(
      sent.map((e) => {
        const user = e['userData'] as Record<string, unknown>;
        return [user['msclkid'], user['anonymousId']];
      }),
      [
        ['own-click', '738e0780e74d11ee909e71b092db6616'],
        ['from-url', undefined],
      ],
    );
    assert.equal((await verdictOf(built)).kind, 'success');
    const hashed = {
      ...built.requests[0]!,
      body: {
        data: [
          {
            ...sent[0]!,
            userData: { ...(sent[0]!['userData'] as object), msclkid: sha256Hex('x') },
          },
        ],
        continueOnValidationError: true,
      },
    };
    const verdict = await verdictOf({ ...built, requests: [hashed] });
    assert.equal((verdict as { refused?: unknown[] }).refused?.length, 1);
  });
});
