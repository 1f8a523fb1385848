/**
 * A local Pinterest Conversions API (v5), honouring its documented behaviour
 * (developers.pinterest.com/docs/api/v5/events-create):
 * - `POST /v5/ad_accounts/{ad_account_id}/events` with `Authorization: Bearer <token>` and
 *   `{data: [1..1000 events]}`; `?test=true` validates and records nothing;
 * - each event needs `event_name` (Pinterest's enum), `action_source` (web, app_android,
 *   app_ios, offline), `event_time` in Unix seconds within the last 7 days, `event_id` and
 *   `user_data` with `em`, `hashed_maids` or `client_ip_address` + `client_user_agent`;
 *   hashed fields are arrays of 64 lowercase hex; `custom_data.value` is a string;
 *   `opt_out_type` is only "LDP";
 * - a request with an invalid event: 422 `{code, message, details: {events: [...]}}` and none
 *   of it kept; 400 code 4196 a malformed body; 401 code 2 a bad token; 403 code 29 an ad
 *   account the token may not reach; 429 code 8 (with `Retry-After`) when throttled; 503
 *   code 4197 when down;
 * - dedup by event_id.
 */
import {
  isSha256Hex,
  type PlatformServer,
  type ReceivedRequest,
  startPlatformServer,
} from './http-server.ts';

export interface PinterestServer extends Omit<PlatformServer, 'mode'> {
  /** The base URL (`TRACKWAY_PINTEREST_API_URL`). */
  url: string;
  mode: PlatformServer['mode'] | 'expired' | 'throttled';
  adAccountId: string;
  accessToken: string;
  events: Array<Record<string, unknown>>;
  /** Events of `?test=true` requests: validated, not recorded. */
  testEvents: number;
  duplicates: number;
  rejectEvent?: (event: Record<string, unknown>) => string | undefined;
}

const EVENT_NAMES = new Set([
  'add_payment_info',
  'add_to_cart',
  'add_to_wishlist',
  'app_install',
  'checkout',
  'custom',
  'initiate_checkout',
  'lead',
  'page_visit',
  'search',
  'signup',
  'subscribe',
  'view_category',
  'view_content',
  'watch_video',
]);
const ACTION_SOURCES = new Set(['web', 'app_android', 'app_ios', 'offline']);
const HASHED = ['em', 'ph', 'fn', 'ln', 'ge', 'db', 'ct', 'st', 'zp', 'country', 'external_id'];
const SEVEN_DAYS_S = 7 * 86_400;

/** Why Pinterest would refuse this event, or undefined. */
function eventError(event: Record<string, unknown>, nowS: number): string | undefined {
  if (typeof event['event_name'] !== 'string' || !EVENT_NAMES.has(event['event_name']))
    return `Invalid event_name: ${String(event['event_name'])}`;
  if (typeof event['action_source'] !== 'string' || !ACTION_SOURCES.has(event['action_source']))
    return `Invalid action_source: ${String(event['action_source'])}`;
  const time = event['event_time'];
  if (!Number.isInteger(time)) return 'event_time must be an integer (Unix seconds)';
  if ((time as number) < nowS - SEVEN_DAYS_S)
    return 'Invalid event_timestamp: the event is too far in the past';
  if ((time as number) > nowS + 300) return 'Invalid event_timestamp: the event is in the future';
  if (typeof event['event_id'] !== 'string' || event['event_id'] === '')
    return 'event_id is required';
  const user = event['user_data'];
  if (typeof user !== 'object' || user === null) return 'user_data is required';
  const u = user as Record<string, unknown>;
  for (const key of [...HASHED, 'hashed_maids']) {
    if (u[key] === undefined) continue;
    if (!Array.isArray(u[key]) || !(u[key] as unknown[]).every(isSha256Hex))
      return `user_data.${key} must be an array of SHA-256 hashes`;
  }
  for (const key of ['client_ip_address', 'client_user_agent', 'click_id']) {
    if (u[key] !== undefined && typeof u[key] !== 'string')
      return `user_data.${key} must be a string`;
  }
  // The epik as the ad's link carried it: unhashed.
  if (isSha256Hex(u['click_id'])) return 'user_data.click_id must be the epik as set, not hashed';
  if (
    u['em'] === undefined &&
    u['hashed_maids'] === undefined &&
    (u['client_ip_address'] === undefined || u['client_user_agent'] === undefined)
  )
    return 'user_data needs em, hashed_maids, or client_ip_address and client_user_agent';
  const custom = event['custom_data'] as Record<string, unknown> | undefined;
  if (custom !== undefined) {
    if (custom['value'] !== undefined && typeof custom['value'] !== 'string')
      return 'custom_data.value must be a string';
    if (custom['opt_out_type'] !== undefined && custom['opt_out_type'] !== 'LDP')
      return 'custom_data.opt_out_type must be "LDP"';
  }
  return undefined;
}

export async function startPinterestServer(
  options: { adAccountId?: string; accessToken?: string } = {},
): Promise<PinterestServer> {
  const kept = new Set<string>();
  const handle = (request: ReceivedRequest) => {
    const match = /^\/v5\/ad_accounts\/([^/]+)\/events$/.exec(request.path);
    if (request.method !== 'POST' || !match)
      return { status: 404, body: { code: 404, message: 'Not found' } };
    if (
      request.headers.authorization !== `Bearer ${pinterest.accessToken}` ||
      pinterest.mode === 'expired'
    )
      return { status: 401, body: { code: 2, message: 'Authentication failed.' } };
    if (match[1] !== pinterest.adAccountId)
      return {
        status: 403,
        body: { code: 29, message: 'You are not permitted to access that resource.' },
      };
    if (pinterest.mode === 'throttled')
      return {
        status: 429,
        headers: { 'retry-after': '1' },
        body: { code: 8, message: 'You have exceeded your rate limit. Try again later.' },
      };
    const body = request.json as Record<string, unknown> | undefined;
    const data = body?.['data'];
    if (!Array.isArray(data) || data.length < 1 || data.length > 1_000)
      return {
        status: 400,
        body: { code: 4196, message: 'data: must hold between 1 and 1000 events' },
      };
    const nowS = Math.floor(Date.now() / 1000);
    const errors = (data as Array<Record<string, unknown>>).map(
      (event) => eventError(event, nowS) ?? pinterest.rejectEvent?.(event),
    );
    if (errors.some((e) => e !== undefined)) {
      return {
        status: 422,
        body: {
          code: 953,
          message: 'Not all events were processed.',
          details: {
            events: errors.map((error_message) =>
              error_message === undefined
                ? { status: 'processed' }
                : { status: 'failed', error_message },
            ),
          },
        },
      };
    }
    const test = request.query.get('test') === 'true';
    for (const event of data as Array<Record<string, unknown>>) {
      if (test) {
        pinterest.testEvents += 1;
        continue;
      }
      const id = String(event['event_id']);
      if (kept.has(id)) {
        pinterest.duplicates += 1;
        continue;
      }
      kept.add(id);
      pinterest.events.push(event);
    }
    return {
      status: 200,
      body: {
        num_events_received: data.length,
        num_events_processed: data.length,
        events: data.map(() => ({
          status: 'processed',
          error_message: null,
          warning_message: null,
        })),
      },
    };
  };
  const base = await startPlatformServer(handle, () => ({
    status: 503,
    body: { code: 4197, message: 'The endpoint has been ramped down.' },
  }));
  const pinterest: PinterestServer = Object.assign(base as unknown as PinterestServer, {
    url: `${base.origin}/v5`,
    adAccountId: options.adAccountId ?? '549755885175',
    accessToken: options.accessToken ?? 'pina_conversion_token_0004',
    events: [],
    testEvents: 0,
    duplicates: 0,
  });
  return pinterest;
}
