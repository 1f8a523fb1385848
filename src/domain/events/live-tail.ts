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
import type { ForwardingEntry } from '../ports/forwarding-store.ts';
import type { Store } from '../ports/store.ts';

/** Most events replayed after a reconnection; older ones are in the events list. */
export const MAX_REPLAY = 1_000;

/** What every stream of a pixel receives for one commit: read once, shared by all. */
export interface TailBatch {
  events: SequencedEvent[];
  forwarding: Map<string, ForwardingEntry[]>;
}

type TailListener = (batch: TailBatch) => void;

interface PixelTail {
  listeners: Set<TailListener>;
  /** Resolves once the store's subscription is live, with the function that ends it. */
  subscribed: Promise<() => void>;
  /** One read at a time, so batches go out in the order their commits were announced. */
  queue: Promise<void>;
}

/**
 * One subscription and one read per commit for each pixel followed in this process, whatever
 * the number of its open streams (contract §21): 2,000 streams each reading every commit for
 * themselves took SQLite ingest p50 from 14.5 to 355 ms (issue 30).
 */
export class LiveTailHub {
  private readonly tails = new Map<string, PixelTail>();

  constructor(
    private readonly store: Pick<Store, 'feed' | 'forwarding'>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Pixels with a subscription here (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }

  /** Hears every later commit's events of the pixel; resolves once the subscription is live. */
  async join(accountId: string, pixelId: string, listener: TailListener): Promise<() => void> {
    const key = `${accountId}\u0000${pixelId}`;
    let tail = this.tails.get(key);
    if (!tail) {
      const created: PixelTail = {
        listeners: new Set(),
        subscribed: Promise.resolve(() => {}),
        queue: Promise.resolve(),
      };
      created.subscribed = this.store.feed.subscribe(pixelId, (seqs) =>
        this.read(created, accountId, pixelId, seqs),
      );
      this.tails.set(key, created);
      tail = created;
    }
    const joined = tail;
    joined.listeners.add(listener);
    try {
      await joined.subscribed;
    } catch (error) {
      this.leave(key, joined, listener);
      throw error;
    }
    return () => this.leave(key, joined, listener);
  }

  private leave(key: string, tail: PixelTail, listener: TailListener): void {
    if (!tail.listeners.delete(listener) || tail.listeners.size > 0) return;
    if (this.tails.get(key) === tail) this.tails.delete(key);
    tail.subscribed.then(
      (unsubscribe) => unsubscribe(),
      () => {},
    );
  }

  private read(tail: PixelTail, accountId: string, pixelId: string, seqs: number[]): void {
    tail.queue = tail.queue
      .then(async () => {
        if (tail.listeners.size === 0) return;
        const events = await this.store.feed.eventsBySeq(accountId, pixelId, seqs);
        if (events.length === 0 || tail.listeners.size === 0) return;
        const forwarding = await this.store.forwarding.eventForwarding(
          accountId,
          pixelId,
          events.map((e) => e.event.eventId),
          false,
        );
        const batch = { events, forwarding };
        for (const listener of [...tail.listeners]) listener(batch);
      })
      .catch(this.onError);
  }
}

export async function followEvents({
  ctx,
  hub,
  pixelId,
  afterSeq,
  send,
  onError,
}: {
  ctx: Context;
  hub: LiveTailHub;
  pixelId: string;
  afterSeq: number | null;
  /** Each event with its forwarding entries (by event id), read with the events. */
  send: (batch: TailBatch) => void;
  onError: (error: unknown) => void;
}): Promise<() => void> {
  const pixel = await ctx.store.pixels.getPixel(ctx.account.id, pixelId);
  if (!pixel) throw pixelNotFound(pixelId);
  const replayed = new Set<number>();
  // This stream's order: the events missed before it (Last-Event-ID), then the live ones.
  let queue: Promise<void> = Promise.resolve();
  let stopped = false;
  const leave = await hub.join(ctx.account.id, pixelId, (batch) => {
    queue = queue
      .then(() => {
        if (stopped) return;
        if (replayed.size === 0) return send(batch);
        const events = batch.events.filter((e) => !replayed.has(e.seq));
        if (events.length > 0) send({ events, forwarding: batch.forwarding });
      })
      .catch(onError);
  });
  if (afterSeq !== null) {
    queue = queue
      .then(async () => {
        const missed = await ctx.store.feed.eventsAfter(
          ctx.account.id,
          pixelId,
          afterSeq,
          MAX_REPLAY,
        );
        for (const e of missed) replayed.add(e.seq);
        if (stopped || missed.length === 0) return;
        const forwarding = await forwardingOf(
          ctx,
          pixelId,
          missed.map((e) => e.event),
        );
        if (!stopped) send({ events: missed, forwarding });
      })
      .catch(onError);
  }
  return () => {
    stopped = true;
    leave();
  };
}
