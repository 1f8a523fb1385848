/**
 * `match_quality` (contract §12, issue 18): a LOCAL ESTIMATE, 0–10, of how well an event can
 * be matched to a person, from the match keys it carries. It is not Meta's Event Match Quality:
 * Meta computes that over 48 hours of events from the keys received, their quality and the
 * share of events actually matched, by a formula it does not publish. This estimate only
 * follows what Meta does publish:
 * - the priority tiers of its EMQ help page (high: email, fbc; medium: phone, external_id,
 *   fbp, country; low: first and last name, city, state, zip), with the IP address and user
 *   agent as the floor every website event should reach (best practices: "high-quality" keys
 *   include client_ip_address);
 * - the invalid combinations of its best practices (user_data holding only location keys and
 *   the user agent, for example, is rejected): such an event scores 0.
 * Weights sum to 10, so an event with every key scores 10. It is computed at ingestion, while
 * the raw match keys exist (they are erased after 7 days).
 */

import type { Consent } from '../consent.ts';
import type { MatchQuality } from '../model.ts';
import type { RawMatchKeys } from './match-keys.ts';
import type { ForwardableEvent } from './model.ts';
import { meta as metaPlatform } from './platforms/meta/index.ts';
import {
  type ClickSource,
  fbcFromUrl,
  type MetaMatchKey,
  metaHashesOfRecord,
  metaKeysOf,
  metaKeysProblem,
  metaUserData,
} from './platforms/meta/user-data.ts';

export type { MatchQuality };

/** Trackway's names of the keys, with Meta's, highest weight first. */
const WEIGHTS: ReadonlyArray<{ key: string; meta: MetaMatchKey; weight: number }> = [
  { key: 'email', meta: 'em', weight: 2.5 },
  { key: 'fbc', meta: 'fbc', weight: 1.5 },
  { key: 'phone', meta: 'ph', weight: 1.5 },
  { key: 'external_id', meta: 'external_id', weight: 1 },
  { key: 'fbp', meta: 'fbp', weight: 1 },
  { key: 'client_ip_address', meta: 'client_ip_address', weight: 0.75 },
  { key: 'client_user_agent', meta: 'client_user_agent', weight: 0.75 },
  { key: 'country', meta: 'country', weight: 0.5 },
  { key: 'first_name', meta: 'fn', weight: 0.1 },
  { key: 'last_name', meta: 'ln', weight: 0.1 },
  { key: 'city', meta: 'ct', weight: 0.1 },
  { key: 'state', meta: 'st', weight: 0.1 },
  { key: 'zip', meta: 'zp', weight: 0.1 },
];

/** Where each WEIGHTS entry is found in a forwardable event: a Meta hash or a raw match key. */
const RAW_FIELDS: Partial<Record<MetaMatchKey, keyof RawMatchKeys>> = {
  client_ip_address: 'clientIpAddress',
  client_user_agent: 'clientUserAgent',
  fbc: 'fbc',
  fbp: 'fbp',
};

/**
 * The estimate depends only on which of the 13 keys are present, so it is computed once per
 * combination (at most 2^13) and shared, frozen: every event with email, phone and country
 * gets the same object. Ingestion computes it for every event (issue 21).
 */
const BY_PRESENCE = new Map<number, MatchQuality>();

export function matchQuality(
  forwardable: Pick<ForwardableEvent, 'hashes' | 'matchKeys'> & {
    /** The page URL and time: an `fbclid` in the URL makes the `fbc` Meta is sent. */
    event?: ClickSource;
    consent?: Consent | null;
  },
): MatchQuality {
  const meta: Readonly<Record<string, string>> = forwardable.hashes[metaPlatform.type] ?? {};
  const raw = forwardable.matchKeys;
  const derivedFbc = raw?.fbc === undefined && forwardable.event && fbcFromUrl(forwardable.event);
  let presence = 0;
  for (let i = 0; i < WEIGHTS.length; i++) {
    const key = WEIGHTS[i]!.meta;
    const field = RAW_FIELDS[key];
    const value = field === undefined ? meta[key] : raw?.[field];
    if (value !== undefined || (key === 'fbc' && derivedFbc)) presence |= 1 << i;
  }
  // Consent to send user data denied: no platform is sent an identifier, nothing can match.
  const denied = forwardable.consent?.ad_user_data === 'denied';
  if (denied) presence |= 1 << WEIGHTS.length;
  let quality = BY_PRESENCE.get(presence);
  if (quality === undefined) {
    quality = estimate(metaKeysOf(metaUserData(forwardable)), denied);
    BY_PRESENCE.set(presence, quality);
  }
  return quality;
}

function estimate(present: ReadonlySet<MetaMatchKey>, denied: boolean): MatchQuality {
  const keys = WEIGHTS.filter((w) => present.has(w.meta));
  const missing = WEIGHTS.filter((w) => !present.has(w.meta)).map((w) => w.key);
  const rejected = denied || metaKeysProblem(present) !== null;
  const total = rejected ? 0 : keys.reduce((sum, w) => sum + w.weight, 0);
  return Object.freeze({
    score: Math.round(total * 10) / 10,
    keys: Object.freeze(keys.map((w) => w.key)),
    missing: Object.freeze(missing),
  }) as MatchQuality;
}

/**
 * The estimate for an event stored before match quality was computed at ingestion (migration
 * 010). Such an event predates the match keys, so its record's contact hashes are all it ever
 * had, and the estimate from them is the one ingestion would have made.
 */
export function matchQualityOfRecord(userData: Record<string, string> | null): MatchQuality {
  const meta = metaHashesOfRecord(userData) as Record<string, string>;
  return matchQuality({ hashes: { [metaPlatform.type]: meta }, matchKeys: null });
}
