/**
 * Visitor identities (identity stitching), written once for both databases: a visitor's latest
 * browser identifiers, raw, read to fill a server event, and erased at their expiry or with the
 * person's events. The browser event's insert writes them (its own SQL, in its transaction).
 */
import type { VisitorKeys } from '../../domain/model.ts';
import { all, first, type Query, run, type Sql } from '../sql/query.ts';

/** The visitor's identifiers while kept (`expires_at` after `now`), or null. */
export function* visitorKeys(
  db: Sql,
  accountId: string,
  pixelId: string,
  anonymousId: string,
  now: Date,
): Query<VisitorKeys | null> {
  const row = yield* first(
    db.q
      .selectFrom('visitor_identities')
      .select('keys')
      .where('pixel_id', '=', pixelId)
      .where('anonymous_id', '=', anonymousId)
      .where('account_id', '=', accountId)
      .where('expires_at', '>', db.store.time(now)),
  );
  return row ? db.codec.json<VisitorKeys>(row.keys) : null;
}

/** Deletes at most `limit` identities expired at `now`; how many. */
export function* eraseExpiredVisitors(db: Sql, now: Date, limit: number): Query<number> {
  if (limit <= 0) return 0;
  const at = db.store.time(now);
  // Read first, then deleted per account by key (as forwardable.ts eraseExpired): a delete
  // whose subquery spans every account cannot go to one account's shard once distributed. The
  // expiry check repeated keeps an identity refreshed in between.
  const expired = yield* all(
    db.q
      .selectFrom('visitor_identities')
      .select(['account_id', 'pixel_id', 'anonymous_id'])
      .where('expires_at', '<=', at)
      .orderBy('expires_at')
      .limit(limit),
  );
  const byAccount = new Map<string, { pixel: string[]; visitor: string[] }>();
  for (const row of expired) {
    let keys = byAccount.get(row.account_id);
    if (!keys) {
      keys = { pixel: [], visitor: [] };
      byAccount.set(row.account_id, keys);
    }
    keys.pixel.push(row.pixel_id);
    keys.visitor.push(row.anonymous_id);
  }
  let erased = 0;
  for (const [accountId, keys] of byAccount) {
    erased += yield* run(
      db.q
        .deleteFrom('visitor_identities')
        .where('account_id', '=', accountId)
        .where('anonymous_id', 'in', keys.visitor)
        .where('pixel_id', 'in', keys.pixel)
        .where('expires_at', '<=', at),
    );
  }
  return erased;
}

/** The last time any visitor of the pixel sent a browser event (while kept), or null. */
export function* lastBrowserHit(db: Sql, accountId: string, pixelId: string): Query<Date | null> {
  const row = yield* first(
    db.q
      .selectFrom('visitor_identities')
      .select((eb) => eb.fn.max('last_seen_at').as('at'))
      .where('pixel_id', '=', pixelId)
      .where('account_id', '=', accountId),
  );
  return row?.at == null ? null : db.codec.time(row.at);
}
