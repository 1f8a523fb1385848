/**
 * Pinterest Conversions API v5 requests (developers.pinterest.com/docs/api/v5/events-create):
 * `POST /ad_accounts/{ad_account_id}/events` with `Authorization: Bearer <token>` and
 * `{data: [{event_name, action_source, event_time (s), event_id, event_source_url, user_data,
 * custom_data}]}`, at most 1,000 events each; `?test=true` for a test send (Pinterest answers
 * as usual and records nothing).
 *
 * `user_data` carries Pinterest's hashes as one-element arrays, the raw IP and user agent, and
 * the `epik` click id as `click_id` (the event's, else the landing page URL's). Pinterest wants an email, a mobile ad id or
 * the IP and user agent together: an event without them is skipped here rather than refused.
 * `limited_data_use` becomes `custom_data.opt_out_type: "LDP"` (Limited Data Processing).
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
import type { PinterestConfig } from './config.ts';

type Pinterest = Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>;

/**
 * Our action sources → Pinterest's (`web`, `app_android`, `app_ios`, `offline`). An app event
 * does not say which OS it came from, which Pinterest requires: it is skipped (docs/decisions.md).
 */
export function pinterestActionSource(source: ActionSource): string | null {
  if (source === 'website') return 'web';
  if (source === 'app') return null;
  return 'offline';
}

function pinterestUser(forwardable: ForwardableEvent): Record<string, unknown> {
  const user = listedUserData(forwardable, 'pinterest');
  const raw = forwardable.matchKeys;
  // Pinterest appends `epik` to an ad's link; its tag keeps it as the `_epik` cookie. The
  // event's own (user_data.epik, or the snippet's) first; the page URL's only without one.
  const epik = raw === null ? undefined : (raw.epik ?? queryParam(forwardable.event.url, 'epik'));
  if (epik !== undefined) user['click_id'] = epik;
  return user;
}

export function buildPinterestRequests(
  pinterest: Pinterest,
  events: ForwardableEvent[],
  config: PinterestConfig,
  options: BuildOptions,
): BuiltBatch {
  const { parts, skipped } = prepareEvents(
    pinterest,
    events,
    config.event_names,
    options.now,
    (forwardable, name) => {
      const { event } = forwardable;
      const actionSource = pinterestActionSource(forwardable.actionSource);
      if (actionSource === null) {
        return 'Pinterest needs the app event’s OS (app_android or app_ios), which Trackway does not know';
      }
      const user = pinterestUser(forwardable);
      if (!('em' in user) && !('client_ip_address' in user && 'client_user_agent' in user)) {
        return 'Pinterest needs an email, or the IP address and user agent together';
      }
      // The caller's keys first, so that Trackway's own fields win a clash. Pinterest wants the
      // value as a string.
      const custom: Record<string, unknown> = { ...(event.customData ?? {}) };
      if (event.value !== null) custom['value'] = String(event.value);
      if (event.currency !== null) custom['currency'] = event.currency;
      if (event.searchString !== null) custom['search_string'] = event.searchString;
      if (event.consent?.limited_data_use === true) custom['opt_out_type'] = 'LDP';
      const data: Record<string, unknown> = {
        event_name: name,
        action_source: actionSource,
        event_time: Math.floor(event.timestamp.getTime() / 1000),
        event_id: event.eventId,
        user_data: user,
      };
      if (event.url !== null) data['event_source_url'] = event.url;
      if (Object.keys(custom).length > 0) data['custom_data'] = custom;
      return data;
    },
  );
  const base = `/ad_accounts/${encodeURIComponent(config.ad_account_id)}/events`;
  const path = options.test ? `${base}?test=true` : base;
  const requests: PlatformRequest[] = parts.map((part) => ({
    method: 'POST',
    path,
    redactedPath: path,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${config.access_token}`,
    },
    body: { data: part.map((e) => e.body) },
    eventIds: part.map((e) => e.eventId),
  }));
  return { requests, skipped, notes: [] };
}
