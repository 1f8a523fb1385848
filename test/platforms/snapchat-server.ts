/**
 * A local Snapchat Conversions API (v3), honouring its documented behaviour
 * (developers.snap.com/api/marketing-api/Conversions-API):
 * - `POST /v3/{pixel_id}/events?access_token=<token>` with `{data: [events]}` (at most 2,000
 *   here: Snap documents none, connectors send 2,000); `POST /v3/{pixel_id}/events/validate`
 *   checks the same and records nothing (`{status, test_event: true, validated_events}`);
 * - each event needs an upper-case standard `event_name`, `event_time` in Unix seconds at most
 *   37 days old, `event_id`, `action_source` (WEB, MOBILE_APP, OFFLINE) and `user_data` with
 *   em, ph, madid or client_ip_address + client_user_agent; hashed fields are arrays of 64
 *   lowercase hex, `sc_click_id` and `sc_cookie1` raw strings; a PURCHASE needs `custom_data.value` and `currency`; LDU is
 *   `data_processing_options: ["LDU"]`;
 * - an invalid event refuses the request: 400 `{status: "INVALID", reason, event}` (none kept);
 *   a bad token 401, a pixel the token may not reach 403 (Snap documents neither code: the
 *   plan of platforms.md §6.3); 429 with `Retry-After` when throttled; 500 when down;
 * - dedup by event_id.
 */
import {
  isSha256Hex,
  type PlatformServer,
  type ReceivedRequest,
  startPlatformServer,
} from './http-server.ts';

export interface SnapchatServer extends Omit<PlatformServer, 'mode'> {
  url: string;
  mode: PlatformServer['mode'] | 'expired' | 'throttled';
  pixelId: string;
  accessToken: string;
  events: Array<Record<string, unknown>>;
  testEvents: number;
  duplicates: number;
  rejectEvent?: (event: Record<string, unknown>) => string | undefined;
}

const EVENT_NAME =
  /^(PAGE_VIEW|VIEW_CONTENT|ADD_CART|START_CHECKOUT|ADD_BILLING|PURCHASE|SIGN_UP|SEARCH|SUBSCRIBE|LIST_VIEW|ADD_TO_WISHLIST|LOGIN|SHARE|SAVE|RESERVE|START_TRIAL|COMPLETE_TUTORIAL|CUSTOM_EVENT_[1-5])$/;
const ACTION_SOURCES = new Set(['WEB', 'MOBILE_APP', 'OFFLINE']);
const HASHED = ['em', 'ph', 'fn', 'ln', 'ge', 'ct', 'st', 'zp', 'country', 'external_id'];
const WINDOW_S = 37 * 86_400;

function eventError(event: Record<string, unknown>, nowS: number): string | undefined {
  if (typeof event['event_name'] !== 'string' || !EVENT_NAME.test(event['event_name']))
    return `Invalid event_name: ${String(event['event_name'])}`;
  const time = event['event_time'];
  if (!Number.isInteger(time)) return 'event_time must be an integer';
  if ((time as number) < nowS - WINDOW_S || (time as number) > nowS + 300)
    return 'event_time is out of range';
  if (typeof event['event_id'] !== 'string' || event['event_id'] === '')
    return 'event_id is required';
  if (typeof event['action_source'] !== 'string' || !ACTION_SOURCES.has(event['action_source']))
    return `Invalid action_source: ${String(event['action_source'])}`;
  const u = event['user_data'] as Record<string, unknown> | undefined;
  if (typeof u !== 'object' || u === null) return 'user_data is required';
  for (const key of HASHED) {
    if (u[key] === undefined) continue;
    if (!Array.isArray(u[key]) || !(u[key] as unknown[]).every(isSha256Hex))
      return `user_data.${key} is not hashed`;
  }
  // The ScCid and the _scid cookie as Snap set them: strings, unhashed.
  for (const key of ['client_ip_address', 'client_user_agent', 'sc_click_id', 'sc_cookie1']) {
    if (u[key] !== undefined && (typeof u[key] !== 'string' || u[key] === ''))
      return `user_data.${key} must be a non-empty string`;
    if (key.startsWith('sc_') && isSha256Hex(u[key])) return `user_data.${key} must not be hashed`;
  }
  if (
    u['em'] === undefined &&
    u['ph'] === undefined &&
    u['madid'] === undefined &&
    (u['client_ip_address'] === undefined || u['client_user_agent'] === undefined)
  )
    return 'insufficient PII';
  const custom = (event['custom_data'] ?? {}) as Record<string, unknown>;
  if (
    event['event_name'] === 'PURCHASE' &&
    (typeof custom['value'] !== 'number' || typeof custom['currency'] !== 'string')
  )
    return 'PURCHASE needs custom_data.value and currency';
  const dpo = event['data_processing_options'];
  if (dpo !== undefined && (!Array.isArray(dpo) || dpo.some((o) => o !== 'LDU')))
    return 'data_processing_options must be ["LDU"]';
  return undefined;
}

export async function startSnapchatServer(
  options: { pixelId?: string; accessToken?: string } = {},
): Promise<SnapchatServer> {
  const kept = new Set<string>();
  const invalid = (status: number, reason: string, event?: number) => ({
    status,
    body: { status: 'INVALID', reason, ...(event !== undefined ? { event } : {}) },
  });
  const handle = (request: ReceivedRequest) => {
    const match = /^\/v3\/([^/]+)\/events(\/validate)?$/.exec(request.path);
    if (request.method !== 'POST' || !match) return invalid(404, 'Not found');
    if (request.query.get('access_token') !== snapchat.accessToken || snapchat.mode === 'expired')
      return invalid(401, 'Unauthorized: invalid access token');
    if (match[1] !== snapchat.pixelId)
      return invalid(403, 'Forbidden: the token cannot send to this pixel');
    if (snapchat.mode === 'throttled')
      return { ...invalid(429, 'Too many requests'), headers: { 'retry-after': '1' } };
    const data = (request.json as Record<string, unknown> | undefined)?.['data'];
    if (!Array.isArray(data) || data.length < 1 || data.length > 2_000)
      return invalid(400, 'data must hold between 1 and 2000 events');
    const nowS = Math.floor(Date.now() / 1000);
    for (const [i, event] of (data as Array<Record<string, unknown>>).entries()) {
      const error = eventError(event, nowS) ?? snapchat.rejectEvent?.(event);
      if (error) return invalid(400, error, i);
    }
    if (match[2]) {
      snapchat.testEvents += data.length;
      return {
        status: 200,
        body: {
          status: 'VALID',
          test_event: true,
          validated_events: data.map(() => ({ status: 'VALID', warnings: [], errors: [] })),
        },
      };
    }
    for (const event of data as Array<Record<string, unknown>>) {
      const id = String(event['event_id']);
      if (kept.has(id)) {
        snapchat.duplicates += 1;
        continue;
      }
      kept.add(id);
      snapchat.events.push(event);
    }
    return { status: 200, body: { status: 'VALID', reason: '' } };
  };
  const base = await startPlatformServer(handle, () => ({
    status: 500,
    body: { status: 'INVALID', reason: 'Internal error' },
  }));
  const snapchat: SnapchatServer = Object.assign(base as unknown as SnapchatServer, {
    url: `${base.origin}/v3`,
    pixelId: options.pixelId ?? 'a1b2c3d4-0000-4000-8000-000000000005',
    accessToken: options.accessToken ?? 'snap-capi-token-0005',
    events: [],
    testEvents: 0,
    duplicates: 0,
  });
  return snapchat;
}
