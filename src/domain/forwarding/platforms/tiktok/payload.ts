/**
 * TikTok Events API 2.0 requests (v1.3 path): `POST /event/track/` with the `Access-Token`
 * header and `{event_source: "web", event_source_id: <pixel code>, test_event_code?, data:
 * [{event, event_time, event_id, user, page, properties}]}`, at most 1,000 events each.
 *
 * `user` carries TikTok's hashes (email, phone, external_id, names, zip), the unhashed but
 * normalised city, state and country, and the raw ip, user agent, ttclid and ttp. TikTok
 * documents no maximum event age, so no window applies (see index.ts).
 */
import {
  type BuildOptions,
  type BuiltBatch,
  type ForwardableEvent,
  type PlatformModule,
  type PlatformRequest,
  prepareEvents,
} from '../platform.ts';
import type { TiktokConfig } from './config.ts';
import type { TiktokLocation } from './user-data.ts';

/** What the builder needs of the module (its own index.ts), passed in to avoid a cycle. */
type Tiktok = Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>;

/** A query parameter of a URL, or undefined (also when the URL cannot be parsed). */
export function queryParam(url: string | null, name: string): string | undefined {
  if (url === null || !url.includes(`${name}=`)) return undefined;
  try {
    return new URL(url).searchParams.get(name) || undefined;
  } catch {
    return undefined;
  }
}

function tiktokUser(forwardable: ForwardableEvent): Record<string, string> {
  const user: Record<string, string> = { ...forwardable.hashes['tiktok'] };
  const location: TiktokLocation = forwardable.location?.['tiktok'] ?? {};
  if (location.city) user['city'] = location.city;
  if (location.state) user['state'] = location.state;
  if (location.country) user['country'] = location.country;
  const raw = forwardable.matchKeys;
  if (raw?.clientIpAddress !== undefined) user['ip'] = raw.clientIpAddress;
  if (raw?.clientUserAgent !== undefined) user['user_agent'] = raw.clientUserAgent;
  // The click id from the landing page's URL when the event carries none (TikTok appends
  // `ttclid` to the ad's link; Segment's TikTok destination reads it the same way).
  const ttclid = raw?.ttclid ?? queryParam(forwardable.event.url, 'ttclid');
  if (ttclid !== undefined) user['ttclid'] = ttclid;
  if (raw?.ttp !== undefined) user['ttp'] = raw.ttp;
  return user;
}

export function buildTiktokRequests(
  tiktok: Tiktok,
  events: ForwardableEvent[],
  config: TiktokConfig,
  options: BuildOptions,
): BuiltBatch {
  const { parts, skipped } = prepareEvents(
    tiktok,
    events,
    config.event_names,
    options.now,
    (forwardable, name) => {
      const { event } = forwardable;
      // The caller's keys first, so that Trackway's own fields win a clash.
      const properties: Record<string, unknown> = { ...(event.customData ?? {}) };
      if (event.value !== null) properties['value'] = event.value;
      if (event.currency !== null) properties['currency'] = event.currency;
      if (event.searchString !== null) properties['query'] = event.searchString;
      const page: Record<string, string> = {};
      if (event.url !== null) page['url'] = event.url;
      if (event.referrer !== null) page['referrer'] = event.referrer;
      const data: Record<string, unknown> = {
        event: name,
        event_time: Math.floor(event.timestamp.getTime() / 1000),
        event_id: event.eventId,
        user: tiktokUser(forwardable),
      };
      if (Object.keys(page).length > 0) data['page'] = page;
      if (Object.keys(properties).length > 0) data['properties'] = properties;
      // TikTok's restricted processing: per event, default false.
      const ldu = event.consent?.limited_data_use;
      if (ldu !== undefined) data['limited_data_use'] = ldu;
      return data;
    },
  );
  const testEventCode = options.test?.testEventCode ?? config.test_event_code;
  const requests: PlatformRequest[] = parts.map((part) => ({
    method: 'POST',
    path: '/event/track/',
    redactedPath: '/event/track/',
    headers: { 'content-type': 'application/json', 'access-token': config.access_token },
    body: {
      event_source: 'web',
      event_source_id: config.pixel_code,
      ...(testEventCode !== undefined ? { test_event_code: testEventCode } : {}),
      data: part.map((e) => e.body),
    },
    eventIds: part.map((e) => e.eventId),
  }));
  return { requests, skipped, notes: [] };
}
