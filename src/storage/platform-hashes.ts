/**
 * How an event row keeps the platforms' own hashes (events.platform_hashes). Seven platforms
 * hash mostly the same normalised values under their own field names, so written out in full
 * the column held each hash up to seven times: 1,630 bytes for the bench's four contact fields,
 * 70 % of the row, and the single largest cost of the SQLite insert (writing it, and the WAL
 * pages it filled, cost ~25 µs of CPU per event: docs/decisions.md, "A row a third the size").
 *
 * Written now: every hash the record's own user_data already holds is named by its user_data
 * field, every other hash is stored once in the `~` list and named by its place there:
 *
 *   {"~":["f3e6…"],"ga4":{"sha256_email_address":"email","sha256_phone_number":0},…}
 *
 * Rows written before keep the full form ({type: {field: hash}}, no `~`), and read back as they
 * were: the reader tells the two apart by `~`, which is no platform's type.
 */
import type { PlatformHashes } from '../domain/model.ts';

/** What the compact form holds per platform field: a user_data field name, or a `~` index. */
type Ref = string | number;
const EXTRA = '~';

/** The column's JSON text for `hashes`, referring to `record` (the event's user_data). */
export function encodePlatformHashes(
  hashes: PlatformHashes,
  record: Readonly<Record<string, string>> | null,
): string {
  // A handful of fields and hashes each: linear searches cost less than building maps.
  const recorded = record === null ? NONE : Object.keys(record);
  const extra: string[] = [];
  let text = '{"~":';
  let body = '';
  for (const type in hashes) {
    const own = hashes[type];
    if (own === undefined) continue;
    body += `,${quoted(type)}:{`;
    let first = true;
    for (const field in own) {
      const hash = own[field]!;
      let ref = '';
      for (const name of recorded) {
        if (record![name] === hash) {
          ref = quoted(name);
          break;
        }
      }
      if (ref === '') {
        let place = extra.indexOf(hash);
        if (place < 0) place = extra.push(hash) - 1;
        ref = String(place);
      }
      body += `${first ? '' : ','}${quoted(field)}:${ref}`;
      first = false;
    }
    body += '}';
  }
  text += JSON.stringify(extra);
  return `${text}${body}}`;
}

const NONE: readonly string[] = [];

/** Platform types and field names as JSON strings: a few dozen names, quoted once each. */
const QUOTED = new Map<string, string>();

function quoted(name: string): string {
  let text = QUOTED.get(name);
  if (text === undefined) {
    text = JSON.stringify(name);
    // Names come from the platform modules and user_data's own fields, so the map stays small;
    // it is bounded all the same.
    if (QUOTED.size < 1_000) QUOTED.set(name, text);
  }
  return text;
}

/** The hashes of a stored column (either form), given the same row's user_data. */
export function decodePlatformHashes(
  stored: Record<string, unknown>,
  record: Readonly<Record<string, string>> | null,
): PlatformHashes {
  const extra = stored[EXTRA];
  if (!Array.isArray(extra)) return stored as PlatformHashes;
  const hashes: Record<string, Record<string, string>> = {};
  for (const type in stored) {
    if (type === EXTRA) continue;
    const refs = stored[type] as Record<string, Ref>;
    const own: Record<string, string> = {};
    for (const field in refs) {
      const ref = refs[field]!;
      const hash = typeof ref === 'number' ? (extra[ref] as string) : record?.[ref];
      // A user_data field erased since (contract: erasure clears user_data) takes its hash
      // with it: the platform field goes too, rather than being sent empty.
      if (hash !== undefined) own[field] = hash;
    }
    hashes[type] = own;
  }
  return hashes;
}
