/**
 * OAuth 2.0 access tokens for the platforms whose module declares `auth` (Google Ads,
 * LinkedIn): obtained from the destination's grant at the platform's token URL
 * (`TRACKWAY_<…>_OAUTH_URL`), kept in this process's memory only (never stored, never logged),
 * reused until shortly before they expire, and renewed when the platform answers 401 with one.
 *
 * Grants: the refresh-token grant (RFC 6749 §6: `grant_type=refresh_token`, client id and
 * secret in the form body, as Google and LinkedIn document it), and the JWT bearer grant
 * (RFC 7523) Google's service accounts use: a JWT with `iss` = the account's email, `scope`,
 * `aud` = Google's token URL, `iat` and `exp` (at most an hour later), signed RS256 with the
 * account's private key (developers.google.com/identity/protocols/oauth2/service-account).
 */
import { createHash, sign } from 'node:crypto';
import { Agent, request } from 'undici';
import type { PlatformModule, TokenGrant } from '../domain/forwarding/platforms/platform.ts';
import {
  PLATFORMS,
  type Platform,
  platformModule,
} from '../domain/forwarding/platforms/registry.ts';

export type TokenOutcome =
  | { kind: 'token'; token: string }
  /** The provider refused the grant (revoked refresh token, wrong secret, bad key): suspend. */
  | { kind: 'refused'; status: number; message: string }
  /** No token this time (network, 429, 5xx): try again later. */
  | { kind: 'unavailable'; status: number | null; message: string };

export interface AccessTokens {
  /**
   * A token for the destination's config. `stale`: the token the platform just refused with a
   * 401: a new one is obtained unless another request already replaced it.
   */
  token(platform: Platform, config: Record<string, unknown>, stale?: string): Promise<TokenOutcome>;
  close(): Promise<void>;
}

/** A JWT grant's lifetime: Google takes at most an hour. */
const JWT_LIFETIME_S = 3_600;
/** Renewed this long before it expires (or at half its life, if that is shorter). */
const RENEW_BEFORE_MS = 5 * 60_000;
/** When the provider does not say (`expires_in` is recommended, not required). */
const DEFAULT_LIFETIME_S = 3_600;

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** The service account's signed JWT assertion (RS256). */
export function jwtAssertion(
  grant: Extract<TokenGrant, { kind: 'jwt_bearer' }>,
  nowMs: number,
): string {
  const iat = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = base64url(
    JSON.stringify({
      iss: grant.issuer,
      scope: grant.scope,
      aud: grant.audience,
      iat,
      exp: iat + JWT_LIFETIME_S,
    }),
  );
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${claims}`), grant.privateKey);
  return `${header}.${claims}.${base64url(signature)}`;
}

/** The token request's form body. */
export function grantForm(grant: TokenGrant, nowMs: number): URLSearchParams {
  if (grant.kind === 'refresh_token') {
    return new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: grant.refreshToken,
      client_id: grant.clientId,
      client_secret: grant.clientSecret,
    });
  }
  return new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
    assertion: jwtAssertion(grant, nowMs),
  });
}

/**
 * The provider's error in words: RFC 6749 §5.2's `error` and `error_description` only (never
 * the rest of the body, nor anything of the grant).
 */
function oauthError(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; error_description?: unknown };
    const code = typeof parsed.error === 'string' ? parsed.error.slice(0, 100) : null;
    const text =
      typeof parsed.error_description === 'string' ? parsed.error_description.slice(0, 300) : null;
    if (code !== null) return `HTTP ${status} ${code}${text ? `: ${text}` : ''}`;
  } catch {
    // Not JSON: the status says enough.
  }
  return `HTTP ${status}`;
}

interface Held {
  token: string;
  /** When it is renewed rather than used (ms since the epoch). */
  renewAt: number;
}

export function createAccessTokens(
  options: {
    /** Token URLs by platform (`TRACKWAY_GOOGLE_OAUTH_URL` …); the modules' defaults otherwise. */
    urls?: Partial<Record<Platform, string>>;
    now?: () => number;
    timeoutMs?: number;
  } = {},
): AccessTokens {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const agent = new Agent({ connect: { timeout: 5_000 }, connections: 4 });
  const urls = Object.fromEntries(
    PLATFORMS.flatMap((type) => {
      const auth = platformModule(type).auth;
      return auth ? [[type, options.urls?.[type] ?? auth.tokenUrl.default]] : [];
    }),
  ) as Partial<Record<Platform, string>>;
  // By a hash of the token URL and the grant: a changed credential is a new entry, and the
  // grant's secrets are not the map's keys.
  const held = new Map<string, Held>();
  const pending = new Map<string, Promise<TokenOutcome>>();

  async function obtain(
    module: PlatformModule,
    url: string,
    grant: TokenGrant,
    key: string,
  ): Promise<TokenOutcome> {
    const what = `${module.name} OAuth token`;
    let status: number;
    let body: string;
    try {
      const res = await request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: grantForm(grant, now()).toString(),
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.statusCode;
      body = await res.body.text();
    } catch (error) {
      const e = error as Error & { code?: string; cause?: Error & { code?: string } };
      const reason =
        e.name === 'TimeoutError'
          ? `timed out after ${timeoutMs / 1000} s`
          : (e.cause?.code ?? e.code ?? e.name);
      return { kind: 'unavailable', status: null, message: `${what}: ${reason}` };
    }
    if (status >= 200 && status < 300) {
      let parsed: { access_token?: unknown; expires_in?: unknown } = {};
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        // Checked below.
      }
      if (typeof parsed.access_token !== 'string' || parsed.access_token === '') {
        return { kind: 'unavailable', status, message: `${what}: answered without a token` };
      }
      const lifetimeMs =
        (typeof parsed.expires_in === 'number' && parsed.expires_in > 0
          ? parsed.expires_in
          : DEFAULT_LIFETIME_S) * 1000;
      held.set(key, {
        token: parsed.access_token,
        renewAt: now() + lifetimeMs - Math.min(RENEW_BEFORE_MS, lifetimeMs / 2),
      });
      return { kind: 'token', token: parsed.access_token };
    }
    // 400 invalid_grant / invalid_client, 401, 403: the credentials themselves are refused.
    if (status === 400 || status === 401 || status === 403) {
      return { kind: 'refused', status, message: `${what} refused: ${oauthError(status, body)}` };
    }
    return { kind: 'unavailable', status, message: `${what}: ${oauthError(status, body)}` };
  }

  return {
    token(platform, config, stale) {
      const module = platformModule(platform);
      const url = urls[platform];
      if (!module.auth || url === undefined) {
        throw new Error(`${module.name} takes no OAuth token`);
      }
      const grant = module.auth.grant(config);
      const key = createHash('sha256')
        .update(`${platform}\n${url}\n${JSON.stringify(grant)}`)
        .digest('hex');
      const current = held.get(key);
      if (current && current.token === stale) held.delete(key);
      else if (current && now() < current.renewAt) {
        return Promise.resolve({ kind: 'token', token: current.token });
      }
      // One request for a token at a time per grant: the batch's concurrent requests share it.
      let inFlight = pending.get(key);
      if (!inFlight) {
        inFlight = obtain(module, url, grant, key).finally(() => pending.delete(key));
        pending.set(key, inFlight);
      }
      return inFlight;
    },
    close: () => agent.close(),
  };
}
