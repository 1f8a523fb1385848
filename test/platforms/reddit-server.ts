/**
 * A local Reddit Conversions API (v3), honouring its documented behaviour (Reddit's
 * conversions-api help pages; RudderStack's and stape's Reddit destinations for the shapes):
 * - `POST /api/v3/pixels/{pixel_id}/conversion_events` with `Authorization: Bearer <token>`
 *   and `{data: {test_id?, events: [1..1000]}}`; with `test_id` the events are checked and not
 *   recorded;
 * - each event needs `event_at` in epoch milliseconds (at most 7 days old, 5 minutes ahead),
 *   `action_source` (WEBSITE, APP, PHYSICAL_STORE, OTHER), `type.tracking_type` (Reddit's
 *   list; CUSTOM with `custom_event_name`), `metadata.conversion_id`; `value` only on the
 *   types that take it; `user.email`, `phone_number`, `external_id`, `ip_address` SHA-256 hex;
 *   `user.data_processing_options.modes` only "LDU"; `user.uuid` a UUID (the `_rdt_uuid`
 *   cookie's uuid part) and `click_id` a string;
 * - invalid events: 400 `{invalid_events: [{event_index, error_message}]}`, none kept;
 *   a bad token 401 `{error: {reason: "UNAUTHORIZED"}}`, another pixel 403; 429 with
 *   `Retry-After` when throttled; 500 when down;
 * - dedup by `metadata.conversion_id`.
 */
import {
  isSha256Hex,
  type PlatformServer,
  type ReceivedRequest,
  startPlatformServer,
} from './http-server.ts';

export interface RedditServer extends Omit<PlatformServer, 'mode'> {
  url: string;
  mode: PlatformServer['mode'] | 'expired' | 'throttled';
  pixelId: string;
  accessToken: string;
  events: Array<Record<string, unknown>>;
  testEvents: number;
  duplicates: number;
  rejectEvent?: (event: Record<string, unknown>) => string | undefined;
}

const TRACKING_TYPES = new Set([
  'PAGE_VISIT',
  'VIEW_CONTENT',
  'SEARCH',
  'ADD_TO_CART',
  'ADD_TO_WISHLIST',
  'LEAD',
  'PURCHASE',
  'SIGN_UP',
  'CUSTOM',
]);
const TAKES_VALUE = new Set([
  'PURCHASE',
  'ADD_TO_CART',
  'ADD_TO_WISHLIST',
  'LEAD',
  'SIGN_UP',
  'CUSTOM',
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ACTION_SOURCES = new Set(['WEBSITE', 'APP', 'PHYSICAL_STORE', 'OTHER']);
const HASHED = ['email', 'phone_number', 'external_id', 'ip_address', 'idfa', 'aaid'];

function eventError(event: Record<string, unknown>, nowMs: number): string | undefined {
  const at = event['event_at'];
  if (!Number.isInteger(at) || (at as number) < 1e12) return 'event_at must be epoch milliseconds';
  if ((at as number) < nowMs - 7 * 86_400_000) return 'event_at is more than 7 days old';
  if ((at as number) > nowMs + 300_000) return 'event_at is in the future';
  if (typeof event['action_source'] !== 'string' || !ACTION_SOURCES.has(event['action_source']))
    return `invalid action_source: ${String(event['action_source'])}`;
  const type = (event['type'] ?? {}) as Record<string, unknown>;
  const tracking = type['tracking_type'];
  if (typeof tracking !== 'string' || !TRACKING_TYPES.has(tracking))
    return `invalid tracking_type: ${String(tracking)}`;
  if (tracking === 'CUSTOM' && typeof type['custom_event_name'] !== 'string')
    return 'custom_event_name is required for CUSTOM';
  const metadata = (event['metadata'] ?? {}) as Record<string, unknown>;
  if (typeof metadata['conversion_id'] !== 'string' || metadata['conversion_id'] === '')
    return 'metadata.conversion_id is required';
  if (metadata['value'] !== undefined) {
    if (!TAKES_VALUE.has(tracking)) return `value is not allowed on ${tracking}`;
    if (typeof metadata['value'] !== 'number') return 'value must be a number';
  }
  const user = event['user'] as Record<string, unknown> | undefined;
  if (typeof user !== 'object' || user === null) return 'user is required';
  for (const key of HASHED) {
    if (user[key] !== undefined && !isSha256Hex(user[key])) return `user.${key} must be SHA-256`;
  }
  // The _rdt_uuid cookie's uuid part, not the whole `<ms>.<uuid>` cookie.
  if (user['uuid'] !== undefined && !UUID.test(String(user['uuid'])))
    return 'user.uuid must be the uuid of the _rdt_uuid cookie';
  if (
    event['click_id'] !== undefined &&
    (typeof event['click_id'] !== 'string' || event['click_id'] === '')
  )
    return 'click_id must be the rdt_cid as set';
  const dpo = user['data_processing_options'] as Record<string, unknown> | undefined;
  if (
    dpo !== undefined &&
    (!Array.isArray(dpo['modes']) || (dpo['modes'] as unknown[]).some((m) => m !== 'LDU'))
  )
    return 'data_processing_options.modes must be ["LDU"]';
  return undefined;
}

export async function startRedditServer(
  options: { pixelId?: string; accessToken?: string } = {},
): Promise<RedditServer> {
  const kept = new Set<string>();
  const handle = (request: ReceivedRequest) => {
    const match = /^\/api\/v3\/pixels\/([^/]+)\/conversion_events$/.exec(request.path);
    if (request.method !== 'POST' || !match) return { status: 404, body: { error: 'Not found' } };
    if (
      request.headers.authorization !== `Bearer ${reddit.accessToken}` ||
      reddit.mode === 'expired'
    )
      return {
        status: 401,
        body: { error: { reason: 'UNAUTHORIZED', explanation: 'Authorization Required' } },
      };
    if (match[1] !== reddit.pixelId)
      return {
        status: 403,
        body: { error: { reason: 'FORBIDDEN', explanation: 'No access to this pixel' } },
      };
    if (reddit.mode === 'throttled')
      return {
        status: 429,
        headers: { 'retry-after': '1' },
        body: { error: { reason: 'TOO_MANY_REQUESTS' } },
      };
    const data = (request.json as Record<string, unknown> | undefined)?.['data'] as
      | Record<string, unknown>
      | undefined;
    const events = data?.['events'];
    if (!Array.isArray(events) || events.length < 1 || events.length > 1_000)
      return {
        status: 400,
        body: {
          error: { reason: 'INVALID', explanation: 'data.events must hold 1 to 1000 events' },
        },
      };
    const nowMs = Date.now();
    const invalid = (events as Array<Record<string, unknown>>).flatMap((event, event_index) => {
      const error_message = eventError(event, nowMs) ?? reddit.rejectEvent?.(event);
      return error_message ? [{ event_index, error_message }] : [];
    });
    if (invalid.length > 0) return { status: 400, body: { invalid_events: invalid } };
    if (data?.['test_id'] !== undefined) {
      reddit.testEvents += events.length;
      return {
        status: 200,
        body: { message: `Successfully processed ${events.length} test events` },
      };
    }
    for (const event of events as Array<Record<string, unknown>>) {
      const id = String((event['metadata'] as Record<string, unknown>)['conversion_id']);
      if (kept.has(id)) {
        reddit.duplicates += 1;
        continue;
      }
      kept.add(id);
      reddit.events.push(event);
    }
    return {
      status: 200,
      body: { message: `Successfully processed ${events.length} conversion events` },
    };
  };
  const base = await startPlatformServer(handle, () => ({
    status: 500,
    body: { error: { reason: 'INTERNAL_ERROR' } },
  }));
  const reddit: RedditServer = Object.assign(base as unknown as RedditServer, {
    url: `${base.origin}/api/v3`,
    pixelId: options.pixelId ?? 't2_trackway06',
    accessToken: options.accessToken ?? 'reddit-conversion-token-0006',
    events: [],
    testEvents: 0,
    duplicates: 0,
  });
  return reddit;
}
