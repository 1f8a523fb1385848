import type { Account, ApiKeyRecord, KeyScope } from '../model.ts';
import type { Change } from './common.ts';

export interface NewApiKeyRow extends ApiKeyRecord {
  /** SHA-256 of the key; the only form in which a key is kept. */
  hash: string;
}

export interface AccountStore {
  createAccount(account: Account, firstKey: NewApiKeyRow | null): Promise<void>;
  getAccount(accountId: string): Promise<Account | null>;
  countAccounts(): Promise<number>;
  /** Every account, oldest first (the operator's `accounts list`). */
  listAccounts(): Promise<Account[]>;
  /** Applies `change` to the account atomically; `null` when there is no such account. */
  updateAccount(
    accountId: string,
    change: Change<Account>,
  ): Promise<{ before: Account; after: Account } | null>;
  createApiKey(key: NewApiKeyRow): Promise<void>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked (idempotent); `null` when there is no such key. */
  revokeApiKey(keyId: string, at: Date): Promise<ApiKeyRecord | null>;
  /** The account owning an unrevoked key with this hash, and what the key may do. */
  findByKeyHash(hash: string): Promise<{ account: Account; keyId: string; scope: KeyScope } | null>;
}
