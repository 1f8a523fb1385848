/**
 * GA4 Measurement Protocol requests: `POST /mp/collect?measurement_id=…&api_secret=…` (or
 * `/debug/mp/collect` for a test send) with `{client_id, user_id?, timestamp_micros, user_data?,
 * events: [{name, params, timestamp_micros}]}`, at most 25 events each.
 *
 * `client_id`, `user_id` and `user_data` belong to the whole request, so events are grouped by
 * them first: one request never mixes two visitors. GA4 answers 2xx to anything and silently
 * drops what breaks its rules, so those rules are applied here, visibly: events without a
 * client id, outside the 72-hour window or with an impossible name are `skipped` with the
 * reason; params GA4 would drop are dropped here and noted for the ledger.
 */

import type { Consent } from '../../../consent.ts';
import {
  type BuildOptions,
  type BuiltBatch,
  chunk,
  type ForwardableEvent,
  maskSecret,
  type Note,
  outsideWindowReason,
  type PlatformModule,
  type PlatformRequest,
  type Skip,
} from '../platform.ts';
import type { Ga4Config } from './config.ts';
import { ga4NameProblem } from './names.ts';
import type { Ga4Location, Ga4UserDataHashes } from './user-data.ts';

/** What the builder needs of the module (its own index.ts), passed in to avoid a cycle. */
type Ga4 = Pick<PlatformModule, 'name' | 'windowMs' | 'eventName' | 'limits'>;

const hashesOf = (f: ForwardableEvent): Ga4UserDataHashes => f.hashes['ga4'] ?? {};
const locationOf = (f: ForwardableEvent): Ga4Location => f.location?.['ga4'] ?? {};

export const GA4_MAX_PARAMS = 25;
export const GA4_MAX_PARAM_VALUE_LENGTH = 100;
/**
 * The page params' own limits (support.google.com/analytics/answer/9267744): longer values are
 * cut by GA4; they are cut here, with a note, so the ledger says what GA4 received.
 */
const PAGE_LIMITS = { page_location: 1_000, page_referrer: 420, page_title: 300 } as const;

/** `GA1.1.1234567890.1700000000` (the `_ga` cookie's value) → `1234567890.1700000000`. */
const GA_COOKIE = /^GA\d+\.\d+\.(\d+\.\d+)$/;

/** GA4's `client_id`: the `_ga` cookie's id, from the cookie's whole value when sent that way. */
export function ga4ClientId(raw: string): string {
  return GA_COOKIE.exec(raw)?.[1] ?? raw;
}

const cut = (value: string, length: number) => [...value].slice(0, length).join('');

interface Ga4Event {
  name: string;
  params: Record<string, unknown>;
  timestamp_micros: number;
}

/** The event's params within GA4's limits, and a note of everything changed on the way. */
export function ga4Params(
  forwardable: ForwardableEvent,
  ga4Name: string,
): {
  params: Record<string, unknown>;
  note: string | null;
} {
  const { event } = forwardable;
  const params: Record<string, unknown> = {};
  const pageCut: string[] = [];
  const page = { page_location: event.url, page_referrer: event.referrer, page_title: event.title };
  for (const [key, value] of Object.entries(page) as Array<[keyof typeof PAGE_LIMITS, string]>) {
    if (value === null) continue;
    const limit = PAGE_LIMITS[key];
    if ([...value].length > limit) {
      params[key] = cut(value, limit);
      pageCut.push(`${key} to ${limit}`);
    } else {
      params[key] = value;
    }
  }
  if (event.searchString !== null) params['search_term'] = event.searchString;
  if (event.value !== null) params['value'] = event.value;
  if (event.currency !== null) params['currency'] = event.currency;
  // The visit (the `_ga_<container>` cookie's session number): without session_id and
  // engagement_time_msec GA4 reports the event outside any session ("Unassigned").
  const sessionId = forwardable.matchKeys?.gaSessionId;
  if (sessionId !== undefined) {
    params['session_id'] = sessionId;
    params['engagement_time_msec'] = 1;
  }
  // GA4 deduplicates purchases by transaction_id (web streams), with the site's own gtag too:
  // the shop's order number when the caller gives it, else the event's id (never empty: an
  // empty id would deduplicate every purchase into one).
  const custom = event.customData ?? {};
  const ownId = [custom['transaction_id'], custom['order_id']].find(
    (id) => (typeof id === 'string' && id !== '') || typeof id === 'number',
  );
  if (ga4Name === 'purchase') params['transaction_id'] = String(ownId ?? event.eventId);

  const dropped: string[] = [];
  const truncated: string[] = [];
  const overLimit: string[] = [];
  for (const [key, value] of Object.entries(custom)) {
    if (key === 'transaction_id' && params[key] === String(value)) continue;
    if (key in params) {
      dropped.push(`${key} (set by Trackway)`);
      continue;
    }
    // (session_id and engagement_time_msec are reserved for interface-made events only; the
    // Measurement Protocol documentation asks for them, so a caller's are passed on.)
    const nameProblem = ga4NameProblem(key);
    if (nameProblem) {
      dropped.push(`${key} (name ${nameProblem})`);
      continue;
    }
    let kept: unknown = value;
    if (key === 'items') {
      if (!Array.isArray(value)) {
        dropped.push('items (not an array)');
        continue;
      }
    } else if (value === null) {
      dropped.push(`${key} (null)`);
      continue;
    } else if (Array.isArray(value)) {
      dropped.push(`${key} (array)`);
      continue;
    } else if (typeof value === 'object') {
      dropped.push(`${key} (object)`);
      continue;
    } else if (typeof value === 'string' && [...value].length > GA4_MAX_PARAM_VALUE_LENGTH) {
      kept = cut(value, GA4_MAX_PARAM_VALUE_LENGTH);
      truncated.push(key);
    }
    if (Object.keys(params).length >= GA4_MAX_PARAMS) {
      overLimit.push(key);
      continue;
    }
    params[key] = kept;
  }
  const parts: string[] = [];
  if (dropped.length > 0) parts.push(`dropped params: ${dropped.join(', ')}`);
  if (pageCut.length > 0) parts.push(`cut to GA4's length (characters): ${pageCut.join(', ')}`);
  if (truncated.length > 0) {
    parts.push(`truncated to ${GA4_MAX_PARAM_VALUE_LENGTH} characters: ${truncated.join(', ')}`);
  }
  if (overLimit.length > 0) {
    parts.push(`dropped over GA4's ${GA4_MAX_PARAMS}-param limit: ${overLimit.join(', ')}`);
  }
  return { params, note: parts.length > 0 ? parts.join('; ') : null };
}

function ga4UserData(forwardable: ForwardableEvent): Record<string, unknown> | undefined {
  const hashes = hashesOf(forwardable);
  const userData: Record<string, unknown> = {};
  if (hashes.sha256_email_address) userData['sha256_email_address'] = [hashes.sha256_email_address];
  if (hashes.sha256_phone_number) userData['sha256_phone_number'] = [hashes.sha256_phone_number];
  const address: Record<string, string> = {};
  if (hashes.sha256_first_name) address['sha256_first_name'] = hashes.sha256_first_name;
  if (hashes.sha256_last_name) address['sha256_last_name'] = hashes.sha256_last_name;
  const location = locationOf(forwardable);
  if (location.city) address['city'] = location.city;
  if (location.region) address['region'] = location.region;
  if (location.country) address['country'] = location.country;
  if (Object.keys(address).length > 0) userData['address'] = [address];
  return Object.keys(userData).length > 0 ? userData : undefined;
}

/**
 * The Measurement Protocol's `consent` (protocol/ga4/reference#payload_consent): Consent Mode's
 * two ad signals, `GRANTED` or `DENIED`; limited data use denies personalisation.
 */
export function ga4Consent(
  consent: Consent,
): { ad_user_data?: string; ad_personalization?: string } | undefined {
  const out: { ad_user_data?: string; ad_personalization?: string } = {};
  if (consent.ad_user_data) out.ad_user_data = consent.ad_user_data.toUpperCase();
  const personalization = consent.limited_data_use === true ? 'denied' : consent.ad_personalization;
  if (personalization) out.ad_personalization = personalization.toUpperCase();
  return Object.keys(out).length > 0 ? out : undefined;
}

export function buildGa4Requests(
  ga4: Ga4,
  events: ForwardableEvent[],
  config: Ga4Config,
  options: BuildOptions,
): BuiltBatch {
  const skipped: Skip[] = [];
  const notes: Note[] = [];
  // Grouped by what GA4 takes once per request: the visitor.
  const groups = new Map<
    string,
    { head: Record<string, unknown>; events: Array<{ eventId: string; event: Ga4Event }> }
  >();
  for (const forwardable of events) {
    const { event } = forwardable;
    const late = outsideWindowReason(ga4, forwardable, options.now);
    if (late) {
      skipped.push({ eventId: event.eventId, reason: late });
      continue;
    }
    const rawClientId = forwardable.matchKeys?.gaClientId;
    if (rawClientId === undefined) {
      skipped.push({
        eventId: event.eventId,
        reason: 'missing user_data.ga_client_id, which GA4 requires as client_id',
      });
      continue;
    }
    const name = ga4.eventName(event.eventName, config.event_names);
    if ('skipped' in name) {
      skipped.push({ eventId: event.eventId, reason: name.skipped });
      continue;
    }
    const { params, note } = ga4Params(forwardable, name.name);
    const eventNotes = note ? [note] : [];
    const head: Record<string, unknown> = { client_id: ga4ClientId(rawClientId) };
    const consent = event.consent ? ga4Consent(event.consent) : undefined;
    // Consent denied: the event goes with the signal and the client id, no user identifier.
    const identified = event.consent?.ad_user_data !== 'denied';
    const userId = hashesOf(forwardable).user_id;
    const userData = identified ? ga4UserData(forwardable) : undefined;
    if (identified && userId !== undefined) {
      head['user_id'] = userId;
      if (userData) head['user_data'] = userData;
    } else if (userData) {
      // Google: user-provided data must be sent with a user_id (ga4/uid-data); without one it
      // is ignored, so it is not sent, and the ledger says why.
      eventNotes.push('user_data not sent: GA4 takes it only with a user_id (no external_id)');
    }
    // The visitor's IP and browser, for GA4's geography and device reports, while the raw match
    // keys are kept (7 days): the server's own would be reported otherwise.
    const raw = forwardable.matchKeys;
    if (identified && raw?.clientIpAddress !== undefined) head['ip_override'] = raw.clientIpAddress;
    if (identified && raw?.clientUserAgent !== undefined) head['user_agent'] = raw.clientUserAgent;
    if (consent) head['consent'] = consent;
    if (eventNotes.length > 0) notes.push({ eventId: event.eventId, note: eventNotes.join('; ') });
    const key = JSON.stringify(head);
    let group = groups.get(key);
    if (!group) {
      group = { head, events: [] };
      groups.set(key, group);
    }
    group.events.push({
      eventId: event.eventId,
      event: { name: name.name, params, timestamp_micros: event.timestamp.getTime() * 1000 },
    });
  }

  const debug = options.test !== undefined;
  const path = `${debug ? '/debug' : ''}/mp/collect?measurement_id=${encodeURIComponent(config.measurement_id)}`;
  const requests: PlatformRequest[] = [];
  const limit = ga4.limits.bytesPerRequest ?? Number.POSITIVE_INFINITY;
  type Part = Array<{ eventId: string; event: Ga4Event }>;
  const request = (head: Record<string, unknown>, part: Part): PlatformRequest => ({
    method: 'POST',
    path: `${path}&api_secret=${encodeURIComponent(config.api_secret)}`,
    redactedPath: `${path}&api_secret=${maskSecret(config.api_secret)}`,
    headers: { 'content-type': 'application/json' },
    body: {
      ...head,
      // Request-level time for readers that ignore the per-event one: the first event's.
      timestamp_micros: part[0]!.event.timestamp_micros,
      events: part.map((e) => e.event),
      // Debug mode: stricter checks, so a test send reports what GA4 would quietly ignore.
      ...(debug ? { validation_behavior: 'ENFORCE_RECOMMENDATIONS' } : {}),
    },
    eventIds: part.map((e) => e.eventId),
  });
  // GA4 drops a body of 130 kB or more (sending-events#limitations): such a request is halved
  // until each part fits; one event that cannot fit alone is skipped, not sent to be dropped.
  const fit = (head: Record<string, unknown>, part: Part) => {
    const built = request(head, part);
    if (Buffer.byteLength(JSON.stringify(built.body)) < limit) {
      requests.push(built);
    } else if (part.length === 1) {
      skipped.push({
        eventId: part[0]!.eventId,
        reason: `the event makes a GA4 request of ${limit / 1000} kB or more, which GA4 drops`,
      });
    } else {
      const middle = Math.ceil(part.length / 2);
      fit(head, part.slice(0, middle));
      fit(head, part.slice(middle));
    }
  };
  for (const group of groups.values()) {
    for (const part of chunk(group.events, ga4.limits.eventsPerRequest)) fit(group.head, part);
  }
  return { requests, skipped, notes };
}
