/**
 * A local Microsoft Advertising UET Conversions API, honouring its documented behaviour
 * (learn.microsoft.com/en-us/advertising/guides/uet-conversion-api-integration; Segment's
 * ms-bing-capi types for the shapes; platforms.md §6.5):
 * - `POST /v1/{tag_id}/events` with `Authorization: Bearer <token>` and `{data: [1..1000
 *   events], continueOnValidationError?, dataProvider?}` (a body of at most 1 MB);
 * - each event: `eventType` `pageLoad` (with `eventSourceUrl`) or `custom` (with `eventName`),
 *   `eventTime` in Unix seconds (at most 90 days old — Microsoft documents no limit, this is
 *   Trackway's assumption — and 5 minutes ahead), `eventId`, `adStorageConsent` `G` or `D`,
 *   `userData` whose `em` and `ph` are SHA-256 (64 lowercase hex); only the documented keys
 *   of an event, of `userData` and of `customData` (`pageType` from UET's list, numbers where
 *   UET wants numbers);
 * - invalid events: with `continueOnValidationError: true`, 200 `{eventsReceived, error:
 *   {code, message, details: [{index, propertyName, errorMessage}]}, traceId}` and the valid
 *   ones kept; without it 400 with the same details and none kept;
 * - a bad token or another tag: 401 `{error: {code: "Unauthorized", message}, traceId}`;
 *   429 with `Retry-After` when throttled; 500 when down (neither is documented: the plan of
 *   platforms.md §6.5);
 * - dedup by eventId (the UET tag's own event id deduplicates against it).
 */
import {
  isSha256Hex,
  type PlatformServer,
  type ReceivedRequest,
  startPlatformServer,
} from './http-server.ts';

export interface MicrosoftAdsServer extends Omit<PlatformServer, 'mode'> {
  url: string;
  mode: PlatformServer['mode'] | 'expired' | 'throttled';
  tagId: string;
  accessToken: string;
  events: Array<Record<string, unknown>>;
  duplicates: number;
  rejectEvent?: (event: Record<string, unknown>) => string | undefined;
}

const EVENT_KEYS = new Set([
  'eventType',
  'eventId',
  'eventName',
  'eventTime',
  'eventSourceUrl',
  'pageLoadId',
  'referrerUrl',
  'pageTitle',
  'keywords',
  'adStorageConsent',
  'userData',
  'customData',
]);
const USER_KEYS = new Set([
  'em',
  'ph',
  'clientIpAddress',
  'clientUserAgent',
  'msclkid',
  'anonymousId',
  'externalId',
  'idfa',
  'gaid',
]);
const CUSTOM_KEYS = new Set([
  'eventCategory',
  'eventLabel',
  'eventValue',
  'value',
  'currency',
  'searchTerm',
  'transactionId',
  'itemIds',
  'pageType',
  'ecommTotalValue',
  'ecommCategory',
  'items',
  'hotelData',
]);
const PAGE_TYPES = new Set([
  'home',
  'product',
  'category',
  'searchresults',
  'cart',
  'purchase',
  'other',
]);
const WINDOW_S = 90 * 86_400;

interface Problem {
  propertyName: string;
  errorMessage: string;
}

function eventError(event: Record<string, unknown>, nowS: number): Problem | undefined {
  const bad = (propertyName: string, errorMessage: string) => ({ propertyName, errorMessage });
  for (const key of Object.keys(event)) {
    if (!EVENT_KEYS.has(key)) return bad(key, `unknown property ${key}`);
  }
  const type = event['eventType'];
  if (type !== 'pageLoad' && type !== 'custom')
    return bad('eventType', 'must be pageLoad or custom');
  if (type === 'pageLoad' && typeof event['eventSourceUrl'] !== 'string')
    return bad('eventSourceUrl', 'is required for pageLoad');
  if (type === 'custom' && (typeof event['eventName'] !== 'string' || event['eventName'] === ''))
    return bad('eventName', 'is required for a custom event');
  const time = event['eventTime'];
  if (!Number.isInteger(time) || (time as number) > 1e11)
    return bad('eventTime', 'must be Unix seconds');
  if ((time as number) < nowS - WINDOW_S || (time as number) > nowS + 300)
    return bad('eventTime', 'is out of range');
  if (typeof event['eventId'] !== 'string' || event['eventId'] === '')
    return bad('eventId', 'is required');
  const consent = event['adStorageConsent'];
  if (consent !== undefined && consent !== 'G' && consent !== 'D')
    return bad('adStorageConsent', 'must be G or D');
  const user = event['userData'];
  if (typeof user !== 'object' || user === null) return bad('userData', 'is required');
  for (const [key, value] of Object.entries(user)) {
    if (!USER_KEYS.has(key)) return bad(`userData.${key}`, `unknown property ${key}`);
    if (typeof value !== 'string' || value === '')
      return bad(`userData.${key}`, 'must be a non-empty string');
    if ((key === 'em' || key === 'ph') && !isSha256Hex(value))
      return bad(`userData.${key}`, 'must be a SHA-256 hash (64 lowercase hex)');
    // The click id and the _uetvid cookie as UET set them, unhashed.
    if ((key === 'msclkid' || key === 'anonymousId') && isSha256Hex(value))
      return bad(`userData.${key}`, 'must be the value UET set, not hashed');
  }
  const custom = event['customData'];
  if (custom !== undefined) {
    if (typeof custom !== 'object' || custom === null)
      return bad('customData', 'must be an object');
    const c = custom as Record<string, unknown>;
    for (const key of Object.keys(c)) {
      if (!CUSTOM_KEYS.has(key)) return bad(`customData.${key}`, `unknown property ${key}`);
    }
    for (const key of ['value', 'eventValue', 'ecommTotalValue']) {
      if (c[key] !== undefined && typeof c[key] !== 'number')
        return bad(`customData.${key}`, 'must be a number');
    }
    if (c['currency'] !== undefined && !/^[A-Z]{3}$/.test(String(c['currency'])))
      return bad('customData.currency', 'must be an ISO 4217 code');
    if (c['pageType'] !== undefined && !PAGE_TYPES.has(String(c['pageType'])))
      return bad('customData.pageType', `invalid page type ${String(c['pageType'])}`);
    for (const key of ['transactionId', 'searchTerm']) {
      if (c[key] !== undefined && typeof c[key] !== 'string')
        return bad(`customData.${key}`, 'must be a string');
    }
    if (c['items'] !== undefined) {
      if (
        !Array.isArray(c['items']) ||
        (c['items'] as unknown[]).some(
          (i) =>
            typeof i !== 'object' || i === null || typeof (i as { id?: unknown }).id !== 'string',
        )
      )
        return bad('customData.items', 'must be a list of items with an id');
    }
  }
  return undefined;
}

export async function startMicrosoftAdsServer(
  options: { tagId?: string; accessToken?: string } = {},
): Promise<MicrosoftAdsServer> {
  const kept = new Set<string>();
  let traces = 0;
  const traceId = () => `trace-${++traces}`;
  const handle = (request: ReceivedRequest) => {
    const match = /^\/v1\/([^/]+)\/events$/.exec(request.path);
    if (request.method !== 'POST' || !match)
      return { status: 404, body: { error: { code: 'NotFound', message: 'Not found' } } };
    // The token is the tag's: another tag's events are refused as a wrong token is.
    if (
      request.headers.authorization !== `Bearer ${microsoft.accessToken}` ||
      match[1] !== microsoft.tagId ||
      microsoft.mode === 'expired'
    )
      return {
        status: 401,
        body: {
          error: { code: 'Unauthorized', message: 'The access token is invalid for this tag.' },
          traceId: traceId(),
        },
      };
    if (microsoft.mode === 'throttled')
      return {
        status: 429,
        headers: { 'retry-after': '1' },
        body: {
          error: { code: 'TooManyRequests', message: 'Rate limit exceeded' },
          traceId: traceId(),
        },
      };
    if (request.headers['content-type'] !== 'application/json' || request.json === undefined)
      return { status: 400, body: { error: { code: 'InvalidRequest', message: 'JSON expected' } } };
    if (Buffer.byteLength(request.body) > 1_000_000)
      return { status: 413, body: { error: { code: 'PayloadTooLarge', message: 'Over 1 MB' } } };
    const body = request.json as Record<string, unknown>;
    const events = body['data'];
    if (!Array.isArray(events) || events.length < 1 || events.length > 1_000)
      return {
        status: 400,
        body: {
          error: { code: 'InvalidRequest', message: 'data must hold 1 to 1000 events' },
          traceId: traceId(),
        },
      };
    const carryOn = body['continueOnValidationError'];
    if (carryOn !== undefined && typeof carryOn !== 'boolean')
      return {
        status: 400,
        body: {
          error: { code: 'InvalidRequest', message: 'continueOnValidationError must be a boolean' },
        },
      };
    const nowS = Math.floor(Date.now() / 1000);
    const details = (events as Array<Record<string, unknown>>).flatMap((event, index) => {
      const own = microsoft.rejectEvent?.(event);
      const problem =
        typeof event === 'object' && event !== null
          ? (eventError(event, nowS) ??
            (own ? { propertyName: 'eventId', errorMessage: own } : undefined))
          : { propertyName: '', errorMessage: 'an event must be an object' };
      return problem ? [{ index, attemptedValue: null, ...problem }] : [];
    });
    const error =
      details.length > 0
        ? { code: 'InvalidEvents', message: `${details.length} events are invalid`, details }
        : undefined;
    if (error && carryOn !== true) return { status: 400, body: { error, traceId: traceId() } };
    const refused = new Set(details.map((d) => d.index));
    let received = 0;
    (events as Array<Record<string, unknown>>).forEach((event, index) => {
      if (refused.has(index)) return;
      received += 1;
      const id = String(event['eventId']);
      if (kept.has(id)) {
        microsoft.duplicates += 1;
        return;
      }
      kept.add(id);
      microsoft.events.push(event);
    });
    return {
      status: 200,
      body: { eventsReceived: received, ...(error ? { error } : {}), traceId: traceId() },
    };
  };
  const base = await startPlatformServer(handle, () => ({
    status: 500,
    body: { error: { code: 'InternalServerError', message: 'Internal error' } },
  }));
  const microsoft: MicrosoftAdsServer = Object.assign(base as unknown as MicrosoftAdsServer, {
    url: `${base.origin}/v1`,
    tagId: options.tagId ?? '343000007',
    accessToken: options.accessToken ?? 'uet-capi-token-0007',
    events: [],
    duplicates: 0,
  });
  return microsoft;
}
