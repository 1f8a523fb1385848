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
type Stored = Record<string, Record<string, Ref> | Ref[]>;

const EXTRA = '~';

/** The column's JSON text for `hashes`, referring to `record` (the event's user_data). */
export function encodePlatformHashes(
  hashes: PlatformHashes,
  record: Readonly<Record<string, string>> | null,
): string {
  const fieldOf = new Map<string, string>();
  if (record !== null) for (const field in record) fieldOf.set(record[field]!, field);
  const extra: string[] = [];
  const placeOf = new Map<string, number>();
  const stored: Stored = { [EXTRA]: extra };
  for (const type in hashes) {
    const own = hashes[type];
    if (own === undefined) continue;
    const refs: Record<string, Ref> = {};
    for (const field in own) {
      const hash = own[field]!;
      let ref: Ref | undefined = fieldOf.get(hash);
      if (ref === undefined) {
        ref = placeOf.get(hash);
        if (ref === undefined) {
          ref = extra.push(hash) - 1;
          placeOf.set(hash, ref);
        }
      }
      refs[field] = ref;
    }
    stored[type] = refs;
  }
  return JSON.stringify(stored);
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
