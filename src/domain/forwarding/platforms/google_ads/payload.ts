/**
 * Google Ads requests on the Data Manager API (googleapis/googleapis
 * google/ads/datamanager/v1/ingestion_service.proto, event.proto, destination.proto):
 * `POST /events:ingest` with `{destinations: [{operatingAccount, loginAccount?,
 * productDestinationId, reference}], events: [{eventTimestamp (RFC 3339), transactionId,
 * eventSource, conversionValue?, currency?, adIdentifiers?, userData?, eventDeviceInfo?,
 * consent?, destinationReferences}], encoding: "HEX", validateOnly?}`, at most 2,000 events and
 * 10 destinations a request. The access token is the engine's (module `auth`).
 *
 * Each event counts for the conversion action its name maps to (`config.conversion_actions`):
 * one destination per action, the event naming it by reference. `transactionId` is our event
 * id (Google deduplicates on it). `userData.userIdentifiers` carries the hashed email, phone
 * and, when all four parts are known, the address (names hashed, region and postal code not);
 * `eventDeviceInfo` the raw IP and user agent; `adIdentifiers` the click ids. Consent goes as
 * the event's `consent {adUserData, adPersonalization}`; denied `ad_user_data` sends no user
 * data (click ids only). The test send is `validateOnly: true`: Google checks, records nothing.
 */
import type { ActionSource } from '../../match-keys.ts';
import {
  type BuildOptions,
  type BuiltBatch,
  type ForwardableEvent,
  type PlatformModule,
  type PlatformRequest,
  prepareEvents,
  type ReadyEvent,
} from '../platform.ts';
import { queryParam } from '../tiktok/payload.ts';
import type { GoogleAdsConfig } from './config.ts';
import type { GoogleAdsHashes, GoogleAdsLocation } from './user-data.ts';

type GoogleAds = Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>;

/** Destinations one request may name (limits: "10 destinations"). */
export const DESTINATIONS_PER_REQUEST = 10;

/** Our action sources → Google's `EventSource`. */
export function googleEventSource(source: ActionSource): string {
  if (source === 'website') return 'WEB';
  if (source === 'app') return 'APP';
  if (source === 'physical_store') return 'IN_STORE';
  if (source === 'phone_call') return 'PHONE';
  return 'OTHER';
}

const consentState = (state: 'granted' | 'denied') =>
  state === 'granted' ? 'CONSENT_GRANTED' : 'CONSENT_DENIED';

/** The event's consent as Google's `consent` (consent.proto), or undefined when none was given. */
export function googleConsent(
  consent: ForwardableEvent['event']['consent'],
): { adUserData?: string; adPersonalization?: string } | undefined {
  if (!consent) return undefined;
  const out: { adUserData?: string; adPersonalization?: string } = {};
  if (consent.ad_user_data) out.adUserData = consentState(consent.ad_user_data);
  if (consent.ad_personalization) out.adPersonalization = consentState(consent.ad_personalization);
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The click ids: the stored match keys, else the landing page URL's (Google appends them). */
function adIdentifiers(forwardable: ForwardableEvent): Record<string, string> | undefined {
  const keys = forwardable.matchKeys;
  if (keys === null) return undefined;
  const out: Record<string, string> = {};
  for (const name of ['gclid', 'gbraid', 'wbraid'] as const) {
    const value = keys[name] ?? queryParam(forwardable.event.url, name);
    if (value !== undefined) out[name] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function userIdentifiers(forwardable: ForwardableEvent): Array<Record<string, unknown>> {
  const hashes = (forwardable.hashes['google_ads'] ?? {}) as GoogleAdsHashes;
  const place = (forwardable.location?.['google_ads'] ?? {}) as GoogleAdsLocation;
  const ids: Array<Record<string, unknown>> = [];
  if (hashes.email !== undefined) ids.push({ emailAddress: hashes.email });
  if (hashes.phone !== undefined) ids.push({ phoneNumber: hashes.phone });
  // AddressInfo's four fields are all required.
  if (
    hashes.given_name !== undefined &&
    hashes.family_name !== undefined &&
    place.region_code !== undefined &&
    place.postal_code !== undefined
  ) {
    ids.push({
      address: {
        givenName: hashes.given_name,
        familyName: hashes.family_name,
        regionCode: place.region_code,
        postalCode: place.postal_code,
      },
    });
  }
  return ids;
}

function googleEvent(
  forwardable: ForwardableEvent,
  actionId: string,
): Record<string, unknown> | string {
  const { event } = forwardable;
  // Denied: the event goes with the signal and its click ids, without any user data.
  const identified = event.consent?.ad_user_data !== 'denied';
  const clicks = adIdentifiers(forwardable);
  const ids = identified ? userIdentifiers(forwardable) : [];
  if (clicks === undefined && ids.length === 0) {
    return identified
      ? 'Google Ads needs a click id (gclid, gbraid, wbraid) or an email, phone or address'
      : 'consent denied: ad_user_data, and no click id (gclid, gbraid, wbraid) to send instead';
  }
  const body: Record<string, unknown> = {
    eventTimestamp: event.timestamp.toISOString(),
    transactionId: event.eventId,
    eventSource: googleEventSource(forwardable.actionSource),
    destinationReferences: [actionId],
  };
  if (event.value !== null) body['conversionValue'] = event.value;
  if (event.currency !== null) body['currency'] = event.currency;
  if (clicks !== undefined) body['adIdentifiers'] = clicks;
  if (ids.length > 0) body['userData'] = { userIdentifiers: ids };
  const raw = forwardable.matchKeys;
  if (identified && raw !== null) {
    const device: Record<string, string> = {};
    if (raw.clientUserAgent !== undefined) device['userAgent'] = raw.clientUserAgent;
    if (raw.clientIpAddress !== undefined) device['ipAddress'] = raw.clientIpAddress;
    if (Object.keys(device).length > 0) body['eventDeviceInfo'] = device;
  }
  const consent = googleConsent(event.consent);
  if (consent !== undefined) body['consent'] = consent;
  return body;
}

/** The destinations a request's events name, in first-use order. */
function destinationsFor(
  events: ReadonlyArray<Record<string, unknown>>,
  config: Pick<GoogleAdsConfig, 'customer_id' | 'login_customer_id'>,
): Array<Record<string, unknown>> {
  const ids = [...new Set(events.map((e) => (e['destinationReferences'] as string[])[0]!))];
  return ids.map((id) => ({
    operatingAccount: { accountType: 'GOOGLE_ADS', accountId: config.customer_id },
    ...(config.login_customer_id !== undefined
      ? { loginAccount: { accountType: 'GOOGLE_ADS', accountId: config.login_customer_id } }
      : {}),
    productDestinationId: id,
    reference: id,
  }));
}

/** A part cut further so that none names more than 10 conversion actions. */
function byDestinationLimit(part: ReadyEvent[]): ReadyEvent[][] {
  const out: ReadyEvent[][] = [];
  let current: ReadyEvent[] = [];
  let named = new Set<string>();
  for (const ready of part) {
    const id = (ready.body['destinationReferences'] as string[])[0]!;
    if (!named.has(id) && named.size === DESTINATIONS_PER_REQUEST) {
      out.push(current);
      current = [];
      named = new Set();
    }
    named.add(id);
    current.push(ready);
  }
  if (current.length > 0) out.push(current);
  return out;
}

export function buildGoogleAdsRequests(
  google: GoogleAds,
  events: ForwardableEvent[],
  config: GoogleAdsConfig,
  options: BuildOptions,
): BuiltBatch {
  const { parts, skipped } = prepareEvents(
    google,
    events,
    config.event_names,
    options.now,
    (forwardable, name) => {
      const actionId = config.conversion_actions[name];
      if (actionId === undefined) {
        return `no Google Ads conversion action for ${name} (config.conversion_actions)`;
      }
      return googleEvent(forwardable, actionId);
    },
  );
  const requests: PlatformRequest[] = parts.flatMap(byDestinationLimit).map((part) => {
    const bodies = part.map((e) => e.body);
    return {
      method: 'POST',
      path: '/events:ingest',
      redactedPath: '/events:ingest',
      headers: { 'content-type': 'application/json' },
      body: {
        destinations: destinationsFor(bodies, config),
        events: bodies,
        encoding: 'HEX',
        ...(options.test ? { validateOnly: true } : {}),
      },
      eventIds: part.map((e) => e.eventId),
    };
  });
  return { requests, skipped, notes: [] };
}

/** A request cut to `[start, end)` of its events, naming only their conversion actions. */
export function googleAdsSubRequest(
  request: PlatformRequest,
  start: number,
  end: number,
): PlatformRequest {
  const events = (request.body['events'] as Array<Record<string, unknown>>).slice(start, end);
  const used = new Set(events.map((e) => (e['destinationReferences'] as string[])[0]));
  const destinations = (request.body['destinations'] as Array<{ reference: string }>).filter((d) =>
    used.has(d.reference),
  );
  return {
    ...request,
    body: { ...request.body, destinations, events },
    eventIds: request.eventIds.slice(start, end),
  };
}
