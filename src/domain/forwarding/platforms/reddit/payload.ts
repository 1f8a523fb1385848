/**
 * Reddit Conversions API v3 requests: `POST /pixels/{pixel_id}/conversion_events` with
 * `Authorization: Bearer <token>` and `{data: {test_id?, events: [{event_at (ms),
 * action_source, type: {tracking_type, custom_event_name?}, click_id?, metadata:
 * {conversion_id, currency?, value?, item_count?}, user: {…}}]}}`, at most 1,000 events each.
 *
 * Our name goes as Reddit's tracking type, or as `CUSTOM` with the name as
 * `custom_event_name`. `value` only where Reddit takes it (purchase, add to cart, wishlist,
 * lead, sign-up, custom), as a decimal in the currency (docs/decisions.md). `user` carries the
 * hashed email, phone and external id, the SHA-256 of the IP address, the raw user agent, and
 * `data_processing_options: {modes: ["LDU"]}` for `limited_data_use`, and the `_rdt_uuid`
 * cookie's uuid as `uuid`; `rdt_cid` (the event's, else the page URL's) is the `click_id`. The test send carries `test_id`.
 */
import { sha256Hex } from '../../../events/user-data.ts';
import type { ActionSource } from '../../match-keys.ts';
import {
  type BuildOptions,
  type BuiltBatch,
  type ForwardableEvent,
  type PlatformModule,
  type PlatformRequest,
  prepareEvents,
} from '../platform.ts';
import { queryParam } from '../tiktok/payload.ts';
import type { RedditConfig } from './config.ts';

type Reddit = Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>;

/** Reddit's tracking types (v3). */
export const REDDIT_TRACKING_TYPES = new Set([
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

/** Our action sources → Reddit's (`WEBSITE`, `APP`, `PHYSICAL_STORE`, `OTHER`). */
export function redditActionSource(source: ActionSource): string {
  if (source === 'website') return 'WEBSITE';
  if (source === 'app') return 'APP';
  if (source === 'physical_store') return 'PHYSICAL_STORE';
  return 'OTHER';
}

/** A test send's `test_id` when the caller gives no code: Reddit shows it in its test view. */
export const REDDIT_DEFAULT_TEST_ID = 'trackway-test';

/** The uuid of an `_rdt_uuid` cookie (`<ms>.<uuid>`), or the value as sent when it is one. */
export function redditUuid(cookie: string): string {
  const parts = cookie.split('.');
  return parts.length === 2 && /^\d+$/.test(parts[0]!) ? parts[1]! : cookie;
}

function redditUser(forwardable: ForwardableEvent): Record<string, unknown> {
  const user: Record<string, unknown> = { ...forwardable.hashes['reddit'] };
  const raw = forwardable.matchKeys;
  if (raw?.clientIpAddress !== undefined) user['ip_address'] = sha256Hex(raw.clientIpAddress);
  if (raw?.clientUserAgent !== undefined) user['user_agent'] = raw.clientUserAgent;
  // The `_rdt_uuid` cookie is `<ms>.<uuid>`: Reddit's `uuid` is the uuid part (as stape sends).
  if (raw?.rdtUuid !== undefined) user['uuid'] = redditUuid(raw.rdtUuid);
  if (forwardable.event.consent?.limited_data_use === true) {
    // Without a country and region Reddit geolocates, as Meta's 0 (docs/decisions.md).
    user['data_processing_options'] = { modes: ['LDU'] };
  }
  return user;
}

export function buildRedditRequests(
  reddit: Reddit,
  events: ForwardableEvent[],
  config: RedditConfig,
  options: BuildOptions,
): BuiltBatch {
  const { parts, skipped } = prepareEvents(
    reddit,
    events,
    config.event_names,
    options.now,
    (forwardable, name) => {
      const { event } = forwardable;
      const standard = REDDIT_TRACKING_TYPES.has(name) && name !== 'CUSTOM';
      const type = standard
        ? { tracking_type: name }
        : { tracking_type: 'CUSTOM', custom_event_name: name };
      const metadata: Record<string, unknown> = { conversion_id: event.eventId };
      if (TAKES_VALUE.has(type.tracking_type)) {
        if (event.value !== null) metadata['value'] = event.value;
        if (event.currency !== null) metadata['currency'] = event.currency;
      }
      const data: Record<string, unknown> = {
        event_at: event.timestamp.getTime(),
        action_source: redditActionSource(forwardable.actionSource),
        type,
        metadata,
        user: redditUser(forwardable),
      };
      // Reddit appends `rdt_cid` to an ad's link: the event's own first, the page URL's without one.
      const raw = forwardable.matchKeys;
      const click = raw === null ? undefined : (raw.rdtCid ?? queryParam(event.url, 'rdt_cid'));
      if (click !== undefined) data['click_id'] = click;
      return data;
    },
  );
  const path = `/pixels/${encodeURIComponent(config.pixel_id)}/conversion_events`;
  const testId = options.test ? (options.test.testEventCode ?? REDDIT_DEFAULT_TEST_ID) : undefined;
  const requests: PlatformRequest[] = parts.map((part) => ({
    method: 'POST',
    path,
    redactedPath: path,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${config.access_token}`,
    },
    body: {
      data: {
        ...(testId !== undefined ? { test_id: testId } : {}),
        events: part.map((e) => e.body),
      },
    },
    eventIds: part.map((e) => e.eventId),
  }));
  return { requests, skipped, notes: [] };
}

/** A request cut to `[start, end)` of its events (Reddit's events are under `data.events`). */
export function redditSubRequest(
  request: PlatformRequest,
  start: number,
  end: number,
): PlatformRequest {
  const data = request.body['data'] as { events: unknown[] };
  return {
    ...request,
    body: { ...request.body, data: { ...data, events: data.events.slice(start, end) } },
    eventIds: request.eventIds.slice(start, end),
  };
}
