/**
 * Snapchat's normalisation and hashing of the caller's contact data (Conversions API v3
 * `user_data`, developers.snap.com/api/marketing-api/Conversions-API/Parameters): `em` trimmed
 * and lower-cased, `ph` digits with the country code (no `+`, no leading zeros), names, city,
 * state, zip and country lower-cased without spaces, all SHA-256 hex. These are Trackway's own
 * normal forms (src/domain/events/user-data.ts); they are kept under Snapchat's keys.
 */
import type { HashedContact } from '../../../events/user-data.ts';
import { put } from '../platform.ts';

export interface SnapchatUserDataHashes {
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

export function snapchatUserDataHashes(contact: HashedContact): SnapchatUserDataHashes {
  const { hashes } = contact;
  const out: SnapchatUserDataHashes = {};
  put(out, 'em', hashes.email);
  put(out, 'ph', hashes.phone);
  put(out, 'fn', hashes.first_name);
  put(out, 'ln', hashes.last_name);
  put(out, 'ct', hashes.city);
  put(out, 'st', hashes.state);
  put(out, 'zp', hashes.zip);
  put(out, 'country', hashes.country);
  put(out, 'external_id', hashes.external_id);
  return out;
}
