/**
 * The live tail: each newly stored event of a pixel, as the store announces its commits
 * (ports.ts EventFeed), in order per announcement. With `afterSeq` (the SSE `Last-Event-ID`)
 * the events stored since are sent first; the subscription is made before that read, so an
 * event committed in between is heard, and sent once.
 */
import type { Context } from '../context.ts';
import { pixelNotFound } from '../errors.ts';
import { forwardingOf } from '../forwarding/forwarding-record.ts';
import type { SequencedEvent } from '../model.ts';
import type { ForwardingEntry } from '../ports.ts';

/** Most events replayed after a reconnection; older ones are in the events list. */
export const MAX_REPLAY = 1_000;

export async function followEvents({
  ctx,
  pixelId,
  afterSeq,
  send,
  onError,
}: {
  ctx: Context;
  pixelId: string;
  afterSeq: number | null;
  /** Each event with its forwarding entries (by event id), read with the events. */
  send: (events: SequencedEvent[], forwarding: Map<string, ForwardingEntry[]>) => void;
  onError: (error: unknown) => void;
}): Promise<() => void> {
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  const feed = ctx.store.feed;
  const replayed = new Set<number>();
  // One read at a time, so events go out in the order their commits were announced.
  let queue: Promise<void> = Promise.resolve();
  let stopped = false;
  const deliver = (read: () => Promise<SequencedEvent[]>) => {
    queue = queue
      .then(async () => {
        if (stopped) return;
        const events = (await read()).filter((e) => !replayed.has(e.seq));
        if (stopped || events.length === 0) return;
        const forwarding = await forwardingOf(
          ctx,
          pixelId,
          events.map((e) => e.event),
        );
        if (!stopped) send(events, forwarding);
      })
      .catch(onError);
  };
  const unsubscribe = await feed.subscribe(pixelId, (seqs) =>
    deliver(() => feed.eventsBySeq(ctx.account.id, pixelId, seqs)),
  );
  if (afterSeq !== null) {
    queue = queue
      .then(async () => {
        const missed = await feed.eventsAfter(ctx.account.id, pixelId, afterSeq, MAX_REPLAY);
        for (const e of missed) replayed.add(e.seq);
        if (stopped || missed.length === 0) return;
        const forwarding = await forwardingOf(
          ctx,
          pixelId,
          missed.map((e) => e.event),
        );
        if (!stopped) send(missed, forwarding);
      })
      .catch(onError);
  }
  return () => {
    stopped = true;
    unsubscribe();
  };
}
