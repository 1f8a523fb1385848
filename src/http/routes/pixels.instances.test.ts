/**
 * Two instances over one database (issue 15 item 1): a pixel changed through one is read back
 * changed through the other at once. Only the track path's trackability check may reuse a
 * lookup (for up to a second, pixel-cache.ts); GET, list and PATCH's answer read the store.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  dropSchema,
  freshSchemaName,
  type Harness,
  postgresUrl,
  type StoreKind,
  startHarness,
  type TestAccount,
  tempDir,
  testStores,
} from '../../../test/harness.ts';
import { PostgresStore } from '../../storage/postgres/store.ts';
import { SqliteStore } from '../../storage/sqlite/store.ts';

/** A store kind whose every open() reaches the same database, and how to remove it after. */
function oneDatabase(name: string): { kind: StoreKind; remove(): Promise<void> } {
  if (name === 'sqlite') {
    const dir = tempDir('trackway-two-instances-');
    return {
      kind: {
        name,
        open: async (commits) =>
          SqliteStore.open(join(dir.path, 'trackway.db'), commits ? { commits } : {}),
      },
      remove: async () => dir.remove(),
    };
  }
  const schema = freshSchemaName();
  return {
    kind: {
      name,
      async open(commits) {
        const store = await PostgresStore.open({
          url: postgresUrl(schema),
          poolSize: 4,
          ...(commits && { commits }),
        });
        await store.migrate();
        return store;
      },
    },
    remove: () => dropSchema(schema),
  };
}

for (const { name } of await testStores()) {
  describe(`a pixel read through a second instance [${name}]`, () => {
    const database = oneDatabase(name);
    let first: Harness;
    let second: Harness;
    let owner: TestAccount;

    before(async () => {
      first = await startHarness(database.kind);
      second = await startHarness(database.kind);
      owner = await first.account('pro');
    });
    after(async () => {
      await first.close();
      await second.close();
      await database.remove();
    });

    it('shows a PATCH made on the first instance at once (GET, list, PATCH answer)', async () => {
      const pixel = await first.pixel(owner, { name: 'Before', domain: 'shop.example.com' });
      // The second instance has read the pixel and tracked to it (both ways a cache could fill).
      const seen = await second.request(owner, { method: 'GET', url: `/v1/pixels/${pixel}` });
      assert.equal(seen.json().name, 'Before');
      const tracked = await second.track(owner, { pixel_id: pixel, event_name: 'Lead' });
      assert.equal(tracked.statusCode, 200);
      await second.request(owner, { method: 'GET', url: '/v1/pixels' });

      const patched = await first.request(owner, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}`,
        payload: { name: 'After', status: 'paused' },
      });
      assert.equal(patched.statusCode, 200);

      // No clock moved: whatever the second instance read before must not be served again.
      const got = await second.request(owner, { method: 'GET', url: `/v1/pixels/${pixel}` });
      assert.equal(got.json().name, 'After');
      assert.equal(got.json().status, 'paused');
      const listed = await second.request(owner, { method: 'GET', url: '/v1/pixels' });
      const entry = listed.json().pixels.find((p: { id: string }) => p.id === pixel);
      assert.deepEqual([entry.name, entry.status], ['After', 'paused']);
      const answer = await second.request(owner, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}`,
        payload: { domain: 'shop2.example.com' },
      });
      assert.deepEqual(
        [answer.json().name, answer.json().status, answer.json().domain],
        ['After', 'paused', 'shop2.example.com'],
      );
    });
  });
}
