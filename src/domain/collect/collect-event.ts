import type { Context } from '../context.ts';
import { assertTrackable, eventTracked, prepareEvent } from '../events/track-event.ts';
import type { Pixel } from '../model.ts';
import type { InsertOutcome } from '../ports/event-store.ts';
import { type BrowserEvent, type BrowserFacts, browserEvent } from './browser-event.ts';
import type { CollectInput } from './schemas.ts';

/**
 * Stores one browser event through the server path itself: the same validation and hashing
 * (prepareEvent), the same durable commit with its deduplication, `event.tracked` webhook and
 * forwarding jobs (insertEvent). Only where it came from differs: `source: "browser"`.
 */
export async function collectEvent({
  ctx,
  pixel,
  input,
  facts,
}: {
  ctx: Context;
  pixel: Pixel;
  input: CollectInput;
  facts: BrowserFacts;
}): Promise<{ eventId: string; outcome: InsertOutcome; browser: BrowserEvent }> {
  assertTrackable(pixel, pixel.id);
  const browser = browserEvent(pixel.id, input, facts);
  const event = prepareEvent(ctx.account.id, browser.track, facts.now);
  event.source = 'browser';
  event.anonymousId = input.anonymous_id;
  if (browser.visitor) event.visitor = browser.visitor;
  const outcome = await ctx.store.events.insertEvent(event, [eventTracked(event)]);
  return { eventId: event.eventId, outcome, browser };
}
