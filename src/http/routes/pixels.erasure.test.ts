import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { sha256Hex } from '../../domain/events/user-data.ts';
import { createLogger } from '../../logger.ts';

for (const kind of await testStores()) {
  describe(`POST /v1/pixels/:pixel_id/erasure [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let shop: string;
    let blog: string;
    const logged: Record<string, unknown>[] = [];

    before(async () => {
      const logger = createLogger('info', {
        write: (line: string) => {
          logged.push(JSON.parse(line));
        },
      });
      h = await startHarness(kind, { logger });
      h.clock.set('2026-03-02T12:30:00.000Z');
      acme = await h.account('pro');
      other = await h.account('pro');
      shop = await h.pixel(acme);
      blog = await h.pixel(acme);
    });
    after(() => h.close());

    const track = async (owner: TestAccount, pixel_id: string, event_id: string, extra = {}) => {
      const res = await h.track(owner, {
        pixel_id,
        event_name: 'Purchase',
        event_id,
        timestamp: '2026-03-01T10:05:00Z',
        value: 10,
        currency: 'USD',
        ...extra,
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    const erase = (owner: TestAccount, pixel: string, payload: unknown) =>
      h.request(owner, {
        method: 'POST',
        url: `/v1/pixels/${pixel}/erasure`,
        payload: payload as object,
      });
    const ids = async (pixel: string) => {
      const res = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/events?limit=100`,
      });
      return (res.json().events as { event_id: string }[]).map((e) => e.event_id).sort();
    };
    const stats = async (pixel: string) => {
      const res = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/stats?interval=day&start_date=2026-03-01&end_date=2026-03-01`,
      });
      return res.json().buckets;
    };

    it("deletes the pixel's events matching any key, hashed as ingest hashes, with their counts", async () => {
      await track(acme, shop, 'jane-1', { user_data: { email: ' Jane@Example.com ' } });
      await track(acme, shop, 'jane-2', { user_data: { phone: '+1 (415) 555-2671' } });
      await track(acme, shop, 'bob', { user_data: { email: 'bob@example.com' } });
      await track(acme, shop, 'anon');
      await track(acme, blog, 'jane-blog', { user_data: { email: 'jane@example.com' } });
      const res = await erase(acme, shop, {
        user_data: { email: 'JANE@example.com', phone: '+14155552671' },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { deleted: 2 });
      assert.deepEqual(await ids(shop), ['anon', 'bob']);
      assert.deepEqual(await ids(blog), ['jane-blog']);
      // The list's total and the dashboard's stats no longer count them.
      const list = await h.request(acme, { method: 'GET', url: `/v1/pixels/${shop}/events` });
      assert.equal(list.json().total, 2);
      assert.deepEqual(await stats(shop), [
        { start: '2026-03-01T00:00:00.000Z', event_name: 'Purchase', count: 2, value_sum: 20 },
      ]);
      // The audit lines: account, pixel, kinds of key (and at the end the count), never the
      // values or hashes. The first is written at the start, so that an erasure that dies
      // half-way still leaves one; the second when it completes.
      const lines = logged.filter((l) => l.audit === 'erasure');
      assert.deepEqual(
        lines.map((l) => l.status),
        ['started', 'completed'],
      );
      const [started, audit] = lines as [Record<string, unknown>, Record<string, unknown>];
      assert.equal(started.deleted, undefined, 'written before anything was deleted');
      assert.deepEqual(started.keys, ['email', 'phone']);
      assert.equal(started.account_id, acme.account.id);
      assert.equal(started.reqId, audit.reqId);
      assert.equal(audit.level, 30);
      assert.equal(audit.account_id, acme.account.id);
      assert.equal(audit.pixel_id, shop);
      assert.equal(audit.deleted, 2);
      assert.deepEqual(audit.keys, ['email', 'phone']);
      const text = JSON.stringify(logged);
      assert.ok(!text.includes('jane@example.com') && !text.includes('JANE@example.com'));
      assert.ok(!text.includes(sha256Hex('jane@example.com')));
      assert.ok(!text.includes('4155552671'));
    });

    it('erases across every pixel of the account with all_pixels, a hash taken as given', async () => {
      await track(acme, shop, 'ext-1', { user_data: { external_id: 'cust-42' } });
      await track(acme, blog, 'ext-2', { user_data: { external_id: ' cust-42 ' } });
      await track(other, await h.pixel(other), 'ext-other', {
        user_data: { external_id: 'cust-42' },
      });
      const res = await erase(acme, shop, {
        user_data: { external_id: sha256Hex('cust-42') },
        all_pixels: true,
      });
      assert.deepEqual(res.json(), { deleted: 2 });
      assert.ok(!(await ids(shop)).includes('ext-1'));
      assert.ok(!(await ids(blog)).includes('ext-2'));
      // Stats of a bucket left empty are gone; the other account's event is untouched.
      assert.deepEqual(await stats(blog), [
        { start: '2026-03-01T00:00:00.000Z', event_name: 'Purchase', count: 1, value_sum: 10 },
      ]);
      const again = await erase(
        other,
        (await h.request(other, { method: 'GET', url: '/v1/pixels' })).json().pixels[0].id,
        {
          user_data: { external_id: 'cust-42' },
        },
      );
      assert.deepEqual(again.json(), { deleted: 1 });
    });

    it('refuses an empty key set, unknown fields and bad values with 400', async () => {
      for (const [payload, field] of [
        [{ user_data: {} }, 'user_data'],
        [{ user_data: { email: 'a@b.co' }, extra: 1 }, undefined],
        [{ user_data: { first_name: 'Jane' } }, undefined],
        [{ user_data: { email: 'not-an-email' } }, 'user_data.email'],
        [{ user_data: { phone: '4155552671' } }, 'user_data.phone'],
        [{}, undefined],
      ] as const) {
        const res = await erase(acme, shop, payload);
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
        assert.equal(res.json().error, 'Invalid request');
        if (field) assert.equal(res.json().field, field);
      }
    });

    it("is 404 for another account's pixel, and erases nothing there", async () => {
      await track(acme, shop, 'kept', { user_data: { email: 'kept@example.com' } });
      const res = await erase(other, shop, { user_data: { email: 'kept@example.com' } });
      assert.equal(res.statusCode, 404);
      assert.ok((await ids(shop)).includes('kept'));
    });
  });
}
