/** Keys (contract §13). */

import type { KeyScope, ManagedKey } from '../model.ts';
import type { NewApiKeyRow } from './account-store.ts';
import type { Page } from './common.ts';

export interface NewManagedKeyRow extends NewApiKeyRow {
  name: string;
  scope: KeyScope;
}

/** The keys API's view of api_keys: names, scopes and last use, always scoped by account. */
export interface KeyStore {
  createKey(key: NewManagedKeyRow): Promise<void>;
  /** Oldest first, revoked keys included (the operator CLI: every key). */
  listKeys(accountId: string): Promise<ManagedKey[]>;
  /** The same order, one page of it, and how many keys the account has. */
  pageKeys(accountId: string, page: Page): Promise<{ keys: ManagedKey[]; total: number }>;
  /** Marks the account's key revoked (idempotent); `null` when the account has no such key. */
  revokeKey(accountId: string, keyId: string, at: Date): Promise<ManagedKey | null>;
  /** Records a use of the key; callers throttle it (one write a minute per key). */
  touchKey(keyId: string, at: Date): Promise<void>;
}
