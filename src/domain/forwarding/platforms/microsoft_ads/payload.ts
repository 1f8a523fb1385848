/**
 * Microsoft Advertising UET Conversions API requests (learn.microsoft.com/en-us/advertising/
 * guides/uet-conversion-api-integration; Segment's ms-bing-capi and stape's microsoft-capi-tag
 * for the shapes): `POST /{tag_id}/events` with `Authorization: Bearer <token>` and
 * `{data: [event…], continueOnValidationError: true}`, at most 1,000 events each.
 *
 * A page view is a `pageLoad` (which needs `eventSourceUrl`); every other event a `custom` one
 * with `eventName` and, for the names UET reads a page type from, `customData.pageType`.
 * `eventId` is our event id (the UET tag's own event id deduplicates against it), `eventTime`
 * Unix seconds. `userData` carries the hashed email, phone and external id, and raw the IP,
 * user agent, `msclkid` (the landing URL's, when the event has none) and `anonymousId` (the
 * `_uetvid` cookie).
 * `adStorageConsent` is `"G"` for an event with `ad_user_data: "granted"`; a denied one never
 * gets here (Microsoft has no signal that sends it without identifiers: consent-gate.ts).
 *
 * Microsoft has no test mode: a test send builds and checks this and sends nothing.
 */
import {
  type BuildOptions,
  type BuiltBatch,
  chunk,
  type ForwardableEvent,
  outsideWindowReason,
  type PlatformModule,
  type PlatformRequest,
  type Skip,
} from '../platform.ts';
import { queryParam } from '../tiktok/payload.ts';
import type { MicrosoftAdsConfig } from './config.ts';

type MicrosoftAds = Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>;

/** The name our PageView goes out under: UET's `pageLoad` event type, not a custom event. */
export const PAGE_LOAD = 'pageLoad';

/**
 * UET's `pageType` for the event names that say which page they happened on (stape's mapping;
 * UET's remarketing reads `home|product|category|searchresults|cart|purchase|other`).
 */
const PAGE_TYPES: Readonly<Record<string, string>> = {
  view_item: 'product',
  add_to_cart: 'cart',
  begin_checkout: 'cart',
  purchase: 'purchase',
  search: 'searchresults',
};

/** A string of custom_data, if the caller sent one under this key. */
function customString(custom: Record<string, unknown> | null, key: string): string | undefined {
  const value = custom?.[key];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

/**
 * Meta-style `custom_data.contents` (`[{id, quantity, item_price}]`) as UET's `items`
 * (`[{id, name?, price?, quantity?}]`) and `itemIds`; anything else there is left out.
 */
function items(custom: Record<string, unknown> | null): Array<Record<string, unknown>> {
  const contents = custom?.['contents'];
  if (!Array.isArray(contents)) return [];
  const out: Array<Record<string, unknown>> = [];
  for (const entry of contents) {
    if (typeof entry !== 'object' || entry === null) continue;
    const c = entry as Record<string, unknown>;
    if (typeof c['id'] !== 'string' && typeof c['id'] !== 'number') continue;
    const item: Record<string, unknown> = { id: String(c['id']) };
    if (typeof c['title'] === 'string') item['name'] = c['title'];
    if (typeof c['item_price'] === 'number') item['price'] = c['item_price'];
    if (Number.isInteger(c['quantity'])) item['quantity'] = c['quantity'];
    out.push(item);
  }
  return out;
}

function userData(forwardable: ForwardableEvent): Record<string, unknown> {
  const user: Record<string, unknown> = { ...forwardable.hashes['microsoft_ads'] };
  const raw = forwardable.matchKeys;
  if (raw === null) return user;
  if (raw.clientIpAddress !== undefined) user['clientIpAddress'] = raw.clientIpAddress;
  if (raw.clientUserAgent !== undefined) user['clientUserAgent'] = raw.clientUserAgent;
  // Microsoft appends `msclkid` to an ad's link; its tag keeps it as the `_uetmsclkid` cookie.
  // The event's own first, the page URL's without one. `_uetvid` is UET's `anonymousId`.
  const msclkid = raw.msclkid ?? queryParam(forwardable.event.url, 'msclkid');
  if (msclkid !== undefined) user['msclkid'] = msclkid;
  if (raw.uetvid !== undefined) user['anonymousId'] = raw.uetvid;
  return user;
}

export function buildMicrosoftAdsRequests(
  microsoft: MicrosoftAds,
  events: ForwardableEvent[],
  config: MicrosoftAdsConfig,
  options: BuildOptions,
): BuiltBatch {
  const skipped: Skip[] = [];
  const ready: Array<{ eventId: string; body: Record<string, unknown> }> = [];
  for (const forwardable of events) {
    const { event } = forwardable;
    const skip = (reason: string) => skipped.push({ eventId: event.eventId, reason });
    const late = outsideWindowReason(microsoft, forwardable, options.now);
    if (late) {
      skip(late);
      continue;
    }
    const name = microsoft.eventName(event.eventName, config.event_names);
    if ('skipped' in name) {
      skip(name.skipped);
      continue;
    }
    const pageLoad = name.name === PAGE_LOAD;
    if (pageLoad && event.url === null) {
      skip('Microsoft needs the page URL (url) of a page load');
      continue;
    }
    const data: Record<string, unknown> = {
      eventType: pageLoad ? 'pageLoad' : 'custom',
      eventId: event.eventId,
      eventTime: Math.floor(event.timestamp.getTime() / 1000),
    };
    if (!pageLoad) data['eventName'] = name.name;
    if (event.url !== null) data['eventSourceUrl'] = event.url;
    if (event.referrer !== null) data['referrerUrl'] = event.referrer;
    if (event.title !== null) data['pageTitle'] = event.title;
    if (event.consent?.ad_user_data === 'granted') data['adStorageConsent'] = 'G';
    data['userData'] = userData(forwardable);
    const custom: Record<string, unknown> = {};
    if (event.value !== null) custom['value'] = event.value;
    if (event.currency !== null) custom['currency'] = event.currency;
    const pageType = PAGE_TYPES[name.name];
    if (pageType !== undefined) custom['pageType'] = pageType;
    const transactionId =
      customString(event.customData, 'transaction_id') ??
      customString(event.customData, 'order_id') ??
      (name.name === 'purchase' ? event.eventId : undefined);
    if (transactionId !== undefined) custom['transactionId'] = transactionId;
    const searchTerm = event.searchString ?? customString(event.customData, 'search_string');
    if (searchTerm !== undefined) custom['searchTerm'] = searchTerm;
    const list = items(event.customData);
    if (list.length > 0) {
      custom['items'] = list;
      custom['itemIds'] = list.map((i) => i['id']);
    }
    if (Object.keys(custom).length > 0) data['customData'] = custom;
    ready.push({ eventId: event.eventId, body: data });
  }
  const path = `/${encodeURIComponent(config.tag_id)}/events`;
  const requests: PlatformRequest[] = chunk(ready, microsoft.limits.eventsPerRequest).map(
    (part) => ({
      method: 'POST',
      path,
      redactedPath: path,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${config.access_token}`,
      },
      // Valid events are ingested and the invalid ones listed by index (response.ts), rather
      // than the whole request refused for one of them.
      body: { data: part.map((e) => e.body), continueOnValidationError: true },
      eventIds: part.map((e) => e.eventId),
    }),
  );
  return { requests, skipped, notes: [] };
}
