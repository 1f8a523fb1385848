import { visitorOf, withVisitorKeys } from '../collect/stitching.ts';
import { type Context, trackingLookup } from '../context.ts';
import { invalidField, pixelNotFound, TrackwayError } from '../errors.ts';
import { matchKeyHashes, splitMatchKeys } from '../forwarding/match-keys.ts';
import { matchQuality } from '../forwarding/match-quality.ts';
import { hasLocation, platformUserData } from '../forwarding/platform-user-data.ts';
import { newEventId } from '../ids.ts';
import type {
  IngestedMatchData,
  MatchQuality,
  Pixel,
  PlatformHashes,
  TrackedEvent,
  VisitorKeys,
  WebhookEvent,
} from '../model.ts';
import type { InsertOutcome } from '../ports/event-store.ts';
import { compileValidator } from '../validation.ts';
import { type TrackEventResponse, TrackEventSchema } from './schemas.ts';
import { eventNameWarning } from './standard-events.ts';
import { type DroppedValue, droppedWarning, dropUnusableUserData } from './unusable-user-data.ts';
import { hashContact } from './user-data.ts';

const MAX_FUTURE_MS = 10 * 60 * 1000;
const MAX_CUSTOM_DATA_BYTES = 16_384;

const validateEvent = compileValidator(TrackEventSchema, { noun: 'field' });

/** The dotted path of the first number in `value` that is not finite, or null. */
function nonFinitePath(value: unknown, path: string): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : path;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const found = nonFinitePath(item, `${path}.${key}`);
    if (found) return found;
  }
  return null;
}

/**
 * Validates one event (the schema, then what the schema cannot express: bounds relative to
 * now, formats checked while hashing, serialised size), hashes user_data, and builds the record
 * to store. Unknown fields are reported last, after every format check (contract §3's order).
 * Pure: no I/O, so the batch path runs exactly the same checks on each of its events.
 */
export function prepareEvent(
  accountId: string,
  body: unknown,
  receivedAt: Date,
  visitor: VisitorKeys | null = null,
): TrackedEvent {
  try {
    return prepareChecked(accountId, body, receivedAt, visitor, NOTHING_DROPPED);
  } catch (error) {
    // Contact data that cannot be used is left out, not refused (contract §19): the event
    // counts. Screened only once a user_data value failed, so a valid event pays nothing.
    if (!isUserDataFailure(error)) throw error;
    const screened = dropUnusableUserData(body);
    if (screened.dropped.length === 0) throw error;
    return prepareChecked(accountId, screened.body, receivedAt, visitor, screened.dropped);
  }
}

const NOTHING_DROPPED: readonly DroppedValue[] = [];

/** A wrong type or format in user_data (what may be an unusable value, or a wrong type). */
function isUserDataFailure(error: unknown): boolean {
  return (
    error instanceof TrackwayError &&
    error.code === 'invalid_request' &&
    error.field?.startsWith('user_data.') === true &&
    error.message.startsWith('Invalid field: ')
  );
}

function prepareChecked(
  accountId: string,
  body: unknown,
  receivedAt: Date,
  visitor: VisitorKeys | null,
  dropped: readonly DroppedValue[],
): TrackedEvent {
  const { value: input, unknown } = validateEvent.inspect(body);
  // Identity stitching: the match keys the event lacks come from its visitor's browser (the
  // event's own values win), before anything is hashed or stored.
  const { userData: stitched, enriched } = withVisitorKeys(
    input.user_data as Record<string, string> | undefined,
    visitor,
  );
  let timestamp = receivedAt;
  if (input.timestamp !== undefined) {
    timestamp = new Date(input.timestamp);
    if (timestamp.getTime() - receivedAt.getTime() > MAX_FUTURE_MS) {
      throw invalidField('timestamp', 'must not be more than 10 minutes in the future');
    }
  }
  let customDataJson: string | null = null;
  if (input.custom_data !== undefined) {
    const serialised = JSON.stringify(input.custom_data);
    customDataJson = serialised;
    if (Buffer.byteLength(serialised) > MAX_CUSTOM_DATA_BYTES) {
      throw invalidField(
        'custom_data',
        `must be at most ${MAX_CUSTOM_DATA_BYTES} bytes serialised`,
      );
    }
    // A JSON number beyond a double's range (1e400) parses as ±Infinity, which would be stored
    // as null: refused, since nothing the caller sent may be silently changed. It serialises as
    // `null`, so only custom_data holding a null is searched.
    const infinite = serialised.includes('null') && nonFinitePath(input.custom_data, 'custom_data');
    if (infinite) throw invalidField(infinite, 'must be a finite number');
  }
  // Hashing happens here, before the record exists: raw PII never reaches storage or logs.
  // The match keys (contract §11) are split off first: the record gets their SHA-256, the raw
  // values go to the 7-day store with the unhashed location (`ingested`).
  const { actionSource, matchKeys, contact } = splitMatchKeys(stitched, input.action_source);
  let userData: Record<string, string> | null = null;
  let ingested: IngestedMatchData = { hashes: null, matchKeys: null, location: null };
  if (stitched !== undefined) {
    const hashed = hashContact(contact);
    const { hashes, location } = platformUserData(contact, hashed);
    // Most events carry no match keys: their record's user_data is the contact hashes alone.
    const hasMatchKeys = Object.keys(matchKeys).length > 0;
    userData = hasMatchKeys ? { ...hashed.hashes, ...matchKeyHashes(matchKeys) } : hashed.hashes;
    ingested = {
      hashes,
      matchKeys: hasMatchKeys ? matchKeys : null,
      location: hasLocation(location) ? location : null,
    };
  }
  if (unknown) throw unknown;
  const event: TrackedEvent = {
    accountId,
    pixelId: input.pixel_id,
    eventId: input.event_id ?? newEventId(),
    eventName: input.event_name,
    value: input.value ?? null,
    currency: input.currency?.toUpperCase() ?? null,
    timestamp,
    receivedAt,
    url: input.url ?? null,
    referrer: input.referrer ?? null,
    title: input.title ?? null,
    searchString: input.search_string ?? null,
    userData,
    customData: (input.custom_data as Record<string, unknown> | undefined) ?? null,
    customDataJson,
    actionSource,
    consent: input.consent ?? null,
    matchQuality: withEnriched(
      matchQuality({
        hashes: ingested.hashes ?? NO_HASHES,
        matchKeys,
        event: { url: input.url ?? null, timestamp },
        consent: input.consent ?? null,
      }),
      enriched,
    ),
    ingested,
    anonymousId: input.anonymous_id ?? null,
  };
  if (dropped.length > 0) {
    event.dropped = dropped.map((d) => d.field);
    event.warnings = dropped.map(droppedWarning);
  }
  return event;
}

/** The estimate, saying which keys came from the visitor's browser (none: as it was). */
function withEnriched(quality: MatchQuality, enriched: string[]): MatchQuality {
  return enriched.length === 0 ? quality : { ...quality, enriched };
}

/** What the answer for this event warns of: a near-miss event name, then dropped values. */
export function eventWarnings(event: TrackedEvent): string[] {
  const warning = eventNameWarning(event.eventName);
  const warnings = warning ? [warning] : [];
  if (event.warnings) warnings.push(...event.warnings);
  return warnings;
}

const NO_HASHES: PlatformHashes = {};

/** The `event.tracked` webhook: exactly the five fields the spec names. */
export function eventTracked(event: TrackedEvent): WebhookEvent {
  return {
    accountId: event.accountId,
    type: 'event.tracked',
    occurredAt: event.receivedAt,
    data: {
      pixel_id: event.pixelId,
      event_name: event.eventName,
      event_id: event.eventId,
      value: event.value,
      timestamp: event.timestamp.toISOString(),
    },
  };
}

/** Another account's pixel is indistinguishable from one that does not exist. */
export function assertTrackable(pixel: Pixel | null, pixelId: string): asserts pixel is Pixel {
  if (!pixel) throw pixelNotFound(pixelId);
  if (pixel.status === 'paused') {
    throw new TrackwayError('conflict', `Pixel is paused: ${pixel.id}`, 'pixel_id');
  }
}

/** The 200 body for a stored (or deduplicated) event. */
export function trackResponse(event: TrackedEvent, outcome: InsertOutcome): TrackEventResponse {
  const response: TrackEventResponse =
    outcome === 'inserted'
      ? { success: true, event_id: event.eventId, message: 'Event tracked' }
      : {
          success: true,
          event_id: event.eventId,
          message: 'Duplicate event_id; the first event was kept',
          deduplicated: true,
        };
  const warnings = eventWarnings(event);
  if (warnings.length > 0) response.warnings = warnings;
  return response;
}

export async function trackEvent({
  ctx,
  input,
}: {
  ctx: Context;
  /** The request body as parsed: prepareEvent validates it. */
  input: unknown;
}): Promise<TrackEventResponse> {
  const now = ctx.clock.now();
  const event = prepareEvent(ctx.account.id, input, now, await visitorOf(ctx, input, now));
  assertTrackable(await trackingLookup(ctx)(ctx.account.id, event.pixelId), event.pixelId);
  const outcome = await ctx.store.events.insertEvent(event, [eventTracked(event)]);
  if (event.dropped) ctx.droppedValues?.(event.dropped);
  return trackResponse(event, outcome);
}
