/**
 * What the event insert writes for contract §11 beside the record's own columns, computed once
 * for both adapters' hand-written insert SQL: the columns kept with the event (action_source,
 * the platforms' own hashes, the match quality) and, when the event carried any, the row of raw
 * match keys kept apart in event_match_keys until `expiresAtMs`.
 */
import { DEFAULT_ACTION_SOURCE, RAW_MATCH_KEYS_TTL_MS } from '../domain/forwarding/match-keys.ts';
import { matchQualityOfRecord } from '../domain/forwarding/match-quality.ts';
import { storedHashes } from '../domain/forwarding/platform-user-data.ts';
import type { TrackedEvent } from '../domain/model.ts';
import { diagFlags } from '../domain/stats/diagnostics.ts';
import { encodePlatformHashes } from './platform-hashes.ts';

export interface MatchColumns {
  actionSource: string;
  /** `server` or `browser`. */
  source: string;
  anonymousId: string | null;
  /**
   * The visitor_identities row a browser event writes (its keys as JSON, kept until 7 days
   * after the event arrived), or null.
   */
  visitor: { keys: string; expiresAtMs: number } | null;
  /**
   * The platforms' own hashes in the row's compact form (platform-hashes.ts): a platform whose
   * hashes are the record's own user_data (Meta) is not stored at all.
   */
  platformHashes: string | null;
  matchQuality: string;
  /** JSON array of the user_data paths left out (contract §19), or null when none was. */
  dropped: string | null;
  /** The score, for the hourly rollup's `match_sum`. */
  score: number;
  /** The bits of DIAG_FLAGS the diagnostics rollup counts (migration 025). */
  diagFlags: number;
  /** The event_match_keys row, or null when the event carried no raw key and no location. */
  raw: { expiresAtMs: number; matchKeys: string | null; location: string | null } | null;
}

export function matchColumns(event: TrackedEvent): MatchColumns {
  const ingested = event.ingested;
  const quality = event.matchQuality ?? matchQualityOfRecord(event.userData);
  const hashes = ingested?.hashes ?? null;
  const matchKeys = ingested?.matchKeys ?? null;
  const location = ingested?.location ?? null;
  return {
    actionSource: event.actionSource ?? DEFAULT_ACTION_SOURCE,
    source: event.source ?? 'server',
    anonymousId: event.anonymousId ?? null,
    visitor:
      event.visitor && event.anonymousId
        ? {
            keys: JSON.stringify(event.visitor),
            expiresAtMs: event.receivedAt.getTime() + RAW_MATCH_KEYS_TTL_MS,
          }
        : null,
    platformHashes:
      hashes === null ? null : encodePlatformHashes(storedHashes(hashes), event.userData),
    matchQuality: qualityJson(quality),
    dropped: event.dropped?.length ? JSON.stringify(event.dropped) : null,
    score: quality.score,
    diagFlags: diagFlags(event.matchQuality ? event : { ...event, matchQuality: quality }),
    raw:
      matchKeys === null && location === null
        ? null
        : {
            expiresAtMs: event.timestamp.getTime() + RAW_MATCH_KEYS_TTL_MS,
            matchKeys: matchKeys === null ? null : JSON.stringify(matchKeys),
            location: location === null ? null : JSON.stringify(location),
          },
  };
}

/**
 * The estimate is one shared, frozen object per combination of keys present (match-quality.ts),
 * so its JSON is made once per combination instead of once per event. Only frozen objects are
 * remembered: one that could still change would be written as it was when first seen.
 */
const QUALITY_JSON = new WeakMap<object, string>();

function qualityJson(quality: object): string {
  let text = QUALITY_JSON.get(quality);
  if (text === undefined) {
    text = JSON.stringify(quality);
    if (Object.isFrozen(quality)) QUALITY_JSON.set(quality, text);
  }
  return text;
}
