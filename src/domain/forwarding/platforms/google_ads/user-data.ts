/**
 * Google's normalisation and hashing of the caller's contact data (Data Manager API,
 * developers.google.com/data-manager/api/get-started/formatting): an email lower-cased with
 * every space removed and, at gmail.com and googlemail.com, the dots before the `@` removed; a
 * phone in E.164 (`+` and digits); given and family names lower-cased and trimmed; each SHA-256
 * hex. An address's region code (ISO 3166-1, upper case) and postal code are sent unhashed:
 * they are `location`, kept with the 7-day match keys.
 */
import type { HashedContact, UserData } from '../../../events/user-data.ts';
import { platformHash, put } from '../platform.ts';

export interface GoogleAdsHashes {
  email?: string;
  phone?: string;
  given_name?: string;
  family_name?: string;
}

export interface GoogleAdsLocation {
  region_code?: string;
  postal_code?: string;
}

const GMAIL = /@(gmail|googlemail)\.com$/;

/** Google's form of an email (from Trackway's trimmed, lower-cased one). */
export function googleEmail(email: string): string {
  const compact = email.replace(/\s+/g, '');
  if (!GMAIL.test(compact)) return compact;
  const at = compact.indexOf('@');
  return compact.slice(0, at).replace(/\./g, '') + compact.slice(at);
}

export function googleAdsUserData(
  raw: UserData,
  contact: HashedContact,
): { hashes: GoogleAdsHashes; location: GoogleAdsLocation } {
  const hashes: GoogleAdsHashes = {};
  put(hashes, 'email', platformHash(contact, raw, 'email', googleEmail));
  put(
    hashes,
    'phone',
    platformHash(contact, raw, 'phone', (digits) => `+${digits}`),
  );
  // Trackway's own name form (lower case, punctuation out, spaces folded) is Google's.
  put(hashes, 'given_name', contact.hashes.first_name);
  put(hashes, 'family_name', contact.hashes.last_name);
  const location: GoogleAdsLocation = {};
  put(location, 'region_code', contact.normalised.country?.toUpperCase());
  put(location, 'postal_code', contact.normalised.zip?.toUpperCase());
  return { hashes, location };
}
