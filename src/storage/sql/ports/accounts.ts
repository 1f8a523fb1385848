import type { AccountStore } from '../../../domain/ports/account-store.ts';
import * as accounts from '../../queries/accounts.ts';
import * as keys from '../../queries/api-keys.ts';
import type { Runner } from '../query.ts';

export function accountStore({ sql: db, read, transaction }: Runner): AccountStore {
  return {
    createAccount: (a, firstKey) => transaction(() => accounts.createAccount(db, a, firstKey)),
    getAccount: (id) => read(() => accounts.getAccount(db, id)),
    countAccounts: () => read(() => accounts.countAccounts(db)),
    listAccounts: () => read(() => accounts.listAccounts(db)),
    updateAccount: (id, change) => transaction(() => accounts.updateAccount(db, id, change)),
    createApiKey: (key) => read(() => keys.insertKey(db, key)),
    listApiKeys: (accountId) => read(() => keys.listApiKeys(db, accountId)),
    revokeApiKey: (keyId, at) => transaction(() => keys.revokeApiKey(db, keyId, at)),
    findByKeyHash: (hash) => read(() => accounts.findByKeyHash(db, hash)),
  };
}
