/**
 * A local LinkedIn: its OAuth token endpoint and the Conversions API, honouring what LinkedIn
 * documents (learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/
 * conversions-api; …/shared/api-guide/concepts/versioning; …/shared/authentication/
 * programmatic-refresh-tokens):
 * - `POST /oauth/v2/accessToken` (form) `grant_type=refresh_token` with the client id, secret
 *   and refresh token it issued: `{access_token, expires_in}`; else 400/401 `invalid_grant` /
 *   `invalid_client`;
 * - `POST /rest/conversionEvents` with `Authorization: Bearer <token it issued, not expired>`
 *   (else 401), `LinkedIn-Version: YYYYMM` less than 12 months old and not ahead of today (else
 *   426 NONEXISTENT_VERSION / VERSION_MISSING 400; 202511 was sunset on 2026-11-16), `X-Restli-Protocol-Version: 2.0.0`,
 *   `X-RestLi-Method: BATCH_CREATE` with `{elements: [1..5000]}`;
 * - each element: `conversion` = `urn:lla:llaPartnerConversion:<a rule of its ad account>`,
 *   `conversionHappenedAt` epoch ms within 90 days, `eventId`, `conversionValue`
 *   `{currencyCode, amount: "<decimal string>"}`, `user.userIds` (required: 422 without)
 *   each `{idType, idValue}` of its types with `SHA256_EMAIL` 64 lowercase hex, `userInfo`
 *   only with first and last name; a malformed request is refused whole with 422; an element
 *   `rejectEvent` picks gets its own `{status: 400, error}` in a 200 answer, the others 201;
 * - 429 when throttled, 500 when down; `eventId` + rule deduplicated.
 */
import { randomUUID } from 'node:crypto';
import {
  type Answer,
  isSha256Hex,
  type PlatformServer,
  type ReceivedRequest,
  startPlatformServer,
} from './http-server.ts';

export interface LinkedinServer extends Omit<PlatformServer, 'mode'> {
  /** The API base URL (`TRACKWAY_LINKEDIN_API_URL`). */
  url: string;
  /** The token URL (`TRACKWAY_LINKEDIN_OAUTH_URL`). */
  tokenUrl: string;
  /** `expired`: every token refused, and so is every grant (a revoked refresh token). */
  mode: PlatformServer['mode'] | 'throttled' | 'expired';
  adAccountId: string;
  /** Conversion rule ids of the ad account. */
  rules: Set<string>;
  oauth: { client_id: string; client_secret: string; refresh_token: string };
  refuseGrants: boolean;
  tokensIssued: number;
  expireTokens(): void;
  events: Array<Record<string, unknown>>;
  duplicates: number;
  rejectEvent?: (element: Record<string, unknown>) => string | undefined;
}

const ID_TYPES = new Set([
  'SHA256_EMAIL',
  'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID',
  'ACXIOM_ID',
  'ORACLE_MOAT_ID',
]);
const DAY_MS = 86_400_000;

const restliError = (status: number, message: string, code?: string): Answer => ({
  status,
  body: { status, message, ...(code ? { code } : {}) },
});

/** Whether `YYYYMM` is a version LinkedIn serves today: released, and less than 12 months old. */
function versionProblem(version: string | undefined, now: Date): Answer | undefined {
  if (version === undefined)
    return restliError(400, 'A version must be present', 'VERSION_MISSING');
  const m = /^(\d{4})(\d{2})$/.exec(version);
  if (!m) return restliError(400, `Invalid version ${version}`, 'INVALID_VERSION');
  const months = Number(m[1]) * 12 + Number(m[2]) - 1;
  const current = now.getUTCFullYear() * 12 + now.getUTCMonth();
  if (months > current || current - months >= 12) {
    return restliError(426, `Requested version ${version} is not active`, 'NONEXISTENT_VERSION');
  }
  return undefined;
}

function elementProblem(
  element: Record<string, unknown>,
  rules: Set<string>,
  nowMs: number,
): string | undefined {
  const rule = /^urn:lla:llaPartnerConversion:(\d+)$/.exec(String(element['conversion']))?.[1];
  if (rule === undefined || !rules.has(rule))
    return `unknown conversion ${String(element['conversion'])}`;
  const at = element['conversionHappenedAt'];
  if (!Number.isInteger(at) || (at as number) < 1e12)
    return 'conversionHappenedAt must be epoch ms';
  if ((at as number) < nowMs - 90 * DAY_MS) return 'conversionHappenedAt is more than 90 days old';
  if ((at as number) > nowMs + 300_000) return 'conversionHappenedAt is in the future';
  if (typeof element['eventId'] !== 'string' || element['eventId'] === '')
    return 'eventId is required';
  const value = element['conversionValue'] as Record<string, unknown> | undefined;
  if (value !== undefined) {
    if (typeof value['currencyCode'] !== 'string' || !/^[A-Z]{3}$/.test(value['currencyCode'])) {
      return 'conversionValue.currencyCode must be an ISO 4217 code';
    }
    if (typeof value['amount'] !== 'string' || !/^\d+(\.\d+)?$/.test(value['amount'])) {
      return 'conversionValue.amount must be a decimal string';
    }
  }
  const user = element['user'] as Record<string, unknown> | undefined;
  const ids = user?.['userIds'];
  if (!Array.isArray(ids)) return '/user/userIds: field is required but not found';
  for (const id of ids as Array<Record<string, unknown>>) {
    if (typeof id['idType'] !== 'string' || !ID_TYPES.has(id['idType'])) {
      return `invalid idType ${String(id['idType'])}`;
    }
    if (typeof id['idValue'] !== 'string' || id['idValue'] === '') return 'idValue is required';
    if (id['idType'] === 'SHA256_EMAIL' && !isSha256Hex(id['idValue'])) {
      return 'SHA256_EMAIL must be a SHA-256 hex';
    }
  }
  const info = user?.['userInfo'] as Record<string, unknown> | undefined;
  if (
    info !== undefined &&
    (typeof info['firstName'] !== 'string' || typeof info['lastName'] !== 'string')
  ) {
    return 'userInfo needs firstName and lastName';
  }
  const unknown = Object.keys(element).find(
    (k) =>
      !['conversion', 'conversionHappenedAt', 'conversionValue', 'eventId', 'user'].includes(k),
  );
  return unknown === undefined ? undefined : `unknown field ${unknown}`;
}

export async function startLinkedinServer(
  options: { adAccountId?: string; rules?: string[] } = {},
): Promise<LinkedinServer> {
  const tokens = new Map<string, boolean>();
  const kept = new Set<string>();

  const token = (request: ReceivedRequest): Answer => {
    const form = new URLSearchParams(request.body);
    if (form.get('grant_type') !== 'refresh_token') {
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    }
    if (
      form.get('client_id') !== linkedin.oauth.client_id ||
      form.get('client_secret') !== linkedin.oauth.client_secret
    ) {
      return {
        status: 401,
        body: { error: 'invalid_client', error_description: 'Client authentication failed' },
      };
    }
    const refused = linkedin.refuseGrants || linkedin.mode === 'expired';
    if (refused || form.get('refresh_token') !== linkedin.oauth.refresh_token) {
      return {
        status: 400,
        body: {
          error: 'invalid_grant',
          error_description:
            'The provided authorization grant or refresh token is invalid, expired or revoked.',
        },
      };
    }
    linkedin.tokensIssued += 1;
    const issued = `AQX-stand-in-${linkedin.tokensIssued}-${randomUUID()}`;
    tokens.set(issued, true);
    return {
      status: 200,
      body: {
        access_token: issued,
        expires_in: 5_183_999,
        refresh_token: linkedin.oauth.refresh_token,
        refresh_token_expires_in: 31_535_999,
      },
    };
  };

  const conversions = (request: ReceivedRequest): Answer => {
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    if (bearer === undefined || tokens.get(bearer) !== true || linkedin.mode === 'expired') {
      return restliError(401, 'Invalid access token', 'EXPIRED_ACCESS_TOKEN');
    }
    const version = versionProblem(
      request.headers['linkedin-version'] as string | undefined,
      new Date(),
    );
    if (version) return version;
    if (request.headers['x-restli-protocol-version'] !== '2.0.0') {
      return restliError(400, 'X-Restli-Protocol-Version 2.0.0 is required');
    }
    if (linkedin.mode === 'throttled') {
      return { ...restliError(429, 'Too many requests'), headers: { 'retry-after': '1' } };
    }
    if (request.headers['x-restli-method'] !== 'BATCH_CREATE') {
      return restliError(400, 'a batch of elements needs X-RestLi-Method: BATCH_CREATE');
    }
    const elements = (request.json as { elements?: unknown } | undefined)?.elements;
    if (!Array.isArray(elements) || elements.length < 1 || elements.length > 5_000) {
      return restliError(400, 'elements must hold 1 to 5000 conversion events');
    }
    const nowMs = Date.now();
    for (const [i, element] of (elements as Array<Record<string, unknown>>).entries()) {
      const problem = elementProblem(element, linkedin.rules, nowMs);
      if (problem) return restliError(422, `/elements/${i}: ${problem}`, 'UNPROCESSABLE_ENTITY');
    }
    const results = (elements as Array<Record<string, unknown>>).map((element) => {
      const refused = linkedin.rejectEvent?.(element);
      if (refused) return { status: 400, error: { status: 400, message: refused } };
      const key = `${String(element['conversion'])}/${String(element['eventId'])}`;
      if (kept.has(key)) linkedin.duplicates += 1;
      else {
        kept.add(key);
        linkedin.events.push(element);
      }
      return { status: 201 };
    });
    return { status: 200, body: { elements: results } };
  };

  const handle = (request: ReceivedRequest): Answer => {
    if (request.method === 'POST' && request.path === '/oauth/v2/accessToken')
      return token(request);
    if (request.method === 'POST' && request.path === '/rest/conversionEvents')
      return conversions(request);
    return restliError(404, `no resource ${request.path}`);
  };
  const base = await startPlatformServer(handle, () => restliError(500, 'Internal server error'));
  const linkedin: LinkedinServer = Object.assign(base as unknown as LinkedinServer, {
    url: `${base.origin}/rest`,
    tokenUrl: `${base.origin}/oauth/v2/accessToken`,
    adAccountId: options.adAccountId ?? '512345678',
    rules: new Set(options.rules ?? ['7001', '7002', '7003']),
    oauth: {
      client_id: '86stand-in-client',
      client_secret: 'WPL_AP1.stand-in-secret-0001',
      refresh_token: 'AQW-stand-in-refresh-token-0001',
    },
    refuseGrants: false,
    tokensIssued: 0,
    expireTokens() {
      for (const key of tokens.keys()) tokens.set(key, false);
    },
    events: [],
    duplicates: 0,
  });
  return linkedin;
}
