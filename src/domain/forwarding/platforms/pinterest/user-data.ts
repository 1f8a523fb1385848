/**
 * Pinterest's normalisation and hashing of the caller's contact data (Conversions API v5
 * `user_data`, developers.pinterest.com/docs/api/v5/events-create): `em` lower-cased, `ph`
 * digits with the country code, `fn`/`ln` lower-cased, `ct` without spaces or punctuation,
 * `st` the 2-letter code, `zp` digits, `country` ISO-2, all lower-case and SHA-256 hex. These
 * are Trackway's own normal forms (src/domain/events/user-data.ts), so the record's hashes are
 * Pinterest's; they are still kept under Pinterest's keys, one map per platform.
 */
import { type ShortKeyHashes, shortKeyHashes } from '../platform.ts';

export type PinterestUserDataHashes = ShortKeyHashes;

export const pinterestUserDataHashes = shortKeyHashes;
