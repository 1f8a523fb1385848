/**
 * Match keys (contract §11) as forwarding reads them, written once for both databases
 * (sql/query.ts): the events to send, each with its action_source, every platform's hashes
 * and its raw match keys (null once the 7-day sweep erased them); the sweep itself; and the
 * pixel's 7-day match quality average from the hourly rollup.
 */
import type { ActionSource, RawMatchKeys } from '../../domain/forwarding/match-keys.ts';
import type { ForwardableEvent } from '../../domain/forwarding/model.ts';
import { hashesOfRecord } from '../../domain/forwarding/platform-user-data.ts';
import { type Platform, platformModule } from '../../domain/forwarding/platforms/registry.ts';
import type { PlatformLocation } from '../../domain/model.ts';
import { decodePlatformHashes } from '../platform-hashes.ts';
import { type EventRow, toEvent } from '../rows.ts';
import { all, first, type Query, run, type Sql } from '../sql/query.ts';

/**
 * The pixel's events with these ids (the account's only: another account's pixel yields
 * nothing), in the order asked; ids not stored are left out.
 */
export function* forwardable(
  db: Sql,
  accountId: string,
  pixelId: string,
  eventIds: string[],
  platform?: Platform,
): Query<ForwardableEvent[]> {
  if (eventIds.length === 0) return [];
  // A platform whose hashes are the record's own (Meta) reads neither the other platforms'
  // hashes nor the location: not read for it (the worker loads 1,000 events a batch; these are
  // its largest JSON columns).
  const own = platform === undefined ? undefined : platformModule(platform);
  const lean = own?.hashesOfRecord !== undefined;
  const rows = yield* all(
    db.q
      .selectFrom('events as e')
      .leftJoin('event_match_keys as k', (join) =>
        join.onRef('k.account_id', '=', 'e.account_id').onRef('k.seq', '=', 'e.seq'),
      )
      .select([
        'e.account_id',
        'e.pixel_id',
        'e.event_id',
        'e.event_name',
        'e.value',
        'e.currency',
        'e.timestamp',
        'e.received_at',
        'e.url',
        'e.referrer',
        'e.title',
        'e.search_string',
        'e.user_data',
        'e.custom_data',
        'e.action_source',
        'e.match_quality',
        'e.consent',
        'k.match_keys',
      ])
      .$if(!lean, (q) => q.select(['e.platform_hashes', 'k.location']))
      // Not `account_id` here: with it, SQLite's planner (no statistics) prefers an index
      // starting (account_id, pixel_id) and reads every event of the pixel for each batch —
      // 50,000 rows per 1,000 loaded with a 50,000 backlog. Without it only the unique
      // (pixel_id, event_id) index fits: one seek per id. The account is checked below.
      .where('e.pixel_id', '=', pixelId)
      .where('e.event_id', 'in', [...new Set(eventIds)]),
  );
  const byId = new Map<string, ForwardableEvent>();
  for (const row of rows) {
    if (row.account_id !== accountId) continue;
    const event = toEvent(db.codec, row as EventRow);
    const stored =
      row.platform_hashes == null
        ? {}
        : decodePlatformHashes(
            db.codec.json<Record<string, unknown>>(row.platform_hashes),
            event.userData,
          );
    byId.set(event.eventId, {
      event,
      actionSource: row.action_source as ActionSource,
      hashes:
        own === undefined
          ? { ...stored, ...hashesOfRecord(event.userData) }
          : lean
            ? { [own.type]: own.hashesOfRecord!(event.userData) }
            : { [own.type]: stored[own.type] ?? {} },
      matchKeys: row.match_keys == null ? null : db.codec.json<RawMatchKeys>(row.match_keys),
      location: row.location == null ? null : db.codec.json<PlatformLocation>(row.location),
    });
  }
  return eventIds.flatMap((id) => {
    const found = byId.get(id);
    return found ? [found] : [];
  });
}

/**
 * Deletes at most `limit` rows of raw match keys whose expiry has passed at `now`, oldest
 * expiry first (the expiry index bounds the scan); how many it deleted.
 */
export function* eraseExpired(db: Sql, now: Date, limit: number): Query<number> {
  // Read first, then deleted per account by key: a delete whose subquery spans every account
  // (and has a LIMIT) cannot be sent to one account's shard when the table is distributed.
  const expired = yield* all(
    db.q
      .selectFrom('event_match_keys')
      .select(['account_id', 'seq'])
      .where('expires_at', '<=', db.store.time(now))
      .orderBy('expires_at')
      .limit(limit),
  );
  const byAccount = new Map<string, number[]>();
  for (const { account_id, seq } of expired) {
    const seqs = byAccount.get(account_id);
    if (seqs) seqs.push(seq);
    else byAccount.set(account_id, [seq]);
  }
  let erased = 0;
  for (const [accountId, seqs] of byAccount) {
    erased += yield* run(
      db.q
        .deleteFrom('event_match_keys')
        .where('account_id', '=', accountId)
        .where('seq', 'in', seqs)
        .where('expires_at', '<=', db.store.time(now)),
    );
  }
  return erased;
}

/**
 * The mean match quality score of the pixel's events whose timestamp falls in an hour from
 * `fromHour` on (hour numbers since the epoch), from the hourly rollup: at most one row per
 * (event name, hour), never the events. Null when no event of those hours was scored.
 */
export function* averageMatchQuality(
  db: Sql,
  accountId: string,
  pixelId: string,
  fromHour: number,
): Query<number | null> {
  const row = yield* first(
    db.q
      .selectFrom('event_counts')
      .select((eb) => [
        eb.fn.sum<number | string | null>('match_sum').as('total'),
        eb.fn.sum<number | string | null>('match_n').as('scored'),
      ])
      .where('pixel_id', '=', pixelId)
      .where('account_id', '=', accountId)
      .where('hour', '>=', fromHour),
  );
  const scored = Number(row?.scored ?? 0);
  if (scored <= 0) return null;
  return Math.round((Number(row?.total ?? 0) / scored) * 10) / 10;
}
