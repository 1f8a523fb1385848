import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forwardable } from '../../../../../test/platforms/forwardable.ts';
import {
  type LinkedinServer,
  startLinkedinServer,
} from '../../../../../test/platforms/linkedin-server.ts';
import { send } from '../../../../../test/platforms/send.ts';
import { type AccessTokens, createAccessTokens } from '../../../../delivery/access-tokens.ts';
import { createPlatformSender, sendAuthorized } from '../../../../delivery/platform-sender.ts';
import { sha256Hex } from '../../../events/user-data.ts';
import { isolateRefusal } from '../../batch-isolation.ts';
import { consentRefusal } from '../../consent-gate.ts';
import { type PlatformRequest, requestUrl } from '../platform.ts';
import type { LinkedinConfig } from './config.ts';
import { linkedin } from './index.ts';
import { LINKEDIN_VERSION } from './payload.ts';

const DAY = 86_400_000;
type Built = ReturnType<typeof linkedin.build>;
const elementsOf = (built: Built, index = 0) =>
  built.requests[index]!.body['elements'] as Array<Record<string, unknown>>;

describe('LinkedIn Conversions API payload', () => {
  let server: LinkedinServer;
  let config: LinkedinConfig;
  let tokens: AccessTokens;
  const sender = createPlatformSender({ timeoutMs: 5_000 });
  before(async () => {
    server = await startLinkedinServer();
    config = {
      ad_account_id: server.adAccountId,
      conversion_rules: { Purchase: '7001', Lead: '7002' },
      oauth: server.oauth,
    };
    tokens = createAccessTokens({ urls: { linkedin: server.tokenUrl } });
  });
  after(async () => {
    await tokens.close();
    await sender.close();
    await server.close();
  });

  const sentWith = (request: PlatformRequest, c: LinkedinConfig = config) =>
    sendAuthorized(sender, tokens, 'linkedin', c, requestUrl(server.url, request), request);
  const verdictOf = async (built: Built, index = 0) => {
    const sent = await sentWith(built.requests[index]!);
    return sent.verdict ?? linkedin.classify(sent.answer, new Date());
  };

  it('builds the documented BATCH_CREATE (rule URN, epoch ms, value as a decimal string, hashed email and li_fat_id), and LinkedIn keeps it', async () => {
    const event = forwardable({
      userData: { email: ' Jane@Example.COM ' },
      matchKeys: { clientIpAddress: '203.0.113.7', liFatId: 'fat-123' },
    });
    const built = linkedin.build([event], config, { now: new Date() });
    assert.deepEqual(built.skipped, []);
    const [request] = built.requests;
    assert.equal(request!.path, '/conversionEvents');
    assert.deepEqual(request!.headers, {
      'content-type': 'application/json',
      'linkedin-version': LINKEDIN_VERSION,
      'x-restli-protocol-version': '2.0.0',
      'x-restli-method': 'BATCH_CREATE',
    });
    assert.deepEqual(elementsOf(built)[0], {
      conversion: 'urn:lla:llaPartnerConversion:7001',
      conversionHappenedAt: event.event.timestamp.getTime(),
      eventId: event.event.eventId,
      user: {
        userIds: [
          { idType: 'SHA256_EMAIL', idValue: sha256Hex('jane@example.com') },
          { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'fat-123' },
        ],
      },
      conversionValue: { currencyCode: 'EUR', amount: '49.9' },
    });
    assert.equal((await verdictOf(built)).kind, 'success');
    assert.equal(server.events.at(-1)?.['eventId'], event.event.eventId);
  });

  it('LinkedIn-Version is at most 12 months old: the stand-in refuses a sunset one with 426', async () => {
    const [y, m] = [Number(LINKEDIN_VERSION.slice(0, 4)), Number(LINKEDIN_VERSION.slice(4))];
    const age = (new Date().getUTCFullYear() - y) * 12 + new Date().getUTCMonth() + 1 - m;
    assert.ok(age < 12, `LinkedIn-Version ${LINKEDIN_VERSION} is ${age} months old`);
    const built = linkedin.build([forwardable()], config, { now: new Date() });
    const request = built.requests[0]!;
    const old = await sentWith({
      ...request,
      headers: { ...request.headers, 'linkedin-version': '202511' },
    });
    assert.equal(old.answer.kind === 'response' && old.answer.status, 426);
    assert.equal(linkedin.classify(old.answer, new Date()).kind, 'auth');
  });

  it('events without a rule, or without an email or li_fat_id, are skipped with the reason; the li_fat_id of the URL is used too', () => {
    const now = new Date();
    const view = forwardable({ event: { eventName: 'PageView' } });
    const anonymous = forwardable({ userData: {}, matchKeys: { clientIpAddress: '203.0.113.7' } });
    const clicked = forwardable({
      userData: {},
      event: { url: 'https://shop.example/?li_fat_id=url-fat' },
    });
    const built = linkedin.build([view, anonymous, clicked], config, { now });
    assert.deepEqual(built.skipped, [
      {
        eventId: view.event.eventId,
        reason: 'no LinkedIn conversion rule for PageView (config.conversion_rules)',
      },
      {
        eventId: anonymous.event.eventId,
        reason: 'LinkedIn needs an email or a li_fat_id click id',
      },
    ]);
    assert.deepEqual((elementsOf(built)[0]!['user'] as { userIds: unknown }).userIds, [
      { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'url-fat' },
    ]);
  });

  it('no consent field: denied ad_user_data and limited data use are skipped before the builder', () => {
    assert.equal(
      consentRefusal(linkedin, { ad_user_data: 'denied' }, false),
      'consent denied: ad_user_data',
    );
    assert.match(
      consentRefusal(linkedin, { limited_data_use: true }, false) ?? '',
      /LinkedIn has no restricted-processing mode/,
    );
  });

  it('skips an event older than 90 days, and cuts 5,001 events into requests of at most 5,000', async () => {
    const now = new Date();
    const old = forwardable({ event: { timestamp: new Date(now.getTime() - 90 * DAY - 60_000) } });
    assert.deepEqual(linkedin.build([old], config, { now }).skipped, [
      {
        eventId: old.event.eventId,
        reason: "outside LinkedIn's 90-day window: the event is older than 90 days",
      },
    ]);
    const many = linkedin.build(
      Array.from({ length: 5_001 }, () => forwardable()),
      config,
      { now },
    );
    assert.deepEqual(
      many.requests.map((r) => r.eventIds.length),
      [5_000, 1],
    );
    assert.equal((await verdictOf(many, 1)).kind, 'success');
  });

  it('the stand-in refuses a wrong element with 422 (no userIds, unhashed email, seconds, a number amount)', async () => {
    const built = linkedin.build([forwardable()], config, { now: new Date() });
    const element = elementsOf(built)[0]!;
    for (const wrong of [
      { user: {} },
      { user: { userIds: [{ idType: 'SHA256_EMAIL', idValue: 'jane@example.com' }] } },
      { conversionHappenedAt: Math.floor(Date.now() / 1000) },
      { conversionValue: { currencyCode: 'EUR', amount: 49.9 } },
    ]) {
      const sent = await sentWith({
        ...built.requests[0]!,
        body: { elements: [{ ...element, ...wrong }] },
      });
      assert.equal(
        sent.answer.kind === 'response' && sent.answer.status,
        422,
        JSON.stringify(wrong),
      );
      assert.equal(linkedin.classify(sent.answer, new Date()).kind, 'permanent');
    }
  });

  it('one refused element: the request is permanent with LinkedIn’s message and bisected to it', async () => {
    server.rejectEvent = (e) =>
      e['eventId'] === 'poison' ? 'Conversion rule is not active' : undefined;
    try {
      const events = [forwardable(), forwardable({ event: { eventId: 'poison' } }), forwardable()];
      const built = linkedin.build(events, config, { now: new Date() });
      const verdict = await verdictOf(built);
      assert.deepEqual(verdict, {
        kind: 'permanent',
        message: 'LinkedIn refused events: element 1: Conversion rule is not active',
      });
      assert.equal(isolateRefusal(linkedin, verdict, 3).kind, 'split');
      const last = linkedin.subRequest!(built.requests[0]!, 2, 3);
      assert.deepEqual(last.eventIds, [events[2]!.event.eventId]);
      assert.equal((await verdictOf({ ...built, requests: [last] })).kind, 'success');
    } finally {
      delete server.rejectEvent;
    }
  });

  it('an expired token is renewed after the 401; a refused refresh suspends; 429 and 500 are retried', async () => {
    const built = linkedin.build([forwardable()], config, { now: new Date() });
    const issued = server.tokensIssued;
    assert.equal((await verdictOf(built)).kind, 'success');
    server.expireTokens();
    assert.equal((await verdictOf(built)).kind, 'success');
    assert.equal(server.tokensIssued, issued + 1);
    // Without a token of its own, a request is refused: 401.
    const bare = await send(server.url, built.requests[0]!);
    assert.equal(bare.status, 401);
    server.expireTokens();
    server.refuseGrants = true;
    try {
      const refused = await verdictOf(built);
      assert.equal(refused.kind, 'auth');
      assert.match(
        (refused as { message: string }).message,
        /^LinkedIn OAuth token refused: HTTP 400 invalid_grant/,
      );
    } finally {
      server.refuseGrants = false;
    }
    server.mode = 'throttled';
    try {
      const throttled = await verdictOf(built);
      assert.equal(throttled.kind, 'transient');
      assert.equal((throttled as { retryAfterMs?: number }).retryAfterMs, 1_000);
      server.mode = 'down';
      assert.equal((await verdictOf(built)).kind, 'transient');
    } finally {
      server.mode = 'normal';
    }
  });
});
