/**
 * The process's one CommitNotifier: the store is handed it when opened, and whoever cares
 * (the delivery worker, the metrics) listens. Listeners run synchronously after the commit and
 * must be cheap (the worker's wake only schedules a look for work).
 */
import type { CommitNotifier, StoredCounts } from './ports/commit-notifier.ts';

export class CommitSignal implements CommitNotifier {
  private readonly outbox: Array<() => void> = [];
  private readonly events: Array<(counts: StoredCounts) => void> = [];
  private readonly forwarding: Array<() => void> = [];
  private readonly replays: Array<() => void> = [];
  private readonly pixels: Array<(accountId: string, pixelId: string) => void> = [];

  onPixelChanged(listener: (accountId: string, pixelId: string) => void): void {
    this.pixels.push(listener);
  }

  pixelChanged(accountId: string, pixelId: string): void {
    for (const listener of this.pixels) listener(accountId, pixelId);
  }

  onReplayAccepted(listener: () => void): void {
    this.replays.push(listener);
  }

  replayAccepted(): void {
    for (const listener of this.replays) listener();
  }

  onForwardingQueued(listener: () => void): void {
    this.forwarding.push(listener);
  }

  forwardingQueued(): void {
    for (const listener of this.forwarding) listener();
  }

  onOutboxWritten(listener: () => void): void {
    this.outbox.push(listener);
  }

  onEventsStored(listener: (counts: StoredCounts) => void): void {
    this.events.push(listener);
  }

  outboxWritten(): void {
    for (const listener of this.outbox) listener();
  }

  eventsStored(counts: StoredCounts): void {
    if (counts.stored === 0 && counts.deduplicated === 0) return;
    for (const listener of this.events) listener(counts);
  }
}
