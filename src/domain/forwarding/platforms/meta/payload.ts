/**
 * Meta Conversions API requests: `POST /{pixel_id}/events` with the token in `Authorization`
 * and `{data: [server event…], test_event_code?}`, at most 1,000 events each.
 *
 * Meta rejects a whole request for one invalid event, so everything Meta is documented to
 * refuse is caught here and `skipped` with a reason instead of being sent: events outside the
 * window (7 days; 62 for physical_store), app events (no app_data), website events without `client_user_agent` or `event_source_url`, purchases
 * without value and currency, and user_data Meta cannot match on.
 */
import {
  type BuildOptions,
  type BuiltBatch,
  type ForwardableEvent,
  type PlatformModule,
  type PlatformRequest,
  prepareEvents,
} from '../platform.ts';
import type { MetaConfig } from './config.ts';
import { metaKeysOf, metaKeysProblem, metaUserData } from './user-data.ts';

/** What the builder needs of the module (its own index.ts), passed in to avoid a cycle. */
type Meta = Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>;

/** One event's body under its Meta name, or why Meta would refuse it (it is skipped then). */
function metaEvent(forwardable: ForwardableEvent, name: string): Record<string, unknown> | string {
  const { event, actionSource } = forwardable;
  // Meta requires `app_data` (advertiser_tracking_enabled, application_tracking_enabled,
  // extinfo) on app events and refuses the whole request without it; Trackway collects none.
  if (actionSource === 'app') {
    return 'action_source app needs app_data (advertiser_tracking_enabled, extinfo), which Trackway does not collect';
  }
  const userData = metaUserData(forwardable);
  if (actionSource === 'website') {
    if (userData['client_user_agent'] === undefined) {
      return 'missing client_user_agent, which Meta requires for a website event';
    }
    if (event.url === null) {
      return 'missing url (event_source_url), which Meta requires for a website event';
    }
  }
  const keysProblem = metaKeysProblem(metaKeysOf(userData));
  if (keysProblem) return keysProblem;
  if (name === 'Purchase' && (event.value === null || event.currency === null)) {
    return 'missing value or currency, which Meta requires for a Purchase event';
  }

  // The caller's keys first, so that Trackway's own fields win a clash.
  const customData: Record<string, unknown> = { ...(event.customData ?? {}) };
  if (event.value !== null) customData['value'] = event.value;
  if (event.currency !== null) customData['currency'] = event.currency;
  if (event.searchString !== null) customData['search_string'] = event.searchString;

  const serverEvent: Record<string, unknown> = {
    event_name: name,
    event_time: Math.floor(event.timestamp.getTime() / 1000),
    event_id: event.eventId,
    action_source: actionSource,
    user_data: userData,
  };
  if (event.url !== null) serverEvent['event_source_url'] = event.url;
  if (Object.keys(customData).length > 0) serverEvent['custom_data'] = customData;
  // Limited Data Use (developers.facebook.com/docs/marketing-apis/data-processing-options):
  // country and state 0 let Meta geolocate the event; an explicit `false` is Meta's `[]`.
  const ldu = event.consent?.limited_data_use;
  if (ldu === true) {
    serverEvent['data_processing_options'] = ['LDU'];
    serverEvent['data_processing_options_country'] = 0;
    serverEvent['data_processing_options_state'] = 0;
  } else if (ldu === false) {
    serverEvent['data_processing_options'] = [];
  }
  return serverEvent;
}

export function buildMetaRequests(
  meta: Meta,
  events: ForwardableEvent[],
  config: MetaConfig,
  options: BuildOptions,
): BuiltBatch {
  const { parts, skipped } = prepareEvents(
    meta,
    events,
    config.event_names,
    options.now,
    metaEvent,
  );
  const testEventCode = options.test?.testEventCode ?? config.test_event_code;
  const path = `/${config.pixel_id}/events`;
  // The token in a header, never the URL: URLs end up in proxies' and servers' logs. The Graph
  // API takes an OAuth bearer token in `Authorization` as it does `access_token`.
  const requests: PlatformRequest[] = parts.map((part) => ({
    method: 'POST',
    path,
    redactedPath: path,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${config.access_token}`,
    },
    body: {
      data: part.map((e) => e.body),
      ...(testEventCode !== undefined ? { test_event_code: testEventCode } : {}),
    },
    eventIds: part.map((e) => e.eventId),
  }));
  return { requests, skipped, notes: [] };
}
