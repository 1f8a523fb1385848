/**
 * LinkedIn's hashing of the caller's contact data (Conversions API `user.userIds`,
 * learn.microsoft.com/en-us/linkedin/marketing/integrations/ads-reporting/conversions-api):
 * `SHA256_EMAIL` is the SHA-256 hex of the email trimmed and lower-cased, Trackway's own form.
 * LinkedIn takes no phone, and names only unhashed (`userInfo`), which Trackway does not keep
 * (docs/decisions.md).
 */
import type { HashedContact } from '../../../events/user-data.ts';
import { put } from '../platform.ts';

export interface LinkedinHashes {
  email?: string;
}

export function linkedinUserData(contact: HashedContact): LinkedinHashes {
  const out: LinkedinHashes = {};
  put(out, 'email', contact.hashes.email);
  return out;
}
