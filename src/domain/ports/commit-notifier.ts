/** How many events one commit stored, and how many it found already stored. */
export interface StoredCounts {
  stored: number;
  deduplicated: number;
}

/**
 * What a store announces once a write has committed: the one place the delivery worker and
 * the metrics learn of writes, so no caller (a route, the CLI) has to remember to tell them.
 */
export interface CommitNotifier {
  /** Webhook messages were committed, or a delivery put back in the queue: work is due now. */
  outboxWritten(): void;
  /** Events were committed (`insertEvent`, `insertEvents`). */
  eventsStored(counts: StoredCounts): void;
  /**
   * Forwarding jobs may have been committed or put back in the queue (events stored, a
   * destination resumed, a replay): the forwarding worker looks for due work.
   */
  forwardingQueued(): void;
  /** A replay was recorded: a forwarding worker starts queueing its events. */
  replayAccepted(): void;
  /** A pixel was changed: a copy kept of it (the track path's pixel cache) is stale. */
  pixelChanged(accountId: string, pixelId: string): void;
}
