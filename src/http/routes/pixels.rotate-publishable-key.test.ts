import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';

const HOUR = 3_600_000;

for (const kind of await testStores()) {
  describe(`publishable keys [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
    });
    after(() => h.close());

    it('every pixel has one, shown in the pixel object, different per pixel', async () => {
      const a = await h.pixel(acme);
      const b = await h.pixel(acme);
      const [pa, pb] = await Promise.all(
        [a, b].map(async (id) =>
          (await h.request(acme, { method: 'GET', url: `/v1/pixels/${id}` })).json(),
        ),
      );
      assert.match(pa.publishable_key, /^tw_pub_[0-9A-Za-z]{24}$/);
      assert.notEqual(pa.publishable_key, pb.publishable_key);
      const list = (await h.request(acme, { method: 'GET', url: '/v1/pixels' })).json();
      assert.ok(
        list.pixels.some(
          (p: { publishable_key: string }) => p.publishable_key === pa.publishable_key,
        ),
      );
    });

    it('rotates: a new key at once, the old one opens the pixel for 24 h, then not', async () => {
      const id = await h.pixel(acme);
      const old = (await h.request(acme, { method: 'GET', url: `/v1/pixels/${id}` })).json()
        .publishable_key as string;
      const res = await h.request(acme, {
        method: 'POST',
        url: `/v1/pixels/${id}/publishable-key/rotate`,
      });
      assert.equal(res.statusCode, 200, res.body);
      const rotated = res.json();
      assert.equal(rotated.id, id);
      assert.match(rotated.publishable_key, /^tw_pub_[0-9A-Za-z]{24}$/);
      assert.notEqual(rotated.publishable_key, old);
      const shown = (await h.request(acme, { method: 'GET', url: `/v1/pixels/${id}` })).json();
      assert.equal(shown.publishable_key, rotated.publishable_key);

      const now = h.clock.now();
      assert.equal(
        (await h.store.pixels.findByPublishableKey(rotated.publishable_key, now))?.id,
        id,
      );
      assert.equal((await h.store.pixels.findByPublishableKey(old, now))?.id, id);
      const later = new Date(now.getTime() + 23 * HOUR);
      assert.equal((await h.store.pixels.findByPublishableKey(old, later))?.id, id);
      const expired = new Date(now.getTime() + 24 * HOUR + 1);
      assert.equal(await h.store.pixels.findByPublishableKey(old, expired), null);
      assert.equal(
        (await h.store.pixels.findByPublishableKey(rotated.publishable_key, expired))?.id,
        id,
      );
    });

    it('a second rotation ends the first old key at once', async () => {
      const id = await h.pixel(acme);
      const first = (await h.request(acme, { method: 'GET', url: `/v1/pixels/${id}` })).json()
        .publishable_key as string;
      await h.request(acme, { method: 'POST', url: `/v1/pixels/${id}/publishable-key/rotate` });
      await h.request(acme, { method: 'POST', url: `/v1/pixels/${id}/publishable-key/rotate` });
      assert.equal(await h.store.pixels.findByPublishableKey(first, h.clock.now()), null);
    });

    it("is a 404 for another account's pixel, and opens no other route (401)", async () => {
      const other = await h.account('pro');
      const id = await h.pixel(acme);
      const res = await h.request(other, {
        method: 'POST',
        url: `/v1/pixels/${id}/publishable-key/rotate`,
      });
      assert.equal(res.statusCode, 404);
      const key = (await h.request(acme, { method: 'GET', url: `/v1/pixels/${id}` })).json()
        .publishable_key as string;
      for (const [method, url] of [
        ['GET', `/v1/pixels/${id}`],
        ['GET', '/v1/pixels'],
        ['POST', '/v1/track'],
        ['POST', `/v1/pixels/${id}/publishable-key/rotate`],
      ] as const) {
        const refused = await h.request(null, {
          method,
          url,
          headers: { authorization: `Bearer ${key}` },
          ...(method === 'POST' && url === '/v1/track'
            ? { payload: { pixel_id: id, event_name: 'Lead' } }
            : {}),
        });
        assert.equal(refused.statusCode, 401, `${method} ${url}: ${refused.body}`);
      }
    });
  });
}
