/**
 * TikTok's own normalisation and hashing of the caller's contact data (Events API 2.0 `user`):
 * email, phone (`+digits`), external_id, names and zip hashed; city, state and country
 * normalised but not hashed (`location`, kept with the raw match keys).
 */
import type { HashedContact, UserData } from '../../../events/user-data.ts';
import { platformHash, put } from '../platform.ts';

export interface TiktokUserDataHashes {
  email?: string;
  phone?: string;
  external_id?: string;
  first_name?: string;
  last_name?: string;
  zip_code?: string;
}

export interface TiktokLocation {
  city?: string;
  state?: string;
  country?: string;
}

const PUNCTUATION_AND_SYMBOLS = /[\p{P}\p{S}]/gu;

/** TikTok names and zip: lower-cased, no whitespace (names also without punctuation). */
function tiktokName(raw: string): string {
  return raw.toLowerCase().replace(PUNCTUATION_AND_SYMBOLS, '').replace(/\s+/g, '');
}

export function tiktokUserDataHashes(
  raw: UserData,
  contact: HashedContact,
): { hashes: TiktokUserDataHashes; location: TiktokLocation } {
  const hashes: TiktokUserDataHashes = {};
  // Email as Meta's (trimmed, lower-cased): Trackway's own record hash.
  put(hashes, 'email', contact.hashes.email);
  put(
    hashes,
    'phone',
    platformHash(contact, raw, 'phone', (digits) => `+${digits}`),
  );
  put(hashes, 'external_id', contact.hashes.external_id);
  put(
    hashes,
    'first_name',
    platformHash(contact, raw, 'first_name', (_, v) => tiktokName(v)),
  );
  put(
    hashes,
    'last_name',
    platformHash(contact, raw, 'last_name', (_, v) => tiktokName(v)),
  );
  put(
    hashes,
    'zip_code',
    platformHash(contact, raw, 'zip', (_, v) => v.toLowerCase().replace(/\s+/g, '')),
  );
  const location: TiktokLocation = {};
  put(location, 'city', contact.normalised.city);
  put(location, 'state', contact.normalised.state);
  put(location, 'country', contact.normalised.country);
  return { hashes, location };
}
