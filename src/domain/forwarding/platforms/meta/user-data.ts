/**
 * Meta's `user_data` for one event, and Meta's rule on which sets of keys it refuses to match
 * on. Shared by the Conversions API payload and the match quality estimate.
 */
import type { HashedContact } from '../../../events/user-data.ts';
import type { ForwardableEvent } from '../platform.ts';

export interface MetaUserDataHashes {
  em?: string;
  ph?: string;
  fn?: string;
  ln?: string;
  ct?: string;
  st?: string;
  zp?: string;
  country?: string;
  external_id?: string;
}

/** Trackway's user_data fields → Meta's keys: Meta's hashes are exactly the record's own. */
const META_KEYS = {
  email: 'em',
  phone: 'ph',
  first_name: 'fn',
  last_name: 'ln',
  city: 'ct',
  state: 'st',
  zip: 'zp',
  country: 'country',
  external_id: 'external_id',
} as const;

/**
 * Meta's hashes of one event's contact data: Trackway's own record hashes
 * (src/domain/events/user-data.ts implements Meta's published rules), under Meta's key names.
 */
export function metaHashes(contact: HashedContact): MetaUserDataHashes {
  return metaHashesOfRecord(contact.hashes);
}

/**
 * Meta's hashes, read back from a stored record's `user_data`: they are the record's own hashes
 * under Meta's names, so the store keeps them once, in the record. The record's match-key
 * hashes (client_ip_address …) are not Meta's hashed keys and are left out.
 */
export function metaHashesOfRecord(
  userData: Readonly<Record<string, string | undefined>> | null,
): MetaUserDataHashes {
  const meta: MetaUserDataHashes = {};
  if (userData === null) return meta;
  for (const [field, key] of Object.entries(META_KEYS)) {
    const hash = userData[field];
    if (hash !== undefined) meta[key] = hash;
  }
  return meta;
}

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
  forwardable: Pick<ForwardableEvent, 'hashes' | 'matchKeys'> & { event?: ClickSource },
): Record<string, string | string[]> {
  const userData: Record<string, string | string[]> = {};
  const hashes: MetaUserDataHashes = forwardable.hashes['meta'] ?? {};
  for (const key of META_HASHED_KEYS) {
    const hash = hashes[key];
    if (hash !== undefined) userData[key] = [hash];
  }
  const raw = forwardable.matchKeys;
  if (raw?.clientIpAddress !== undefined) userData['client_ip_address'] = raw.clientIpAddress;
  if (raw?.clientUserAgent !== undefined) userData['client_user_agent'] = raw.clientUserAgent;
  const fbc = raw?.fbc ?? (forwardable.event ? fbcFromUrl(forwardable.event) : undefined);
  if (fbc !== undefined) userData['fbc'] = fbc;
  if (raw?.fbp !== undefined) userData['fbp'] = raw.fbp;
  return userData;
}

/** What an fbc can be made from: the landing page's URL and the event's time. */
export interface ClickSource {
  url: string | null;
  timestamp: Date;
}

/**
 * Meta's click id cookie made from an `fbclid` in the page URL, for an event that carries no
 * `fbc` (developers.facebook.com/docs/marketing-api/conversions-api/parameters/fbp-and-fbc:
 * `fb.1.<creation time in ms>.<fbclid>`, the fbclid unmodified: it is case-sensitive). The
 * creation time is the event's: the click that brought the visitor was no later.
 */
export function fbcFromUrl(source: ClickSource): string | undefined {
  const url = source.url;
  if (url === null || !url.includes('fbclid=')) return undefined;
  let fbclid: string | null;
  try {
    fbclid = new URL(url).searchParams.get('fbclid');
  } catch {
    return undefined;
  }
  return fbclid ? `fb.1.${source.timestamp.getTime()}.${fbclid}` : undefined;
}

export function metaKeysOf(userData: Record<string, unknown>): Set<MetaMatchKey> {
  return new Set(Object.keys(userData) as MetaMatchKey[]);
}
