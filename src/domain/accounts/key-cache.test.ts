import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TestClock } from '../../../test/harness.ts';
import { SqliteStore } from '../../storage/sqlite/store.ts';
import { createAccount, revokeKey } from './accounts.ts';
import { hashApiKey } from './api-key.ts';
import { ApiKeyCache, KEY_CACHE_TTL_MS } from './key-cache.ts';

describe('API key cache', () => {
  it('reuses a lookup for less than a second, then sees the revocation', async () => {
    const store = SqliteStore.open(':memory:');
    const clock = new TestClock();
    const { apiKey, keyId, account } = await createAccount(
      { store, clock },
      { name: 'Acme', plan: 'pro' },
    );
    const cache = new ApiKeyCache(store.accounts, clock);
    const hash = hashApiKey(apiKey);
    assert.equal((await cache.findByKeyHash(hash))?.account.id, account.id);
    await revokeKey({ store, clock }, keyId);
    clock.set(new Date(clock.current.getTime() + KEY_CACHE_TTL_MS - 1));
    assert.equal((await cache.findByKeyHash(hash))?.account.id, account.id, 'still cached');
    clock.set(new Date(clock.current.getTime() + 1));
    assert.equal(await cache.findByKeyHash(hash), null);
    await store.close();
  });
});
