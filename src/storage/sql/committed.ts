/**
 * What one transaction committed, collected by the runner as it runs (sql/query.ts `emit` and
 * `note` steps, and the adapters' own hot paths through `Runner.own`) and announced only after
 * its COMMIT: the workers' wake-ups, the metrics' event counts. The one place a write tells
 * the rest of the process about itself, so no port method and no caller can forget to.
 */
import type { CommitNotifier } from '../../domain/ports/commit-notifier.ts';
import type { InsertOutcome } from '../../domain/ports/event-store.ts';

/** What one commit of events queued for the workers (the event stores' own insert says). */
export interface QueuedWork {
  webhookMessages: boolean;
  forwardingJobs: boolean;
}

/**
 * What a commit of events did, as the event stores' own insert reports it: how many were
 * stored and already there, and whether it queued work. A worker is woken only when the
 * commit gave it work: a look costs a query or two, which on a busy ingest path with no
 * endpoint or destination would be all cost and no work.
 */
export function eventsCommitted(outcomes: readonly InsertOutcome[], queued: QueuedWork): Note {
  let stored = 0;
  for (const outcome of outcomes) if (outcome !== 'duplicate') stored += 1;
  return {
    outbox: queued.webhookMessages,
    forwarding: queued.forwardingJobs,
    events: { stored, deduplicated: outcomes.length - stored },
  };
}

/** One fact a write reports about itself. */
export interface Note {
  /** Webhook messages were written, or a delivery put back in the queue. */
  outbox?: boolean;
  /** Forwarding jobs were written or put back in the queue (a destination resumed, too). */
  forwarding?: boolean;
  /** A replay was recorded. */
  replay?: boolean;
  /** Events stored, and found already stored. */
  events?: { stored: number; deduplicated: number };
  /** A pixel changed. */
  pixel?: { accountId: string; pixelId: string };
}

/** The facts of one transaction; a transaction run again starts a new one. */
export class Committed {
  private outbox = false;
  private forwarding = false;
  private replay = false;
  private stored = 0;
  private deduplicated = 0;
  private readonly pixels: Array<{ accountId: string; pixelId: string }> = [];

  readonly note = (fact: Note): void => {
    if (fact.outbox) this.outbox = true;
    if (fact.forwarding) this.forwarding = true;
    if (fact.replay) this.replay = true;
    if (fact.events) {
      this.stored += fact.events.stored;
      this.deduplicated += fact.events.deduplicated;
    }
    if (fact.pixel) this.pixels.push(fact.pixel);
  };

  /** Tells `notifier`; called once the transaction has committed. */
  announce(notifier: CommitNotifier | undefined): void {
    if (!notifier) return;
    if (this.stored > 0 || this.deduplicated > 0) {
      notifier.eventsStored({ stored: this.stored, deduplicated: this.deduplicated });
    }
    if (this.outbox) notifier.outboxWritten();
    if (this.forwarding) notifier.forwardingQueued();
    if (this.replay) notifier.replayAccepted();
    for (const { accountId, pixelId } of this.pixels) notifier.pixelChanged(accountId, pixelId);
  }
}
