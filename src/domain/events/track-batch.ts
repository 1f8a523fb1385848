import { visitorOf } from '../collect/stitching.ts';
import { type Context, trackingLookup } from '../context.ts';
import { TrackwayError } from '../errors.ts';
import type { Pixel, TrackedEvent } from '../model.ts';
import type { TrackEventResponse } from './schemas.ts';
import { assertTrackable, eventTracked, prepareEvent, trackResponse } from './track-event.ts';

/** What happened to one event of a batch, in its slot. */
export type BatchOutcome =
  | { ok: true; response: TrackEventResponse }
  /** `cause` is the storage failure behind an `internal` error, for the log only. */
  | { ok: false; error: TrackwayError; cause?: unknown };

/**
 * Tracks many events in one request and one commit. Each event goes through the same checks,
 * in the same order, as `trackEvent` (schema, then time and size bounds, then its pixel), and a
 * failure is reported in that event's slot instead of failing the others. The events that pass
 * are stored in one transaction with their `event.tracked` messages; within the batch the first
 * of equal `event_id`s wins, as if it had been sent first on its own.
 */
export async function trackEvents({
  ctx,
  inputs,
}: {
  ctx: Context;
  inputs: unknown[];
}): Promise<BatchOutcome[]> {
  const receivedAt = ctx.clock.now();
  const outcomes = new Array<BatchOutcome>(inputs.length);
  // A batch usually targets one or a few pixels: look each up once.
  const pixels = new Map<string, Promise<Pixel | null>>();
  const lookup = trackingLookup(ctx);
  const valid: Array<{ index: number; event: TrackedEvent }> = [];
  for (const [index, input] of inputs.entries()) {
    try {
      // The very checks POST /v1/track runs, so an event fails here exactly as it would alone.
      const visitor = await visitorOf(ctx, input, receivedAt);
      const event = prepareEvent(ctx.account.id, input, receivedAt, visitor);
      let pixel = pixels.get(event.pixelId);
      if (!pixel) {
        pixel = lookup(ctx.account.id, event.pixelId);
        pixels.set(event.pixelId, pixel);
      }
      assertTrackable(await pixel, event.pixelId);
      valid.push({ index, event });
    } catch (error) {
      // Anything but a rule violation (storage down, a bug) fails the request as a whole.
      if (!(error instanceof TrackwayError)) throw error;
      outcomes[index] = { ok: false, error };
    }
  }
  const stored = await ctx.store.events.insertEvents(
    valid.map(({ event }) => ({ event, emit: [eventTracked(event)] })),
  );
  // Storage away for every event of the batch: the whole request is a 503, which clients
  // resend as a whole (the event ids make that safe), not a 200 full of failed slots.
  const unavailable = stored.find((r) => r.status === 'rejected' && isUnavailable(r.reason));
  if (unavailable && stored.every((r) => r.status === 'rejected')) {
    throw (unavailable as PromiseRejectedResult).reason;
  }
  for (const [k, result] of stored.entries()) {
    const { index, event } = valid[k]!;
    if (result.status === 'fulfilled' && event.dropped) ctx.droppedValues?.(event.dropped);
    outcomes[index] =
      result.status === 'fulfilled'
        ? { ok: true, response: trackResponse(event, result.value) }
        : isUnavailable(result.reason)
          ? // Storage away for this event only (it was retried on its own): 503 in its slot.
            { ok: false, error: result.reason }
          : {
              ok: false,
              error: new TrackwayError('internal', 'An unexpected error occurred'),
              cause: result.reason,
            };
  }
  return outcomes;
}

function isUnavailable(reason: unknown): reason is TrackwayError {
  return reason instanceof TrackwayError && reason.code === 'service_unavailable';
}
