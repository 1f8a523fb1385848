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
  if (event.url !== null) params['page_location'] = event.url;
  if (event.referrer !== null) params['page_referrer'] = event.referrer;
  if (event.title !== null) params['page_title'] = event.title;
  if (event.searchString !== null) params['search_term'] = event.searchString;
  if (event.value !== null) params['value'] = event.value;
  if (event.currency !== null) params['currency'] = event.currency;
  // GA4 deduplicates purchases by transaction_id (web streams); ours is the event's own id,
  // never empty (an empty id would deduplicate every purchase into one).
  if (ga4Name === 'purchase') params['transaction_id'] = event.eventId;

  const dropped: string[] = [];
  const truncated: string[] = [];
  const overLimit: string[] = [];
  for (const [key, value] of Object.entries(event.customData ?? {})) {
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
      kept = [...value].slice(0, GA4_MAX_PARAM_VALUE_LENGTH).join('');
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
    const clientId = forwardable.matchKeys?.gaClientId;
    if (clientId === undefined) {
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
    if (note) notes.push({ eventId: event.eventId, note });
    const head: Record<string, unknown> = { client_id: clientId };
    const userId = hashesOf(forwardable).user_id;
    if (userId !== undefined) head['user_id'] = userId;
    const userData = ga4UserData(forwardable);
    if (userData) head['user_data'] = userData;
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
  for (const group of groups.values()) {
    for (const part of chunk(group.events, ga4.limits.eventsPerRequest)) {
      requests.push({
        method: 'POST',
        path: `${path}&api_secret=${encodeURIComponent(config.api_secret)}`,
        redactedPath: `${path}&api_secret=${maskSecret(config.api_secret)}`,
        headers: { 'content-type': 'application/json' },
        body: {
          ...group.head,
          // Request-level time for readers that ignore the per-event one: the first event's.
          timestamp_micros: part[0]!.event.timestamp_micros,
          events: part.map((e) => e.event),
          // Debug mode: stricter checks, so a test send reports what GA4 would quietly ignore.
          ...(debug ? { validation_behavior: 'ENFORCE_RECOMMENDATIONS' } : {}),
        },
        eventIds: part.map((e) => e.eventId),
      });
    }
  }
  return { requests, skipped, notes };
}
