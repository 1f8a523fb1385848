/** Forwarding to ad platforms (contract §12). */

import type { Destination } from '../forwarding/model.ts';
import type { WebhookEvent } from '../model.ts';

/** Where one (event, destination) job stands. */
export type ForwardStatus = 'pending' | 'forwarded' | 'failed' | 'skipped';

/** One (event, destination) job a worker claimed. */
export interface ClaimedJob {
  pixelId: string;
  eventId: string;
  /** Requests that carried it so far. */
  attempts: number;
  createdAt: Date;
  /** The store's own handle on the job's row (SQLite: its rowid), handed back to `settle`. */
  ref?: number;
}

export interface ClaimedBatch {
  destination: Destination;
  jobs: ClaimedJob[];
}

/** One request that carried the event: a row of the attempt ledger. */
export interface ForwardAttempt {
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  /** The first 1 KB of the answer (or the network error). */
  platformResponse: string;
  /**
   * What the request left out of this event to fit the platform's rules (GA4's dropped or
   * truncated params), or null: the ledger says what the platform never received.
   */
  note: string | null;
}

/** How one claimed job ended this round. */
export interface JobOutcome {
  pixelId: string;
  eventId: string;
  /** The claimed job's `ref`. */
  ref?: number;
  status: ForwardStatus;
  reason: string | null;
  lastError: string | null;
  forwardedAt: Date | null;
  /** For `pending`: when to try again. */
  nextAttemptAt: Date | null;
  attempts: ForwardAttempt[];
}

export interface ForwardingEntry {
  destinationId: string;
  platform: string;
  status: ForwardStatus;
  attempts: number;
  reason: string | null;
  lastError: string | null;
  forwardedAt: Date | null;
  /** Only when asked for (the single-event read). */
  attemptLog?: ForwardAttempt[];
}

/** Queue depth and oldest pending job of one destination (for the metrics). */
export interface DestinationBacklog {
  destinationId: string;
  platform: string;
  pending: number;
  oldestCreatedAt: Date | null;
}

/** What a forwarding claim asks for (see ForwardingStore.claim). */
export interface ForwardClaim {
  now: Date;
  take: (destination: Destination) => number;
  busy: readonly string[];
  leaseMs: number;
  owner: string;
  only?: string;
}

/** One batch's outcomes, settled in one transaction with the destination's state and messages. */
export interface ForwardSettlement {
  destination: Destination;
  owner: string;
  outcomes: JobOutcome[];
  state: { state: Destination['state']; lastError: string | null } | null;
  emit: WebhookEvent[];
}

export interface ForwardingStore {
  /**
   * Leases up to `take` due jobs of each active destination (enabled, not suspended) not in
   * `busy`, oldest due first; a lease is exclusive across workers until it ends. `only`:
   * that destination alone (still only if it is active), as it is stored now.
   */
  claim(options: ForwardClaim): Promise<ClaimedBatch[]>;
  /**
   * Records the outcomes, the ledger rows, the destination's new state and the webhook
   * messages they cause, in one transaction; outcomes of jobs whose lease `owner` lost are
   * dropped (another worker holds them now).
   */
  settle(options: ForwardSettlement): Promise<void>;
  /** The earliest time a job of an active destination is due. */
  nextDueAt(): Promise<Date | null>;
  /** Each event's entries (`withLog`: with the attempt ledger), by event id. */
  eventForwarding(
    accountId: string,
    pixelId: string,
    eventIds: string[],
    withLog: boolean,
  ): Promise<Map<string, ForwardingEntry[]>>;
  /**
   * Records a replay of the destination's events with `timestamp` in [from, to] and answers
   * how many it will queue: those whose job has one of `statuses` and is not being sent (not
   * leased), and those with no job that the destination's filter takes. Counted in pages, each
   * its own short read; nothing is queued yet: `advanceReplay` does it in the background.
   */
  replay(options: ReplayRequest): Promise<number>;
  /** Leases the oldest unfinished replay nobody holds (a dead holder's lease runs out). */
  claimReplay(options: {
    owner: string;
    now: Date;
    leaseMs: number;
  }): Promise<ClaimedReplay | null>;
  /**
   * Queues the next chunk of a leased replay in one short transaction that also moves its
   * cursor (due `now`; a job being sent is left alone) and renews the lease. `null`: the lease
   * was lost (nothing written). A destination deleted or switched off ends its replays.
   */
  advanceReplay(options: {
    replay: ClaimedReplay;
    owner: string;
    now: Date;
    leaseMs: number;
  }): Promise<{ queued: number; done: boolean } | null>;
  backlog(): Promise<DestinationBacklog[]>;
}

export interface ReplayRequest {
  accountId: string;
  pixelId: string;
  destinationId: string;
  from: Date;
  to: Date;
  statuses: ForwardStatus[];
  now: Date;
}

/** A replay a worker holds the lease of. */
export interface ClaimedReplay {
  accountId: string;
  id: string;
}
