/**
 * Snapchat Conversions API v3 requests (developers.snap.com/api/marketing-api/
 * Conversions-API/UsingTheAPI): `POST /{pixel_id}/events?access_token=<token>` with
 * `{data: [{event_name, event_time (s), event_id, action_source, event_source_url, user_data,
 * custom_data, data_processing_options?}]}`, at most 2,000 events each; the test send goes to
 * `/{pixel_id}/events/validate`, which checks the events and records nothing.
 *
 * `user_data` carries Snapchat's hashes as one-element arrays, the raw IP and user agent, the
 * `ScCid` click id as `sc_click_id` (the event's, else the landing page URL's) and the `_scid`
 * cookie as `sc_cookie1`. Snapchat wants an email, a phone, a
 * mobile ad id or the IP and user agent, and a purchase with its value and currency: events
 * without them are skipped here rather than refused. `limited_data_use` becomes
 * `data_processing_options: ["LDU"]` with country and state 0 (Snap geolocates).
 */
import type { ActionSource } from '../../match-keys.ts';
import {
  type BuildOptions,
  type BuiltBatch,
  type ForwardableEvent,
  listedUserData,
  type PlatformModule,
  type PlatformRequest,
  prepareEvents,
} from '../platform.ts';
import { queryParam } from '../tiktok/payload.ts';
import type { SnapchatConfig } from './config.ts';

type Snapchat = Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>;

/**
 * Our action sources → Snapchat's (`WEB`, `MOBILE_APP`, `OFFLINE`). An app event goes to a
 * Snap App ID, not the pixel this destination names: it is skipped.
 */
export function snapchatActionSource(source: ActionSource): string | null {
  if (source === 'website') return 'WEB';
  if (source === 'app') return null;
  return 'OFFLINE';
}

function snapchatUser(forwardable: ForwardableEvent): Record<string, unknown> {
  const user = listedUserData(forwardable, 'snapchat');
  const raw = forwardable.matchKeys;
  // Snapchat appends `ScCid` to an ad's link: the event's own first, the page URL's without
  // one. Its pixel's `_scid` cookie is `sc_cookie1` (platforms.md §6.3).
  const click =
    raw === null ? undefined : (raw.scCid ?? queryParam(forwardable.event.url, 'ScCid'));
  if (click !== undefined) user['sc_click_id'] = click;
  if (raw?.scid !== undefined) user['sc_cookie1'] = raw.scid;
  return user;
}

export function buildSnapchatRequests(
  snapchat: Snapchat,
  events: ForwardableEvent[],
  config: SnapchatConfig,
  options: BuildOptions,
): BuiltBatch {
  const { parts, skipped } = prepareEvents(
    snapchat,
    events,
    config.event_names,
    options.now,
    (forwardable, name) => {
      const { event } = forwardable;
      const actionSource = snapchatActionSource(forwardable.actionSource);
      if (actionSource === null) {
        return 'Snapchat takes app events for a Snap App ID, not for this pixel';
      }
      if (name === 'PURCHASE' && (event.value === null || event.currency === null)) {
        return 'Snapchat needs a purchase’s value and currency';
      }
      const user = snapchatUser(forwardable);
      if (
        !('em' in user) &&
        !('ph' in user) &&
        !('client_ip_address' in user && 'client_user_agent' in user)
      ) {
        return 'Snapchat needs an email, a phone, or the IP address and user agent together';
      }
      // The caller's keys first, so that Trackway's own fields win a clash.
      const custom: Record<string, unknown> = { ...(event.customData ?? {}) };
      if (event.value !== null) custom['value'] = event.value;
      if (event.currency !== null) custom['currency'] = event.currency;
      if (event.searchString !== null) custom['search_string'] = event.searchString;
      const data: Record<string, unknown> = {
        event_name: name,
        event_time: Math.floor(event.timestamp.getTime() / 1000),
        event_id: event.eventId,
        action_source: actionSource,
        user_data: user,
      };
      if (event.url !== null) data['event_source_url'] = event.url;
      if (Object.keys(custom).length > 0) data['custom_data'] = custom;
      if (event.consent?.limited_data_use === true) {
        data['data_processing_options'] = ['LDU'];
        data['data_processing_options_country'] = 0;
        data['data_processing_options_state'] = 0;
      }
      return data;
    },
  );
  const base = `/${encodeURIComponent(config.pixel_id)}/events${options.test ? '/validate' : ''}`;
  const requests: PlatformRequest[] = parts.map((part) => ({
    method: 'POST',
    // Snapchat takes its token only in the query (its documented form).
    path: `${base}?access_token=${encodeURIComponent(config.access_token)}`,
    redactedPath: `${base}?access_token=****`,
    headers: { 'content-type': 'application/json' },
    body: { data: part.map((e) => e.body) },
    eventIds: part.map((e) => e.eventId),
  }));
  return { requests, skipped, notes: [] };
}
