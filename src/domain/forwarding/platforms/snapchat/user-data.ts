/**
 * Snapchat's normalisation and hashing of the caller's contact data (Conversions API v3
 * `user_data`, developers.snap.com/api/marketing-api/Conversions-API/Parameters): `em` trimmed
 * and lower-cased, `ph` digits with the country code (no `+`, no leading zeros), names, city,
 * state, zip and country lower-cased without spaces, all SHA-256 hex. These are Trackway's own
 * normal forms (src/domain/events/user-data.ts); they are kept under Snapchat's keys.
 */
import { type ShortKeyHashes, shortKeyHashes } from '../platform.ts';

export type SnapchatUserDataHashes = ShortKeyHashes;

export const snapchatUserDataHashes = shortKeyHashes;
