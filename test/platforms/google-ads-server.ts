/**
 * A local Google: its OAuth token endpoint and the Data Manager API's `events:ingest`,
 * honouring what Google documents (developers.google.com/identity/protocols/oauth2/
 * service-account; googleapis/googleapis google/ads/datamanager/v1/*.proto;
 * developers.google.com/data-manager/api/devguides/{limits,concepts/understand-errors},
 * …/get-started/formatting):
 * - `POST /token` (form): `grant_type=refresh_token` with the client id, secret and refresh
 *   token it issued; or `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` with an RS256
 *   JWT whose signature verifies with the service account's public key and whose claims are
 *   `iss` = its email, `scope` with the datamanager scope, `aud` = Google's token URL, `iat`
 *   now (±5 min) and `exp` at most an hour later. Anything else: 400 `invalid_grant` (or
 *   `invalid_client`); otherwise `{access_token, expires_in, token_type: "Bearer"}`;
 * - `POST /v1/events:ingest` with `Authorization: Bearer <token it issued, not expired>` (else
 *   401 UNAUTHENTICATED); `destinations` 1..10 naming its customer (else 403
 *   PERMISSION_DENIED) and known conversion actions; `events` 1..2,000, each with an RFC 3339
 *   `eventTimestamp` (at most 90 days old), `transactionId`, `eventSource`, identifiers
 *   (`adIdentifiers` or `userData`: NO_IDENTIFIERS_PROVIDED), `userIdentifiers` of exactly one
 *   kind each, emails, phones and names 64 lowercase hex with `encoding: "HEX"`, region and
 *   postal code unhashed, no unknown field; one bad event fails the whole request with 400
 *   INVALID_ARGUMENT in Google's error model (ErrorInfo reason + BadRequest field violation);
 *   `validateOnly` checks and keeps nothing; 429 RESOURCE_EXHAUSTED when throttled, 503
 *   UNAVAILABLE when down; `transactionId` + conversion action deduplicated.
 */
import { generateKeyPairSync, randomUUID, verify } from 'node:crypto';
import { isIP } from 'node:net';
import {
  type Answer,
  isSha256Hex,
  type PlatformServer,
  type ReceivedRequest,
  startPlatformServer,
} from './http-server.ts';

export interface GoogleAdsServer extends Omit<PlatformServer, 'mode'> {
  /** The Data Manager base URL (`TRACKWAY_GOOGLE_ADS_API_URL`). */
  url: string;
  /** The token URL (`TRACKWAY_GOOGLE_OAUTH_URL`). */
  tokenUrl: string;
  /** `expired`: every token refused, and so is every grant (a revoked refresh token). */
  mode: PlatformServer['mode'] | 'throttled' | 'expired';
  customerId: string;
  /** Conversion action ids it knows. */
  conversionActions: Set<string>;
  oauth: { client_id: string; client_secret: string; refresh_token: string };
  serviceAccount: { client_email: string; private_key: string };
  /** Refuse every grant (a revoked refresh token, a deleted key): 400 invalid_grant. */
  refuseGrants: boolean;
  /** `expires_in` of the tokens it issues. */
  tokenLifetimeS: number;
  /** Tokens issued so far, by grant type. */
  tokensIssued: { refresh_token: number; jwt_bearer: number };
  /** Makes every token issued so far expired (the next request with one gets a 401). */
  expireTokens(): void;
  events: Array<Record<string, unknown>>;
  /** The `requestId` of each accepted (not validate-only) request. */
  requestIds: string[];
  validated: number;
  duplicates: number;
  rejectEvent?: (event: Record<string, unknown>) => string | undefined;
}

export const GOOGLE_TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
const SCOPE = 'https://www.googleapis.com/auth/datamanager';
const DAY_MS = 86_400_000;
const EVENT_KEYS = new Set([
  'destinationReferences',
  'transactionId',
  'eventTimestamp',
  'lastUpdatedTimestamp',
  'userData',
  'consent',
  'adIdentifiers',
  'currency',
  'conversionValue',
  'eventSource',
  'eventDeviceInfo',
  'cartData',
  'customVariables',
  'experimentalFields',
  'userProperties',
  'eventName',
  'clientId',
  'userId',
  'additionalEventParameters',
]);
const EVENT_SOURCES = new Set(['WEB', 'APP', 'IN_STORE', 'PHONE', 'OTHER']);
const CONSENT = new Set(['CONSENT_GRANTED', 'CONSENT_DENIED', 'CONSENT_STATUS_UNSPECIFIED']);
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Google's error model (google.rpc.Status as JSON). */
function googleError(
  code: number,
  status: string,
  message: string,
  reason?: string,
  field?: string,
): Answer {
  const details: unknown[] = [];
  if (reason) {
    details.push({
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason,
      domain: 'datamanager.googleapis.com',
    });
  }
  if (field) {
    details.push({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field, description: message }],
    });
  }
  return { status: code, body: { error: { code, message, status, details } } };
}

type Problem = { reason: string; field: string; message: string };

function identifierProblem(id: Record<string, unknown>, at: string): Problem | undefined {
  const kinds = ['emailAddress', 'phoneNumber', 'address'].filter((k) => id[k] !== undefined);
  if (kinds.length !== 1 || Object.keys(id).length !== 1) {
    return {
      reason: 'INVALID_FORMAT',
      field: at,
      message: 'a user identifier is exactly one of emailAddress, phoneNumber, address',
    };
  }
  const kind = kinds[0]!;
  if (kind !== 'address') {
    return isSha256Hex(id[kind])
      ? undefined
      : { reason: 'INVALID_FORMAT', field: `${at}.${kind}`, message: 'must be SHA-256 hex' };
  }
  const address = id['address'] as Record<string, unknown>;
  for (const part of ['givenName', 'familyName']) {
    if (!isSha256Hex(address[part])) {
      return {
        reason: 'INVALID_FORMAT',
        field: `${at}.address.${part}`,
        message: 'must be SHA-256 hex',
      };
    }
  }
  if (typeof address['regionCode'] !== 'string' || !/^[A-Z]{2}$/.test(address['regionCode'])) {
    return {
      reason: 'INVALID_FORMAT',
      field: `${at}.address.regionCode`,
      message: 'must be an ISO 3166-1 alpha-2 code, not hashed',
    };
  }
  const postal = address['postalCode'];
  if (typeof postal !== 'string' || postal === '' || isSha256Hex(postal)) {
    return {
      reason: 'INVALID_FORMAT',
      field: `${at}.address.postalCode`,
      message: 'must be the postal code, not hashed',
    };
  }
  return undefined;
}

function eventProblem(
  event: Record<string, unknown>,
  at: string,
  references: Set<string>,
  nowMs: number,
): Problem | undefined {
  const unknown = Object.keys(event).find((k) => !EVENT_KEYS.has(k));
  if (unknown !== undefined) {
    return {
      reason: 'INVALID_ARGUMENT',
      field: `${at}.${unknown}`,
      message: `Invalid JSON payload received. Unknown name "${unknown}"`,
    };
  }
  const ts = event['eventTimestamp'];
  if (typeof ts !== 'string' || !RFC3339.test(ts) || Number.isNaN(Date.parse(ts))) {
    return {
      reason: 'REQUIRED_FIELD_MISSING',
      field: `${at}.eventTimestamp`,
      message: 'eventTimestamp must be an RFC 3339 timestamp',
    };
  }
  if (Date.parse(ts) < nowMs - 90 * DAY_MS) {
    return {
      reason: 'EVENT_TOO_OLD',
      field: `${at}.eventTimestamp`,
      message: 'older than max supported age',
    };
  }
  if (Date.parse(ts) > nowMs + 10 * 60_000) {
    return {
      reason: 'INVALID_FORMAT',
      field: `${at}.eventTimestamp`,
      message: 'in the future',
    };
  }
  if (typeof event['transactionId'] !== 'string' || event['transactionId'] === '') {
    return {
      reason: 'REQUIRED_FIELD_MISSING',
      field: `${at}.transactionId`,
      message: 'transactionId is required',
    };
  }
  if (typeof event['eventSource'] !== 'string' || !EVENT_SOURCES.has(event['eventSource'])) {
    return {
      reason: 'INVALID_FORMAT',
      field: `${at}.eventSource`,
      message: `invalid eventSource ${String(event['eventSource'])}`,
    };
  }
  if (event['conversionValue'] !== undefined && typeof event['conversionValue'] !== 'number') {
    return {
      reason: 'INVALID_FORMAT',
      field: `${at}.conversionValue`,
      message: 'must be a number',
    };
  }
  if (
    event['currency'] !== undefined &&
    (typeof event['currency'] !== 'string' || !/^[A-Z]{3}$/.test(event['currency']))
  ) {
    return {
      reason: 'INVALID_FORMAT',
      field: `${at}.currency`,
      message: 'must be an ISO 4217 code',
    };
  }
  const refs = event['destinationReferences'];
  if (references.size > 1 || refs !== undefined) {
    if (
      !Array.isArray(refs) ||
      refs.length === 0 ||
      refs.some((r) => typeof r !== 'string' || !references.has(r))
    ) {
      return {
        reason: 'INVALID_ARGUMENT',
        field: `${at}.destinationReferences`,
        message: 'must name the references of destinations of the request',
      };
    }
  }
  const clicks = event['adIdentifiers'] as Record<string, unknown> | undefined;
  if (clicks !== undefined) {
    for (const [key, value] of Object.entries(clicks)) {
      if (!['gclid', 'gbraid', 'wbraid'].includes(key) || typeof value !== 'string' || !value) {
        return {
          reason: 'INVALID_FORMAT',
          field: `${at}.adIdentifiers.${key}`,
          message: 'not a click id',
        };
      }
    }
  }
  const userData = event['userData'] as { userIdentifiers?: unknown } | undefined;
  const ids = userData?.userIdentifiers;
  if (userData !== undefined) {
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > 10) {
      return {
        reason: 'INVALID_ARGUMENT',
        field: `${at}.userData.userIdentifiers`,
        message: 'must hold 1 to 10 identifiers',
      };
    }
    for (const [i, id] of (ids as Array<Record<string, unknown>>).entries()) {
      const problem = identifierProblem(id, `${at}.userData.userIdentifiers[${i}]`);
      if (problem) return problem;
    }
  }
  if ((clicks === undefined || Object.keys(clicks).length === 0) && userData === undefined) {
    return {
      reason: 'NO_IDENTIFIERS_PROVIDED',
      field: at,
      message: 'the event has no identifier',
    };
  }
  const device = event['eventDeviceInfo'] as Record<string, unknown> | undefined;
  if (device?.['ipAddress'] !== undefined && isIP(String(device['ipAddress'])) === 0) {
    return {
      reason: 'INVALID_FORMAT',
      field: `${at}.eventDeviceInfo.ipAddress`,
      message: 'must be an IP address',
    };
  }
  const consent = event['consent'] as Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(consent ?? {})) {
    if (!['adUserData', 'adPersonalization'].includes(key) || !CONSENT.has(String(value))) {
      return {
        reason: 'INVALID_FORMAT',
        field: `${at}.consent.${key}`,
        message: 'invalid consent status',
      };
    }
  }
  return undefined;
}

export async function startGoogleAdsServer(
  options: { customerId?: string; conversionActions?: string[] } = {},
): Promise<GoogleAdsServer> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKeyObject = publicKey;
  /** Token → whether it still works. */
  const tokens = new Map<string, boolean>();
  const kept = new Set<string>();
  let issued = 0;

  const issue = (kind: 'refresh_token' | 'jwt_bearer'): Answer => {
    issued += 1;
    google.tokensIssued[kind] += 1;
    const token = `ya29.stand-in-${issued}-${randomUUID()}`;
    tokens.set(token, true);
    return {
      status: 200,
      body: { access_token: token, expires_in: google.tokenLifetimeS, token_type: 'Bearer' },
    };
  };
  const invalidGrant = (description: string): Answer => ({
    status: 400,
    body: { error: 'invalid_grant', error_description: description },
  });

  const jwtProblem = (assertion: string): string | undefined => {
    const parts = assertion.split('.');
    if (parts.length !== 3) return 'Invalid JWT';
    const [header, claims, signature] = parts as [string, string, string];
    let h: Record<string, unknown>;
    let c: Record<string, unknown>;
    try {
      h = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
      c = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8'));
    } catch {
      return 'Invalid JWT';
    }
    if (h['alg'] !== 'RS256') return 'Invalid JWT: alg must be RS256';
    const signed = Buffer.from(`${header}.${claims}`);
    if (!verify('RSA-SHA256', signed, publicKeyObject, Buffer.from(signature, 'base64url'))) {
      return 'Invalid JWT Signature.';
    }
    if (c['iss'] !== google.serviceAccount.client_email) return 'Invalid issuer';
    if (c['aud'] !== GOOGLE_TOKEN_AUDIENCE) return 'Invalid JWT: audience';
    if (typeof c['scope'] !== 'string' || !c['scope'].split(' ').includes(SCOPE)) {
      return 'Invalid JWT: scope';
    }
    const now = Date.now() / 1000;
    const iat = c['iat'];
    const exp = c['exp'];
    if (typeof iat !== 'number' || Math.abs(iat - now) > 300) {
      return 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe';
    }
    if (typeof exp !== 'number' || exp <= now || exp - iat > 3_600) {
      return 'Invalid JWT: exp must be at most an hour after iat';
    }
    return undefined;
  };

  const token = (request: ReceivedRequest): Answer => {
    if (!String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
      return { status: 400, body: { error: 'invalid_request' } };
    }
    const form = new URLSearchParams(request.body);
    const grantType = form.get('grant_type');
    if (grantType === 'refresh_token') {
      if (
        form.get('client_id') !== google.oauth.client_id ||
        form.get('client_secret') !== google.oauth.client_secret
      ) {
        return {
          status: 401,
          body: { error: 'invalid_client', error_description: 'The OAuth client was not found.' },
        };
      }
      const refused = google.refuseGrants || google.mode === 'expired';
      if (refused || form.get('refresh_token') !== google.oauth.refresh_token) {
        return invalidGrant('Token has been expired or revoked.');
      }
      return issue('refresh_token');
    }
    if (grantType === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      const problem = jwtProblem(form.get('assertion') ?? '');
      if (problem) return invalidGrant(problem);
      if (google.refuseGrants || google.mode === 'expired') {
        return invalidGrant('Invalid grant: account not found');
      }
      return issue('jwt_bearer');
    }
    return { status: 400, body: { error: 'unsupported_grant_type' } };
  };

  const ingest = (request: ReceivedRequest): Answer => {
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    if (bearer === undefined || tokens.get(bearer) !== true || google.mode === 'expired') {
      return googleError(
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token.',
        'ACCESS_TOKEN_EXPIRED',
      );
    }
    if (google.mode === 'throttled') {
      return googleError(
        429,
        'RESOURCE_EXHAUSTED',
        'Quota exceeded for quota metric IngestionService requests per minute.',
        'RATE_LIMIT_EXCEEDED',
      );
    }
    const body = request.json as Record<string, unknown> | undefined;
    if (typeof body !== 'object' || body === null) {
      return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    const destinations = body['destinations'];
    if (!Array.isArray(destinations) || destinations.length < 1 || destinations.length > 10) {
      return googleError(
        400,
        'INVALID_ARGUMENT',
        'destinations must hold 1 to 10 destinations',
        'INVALID_ARGUMENT',
        'destinations',
      );
    }
    const references = new Set<string>();
    const actionOf = new Map<string, string>();
    for (const [i, d] of (destinations as Array<Record<string, unknown>>).entries()) {
      const account = d['operatingAccount'] as Record<string, unknown> | undefined;
      if (
        account?.['accountType'] !== 'GOOGLE_ADS' ||
        !/^\d{10}$/.test(String(account['accountId']))
      ) {
        return googleError(
          400,
          'INVALID_ARGUMENT',
          'operatingAccount must be a GOOGLE_ADS account with a 10-digit id',
          'INVALID_ARGUMENT',
          `destinations[${i}].operatingAccount`,
        );
      }
      if (account['accountId'] !== google.customerId) {
        return googleError(
          403,
          'PERMISSION_DENIED',
          'The caller does not have permission to access the operating account.',
          'PERMISSION_DENIED',
        );
      }
      const login = d['loginAccount'] as Record<string, unknown> | undefined;
      if (login !== undefined && !/^\d{10}$/.test(String(login['accountId']))) {
        return googleError(400, 'INVALID_ARGUMENT', 'loginAccount.accountId must be 10 digits');
      }
      const action = String(d['productDestinationId']);
      if (!google.conversionActions.has(action)) {
        return googleError(
          400,
          'INVALID_ARGUMENT',
          `Conversion action ${action} was not found.`,
          'INVALID_CONVERSION_ACTION_ID',
          `destinations[${i}].productDestinationId`,
        );
      }
      if (typeof d['reference'] === 'string') {
        references.add(d['reference']);
        actionOf.set(d['reference'], action);
      } else if (destinations.length > 1) {
        return googleError(400, 'INVALID_ARGUMENT', 'several destinations need references');
      }
    }
    const events = body['events'];
    if (!Array.isArray(events) || events.length < 1) {
      return googleError(400, 'INVALID_ARGUMENT', 'events is required', 'REQUIRED_FIELD_MISSING');
    }
    if (events.length > 2_000) {
      return googleError(
        400,
        'INVALID_ARGUMENT',
        'Too many events in the request.',
        'TOO_MANY_EVENTS',
        'events',
      );
    }
    const nowMs = Date.now();
    for (const [i, event] of (events as Array<Record<string, unknown>>).entries()) {
      const at = `events[${i}]`;
      const problem = eventProblem(event, at, references, nowMs);
      if (problem) {
        return googleError(400, 'INVALID_ARGUMENT', problem.message, problem.reason, problem.field);
      }
      if (event['userData'] !== undefined && body['encoding'] !== 'HEX') {
        return googleError(
          400,
          'INVALID_ARGUMENT',
          'encoding is required with userData (HEX for hex SHA-256)',
          'INVALID_ARGUMENT',
          'encoding',
        );
      }
      const refused = google.rejectEvent?.(event);
      if (refused) return googleError(400, 'INVALID_ARGUMENT', refused, 'INVALID_FORMAT', at);
    }
    const requestId = randomUUID();
    if (body['validateOnly'] === true) {
      google.validated += events.length;
      return { status: 200, body: { requestId } };
    }
    google.requestIds.push(requestId);
    const single = (destinations as Array<Record<string, unknown>>)[0]!;
    for (const event of events as Array<Record<string, unknown>>) {
      const refs = (event['destinationReferences'] as string[] | undefined) ?? [];
      const action =
        refs.length > 0 ? actionOf.get(refs[0]!)! : String(single['productDestinationId']);
      const key = `${action}/${String(event['transactionId'])}`;
      if (kept.has(key)) {
        google.duplicates += 1;
        continue;
      }
      kept.add(key);
      google.events.push({ ...event, productDestinationId: action });
    }
    return { status: 200, body: { requestId } };
  };

  const handle = (request: ReceivedRequest): Answer => {
    if (request.method === 'POST' && request.path === '/token') return token(request);
    if (request.method === 'POST' && request.path === '/v1/events:ingest') return ingest(request);
    return googleError(404, 'NOT_FOUND', `no such method ${request.path}`);
  };
  const base = await startPlatformServer(handle, () =>
    googleError(503, 'UNAVAILABLE', 'The service is currently unavailable.'),
  );
  const google: GoogleAdsServer = Object.assign(base as unknown as GoogleAdsServer, {
    url: `${base.origin}/v1`,
    tokenUrl: `${base.origin}/token`,
    customerId: options.customerId ?? '1234567890',
    conversionActions: new Set(options.conversionActions ?? ['111111', '222222', '333333']),
    oauth: {
      client_id: '1234-stand-in.apps.googleusercontent.com',
      client_secret: 'GOCSPX-stand-in-secret-0001',
      refresh_token: '1//stand-in-refresh-token-0001',
    },
    serviceAccount: {
      client_email: 'trackway@stand-in.iam.gserviceaccount.com',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    },
    refuseGrants: false,
    tokenLifetimeS: 3_599,
    tokensIssued: { refresh_token: 0, jwt_bearer: 0 },
    expireTokens() {
      for (const key of tokens.keys()) tokens.set(key, false);
    },
    events: [],
    requestIds: [],
    validated: 0,
    duplicates: 0,
  });
  return google;
}
