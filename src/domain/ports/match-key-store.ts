/** Match keys and match quality (contract §11, §12). */

import type { ForwardableEvent } from '../forwarding/model.ts';
import type { Platform } from '../forwarding/platforms/registry.ts';
import type { VisitorKeys } from '../model.ts';

/** What the forwarding engine reads an event to send with. */
export interface ForwardingSource {
  /**
   * The account's events of the pixel with these ids, in the order asked (ids not stored are
   * left out), each with its action_source, every platform's hashes, and its raw match keys
   * and unhashed location, or null once erased (7 days after the event's timestamp). With
   * `platform`, only what that platform's payload reads: the other platforms' hashes are
   * empty, and Meta's events carry no location (the worker reads 1,000 events a batch).
   */
  forwardable(
    accountId: string,
    pixelId: string,
    eventIds: string[],
    platform?: Platform,
  ): Promise<ForwardableEvent[]>;
}

/**
 * The raw match keys kept apart from the records (event_match_keys). They are written by the
 * event insert, in its transaction; an event's erasure or purge deletes them with it.
 */
export interface MatchKeyStore extends ForwardingSource {
  /**
   * Deletes at most `limit` rows of raw keys whose expiry is at or before `now` (events' raw
   * keys, then visitors' identities); how many.
   */
  eraseExpired(now: Date, limit: number): Promise<number>;
  /** A visitor's latest browser identifiers, raw, while kept (until 7 days after the last hit). */
  visitorKeys(
    accountId: string,
    pixelId: string,
    anonymousId: string,
    now: Date,
  ): Promise<VisitorKeys | null>;
  /** When a visitor of the pixel last sent a browser event (while kept), or null. */
  lastBrowserHit(accountId: string, pixelId: string): Promise<Date | null>;
  /**
   * The mean match quality score of the pixel's events timestamped in hour `fromHour` (hours
   * since the epoch) or later, from the hourly rollup; null when none was scored.
   */
  averageMatchQuality(accountId: string, pixelId: string, fromHour: number): Promise<number | null>;
}
