import type { Context } from '../context.ts';
import { invalidField, pixelNotFound, TrackwayError } from '../errors.ts';
import { newEventId } from '../ids.ts';
import type { Pixel, TrackedEvent, WebhookEvent } from '../model.ts';
import type { InsertOutcome } from '../ports.ts';
import type { TrackEventInput, TrackEventResponse } from './schemas.ts';
import { eventNameWarning } from './standard-events.ts';
import { hashUserData } from './user-data.ts';

const MAX_FUTURE_MS = 10 * 60 * 1000;
const MAX_CUSTOM_DATA_BYTES = 16_384;

/**
 * Checks what the schema cannot (bounds relative to now, serialised size), hashes user_data,
 * and builds the record to store. Pure: no I/O, so the batch path can reuse it.
 */
export function prepareEvent(
  accountId: string,
  input: TrackEventInput,
  receivedAt: Date,
): TrackedEvent {
  let timestamp = receivedAt;
  if (input.timestamp !== undefined) {
    timestamp = new Date(input.timestamp);
    if (timestamp.getTime() - receivedAt.getTime() > MAX_FUTURE_MS) {
      throw invalidField('timestamp', 'must not be more than 10 minutes in the future');
    }
  }
  if (
    input.custom_data !== undefined &&
    Buffer.byteLength(JSON.stringify(input.custom_data)) > MAX_CUSTOM_DATA_BYTES
  ) {
    throw invalidField('custom_data', `must be at most ${MAX_CUSTOM_DATA_BYTES} bytes serialised`);
  }
  // Hashing happens here, before the record exists: raw PII never reaches storage or logs.
  const userData = input.user_data === undefined ? null : hashUserData(input.user_data);
  return {
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
  };
}

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
  const warning = eventNameWarning(event.eventName);
  if (warning) response.warnings = [warning];
  return response;
}

export async function trackEvent({
  ctx,
  input,
}: {
  ctx: Context;
  input: TrackEventInput;
}): Promise<TrackEventResponse> {
  const event = prepareEvent(ctx.account.id, input, ctx.clock.now());
  assertTrackable(await ctx.store.pixels.getPixel(ctx.account.id, event.pixelId), event.pixelId);
  const outcome = await ctx.store.events.insertEvent(event, [eventTracked(event)]);
  return trackResponse(event, outcome);
}
