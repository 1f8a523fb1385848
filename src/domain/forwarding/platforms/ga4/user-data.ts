/**
 * GA4's own normalisation and hashing of the caller's contact data (Measurement Protocol
 * `user_data`, developers.google.com/analytics/devguides/collection/ga4/uid-data): email
 * trimmed, lower-cased, and for gmail.com / googlemail.com without the dots of the local part;
 * phone in E.164 with its `+`; first and last names without digits or symbols; city, region and
 * country sent unhashed (`location`, kept with the raw match keys).
 */
import {
  type HashedContact,
  normaliseUserDataField,
  type UserData,
} from '../../../events/user-data.ts';
import { platformHash, put } from '../platform.ts';

export interface Ga4UserDataHashes {
  sha256_email_address?: string;
  sha256_phone_number?: string;
  sha256_first_name?: string;
  sha256_last_name?: string;
  /** GA4's `user_id`: the hash of external_id (never the raw id, which may be PII). */
  user_id?: string;
}

export interface Ga4Location {
  city?: string;
  region?: string;
  country?: string;
}

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);
const DIGITS_AND_SYMBOLS = /[\p{N}\p{P}\p{S}]/gu;

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

/** GA4's email from Trackway's normalised one: without the local part's dots on Gmail. */
function ga4Email(email: string): string {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1);
  return GMAIL_DOMAINS.has(domain)
    ? email.slice(0, at).replaceAll('.', '') + email.slice(at)
    : email;
}

function nonEmpty(value: string): string | undefined {
  return value === '' ? undefined : value;
}

export function ga4UserDataHashes(
  raw: UserData,
  contact: HashedContact,
): { hashes: Ga4UserDataHashes; location: Ga4Location } {
  const hashes: Ga4UserDataHashes = {};
  put(hashes, 'sha256_email_address', platformHash(contact, raw, 'email', ga4Email));
  put(
    hashes,
    'sha256_phone_number',
    platformHash(contact, raw, 'phone', (digits) => `+${digits}`),
  );
  put(
    hashes,
    'sha256_first_name',
    platformHash(contact, raw, 'first_name', (_, v) => ga4Text(v)),
  );
  put(
    hashes,
    'sha256_last_name',
    platformHash(contact, raw, 'last_name', (_, v) => ga4Text(v)),
  );
  put(hashes, 'user_id', contact.hashes.external_id);
  // Unhashed: only from values the caller did not hash (normalised is empty for those).
  const location: Ga4Location = {};
  const normalised = contact.normalised;
  if (normalised.city !== undefined) put(location, 'city', nonEmpty(ga4Text(raw.city!)));
  if (normalised.state !== undefined) put(location, 'region', nonEmpty(ga4Text(raw.state!)));
  put(location, 'country', normalised.country);
  return { hashes, location };
}
