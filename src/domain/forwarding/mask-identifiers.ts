/**
 * What a test send may show of the request it made (contract §21): the platform payload with
 * the event's raw identifiers masked. The record shows these only as hashes, so the test send's
 * answer must not be the one place an IP, a user agent or a click id comes back in the clear.
 *
 * Masking goes by value, not by field name: whatever field a platform module puts a raw key in
 * (Meta's `client_ip_address`, TikTok's `ip`, GA4's `client_id`, a value inside a longer string),
 * it is found, so no platform's payload builder has to know about it.
 */
import { type ForwardableEvent, maskSecret } from './model.ts';

/**
 * A value this long is also masked where it appears inside a longer string; a shorter one (a
 * country code) only where it is the whole string, so that it cannot mangle unrelated text.
 */
const MIN_EMBEDDED = 8;

/** The event's raw match keys and unhashed location: what the record holds only hashed. */
export function rawIdentifiers(forwardable: ForwardableEvent): string[] {
  const values = [
    ...Object.values(forwardable.matchKeys ?? {}),
    // Every platform's unhashed location, whichever platforms keep one.
    ...Object.values(forwardable.location ?? {}).flatMap((own) => Object.values(own ?? {})),
  ].filter((v): v is string => typeof v === 'string' && v.length > 0);
  // Longest first: a value that contains another is replaced whole.
  return [...new Set(values)].sort((a, b) => b.length - a.length);
}

/**
 * A string this long that is part of a raw value is masked whole: a platform may take only part
 * of a cookie (Reddit's uuid of the `<ms>.<uuid>` `_rdt_uuid`).
 */
const MIN_PART = 16;

function maskString(text: string, raw: readonly string[]): string {
  if (raw.includes(text)) return maskSecret(text);
  if (text.length >= MIN_PART && raw.some((value) => value.includes(text))) return maskSecret(text);
  let out = text;
  for (const value of raw) {
    if (value.length >= MIN_EMBEDDED && out.includes(value)) {
      out = out.split(value).join(maskSecret(value));
    }
  }
  return out;
}

/** A copy of a JSON value with every raw identifier shown as `****` + its last 4. */
export function maskIdentifiers<T>(value: T, raw: readonly string[]): T {
  if (raw.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskString(v, raw);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, walk(inner)]));
    }
    return v;
  };
  return walk(value) as T;
}
