import type { KeyStore } from '../../../domain/ports/key-store.ts';
import * as keys from '../../queries/api-keys.ts';
import type { Runner } from '../query.ts';

export function keyStore({ sql: db, read, transaction }: Runner): KeyStore {
  return {
    createKey: (key) => read(() => keys.createKey(db, key)),
    listKeys: (accountId) => read(() => keys.listKeys(db, accountId)),
    pageKeys: (accountId, page) => read(() => keys.pageKeys(db, accountId, page)),
    revokeKey: (accountId, id, at) => transaction(() => keys.revokeKey(db, accountId, id, at)),
    touchKey: (id, at) => read(() => keys.touchKey(db, id, at)),
  };
}
