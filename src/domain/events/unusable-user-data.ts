/**
 * Contract §19: contact data that cannot be used does not cost the event. A `user_data` string
 * that fails its format check (a phone that is not E.164, a country that is not alpha-2, an
 * email without `@`, a state or zip that normalises to nothing, an IP that is not one, a value
 * too long …) is taken out of the body, and the event validated again without it, so it is
 * stored without that value and the answer warns (prepareEvent screens a body only once one of
 * its user_data values has failed, so a valid event pays nothing for this). What still refuses the event is left for the validator: a value of the wrong
 * JSON type, an unknown key, a `user_data` that is not an object.
 *
 * Every event goes through here before hashing and before any platform's normalisation, so what
 * is dropped is dropped for the record and every destination alike.
 */
import { TrackwayError } from '../errors.ts';
import { compileValueCheck } from '../validation.ts';
import { UserDataSchema } from './schemas.ts';
import {
  isSha256Hex,
  normaliseUserDataField,
  USER_DATA_FIELDS,
  type UserDataField,
} from './user-data.ts';

export interface DroppedValue {
  /** The dotted path, as the record's `dropped` lists it: `user_data.phone`. */
  field: string;
  /** Why, in the validator's words: `must be in E.164 format`. */
  reason: string;
}

const NONE: readonly DroppedValue[] = Object.freeze([]);

/** Each declared user_data key's own schema check (length, format, pattern, storable text). */
const CHECKS = new Map(
  Object.entries(UserDataSchema.properties).map(([key, schema]) => [
    key,
    compileValueCheck(schema),
  ]),
);
const CONTACT = new Set<string>(USER_DATA_FIELDS);

/** The warning the answer carries for a dropped value (contract §19's wording). */
export function droppedWarning(dropped: DroppedValue): string {
  return `${dropped.field} dropped: ${dropped.reason}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why a contact value cannot be normalised (and so hashed to anything a platform matches). */
function normalisationFailure(key: UserDataField, value: string, country: unknown): string | null {
  if (isSha256Hex(value)) return null; // the caller's own hash is kept as sent
  try {
    normaliseUserDataField(key, value, typeof country === 'string' ? { country } : {});
    return null;
  } catch (error) {
    if (!(error instanceof TrackwayError) || error.field === undefined) throw error;
    // `Invalid field: user_data.phone must be in E.164 format` → `must be in E.164 format`.
    return error.message.slice(`Invalid field: ${error.field} `.length);
  }
}

/**
 * The body with each unusable `user_data` value taken out, and what was taken out. The body is
 * returned as it is (same object) when nothing is dropped, which is almost always.
 */
export function dropUnusableUserData(body: unknown): {
  body: unknown;
  dropped: readonly DroppedValue[];
} {
  if (!isPlainObject(body) || !isPlainObject(body['user_data'])) return { body, dropped: NONE };
  const userData = body['user_data'];
  let dropped: DroppedValue[] | null = null;
  for (const [key, value] of Object.entries(userData)) {
    // A wrong type or an unknown key still refuses the event: the validator reports it.
    if (typeof value !== 'string') continue;
    const check = CHECKS.get(key);
    if (check === undefined) continue;
    const reason =
      check(value) ??
      (CONTACT.has(key)
        ? normalisationFailure(key as UserDataField, value, userData['country'])
        : null);
    if (reason === null) continue;
    dropped ??= [];
    dropped.push({ field: `user_data.${key}`, reason });
  }
  if (dropped === null) return { body, dropped: NONE };
  const kept = { ...userData };
  for (const { field } of dropped) delete kept[field.slice('user_data.'.length)];
  return { body: { ...body, user_data: kept }, dropped };
}
