/** Retention settings, written once for both databases (sql/query.ts). */
import { first, type Query, run, type Sql } from '../sql/query.ts';

/** The account's own retention in days, or null for the default. */
export function* retentionDays(db: Sql, accountId: string): Query<number | null> {
  const row = yield* first(
    db.q.selectFrom('account_retention').select('days').where('account_id', '=', accountId),
  );
  return row?.days ?? null;
}

export function* setRetentionDays(db: Sql, accountId: string, days: number): Query<void> {
  yield* run(
    db.q
      .insertInto('account_retention')
      .values({ account_id: accountId, days })
      .onConflict((oc) =>
        oc.column('account_id').doUpdateSet((eb) => ({ days: eb.ref('excluded.days') })),
      ),
  );
}
