/** Account queries, written once for both databases (sql/query.ts). */
import { sql } from 'kysely';
import type { Account, KeyScope } from '../../domain/model.ts';
import type { NewApiKeyRow } from '../../domain/ports/account-store.ts';
import type { Change } from '../../domain/ports/common.ts';
import { type AccountRow, toAccount } from '../rows.ts';
import { applyChange } from '../sql/change.ts';
import { all, first, forUpdate, prepared, type Query, run, type Sql } from '../sql/query.ts';
import { insertKey } from './api-keys.ts';

export function* createAccount(db: Sql, a: Account, firstKey: NewApiKeyRow | null): Query<void> {
  yield* run(
    db.q.insertInto('accounts').values({
      id: a.id,
      name: a.name,
      plan: a.plan,
      status: a.status,
      custom_requests_per_minute: a.customRequestsPerMinute,
      custom_daily_limit: a.customDailyLimit,
      created_at: db.store.time(a.createdAt),
    }),
  );
  if (firstKey) yield* insertKey(db, firstKey);
}

const byId = (db: Sql, accountId: string) =>
  db.q.selectFrom('accounts').selectAll().where('id', '=', accountId);

export function* getAccount(db: Sql, accountId: string): Query<Account | null> {
  const row = yield* first(byId(db, accountId));
  return row ? toAccount(db.codec, row as AccountRow) : null;
}

export function* countAccounts(db: Sql): Query<number> {
  const row = yield* first(db.q.selectFrom('accounts').select((eb) => eb.fn.countAll().as('n')));
  return Number(row?.n ?? 0);
}

/** Oldest first; ids sort by their bytes on both databases, whatever pg's locale. */
export function* listAccounts(db: Sql): Query<Account[]> {
  const rows = yield* all(
    db.q
      .selectFrom('accounts')
      .selectAll()
      .orderBy('created_at')
      .orderBy(db.dialect === 'postgres' ? sql`id collate "C"` : sql`id`),
  );
  return rows.map((r) => toAccount(db.codec, r as AccountRow));
}

/** Locked: two plan changes at once apply in turn, each seeing the other's result. */
export function updateAccount(db: Sql, accountId: string, change: Change<Account>) {
  return applyChange(
    (function* () {
      const row = yield* first(forUpdate(db, byId(db, accountId)));
      return row ? toAccount(db.codec, row as AccountRow) : null;
    })(),
    change,
    (a) =>
      run(
        db.q
          .updateTable('accounts')
          .set({
            name: a.name,
            plan: a.plan,
            status: a.status,
            custom_requests_per_minute: a.customRequestsPerMinute,
            custom_daily_limit: a.customDailyLimit,
          })
          .where('id', '=', a.id),
      ),
  );
}

/**
 * The account owning an unrevoked key with this hash. Prepared (compiled once): every
 * authenticated request that misses the key cache asks this.
 */
export function* findByKeyHash(
  db: Sql,
  hash: string,
): Query<{ account: Account; keyId: string; scope: KeyScope } | null> {
  const row = yield* first(byHash(db, hash));
  if (!row) return null;
  const { key_id, scope, ...account } = row as AccountRow & { key_id: string; scope: KeyScope };
  return { account: toAccount(db.codec, account), keyId: key_id, scope };
}

const byHash = prepared((db: Sql, hash: string) =>
  db.q
    .selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .selectAll('a')
    .select(['k.id as key_id', 'k.scope'])
    .where('k.key_hash', '=', hash)
    .where('k.revoked_at', 'is', null),
);
