/**
 * Pinterest's normalisation and hashing of the caller's contact data (Conversions API v5
 * `user_data`, developers.pinterest.com/docs/api/v5/events-create): `em` lower-cased, `ph`
 * digits with the country code, `fn`/`ln` lower-cased, `ct` without spaces or punctuation,
 * `st` the 2-letter code, `zp` digits, `country` ISO-2, all lower-case and SHA-256 hex. These
 * are Trackway's own normal forms (src/domain/events/user-data.ts), so the record's hashes are
 * Pinterest's; they are still kept under Pinterest's keys, one map per platform.
 */
import type { HashedContact } from '../../../events/user-data.ts';
import { put } from '../platform.ts';

export interface PinterestUserDataHashes {
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

export function pinterestUserDataHashes(contact: HashedContact): PinterestUserDataHashes {
  const { hashes } = contact;
  const out: PinterestUserDataHashes = {};
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
