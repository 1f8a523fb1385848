/** Data lifecycle: erasure, export, retention (contract §15). */

import type { TrackedEvent } from '../model.ts';

/** The match keys a person can be erased by, as stored: SHA-256 hex of the normalised value. */
export type PersonKeys = Partial<Record<'email' | 'phone' | 'external_id', string>>;

/** Where an export page starts: after this event in (timestamp, arrival) order. */
export interface ExportCursor {
  timestamp: Date;
  seq: number;
}

export interface ExportQuery {
  accountId: string;
  pixelId: string;
  /** Inclusive bounds on `timestamp`. */
  from?: Date;
  to?: Date;
  after: ExportCursor | null;
  limit: number;
}

/** The events an erasure deletes (LifecycleStore.erasePerson). */
export interface PersonErasure {
  accountId: string;
  pixelIds: string[] | null;
  keys: PersonKeys;
  afterSeq: number;
  throughSeq: number;
}

/**
 * Deleting and reading events in bulk. Every delete removes the rows and takes them off the
 * per-bucket counts (event-totals.ts) in the same transaction, so `total` and the stats never
 * count a deleted event; each call is one short transaction, so ingest waits at most one batch.
 */
export interface LifecycleStore {
  /** The account's highest arrival number (0 when none): where an erasure's scan ends. */
  lastSeq(accountId: string): Promise<number>;
  /**
   * Deletes the account's events of `pixelIds` (every pixel of the account when `null`) with
   * arrival number in (afterSeq, throughSeq] whose user_data holds any of `keys`; how many.
   */
  erasePerson(options: PersonErasure): Promise<number>;
  /** One page of the pixel's events, oldest first (`timestamp`, then arrival), after the cursor. */
  exportPage(query: ExportQuery): Promise<{ events: TrackedEvent[]; next: ExportCursor | null }>;
  /** Deletes at most `limit` of the pixel's events with `timestamp` before `before`; how many. */
  purgeBatch(accountId: string, pixelId: string, before: Date, limit: number): Promise<number>;
  /** The account's own retention in days (enterprise), `null` when none is set. */
  retentionDays(accountId: string): Promise<number | null>;
  setRetentionDays(accountId: string, days: number): Promise<void>;
}
