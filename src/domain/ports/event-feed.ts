/** The live tail (contract §13). */

import type { SequencedEvent } from '../model.ts';

/**
 * What the store announces after it committed new events: every instance hears of events any
 * instance stored (PostgreSQL: LISTEN/NOTIFY; SQLite: one process, an in-process bus).
 */
export interface EventFeed {
  /**
   * Calls `listener` with the arrival numbers of each commit's new events of the pixel. The
   * promise resolves once the subscription is live; the function it gives ends it.
   */
  subscribe(pixelId: string, listener: (seqs: number[]) => void): Promise<() => void>;
  /** The pixel's events with these arrival numbers, in arrival order. */
  eventsBySeq(accountId: string, pixelId: string, seqs: number[]): Promise<SequencedEvent[]>;
  /** The pixel's events that arrived after `afterSeq`, oldest first, at most `limit`. */
  eventsAfter(
    accountId: string,
    pixelId: string,
    afterSeq: number,
    limit: number,
  ): Promise<SequencedEvent[]>;
  close(): Promise<void>;
}
