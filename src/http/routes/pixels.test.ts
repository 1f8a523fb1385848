import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';

// Covers the four pixel routes (create, get, list, update): they share one fixture.
for (const kind of await testStores()) {
  describe(`pixels [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      other = await h.account('pro');
    });
    after(() => h.close());

    it('POST /v1/pixels creates a pixel: 201 with the spec object', async () => {
      const res = await h.request(acme, {
        method: 'POST',
        url: '/v1/pixels',
        payload: { name: 'Main shop', domain: 'Shop.Example.com' },
      });
      assert.equal(res.statusCode, 201);
      const pixel = res.json();
      assert.match(pixel.id, /^px_[0-9A-Za-z]{16}$/);
      assert.deepEqual(Object.keys(pixel).sort(), [
        'created_at',
        'domain',
        'id',
        'name',
        'publishable_key',
        'status',
        'tracking_domain',
      ]);
      assert.equal(pixel.domain, 'shop.example.com');
      assert.equal(pixel.tracking_domain, 'shop.example.com');
      assert.equal(pixel.status, 'active');
      assert.match(pixel.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const got = await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixel.id}` });
      // The GET adds the 7-day match quality (contract §12): null without events.
      assert.deepEqual(got.json(), { ...pixel, match_quality_7d: null });
    });

    it('validates the pixel body', async () => {
      const cases: Array<[unknown, string]> = [
        [{ domain: 'a.example.com' }, 'Missing required field: name'],
        [{ name: 'A' }, 'Missing required field: domain'],
        [
          { name: 'A', domain: 'https://a.example.com/' },
          'Invalid field: domain must be a hostname such as shop.example.com',
        ],
        [
          { name: 'A', domain: 'a.example.com', tracking_domain: 'bad host' },
          'Invalid field: tracking_domain must be a hostname such as shop.example.com',
        ],
        [{ name: 'A', domain: 'a.example.com', owner: 'me' }, 'Unknown field: owner'],
      ];
      for (const [payload, message] of cases) {
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/pixels',
          payload: payload as object,
        });
        assert.equal(res.statusCode, 400);
        assert.equal(res.json().message, message);
      }
    });

    it('enforces the plan pixel quota with 403', async () => {
      const small = await h.account('pro');
      for (let i = 0; i < 10; i++)
        await h.pixel(small, { name: `P${i}`, domain: `p${i}.example.com` });
      const res = await h.request(small, {
        method: 'POST',
        url: '/v1/pixels',
        payload: { name: 'P10', domain: 'p10.example.com' },
      });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), {
        error: 'Forbidden',
        message: 'Subscription limit exceeded: plan pro allows 10 pixels',
      });
      const list = await h.request(small, { method: 'GET', url: '/v1/pixels' });
      assert.equal(list.json().total, 10);
    });

    it('lets enterprise accounts go past 50 pixels', async () => {
      const big = await h.account('enterprise');
      for (let i = 0; i < 51; i++)
        await h.pixel(big, { name: `P${i}`, domain: `p${i}.example.com` });
      const list = await h.request(big, { method: 'GET', url: '/v1/pixels?limit=500' });
      assert.equal(list.json().total, 51);
      assert.equal(list.json().limit, 100);
      assert.equal(list.json().pixels.length, 51);
    });

    it('GET /v1/pixels lists newest first with limit and offset', async () => {
      const lister = await h.account('ultra');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        h.clock.set(new Date(Date.UTC(2026, 0, 1, 0, i)));
        ids.push(await h.pixel(lister, { name: `P${i}`, domain: `p${i}.example.com` }));
      }
      h.clock.set(new Date());
      const page = await h.request(lister, { method: 'GET', url: '/v1/pixels?limit=2&offset=1' });
      assert.equal(page.statusCode, 200);
      const body = page.json();
      assert.deepEqual(
        body.pixels.map((p: { id: string }) => p.id),
        [ids[1], ids[0]],
      );
      assert.equal(body.total, 3);
      assert.equal(body.limit, 2);
      assert.equal(body.offset, 1);
      const bad = await h.request(lister, { method: 'GET', url: '/v1/pixels?limit=0' });
      assert.equal(bad.statusCode, 400);
      assert.deepEqual(bad.json(), {
        error: 'Invalid request',
        message: 'Invalid parameter: limit must be at least 1',
        field: 'limit',
      });
    });

    it('PATCH /v1/pixels/:id changes only the fields sent', async () => {
      const id = await h.pixel(acme, { name: 'Before', domain: 'before.example.com' });
      const res = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${id}`,
        payload: { name: 'After', status: 'paused' },
      });
      assert.equal(res.statusCode, 200);
      const pixel = res.json();
      assert.equal(pixel.name, 'After');
      assert.equal(pixel.status, 'paused');
      assert.equal(pixel.domain, 'before.example.com');
      const bad = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${id}`,
        payload: { status: 'deleted' },
      });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().message, 'Invalid field: status must be one of: active, paused');
      const unknown = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${id}`,
        payload: { id: 'px_x' },
      });
      assert.equal(unknown.json().message, 'Unknown field: id');
    });

    it('trims the name, and refuses one of spaces only (create and PATCH)', async () => {
      const created = await h.request(acme, {
        method: 'POST',
        url: '/v1/pixels',
        payload: { name: '  Corner shop \t', domain: 'corner.example.com' },
      });
      assert.equal(created.statusCode, 201);
      assert.equal(created.json().name, 'Corner shop');
      const id = created.json().id;
      const blank = {
        error: 'Invalid request',
        message: 'Invalid field: name must not be blank',
        field: 'name',
      };
      for (const name of [' ', '   ', '\t\n', '\u00a0\u3000']) {
        const create = await h.request(acme, {
          method: 'POST',
          url: '/v1/pixels',
          payload: { name, domain: 'blank.example.com' },
        });
        assert.equal(create.statusCode, 400, JSON.stringify(name));
        assert.deepEqual(create.json(), blank);
        const patch = await h.request(acme, {
          method: 'PATCH',
          url: `/v1/pixels/${id}`,
          payload: { name },
        });
        assert.equal(patch.statusCode, 400, JSON.stringify(name));
        assert.deepEqual(patch.json(), blank);
      }
      const renamed = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${id}`,
        payload: { name: ' Corner shop 2 ' },
      });
      assert.equal(renamed.json().name, 'Corner shop 2');
      const list = await h.request(acme, { method: 'GET', url: '/v1/pixels?limit=100' });
      assert.ok(list.json().pixels.every((p: { name: string }) => p.name.trim() === p.name));
    });

    it("is 404 on every pixel route for another account's pixel", async () => {
      const theirs = await h.pixel(other);
      const routes = [
        { method: 'GET' as const, url: `/v1/pixels/${theirs}` },
        { method: 'PATCH' as const, url: `/v1/pixels/${theirs}`, payload: { name: 'Mine now' } },
        { method: 'GET' as const, url: `/v1/pixels/${theirs}/events` },
        {
          method: 'POST' as const,
          url: '/v1/track',
          payload: { pixel_id: theirs, event_name: 'Lead' },
        },
      ];
      for (const route of routes) {
        const res = await h.request(acme, route);
        assert.equal(res.statusCode, 404, `${route.method} ${route.url}`);
        assert.deepEqual(res.json(), { error: 'Not found', message: `Pixel not found: ${theirs}` });
      }
      const mine = await h.request(acme, { method: 'GET', url: '/v1/pixels?limit=100' });
      assert.ok(mine.json().pixels.every((p: { id: string }) => p.id !== theirs));
      const untouched = await h.request(other, { method: 'GET', url: `/v1/pixels/${theirs}` });
      assert.equal(untouched.json().name, 'Shop');
    });
  });
}
