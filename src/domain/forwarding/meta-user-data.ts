/**
 * Meta's `user_data` for one event, and Meta's rule on which sets of keys it refuses to match
 * on. Shared by the Conversions API payload and the match quality estimate.
 */
import type { ForwardableEvent } from './model.ts';
import type { MetaUserDataHashes } from './platform-user-data.ts';

export const META_HASHED_KEYS = [
  'em',
  'ph',
  'fn',
  'ln',
  'ct',
  'st',
  'zp',
  'country',
  'external_id',
] as const satisfies ReadonlyArray<keyof MetaUserDataHashes>;
export const META_RAW_KEYS = ['client_ip_address', 'client_user_agent', 'fbc', 'fbp'] as const;
export type MetaMatchKey = (typeof META_HASHED_KEYS)[number] | (typeof META_RAW_KEYS)[number];

/**
 * Meta, best practices §"Baseline requirements for matching": events whose user_data holds only
 * one of these sets of keys, or part of one, are rejected. (`ge` and `db` are not collected by
 * Trackway, so they never appear, but the sets are kept as Meta publishes them.)
 */
const INVALID_ALONE: ReadonlyArray<ReadonlySet<string>> = [
  new Set(['ct', 'country', 'st', 'zp', 'ge', 'client_user_agent']),
  new Set(['db', 'client_user_agent']),
  new Set(['fn', 'ge']),
  new Set(['ln', 'ge']),
];

/** Why Meta would refuse an event with exactly these keys, or null when it can match on them. */
export function metaKeysProblem(keys: ReadonlySet<MetaMatchKey>): string | null {
  if (keys.size === 0) return 'no customer information parameter Meta can match on';
  if (INVALID_ALONE.some((set) => [...keys].every((key) => set.has(key)))) {
    return `Meta refuses user_data holding only ${[...keys].sort().join(', ')}`;
  }
  return null;
}

/**
 * The event's `user_data` as Meta wants it: hashes as one-element lists (Meta takes "string or
 * list<string>"; the SDK sends lists), the four identifiers Meta must get unhashed as strings.
 */
export function metaUserData(
  forwardable: Pick<ForwardableEvent, 'hashes' | 'matchKeys'>,
): Record<string, string | string[]> {
  const userData: Record<string, string | string[]> = {};
  for (const key of META_HASHED_KEYS) {
    const hash = forwardable.hashes.meta[key];
    if (hash !== undefined) userData[key] = [hash];
  }
  const raw = forwardable.matchKeys;
  if (raw?.clientIpAddress !== undefined) userData['client_ip_address'] = raw.clientIpAddress;
  if (raw?.clientUserAgent !== undefined) userData['client_user_agent'] = raw.clientUserAgent;
  if (raw?.fbc !== undefined) userData['fbc'] = raw.fbc;
  if (raw?.fbp !== undefined) userData['fbp'] = raw.fbp;
  return userData;
}

export function metaKeysOf(userData: Record<string, unknown>): Set<MetaMatchKey> {
  return new Set(Object.keys(userData) as MetaMatchKey[]);
}
