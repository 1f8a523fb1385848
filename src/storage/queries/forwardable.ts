/**
 * The forwarding worker's loader (ports.ts `ForwardingSource`), written once for both
 * databases: the stored events of one pixel, as the payload builders take them.
 *
 * For now from the events table alone: the record's `user_data` hashes, under Meta's names
 * where Meta has one (Trackway and Meta normalise those fields alike: trimmed, lower-cased;
 * phone as digits). The raw match keys (contract §11) are not stored yet, so `matchKeys` and
 * `location` are null and `actionSource` is `system_generated`: Meta refuses a `website`
 * event without `client_user_agent`, so a record without match keys could never be forwarded
 * as one. The match-keys work replaces this loader with one that reads the stored
 * `action_source` and the raw keys kept apart.
 */
import type { ForwardableEvent } from '../../domain/forwarding/model.ts';
import type { MetaUserDataHashes } from '../../domain/forwarding/platform-user-data.ts';
import { type EventRow, toEvent } from '../rows.ts';
import { all, type Query, type Sql } from '../sql/query.ts';

const META_NAMES: Record<string, keyof MetaUserDataHashes> = {
  email: 'em',
  phone: 'ph',
  first_name: 'fn',
  last_name: 'ln',
  city: 'ct',
  state: 'st',
  zip: 'zp',
  country: 'country',
  external_id: 'external_id',
};

/** Most ids one statement binds (SQLite's default limit is 32,766 parameters). */
const CHUNK = 1_000;

export function* forwardable(
  db: Sql,
  accountId: string,
  pixelId: string,
  eventIds: string[],
): Query<ForwardableEvent[]> {
  const out: ForwardableEvent[] = [];
  for (let i = 0; i < eventIds.length; i += CHUNK) {
    const rows = yield* all(
      db.q
        .selectFrom('events')
        .select([
          'account_id',
          'pixel_id',
          'event_id',
          'event_name',
          'value',
          'currency',
          'timestamp',
          'received_at',
          'url',
          'referrer',
          'title',
          'search_string',
          'user_data',
          'custom_data',
        ])
        .where('pixel_id', '=', pixelId)
        .where('account_id', '=', accountId)
        .where('event_id', 'in', eventIds.slice(i, i + CHUNK)),
    );
    for (const row of rows) {
      const event = toEvent(db.codec, row as EventRow);
      const meta: MetaUserDataHashes = {};
      for (const [field, hash] of Object.entries(event.userData ?? {})) {
        const name = META_NAMES[field];
        if (name !== undefined) meta[name] = hash;
      }
      out.push({
        event,
        actionSource: 'system_generated',
        hashes: { meta, ga4: {}, tiktok: {} },
        matchKeys: null,
        location: null,
      });
    }
  }
  return out;
}
