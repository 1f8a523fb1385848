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
  hashUserData,
  isSha256Hex,
  normaliseUserDataField,
  sha256Hex,
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

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);
const DIGITS_AND_SYMBOLS = /[\p{N}\p{P}\p{S}]/gu;
const PUNCTUATION_AND_SYMBOLS = /[\p{P}\p{S}]/gu;

/** Google: "remove all periods (.) that precede the domain name in gmail.com and googlemail.com". */
export function normaliseGa4Email(raw: string): string {
  const email = normaliseUserDataField('email', raw, {});
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1);
  return GMAIL_DOMAINS.has(domain)
    ? email.slice(0, at).replaceAll('.', '') + email.slice(at)
    : email;
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

function hashOrPass(value: string | undefined, normalise: (raw: string) => string) {
  if (value === undefined) return undefined;
  if (isSha256Hex(value)) return value;
  const normalised = normalise(value);
  return normalised === '' ? undefined : sha256Hex(normalised);
}

function plain(value: string | undefined, normalise: (raw: string) => string) {
  if (value === undefined || isSha256Hex(value)) return undefined;
  const normalised = normalise(value);
  return normalised === '' ? undefined : normalised;
}

function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as Array<keyof T>) {
    if (value[key] === undefined) delete value[key];
  }
  return value;
}

/**
 * All platforms' forms of one event's contact data. Throws the same `invalid_request` errors as
 * `hashUserData()` for values no platform could use (a malformed email or phone).
 */
export function platformUserData(
  raw: UserData,
  /** The record's own hashes of `raw`, when the caller has them already (ingestion does). */
  own: UserData = hashUserData(raw),
): {
  hashes: PlatformHashes;
  location: PlatformLocation;
} {
  const meta: MetaUserDataHashes = {};
  for (const [field, key] of Object.entries(META_KEYS)) {
    const hash = own[field as keyof typeof META_KEYS];
    if (hash !== undefined) meta[key] = hash;
  }

  const country = (value: string) => normaliseUserDataField('country', value, {});
  const ga4 = compact<Ga4UserDataHashes>({
    sha256_email_address: hashOrPass(raw.email, normaliseGa4Email),
    sha256_phone_number: hashOrPass(raw.phone, normaliseE164),
    sha256_first_name: hashOrPass(raw.first_name, ga4Text),
    sha256_last_name: hashOrPass(raw.last_name, ga4Text),
    user_id: meta.external_id,
  });
  const tiktok = compact<TiktokUserDataHashes>({
    email: meta.em,
    phone: hashOrPass(raw.phone, normaliseE164),
    external_id: meta.external_id,
    first_name: hashOrPass(raw.first_name, tiktokName),
    last_name: hashOrPass(raw.last_name, tiktokName),
    zip_code: hashOrPass(raw.zip, (zip) => zip.toLowerCase().replace(/\s+/g, '')),
  });
  const location: PlatformLocation = {
    ga4: compact({
      city: plain(raw.city, ga4Text),
      region: plain(raw.state, ga4Text),
      country: plain(raw.country, country),
    }),
    tiktok: compact({
      city: plain(raw.city, (city) => normaliseUserDataField('city', city, {})),
      state: plain(raw.state, (state) => normaliseUserDataField('state', state, {})),
      country: plain(raw.country, country),
    }),
  };
  return { hashes: { meta, ga4, tiktok }, location };
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
