/**
 * Each platform's own normalisation and hashing of the caller's contact data, computed once at
 * ingestion from the raw values (contract §11), so that raw contact data is never stored.
 *
 * - Meta: exactly Trackway's own record hashes (src/domain/events/user-data.ts implements
 *   Meta's published rules), under Meta's key names.
 * - GA4 (Measurement Protocol `user_data`): email trimmed, lower-cased, and for gmail.com /
 *   googlemail.com without the dots of the local part; phone in E.164 with its `+`; first and
 *   last names without digits or symbols; city, region and country sent unhashed.
 * - TikTok: email, phone (`+digits`), external_id, names and zip hashed; city, state and country
 *   normalised but not hashed.
 *
 * The unhashed coarse values are returned apart (`location`): they belong with the raw match
 * keys, under the same 7-day rule (§11). A value the caller sent already hashed (64 lowercase hex
 * characters) cannot be normalised again: it is passed on as it is to every platform's hashed
 * fields, and left out of the unhashed ones.
 */
import {
  type HashedContact,
  hashContact,
  isSha256Hex,
  normaliseUserDataField,
  type UserData,
} from '../events/user-data.ts';

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

export interface Ga4UserDataHashes {
  sha256_email_address?: string;
  sha256_phone_number?: string;
  sha256_first_name?: string;
  sha256_last_name?: string;
  /** GA4's `user_id`: the hash of external_id (never the raw id, which may be PII). */
  user_id?: string;
}

export interface TiktokUserDataHashes {
  email?: string;
  phone?: string;
  external_id?: string;
  first_name?: string;
  last_name?: string;
  zip_code?: string;
}

/** Stored with the event for as long as the event (hashes only). */
export interface PlatformHashes {
  meta: MetaUserDataHashes;
  ga4: Ga4UserDataHashes;
  tiktok: TiktokUserDataHashes;
}

/** Coarse location some platforms want unhashed: kept with the raw match keys, ≤ 7 days. */
export interface PlatformLocation {
  ga4: { city?: string; region?: string; country?: string };
  tiktok: { city?: string; state?: string; country?: string };
}

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

const META_ENTRIES = Object.entries(META_KEYS) as Array<
  [keyof typeof META_KEYS, (typeof META_KEYS)[keyof typeof META_KEYS]]
>;

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);
const DIGITS_AND_SYMBOLS = /[\p{N}\p{P}\p{S}]/gu;
const PUNCTUATION_AND_SYMBOLS = /[\p{P}\p{S}]/gu;

/** Google: "remove all periods (.) that precede the domain name in gmail.com and googlemail.com". */
export function normaliseGa4Email(raw: string): string {
  return ga4Email(normaliseUserDataField('email', raw, {}));
}

/** E.164 with its `+` (GA4 and TikTok), from Trackway's own validated digits. */
export function normaliseE164(raw: string): string {
  return `+${normaliseUserDataField('phone', raw, {})}`;
}

/** GA4 names, city and region: digits and symbols removed, lower-cased, trimmed. */
function ga4Text(raw: string): string {
  return raw.toLowerCase().replace(DIGITS_AND_SYMBOLS, '').replace(/\s+/g, ' ').trim();
}

/** TikTok names and zip: lower-cased, no whitespace (names also without punctuation). */
function tiktokName(raw: string): string {
  return raw.toLowerCase().replace(PUNCTUATION_AND_SYMBOLS, '').replace(/\s+/g, '');
}

/** Sets `key` only when there is a value: no `undefined` keys to delete afterwards. */
function put<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined) {
  if (value !== undefined) target[key] = value;
}

/**
 * All platforms' forms of one event's contact data. Throws the same `invalid_request` errors as
 * `hashUserData()` for values no platform could use (a malformed email or phone).
 *
 * Every value is normalised once for the record (`hashContact`) and its platform forms derived
 * from that, and each distinct string is hashed once per event: GA4's and TikTok's phone are
 * the same `+digits`, a name is often the same string for all three platforms.
 */
export function platformUserData(
  raw: UserData,
  /** The record's own hashing of `raw`, when the caller has it already (ingestion does). */
  contact: HashedContact = hashContact(raw),
): {
  hashes: PlatformHashes;
  location: PlatformLocation;
} {
  const own = contact.hashes;
  const normalised = contact.normalised;
  const sha256 = contact.sha256;
  // A value the caller sent hashed is passed on as it is; otherwise it was normalised (and
  // refused if no platform could use it) by hashContact.
  const hashOrPass = (
    value: string | undefined,
    normalise: (own: string, raw: string) => string,
    field: keyof UserData,
  ): string | undefined => {
    if (value === undefined) return undefined;
    if (isSha256Hex(value)) return value;
    const text = normalise(normalised[field]!, value);
    return text === '' ? undefined : sha256(text);
  };

  const meta: MetaUserDataHashes = {};
  for (const [field, key] of META_ENTRIES) put(meta, key, own[field]);

  const phone = hashOrPass(raw.phone, (digits) => `+${digits}`, 'phone');
  const ga4: Ga4UserDataHashes = {};
  put(ga4, 'sha256_email_address', hashOrPass(raw.email, ga4Email, 'email'));
  put(ga4, 'sha256_phone_number', phone);
  put(
    ga4,
    'sha256_first_name',
    hashOrPass(raw.first_name, (_, v) => ga4Text(v), 'first_name'),
  );
  put(
    ga4,
    'sha256_last_name',
    hashOrPass(raw.last_name, (_, v) => ga4Text(v), 'last_name'),
  );
  put(ga4, 'user_id', meta.external_id);
  const tiktok: TiktokUserDataHashes = {};
  put(tiktok, 'email', meta.em);
  put(tiktok, 'phone', phone);
  put(tiktok, 'external_id', meta.external_id);
  put(
    tiktok,
    'first_name',
    hashOrPass(raw.first_name, (_, v) => tiktokName(v), 'first_name'),
  );
  put(
    tiktok,
    'last_name',
    hashOrPass(raw.last_name, (_, v) => tiktokName(v), 'last_name'),
  );
  put(
    tiktok,
    'zip_code',
    hashOrPass(raw.zip, (_, v) => v.toLowerCase().replace(/\s+/g, ''), 'zip'),
  );

  // Unhashed: only from values the caller did not hash (normalised is empty for those).
  const ga4Location: PlatformLocation['ga4'] = {};
  const tiktokLocation: PlatformLocation['tiktok'] = {};
  if (normalised.city !== undefined) {
    put(ga4Location, 'city', nonEmpty(ga4Text(raw.city!)));
  }
  if (normalised.state !== undefined) {
    put(ga4Location, 'region', nonEmpty(ga4Text(raw.state!)));
  }
  put(ga4Location, 'country', normalised.country);
  put(tiktokLocation, 'city', normalised.city);
  put(tiktokLocation, 'state', normalised.state);
  put(tiktokLocation, 'country', normalised.country);
  return { hashes: { meta, ga4, tiktok }, location: { ga4: ga4Location, tiktok: tiktokLocation } };
}

function nonEmpty(value: string): string | undefined {
  return value === '' ? undefined : value;
}

/** GA4's email from Trackway's normalised one: without the local part's dots on Gmail. */
function ga4Email(email: string): string {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1);
  return GMAIL_DOMAINS.has(domain)
    ? email.slice(0, at).replaceAll('.', '') + email.slice(at)
    : email;
}

/**
 * Meta's hashes, read back from a stored record's `user_data`: they are the record's own hashes
 * under Meta's names (see above), so the store keeps them once, in the record. The record's
 * match-key hashes (client_ip_address …) are not Meta's hashed keys and are left out.
 */
export function metaHashesOfRecord(userData: Record<string, string> | null): MetaUserDataHashes {
  const meta: MetaUserDataHashes = {};
  if (userData === null) return meta;
  for (const [field, key] of Object.entries(META_KEYS)) {
    const hash = userData[field];
    if (hash !== undefined) meta[key] = hash;
  }
  return meta;
}
