/**
 * Each platform's own normalisation and hashing of the caller's contact data, computed once at
 * ingestion from the raw values (contract §11), so that raw contact data is never stored. The
 * rules are each platform's (`platforms/<type>/user-data.ts`); this runs them all.
 *
 * The unhashed coarse values are returned apart (`location`): they belong with the raw match
 * keys, under the same 7-day rule (§11). A value the caller sent already hashed (64 lowercase hex
 * characters) cannot be normalised again: it is passed on as it is to every platform's hashed
 * fields, and left out of the unhashed ones.
 */
import { type HashedContact, hashContact, type UserData } from '../events/user-data.ts';
import type { PlatformHashes, PlatformLocation } from '../model.ts';
import { PLATFORM_MODULES } from './platforms/registry.ts';

export type { PlatformHashes, PlatformLocation };

const MODULES = Object.values(PLATFORM_MODULES);

/**
 * All platforms' forms of one event's contact data. Throws the same `invalid_request` errors as
 * `hashUserData()` for values no platform could use (a malformed email or phone).
 *
 * Every value is normalised once for the record (`hashContact`) and its platform forms derived
 * from that, and each distinct string is hashed once per event (`contact.sha256` remembers):
 * GA4's and TikTok's phone are the same `+digits`, a name is often the same string for all.
 */
export function platformUserData(
  raw: UserData,
  /** The record's own hashing of `raw`, when the caller has it already (ingestion does). */
  contact: HashedContact = hashContact(raw),
): { hashes: PlatformHashes; location: PlatformLocation } {
  const hashes: Record<string, Record<string, string>> = {};
  const location: Record<string, Record<string, string>> = {};
  for (const platform of MODULES) {
    const own = platform.userData(raw, contact);
    if (own.hashes) hashes[platform.type] = own.hashes;
    if (own.location) location[platform.type] = own.location;
  }
  return { hashes, location };
}

/** Whether any platform kept an unhashed location value (else nothing is stored for it). */
export function hasLocation(location: PlatformLocation): boolean {
  return Object.values(location).some((l) => l !== undefined && Object.keys(l).length > 0);
}

/** The platforms' hashes that are the record's own user_data (Meta's), read back from it. */
export function hashesOfRecord(userData: Record<string, string> | null): PlatformHashes {
  const hashes: Record<string, Record<string, string>> = {};
  for (const platform of MODULES) {
    if (platform.hashesOfRecord) hashes[platform.type] = platform.hashesOfRecord(userData);
  }
  return hashes;
}

/** What the store keeps apart from the record: the hashes not read back from it. */
export function storedHashes(hashes: PlatformHashes): PlatformHashes {
  const stored: Record<string, Readonly<Record<string, string>>> = {};
  for (const platform of MODULES) {
    const own = hashes[platform.type];
    if (!platform.hashesOfRecord && own !== undefined) stored[platform.type] = own;
  }
  return stored;
}
