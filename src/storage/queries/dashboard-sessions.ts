/** Dashboard session queries, written once for both databases (sql/query.ts). */
import type { DashboardSession } from '../../domain/model.ts';
import { type SessionRow, toSession } from '../rows.ts';
import { first, prepared, type Query, run, type Sql } from '../sql/query.ts';

/** Run in a transaction. Expired sessions are swept as new ones arrive: the table stays small. */
export function* createSession(db: Sql, s: DashboardSession): Query<void> {
  const now = db.store.time(s.createdAt);
  yield* run(db.q.deleteFrom('dashboard_sessions').where('expires_at', '<=', now));
  yield* run(
    db.q.insertInto('dashboard_sessions').values({
      token_hash: s.tokenHash,
      account_id: s.accountId,
      key_id: s.keyId,
      created_at: now,
      expires_at: db.store.time(s.expiresAt),
    }),
  );
}

/** A live session whose key is not revoked. Prepared: every dashboard request asks this. */
export function* findSession(
  db: Sql,
  tokenHash: string,
  now: Date,
): Query<DashboardSession | null> {
  const row = yield* first(live(db, tokenHash, db.store.time(now)));
  return row ? toSession(db.codec, row as SessionRow) : null;
}

const live = prepared((db: Sql, tokenHash: string, now: unknown) =>
  db.q
    .selectFrom('dashboard_sessions as s')
    .innerJoin('api_keys as k', 'k.id', 's.key_id')
    .selectAll('s')
    .where('s.token_hash', '=', tokenHash)
    .where('s.expires_at', '>', now)
    .where('k.revoked_at', 'is', null),
);

export function* deleteSession(db: Sql, tokenHash: string): Query<void> {
  yield* run(db.q.deleteFrom('dashboard_sessions').where('token_hash', '=', tokenHash));
}
