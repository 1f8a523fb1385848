import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable, UA } from '../../../../../test/platforms/forwardable.ts';
import {
  type GoogleAdsServer,
  startGoogleAdsServer,
} from '../../../../../test/platforms/google-ads-server.ts';
import { send } from '../../../../../test/platforms/send.ts';
import { type AccessTokens, createAccessTokens } from '../../../../delivery/access-tokens.ts';
import { createPlatformSender, sendAuthorized } from '../../../../delivery/platform-sender.ts';
import { sha256Hex } from '../../../events/user-data.ts';
import { isolateRefusal } from '../../batch-isolation.ts';
import { requestUrl } from '../platform.ts';
import type { GoogleAdsConfig } from './config.ts';
import { googleAds } from './index.ts';
import { googleEmail } from './user-data.ts';

const DAY = 86_400_000;
type Built = ReturnType<typeof googleAds.build>;
const bodyOf = (built: Built, index = 0) =>
  built.requests[index]!.body as {
    destinations: Array<Record<string, unknown>>;
    events: Array<Record<string, unknown>>;
    encoding: string;
    validateOnly?: boolean;
  };

describe('Google Ads (Data Manager API) payload', () => {
  let google: GoogleAdsServer;
  let config: GoogleAdsConfig;
  let tokens: AccessTokens;
  const sender = createPlatformSender({ timeoutMs: 5_000 });
  before(async () => {
    google = await startGoogleAdsServer();
    config = {
      customer_id: google.customerId,
      conversion_actions: { Purchase: '111111', Lead: '222222' },
      oauth: google.oauth,
    };
    tokens = createAccessTokens({ urls: { google_ads: google.tokenUrl } });
  });
  after(async () => {
    await tokens.close();
    await sender.close();
    await google.close();
  });

  /** Sends as the engine does (with the destination's token) and classifies the answer. */
  const verdictOf = async (built: Built, index = 0, c: GoogleAdsConfig = config) => {
    const request = built.requests[index]!;
    const sent = await sendAuthorized(
      sender,
      tokens,
      'google_ads',
      c,
      requestUrl(google.url, request),
      request,
    );
    return sent.verdict ?? googleAds.classify(sent.answer, new Date());
  };

  it('normalises emails as Google does: gmail and googlemail lose the dots before the @', () => {
    assert.equal(googleEmail('jane.doe@gmail.com'), 'janedoe@gmail.com');
    assert.equal(googleEmail('j.a.n.e@googlemail.com'), 'jane@googlemail.com');
    assert.equal(googleEmail('jane.doe@example.com'), 'jane.doe@example.com');
    const event = forwardable({ userData: { email: ' Jane.Doe@GMail.com ' } });
    assert.equal(event.hashes['google_ads']?.['email'], sha256Hex('janedoe@gmail.com'));
  });

  it('builds the documented request (destination per conversion action, RFC 3339, transactionId, HEX identifiers, raw device info, click ids), and Google keeps it', async () => {
    const now = new Date();
    const event = forwardable({
      event: { url: 'https://shop.example/done?gclid=Cj0KCQ-test&x=1' },
      userData: {
        email: 'jane@example.com',
        phone: '+1 650 555 1212',
        first_name: 'Jane',
        last_name: 'Doe',
        country: 'us',
        zip: '94045',
      },
      matchKeys: { clientIpAddress: '203.0.113.7', clientUserAgent: UA, wbraid: 'WB-1' },
    });
    const built = googleAds.build([event], config, { now });
    assert.deepEqual(built.skipped, []);
    const [request] = built.requests;
    assert.equal(request!.path, '/events:ingest');
    // The token is the engine's: never in the built request.
    assert.equal(request!.headers['authorization'], undefined);
    const body = bodyOf(built);
    assert.equal(body.encoding, 'HEX');
    assert.equal(body.validateOnly, undefined);
    assert.deepEqual(body.destinations, [
      {
        operatingAccount: { accountType: 'GOOGLE_ADS', accountId: google.customerId },
        productDestinationId: '111111',
        reference: '111111',
      },
    ]);
    assert.deepEqual(body.events[0], {
      eventTimestamp: event.event.timestamp.toISOString(),
      transactionId: event.event.eventId,
      eventSource: 'WEB',
      destinationReferences: ['111111'],
      conversionValue: 49.9,
      currency: 'EUR',
      adIdentifiers: { gclid: 'Cj0KCQ-test', wbraid: 'WB-1' },
      userData: {
        userIdentifiers: [
          { emailAddress: sha256Hex('jane@example.com') },
          { phoneNumber: sha256Hex('+16505551212') },
          {
            address: {
              givenName: sha256Hex('jane'),
              familyName: sha256Hex('doe'),
              regionCode: 'US',
              postalCode: '94045',
            },
          },
        ],
      },
      eventDeviceInfo: { userAgent: UA, ipAddress: '203.0.113.7' },
    });
    assert.equal((await verdictOf(built)).kind, 'success');
    const kept = google.events.at(-1) as { transactionId: string; productDestinationId: string };
    assert.equal(kept.transactionId, event.event.eventId);
    assert.equal(kept.productDestinationId, '111111');
  });

  it('an event without a conversion action is skipped with the reason; event_names renames first', () => {
    const now = new Date();
    const view = forwardable({ event: { eventName: 'PageView' } });
    const built = googleAds.build([view], config, { now });
    assert.deepEqual(built.skipped, [
      {
        eventId: view.event.eventId,
        reason: 'no Google Ads conversion action for PageView (config.conversion_actions)',
      },
    ]);
    const renamed = googleAds.build(
      [view],
      { ...config, event_names: { PageView: 'Lead' } },
      {
        now,
      },
    );
    assert.deepEqual(bodyOf(renamed).events[0]!['destinationReferences'], ['222222']);
  });

  it('consent goes as Google’s consent; denied ad_user_data sends click ids only, and an event with neither is skipped', async () => {
    const now = new Date();
    const granted = forwardable({
      event: { consent: { ad_user_data: 'granted', ad_personalization: 'denied' } },
    });
    const denied = forwardable({
      event: {
        consent: { ad_user_data: 'denied' },
        url: 'https://shop.example/?gbraid=GB-7',
      },
    });
    const nothing = forwardable({ event: { consent: { ad_user_data: 'denied' } } });
    const built = googleAds.build([granted, denied, nothing], config, { now });
    const [g, d] = bodyOf(built).events;
    assert.deepEqual(g!['consent'], {
      adUserData: 'CONSENT_GRANTED',
      adPersonalization: 'CONSENT_DENIED',
    });
    assert.deepEqual(d!['consent'], { adUserData: 'CONSENT_DENIED' });
    assert.equal(d!['userData'], undefined);
    assert.equal(d!['eventDeviceInfo'], undefined);
    assert.deepEqual(d!['adIdentifiers'], { gbraid: 'GB-7' });
    assert.deepEqual(
      built.skipped.map((s) => s.eventId),
      [nothing.event.eventId],
    );
    assert.equal((await verdictOf(built)).kind, 'success');
  });

  it('the test send is validateOnly: Google checks and keeps nothing', async () => {
    const before = google.events.length;
    const built = googleAds.build([forwardable()], config, { now: new Date(), test: {} });
    assert.equal(bodyOf(built).validateOnly, true);
    assert.equal((await verdictOf(built)).kind, 'success');
    assert.equal(google.events.length, before);
    assert.ok(google.validated >= 1);
  });

  it('skips an event older than 90 days, with the reason', () => {
    const now = new Date();
    const old = forwardable({ event: { timestamp: new Date(now.getTime() - 90 * DAY - 60_000) } });
    const built = googleAds.build([old], config, { now });
    assert.deepEqual(built.skipped, [
      {
        eventId: old.event.eventId,
        reason: "outside Google Ads's 90-day window: the event is older than 90 days",
      },
    ]);
  });

  it('cuts 2,001 events into requests of at most 2,000, and never names more than 10 conversion actions in one', async () => {
    const built = googleAds.build(
      Array.from({ length: 2_001 }, () => forwardable()),
      config,
      { now: new Date() },
    );
    assert.deepEqual(
      built.requests.map((r) => r.eventIds.length),
      [2_000, 1],
    );
    assert.equal((await verdictOf(built, 0)).kind, 'success');
    const many: GoogleAdsConfig = {
      ...config,
      conversion_actions: Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [`E${i}`, String(900 + i)]),
      ),
    };
    const split = googleAds.build(
      Array.from({ length: 12 }, (_, i) => forwardable({ event: { eventName: `E${i}` } })),
      many,
      { now: new Date() },
    );
    assert.deepEqual(
      split.requests.map((r) => bodyOf({ ...split, requests: [r] }).destinations.length),
      [10, 2],
    );
  });

  it('the stand-in refuses a wrong payload with 400 INVALID_ARGUMENT (unhashed email, no encoding, epoch seconds, hashed postal code, unknown field)', async () => {
    const built = googleAds.build(
      [
        forwardable({
          userData: {
            email: 'a@example.com',
            first_name: 'A',
            last_name: 'B',
            country: 'fr',
            zip: '75001',
          },
        }),
      ],
      config,
      { now: new Date() },
    );
    const body = bodyOf(built);
    const event = body.events[0]!;
    const ids = (event['userData'] as { userIdentifiers: Array<Record<string, unknown>> })
      .userIdentifiers;
    const address = ids[1]!['address'] as Record<string, string>;
    const got = await tokens.token('google_ads', config);
    assert.equal(got.kind, 'token');
    const token = (got as { token: string }).token;
    for (const wrong of [
      {
        events: [{ ...event, userData: { userIdentifiers: [{ emailAddress: 'a@example.com' }] } }],
      },
      { encoding: undefined },
      { events: [{ ...event, eventTimestamp: Math.floor(Date.now() / 1000) }] },
      {
        events: [
          {
            ...event,
            userData: {
              userIdentifiers: [{ address: { ...address, postalCode: sha256Hex('75001') } }],
            },
          },
        ],
      },
      { events: [{ ...event, event_name: 'purchase' }] },
    ]) {
      const request = {
        ...built.requests[0]!,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: { ...body, ...wrong },
      };
      const answer = await send(google.url, request);
      assert.equal(answer.status, 400, JSON.stringify(wrong));
      assert.equal(JSON.parse(answer.body).error.status, 'INVALID_ARGUMENT');
    }
  });

  it('a poisoned event fails the whole request: permanent with Google’s reason, bisected to it', async () => {
    google.rejectEvent = (e) => (e['transactionId'] === 'poison' ? 'bad event' : undefined);
    try {
      const events = [forwardable(), forwardable({ event: { eventId: 'poison' } }), forwardable()];
      const built = googleAds.build(events, config, { now: new Date() });
      const verdict = await verdictOf(built);
      assert.equal(verdict.kind, 'permanent');
      assert.match(
        (verdict as { message: string }).message,
        /^Google Ads HTTP 400: INVALID_ARGUMENT: bad event \(INVALID_FORMAT; events\[1\]: bad event\)$/,
      );
      assert.equal(isolateRefusal(googleAds, verdict, 3).kind, 'split');
      const last = googleAds.subRequest!(built.requests[0]!, 2, 3);
      assert.deepEqual(last.eventIds, [events[2]!.event.eventId]);
      assert.equal((await verdictOf({ ...built, requests: [last] })).kind, 'success');
    } finally {
      delete google.rejectEvent;
    }
  });

  it('403 (another customer) suspends; 429 RESOURCE_EXHAUSTED and 503 UNAVAILABLE are retried; success keeps the requestId', async () => {
    const now = new Date();
    const build = (c: GoogleAdsConfig) => googleAds.build([forwardable()], c, { now });
    const other = { ...config, customer_id: '9999999999' };
    assert.equal((await verdictOf(build(other), 0, other)).kind, 'auth');
    const ok = await verdictOf(build(config));
    assert.equal(ok.kind, 'success');
    assert.equal(
      (ok as { receipt: Record<string, unknown> }).receipt['requestId'],
      google.requestIds.at(-1),
    );
    google.mode = 'throttled';
    try {
      assert.equal((await verdictOf(build(config))).kind, 'transient');
      google.mode = 'down';
      assert.equal((await verdictOf(build(config))).kind, 'transient');
    } finally {
      google.mode = 'normal';
    }
  });
});
