/**
 * user_data normalisation and hashing, following Meta's published rules for the Conversions API
 * (as the contract §3 fixes them). Every value is hashed here, before a record exists, so raw
 * PII never reaches storage, logs or webhooks.
 */

import { hash } from 'node:crypto';
import { invalidField } from '../errors.ts';
import { isCountryCode } from './codes.ts';
import { isPossibleE164 } from './phone.ts';
import { regionCode } from './region-codes.ts';

export const USER_DATA_FIELDS = [
  'email',
  'phone',
  'first_name',
  'last_name',
  'city',
  'state',
  'zip',
  'country',
  'external_id',
] as const;
export type UserDataField = (typeof USER_DATA_FIELDS)[number];
export type UserData = Partial<Record<UserDataField, string>>;

const SHA256_HEX = /^[0-9a-f]{64}$/;
const PUNCTUATION_AND_SYMBOLS = /[\p{P}\p{S}]/gu;
const PHONE_SEPARATORS = /[\s\-.()]/g;
const US_ZIP_PLUS_4 = /^(\d{5})[\s-]?\d{4}$/;

export function sha256Hex(value: string): string {
  // One-shot hash(): about 3x cheaper than createHash().update().digest() for short strings,
  // which matters at up to nine values per event.
  return hash('sha256', value, 'hex');
}

/** A value that already is a SHA-256 (lowercase hex) is the caller's own hash: keep it. */
export function isSha256Hex(value: string): boolean {
  return SHA256_HEX.test(value);
}

function phoneDigits(value: string): string {
  const compact = value.replace(PHONE_SEPARATORS, '');
  // E.164 needs its '+': without it the country code is a guess, and a guessed country code
  // produces a hash that matches nobody.
  if (!/^\+[1-9]\d{1,14}$/.test(compact))
    throw invalidField('user_data.phone', 'must be in E.164 format');
  // libphonenumber-js's "possible" check (length for the country), answered quickly: phone.ts.
  if (!isPossibleE164(compact)) throw invalidField('user_data.phone', 'must be in E.164 format');
  return compact.slice(1);
}

export function normaliseUserDataField(
  field: UserDataField,
  value: string,
  context: { country?: string },
): string {
  let normalised: string;
  switch (field) {
    case 'email': {
      normalised = value.trim().toLowerCase();
      const at = normalised.indexOf('@');
      if (at < 1 || at !== normalised.lastIndexOf('@') || at === normalised.length - 1) {
        throw invalidField('user_data.email', 'must be an email address');
      }
      break;
    }
    case 'phone':
      normalised = phoneDigits(value);
      break;
    case 'first_name':
    case 'last_name':
      // Accents are kept (Meta: UTF-8 is fine); inner spaces are kept, runs folded to one.
      normalised = value
        .toLowerCase()
        .replace(PUNCTUATION_AND_SYMBOLS, '')
        .replace(/\s+/g, ' ')
        .trim();
      break;
    case 'city':
      normalised = value.toLowerCase().replace(PUNCTUATION_AND_SYMBOLS, '').replace(/\s+/g, '');
      break;
    case 'state':
      // A US state or Canadian province named in full becomes its 2-letter code (Meta's form).
      normalised = regionCode(
        value.toLowerCase().replace(PUNCTUATION_AND_SYMBOLS, '').replace(/\s+/g, ''),
        context.country,
      );
      break;
    case 'country':
      normalised = value.trim().toLowerCase();
      if (!isCountryCode(normalised)) {
        throw invalidField('user_data.country', 'must be an ISO 3166-1 alpha-2 code');
      }
      break;
    case 'zip': {
      const trimmed = value.trim();
      const plus4 = US_ZIP_PLUS_4.exec(trimmed);
      normalised = trimmed.toLowerCase().replace(/[\s-]/g, '');
      if (plus4) normalised = plus4[1]!;
      else if (context.country?.trim().toLowerCase() === 'us') normalised = normalised.slice(0, 5);
      break;
    }
    case 'external_id':
      // Trimmed only: a customer's own IDs may be case-sensitive, and Meta gives no other rule.
      normalised = value.trim();
      break;
  }
  if (normalised === '') throw invalidField(`user_data.${field}`, 'must not be empty');
  return normalised;
}

/**
 * One event's contact data hashed for its record, with what the per-platform forms reuse
 * (platform-user-data.ts): each field's normalised value, and a SHA-256 that computes each
 * distinct string once per event (Meta's, GA4's and TikTok's forms of a name or an email are
 * often the same string).
 */
export interface HashedContact {
  /** The record's user_data: each field hashed, or kept if the caller sent a hash. */
  hashes: UserData;
  /** Each field's normalised value, for the fields the caller did not send hashed. */
  normalised: UserData;
  sha256(value: string): string;
}

export function hashContact(input: UserData): HashedContact {
  const memo = new Map<string, string>();
  const sha256 = (value: string): string => {
    let hex = memo.get(value);
    if (hex === undefined) {
      hex = sha256Hex(value);
      memo.set(value, hex);
    }
    return hex;
  };
  const rawCountry = input.country;
  const context =
    rawCountry !== undefined && !isSha256Hex(rawCountry) ? { country: rawCountry } : {};
  const hashes: UserData = {};
  const normalised: UserData = {};
  for (const field of USER_DATA_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    if (isSha256Hex(value)) {
      hashes[field] = value;
      continue;
    }
    const text = normaliseUserDataField(field, value, context);
    normalised[field] = text;
    hashes[field] = sha256(text);
  }
  return { hashes, normalised, sha256 };
}

/** Returns a new object with the same fields, each hashed (or kept, if already a hash). */
export function hashUserData(input: UserData): UserData {
  return hashContact(input).hashes;
}
