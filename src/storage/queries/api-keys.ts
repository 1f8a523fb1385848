/** API key queries, written once for both databases (sql/query.ts). */
import type { ApiKeyRecord, ManagedKey } from '../../domain/model.ts';
import type { NewApiKeyRow } from '../../domain/ports/account-store.ts';
import type { Page } from '../../domain/ports/common.ts';
import type { NewManagedKeyRow } from '../../domain/ports/key-store.ts';
import { type ManagedKeyRow, toKey, toManagedKey } from '../rows.ts';
import { all, first, prepared, type Query, run, type Sql } from '../sql/query.ts';

/** A key of the keys API, named and scoped. */
export function* createKey(db: Sql, k: NewManagedKeyRow): Query<void> {
  yield* insertKey(db, k, { name: k.name, scope: k.scope });
}

/** A key row; without `named`, name and scope take the table's defaults (the operator CLI). */
export function* insertKey(
  db: Sql,
  k: NewApiKeyRow,
  named: { name: string; scope: string } | null = null,
): Query<void> {
  yield* run(
    db.q.insertInto('api_keys').values({
      id: k.id,
      account_id: k.accountId,
      key_hash: k.hash,
      ...named,
      prefix: k.prefix,
      last4: k.last4,
      created_at: db.store.time(k.createdAt),
      revoked_at: db.store.timeOrNull(k.revokedAt),
    }),
  );
}

export function* listApiKeys(db: Sql, accountId: string): Query<ApiKeyRecord[]> {
  const rows = yield* all(byAccount(db, accountId));
  return rows.map((r) => toKey(db.codec, r as ManagedKeyRow));
}

export function* listKeys(db: Sql, accountId: string): Query<ManagedKey[]> {
  const rows = yield* all(byAccount(db, accountId));
  return rows.map((r) => toManagedKey(db.codec, r as ManagedKeyRow));
}

/** One page of the keys API's list, with the account's total, in one read. */
export function* pageKeys(
  db: Sql,
  accountId: string,
  page: Page,
): Query<{ keys: ManagedKey[]; total: number }> {
  const rows = yield* all(byAccount(db, accountId).limit(page.limit).offset(page.offset));
  const count = yield* first(
    db.q
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', accountId),
  );
  return {
    keys: rows.map((r) => toManagedKey(db.codec, r as ManagedKeyRow)),
    total: Number(count?.n ?? 0),
  };
}

const byAccount = (db: Sql, accountId: string) =>
  db.q
    .selectFrom('api_keys')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id');

/** Never the hash: what is read back is what the keys API may show. */
const COLUMNS = [
  'id',
  'account_id',
  'name',
  'scope',
  'prefix',
  'last4',
  'created_at',
  'last_used_at',
  'revoked_at',
] as const;

/**
 * Marks the key revoked unless it already is (a repeat keeps the first time), then reads it;
 * `accountId`, when given, scopes both to that account (the keys API; the CLI passes none).
 * Run in a transaction, so the row read is the one the update left.
 */
export function* revokeKey(
  db: Sql,
  accountId: string,
  keyId: string,
  at: Date,
): Query<ManagedKey | null> {
  const row = yield* revoke(db, accountId, keyId, at);
  return row ? toManagedKey(db.codec, row) : null;
}

export function* revokeApiKey(db: Sql, keyId: string, at: Date): Query<ApiKeyRecord | null> {
  const row = yield* revoke(db, null, keyId, at);
  return row ? toKey(db.codec, row) : null;
}

function* revoke(
  db: Sql,
  accountId: string | null,
  keyId: string,
  at: Date,
): Query<ManagedKeyRow | undefined> {
  let update = db.q
    .updateTable('api_keys')
    .set({ revoked_at: db.store.time(at) })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null);
  let read = db.q.selectFrom('api_keys').select(COLUMNS).where('id', '=', keyId);
  if (accountId !== null) {
    update = update.where('account_id', '=', accountId);
    read = read.where('account_id', '=', accountId);
  }
  yield* run(update);
  return (yield* first(read)) as ManagedKeyRow | undefined;
}

/**
 * Marks the key used at `at`. Never moves backwards: two instances touching in either order
 * leave the later time. Prepared: it follows authenticated requests (throttled by key-usage.ts).
 */
export function* touchKey(db: Sql, keyId: string, at: Date): Query<void> {
  yield* run(touch(db, keyId, db.store.time(at)));
}

const touch = prepared((db: Sql, keyId: string, at: unknown) =>
  db.q
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)])),
);
