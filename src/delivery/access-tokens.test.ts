/**
 * OAuth access tokens against the local Google's token endpoint (test/platforms/
 * google-ads-server.ts), which checks the refresh grant's fields and verifies the service
 * account's JWT (RS256 signature with the account's public key, and its claims).
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { forwardable } from '../../test/platforms/forwardable.ts';
import {
  type GoogleAdsServer,
  startGoogleAdsServer,
} from '../../test/platforms/google-ads-server.ts';
import type { GoogleAdsConfig } from '../domain/forwarding/platforms/google_ads/config.ts';
import { googleAds } from '../domain/forwarding/platforms/google_ads/index.ts';
import { requestUrl } from '../domain/forwarding/platforms/platform.ts';
import { createAccessTokens, jwtAssertion } from './access-tokens.ts';
import { createPlatformSender, sendAuthorized } from './platform-sender.ts';

describe('OAuth access tokens', () => {
  let google: GoogleAdsServer;
  let refreshConfig: GoogleAdsConfig;
  let accountConfig: GoogleAdsConfig;
  const sender = createPlatformSender({ timeoutMs: 5_000 });
  before(async () => {
    google = await startGoogleAdsServer();
    refreshConfig = {
      customer_id: google.customerId,
      conversion_actions: { Purchase: '111111' },
      oauth: google.oauth,
    };
    accountConfig = {
      customer_id: google.customerId,
      conversion_actions: { Purchase: '111111' },
      service_account: google.serviceAccount,
    };
  });
  after(async () => {
    await sender.close();
    await google.close();
  });

  it('the service account’s JWT carries the documented claims, aud Google’s URL whatever the token URL', () => {
    const grant = googleAds.auth!.grant(accountConfig);
    const jwt = jwtAssertion(
      grant as Extract<typeof grant, { kind: 'jwt_bearer' }>,
      1_700_000_000_000,
    );
    const [header, claims] = jwt
      .split('.')
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    assert.deepEqual(header, { alg: 'RS256', typ: 'JWT' });
    assert.deepEqual(claims, {
      iss: google.serviceAccount.client_email,
      scope: 'https://www.googleapis.com/auth/datamanager',
      aud: 'https://oauth2.googleapis.com/token',
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
  });

  it('obtains a token by either grant, once: later calls reuse it until shortly before it expires', async () => {
    let now = Date.now();
    const tokens = createAccessTokens({ urls: { google_ads: google.tokenUrl }, now: () => now });
    try {
      const issued = { ...google.tokensIssued };
      const [a, b] = await Promise.all([
        tokens.token('google_ads', refreshConfig),
        tokens.token('google_ads', refreshConfig),
      ]);
      assert.equal(a.kind, 'token');
      assert.deepEqual(a, b);
      const jwt = await tokens.token('google_ads', accountConfig);
      assert.equal(jwt.kind, 'token');
      assert.notDeepEqual(jwt, a);
      assert.deepEqual(google.tokensIssued, {
        refresh_token: issued.refresh_token + 1,
        jwt_bearer: issued.jwt_bearer + 1,
      });
      // 3,599 s tokens are renewed 5 minutes before they expire.
      now += 3_599_000 - 301_000;
      assert.deepEqual(await tokens.token('google_ads', refreshConfig), a);
      now += 2_000;
      const renewed = await tokens.token('google_ads', refreshConfig);
      assert.equal(renewed.kind, 'token');
      assert.notDeepEqual(renewed, a);
    } finally {
      await tokens.close();
    }
  });

  it('a 401 renews the token and sends once more; the platform gets the request with the new one', async () => {
    const tokens = createAccessTokens({ urls: { google_ads: google.tokenUrl } });
    try {
      const built = googleAds.build([forwardable()], refreshConfig, { now: new Date() });
      const request = built.requests[0]!;
      const url = requestUrl(google.url, request);
      const first = await sendAuthorized(sender, tokens, 'google_ads', refreshConfig, url, request);
      assert.equal(first.answer.kind === 'response' && first.answer.status, 200);
      const issued = google.tokensIssued.refresh_token;
      google.expireTokens();
      const again = await sendAuthorized(sender, tokens, 'google_ads', refreshConfig, url, request);
      assert.equal(again.answer.kind === 'response' && again.answer.status, 200);
      assert.equal(again.verdict, undefined);
      assert.equal(google.tokensIssued.refresh_token, issued + 1);
    } finally {
      await tokens.close();
    }
  });

  it('a refused grant (revoked refresh token, a key Google does not know) is an auth verdict: the destination is suspended', async () => {
    const tokens = createAccessTokens({ urls: { google_ads: google.tokenUrl } });
    try {
      const built = googleAds.build([forwardable()], refreshConfig, { now: new Date() });
      const request = built.requests[0]!;
      const url = requestUrl(google.url, request);
      const revoked = { ...refreshConfig, oauth: { ...google.oauth, refresh_token: '1//revoked' } };
      const sent = await sendAuthorized(sender, tokens, 'google_ads', revoked, url, request);
      assert.deepEqual(sent.verdict, {
        kind: 'auth',
        message:
          'Google Ads OAuth token refused: HTTP 400 invalid_grant: Token has been expired or revoked.',
      });
      // Neither the grant's secrets nor a token are in what the ledger keeps.
      const kept = JSON.stringify(sent.answer);
      assert.ok(!kept.includes('1//revoked') && !kept.includes(google.oauth.client_secret), kept);
      const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString();
      const stranger = {
        ...accountConfig,
        service_account: { ...google.serviceAccount, private_key: otherKey },
      };
      const signed = await sendAuthorized(sender, tokens, 'google_ads', stranger, url, request);
      assert.deepEqual(signed.verdict, {
        kind: 'auth',
        message: 'Google Ads OAuth token refused: HTTP 400 invalid_grant: Invalid JWT Signature.',
      });
    } finally {
      await tokens.close();
    }
  });

  it('a token endpoint that is down or unreachable is transient: tried again later', async () => {
    const tokens = createAccessTokens({ urls: { google_ads: google.tokenUrl } });
    const unreachable = createAccessTokens({ urls: { google_ads: 'http://127.0.0.1:9/token' } });
    try {
      google.mode = 'down';
      const down = await tokens.token('google_ads', refreshConfig);
      assert.equal(down.kind, 'unavailable');
      google.mode = 'normal';
      const none = await unreachable.token('google_ads', refreshConfig);
      assert.deepEqual(none, {
        kind: 'unavailable',
        status: null,
        message: 'Google Ads OAuth token: ECONNREFUSED',
      });
    } finally {
      google.mode = 'normal';
      await tokens.close();
      await unreachable.close();
    }
  });
});
