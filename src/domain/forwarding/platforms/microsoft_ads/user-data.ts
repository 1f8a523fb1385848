/**
 * Microsoft's normalisation and hashing of the caller's contact data (UET Conversions API
 * `userData`; Segment's ms-bing-capi destination): `em` trimmed and lower-cased, `ph` digits
 * only (with the country code), each SHA-256 hex. These are Trackway's own normal forms
 * (src/domain/events/user-data.ts), so Microsoft's hashes are the record's own, read back from
 * it as Meta's are and never stored twice.
 *
 * `externalId` goes as the SHA-256 of the caller's `external_id`: Trackway keeps no raw
 * external id, and Microsoft takes any opaque string there (stape hashes it too;
 * docs/decisions.md). stape also strips dots and `+tags` from every email's local part; that
 * merges distinct addresses outside Gmail, so it is not done.
 */
import { put } from '../platform.ts';

export interface MicrosoftAdsUserDataHashes {
  em?: string;
  ph?: string;
  externalId?: string;
}

export function microsoftAdsHashesOfRecord(
  userData: Readonly<Record<string, string | undefined>> | null,
): MicrosoftAdsUserDataHashes {
  const out: MicrosoftAdsUserDataHashes = {};
  if (userData === null) return out;
  put(out, 'em', userData['email']);
  put(out, 'ph', userData['phone']);
  put(out, 'externalId', userData['external_id']);
  return out;
}
