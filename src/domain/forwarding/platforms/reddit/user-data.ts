/**
 * Reddit's normalisation and hashing of the caller's contact data (Conversions API v3 `user`,
 * business.reddithelp.com … conversions-api): `email` trimmed and lower-cased, `phone_number`
 * `+` and digits, `external_id` as sent, each SHA-256 hex. Reddit also wants the IP address
 * hashed; it is a match key, not contact data, so the builder hashes it (payload.ts).
 */
import type { HashedContact, UserData } from '../../../events/user-data.ts';
import { platformHash, put } from '../platform.ts';

export interface RedditUserDataHashes {
  email?: string;
  phone_number?: string;
  external_id?: string;
}

export function redditUserDataHashes(raw: UserData, contact: HashedContact): RedditUserDataHashes {
  const out: RedditUserDataHashes = {};
  put(out, 'email', contact.hashes.email);
  put(
    out,
    'phone_number',
    platformHash(contact, raw, 'phone', (digits) => `+${digits}`),
  );
  put(out, 'external_id', contact.hashes.external_id);
  return out;
}
