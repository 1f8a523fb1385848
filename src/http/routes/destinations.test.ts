import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';

const META = { pixel_id: '123456789012345', access_token: 'EAABsecret-token-wxyz' };

// Covers the destination routes (create, list, get, update, delete): they share one fixture.
for (const kind of await testStores()) {
  describe(`destinations [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;
    let pixel: string;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      other = await h.account('pro');
      pixel = await h.pixel(acme);
    });
    after(() => h.close());

    const create = (owner: TestAccount, px: string, payload: Record<string, unknown>) =>
      h.request(owner, { method: 'POST', url: `/v1/pixels/${px}/destinations`, payload });

    it('creates a Meta destination: 201, dst_ id, the token masked everywhere', async () => {
      const res = await create(acme, pixel, { type: 'meta', name: 'Meta', config: META });
      assert.equal(res.statusCode, 201, res.body);
      const d = res.json();
      assert.match(d.id, /^dst_[0-9A-Za-z]{16}$/);
      assert.deepEqual(d.config, { pixel_id: META.pixel_id, access_token: '****wxyz' });
      assert.equal(d.state, 'active');
      assert.equal(d.enabled, true);
      assert.equal(d.events, null);
      assert.equal(d.last_error, null);
      assert.equal(d.pixel_id, pixel);
      assert.doesNotMatch(res.body, /secret-token/);
      const got = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/destinations/${d.id}`,
      });
      assert.deepEqual(got.json(), d);
      const list = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/destinations`,
      });
      assert.deepEqual(
        list.json().destinations.map((x: { id: string }) => x.id),
        [d.id],
      );
      assert.doesNotMatch(list.body, /secret-token/);
    });

    it('refuses a config that does not fit its type, naming the field', async () => {
      const res = await create(acme, pixel, {
        type: 'meta',
        config: { pixel_id: 'abc', access_token: 'x' },
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().field, 'config.pixel_id');
      assert.match(res.json().message, /config\.pixel_id/);
      const missing = await create(acme, pixel, { type: 'meta', config: { pixel_id: '1' } });
      assert.equal(missing.statusCode, 400);
      assert.equal(missing.json().field, 'config.access_token');
      const unknownType = await create(acme, pixel, { type: 'snap', config: {} });
      assert.equal(unknownType.statusCode, 400);
    });

    it('updates: keeps the token unless given, filters events, switches off', async () => {
      const d = (await create(acme, pixel, { type: 'meta', config: META })).json();
      const res = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}/destinations/${d.id}`,
        payload: {
          name: 'Renamed',
          events: ['Purchase'],
          enabled: false,
          config: { test_event_code: 'TEST1' },
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const u = res.json();
      assert.equal(u.name, 'Renamed');
      assert.deepEqual(u.events, ['Purchase']);
      assert.equal(u.enabled, false);
      assert.deepEqual(u.config, { ...META, access_token: '****wxyz', test_event_code: 'TEST1' });
      const bad = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}/destinations/${d.id}`,
        payload: { config: { pixel_id: 'nope' } },
      });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().field, 'config.pixel_id');
    });

    it('resumes a suspended destination on new credentials', async () => {
      const d = (await create(acme, pixel, { type: 'meta', config: META })).json();
      await h.store.destinations.updateDestination(acme.account.id, pixel, d.id, (c) => ({
        ...c,
        state: 'suspended',
        lastError: 'Meta error 190: token expired',
      }));
      const suspended = await h.request(acme, {
        method: 'GET',
        url: `/v1/pixels/${pixel}/destinations/${d.id}`,
      });
      assert.equal(suspended.json().state, 'suspended');
      assert.match(suspended.json().last_error, /190/);
      const res = await h.request(acme, {
        method: 'PATCH',
        url: `/v1/pixels/${pixel}/destinations/${d.id}`,
        payload: { config: { access_token: 'EAABnew-token-abcd' } },
      });
      assert.equal(res.json().state, 'active');
      assert.equal(res.json().last_error, null);
      assert.equal(res.json().config.access_token, '****abcd');
    });

    it('allows 10 destinations a pixel, then 403', async () => {
      const px = await h.pixel(acme);
      for (let i = 0; i < 10; i++) {
        assert.equal((await create(acme, px, { type: 'meta', config: META })).statusCode, 201);
      }
      const res = await create(acme, px, { type: 'meta', config: META });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), {
        error: 'Forbidden',
        message: 'Subscription limit exceeded: a pixel may have 10 destinations',
      });
    });

    it('deletes: 200, then 404', async () => {
      const d = (await create(acme, pixel, { type: 'meta', config: META })).json();
      const url = `/v1/pixels/${pixel}/destinations/${d.id}`;
      const res = await h.request(acme, { method: 'DELETE', url });
      assert.deepEqual(res.json(), { id: d.id, deleted: true });
      assert.equal((await h.request(acme, { method: 'GET', url })).statusCode, 404);
      assert.equal((await h.request(acme, { method: 'DELETE', url })).statusCode, 404);
    });

    it("answers 404 for another account's pixel or destination, on every route", async () => {
      const d = (await create(acme, pixel, { type: 'meta', config: META })).json();
      const base = `/v1/pixels/${pixel}/destinations`;
      const cases = [
        { method: 'GET', url: base },
        { method: 'POST', url: base, payload: { type: 'meta', config: META } },
        { method: 'GET', url: `${base}/${d.id}` },
        { method: 'PATCH', url: `${base}/${d.id}`, payload: { enabled: false } },
        { method: 'DELETE', url: `${base}/${d.id}` },
      ] as const;
      for (const c of cases) {
        const res = await h.request(other, c);
        assert.equal(res.statusCode, 404, `${c.method} ${c.url}`);
      }
      // Their own pixel, our destination id: still not found.
      const theirs = await h.pixel(other);
      const res = await h.request(other, {
        method: 'GET',
        url: `/v1/pixels/${theirs}/destinations/${d.id}`,
      });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().message, `Destination not found: ${d.id}`);
      const still = await h.request(acme, { method: 'GET', url: `${base}/${d.id}` });
      assert.equal(still.json().enabled, true);
    });

    it('masks a short secret whole: "****" + last 4 would show it all', async () => {
      for (const token of ['abc', 'abcd', 'abcde12']) {
        const res = await create(acme, pixel, {
          type: 'meta',
          config: { ...META, access_token: token },
        });
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().config.access_token, '****', token);
        const ga4 = await create(acme, pixel, {
          type: 'ga4',
          config: { measurement_id: 'G-ABC123', api_secret: token },
        });
        assert.equal(ga4.json().config.api_secret, '****', token);
        for (const answer of [res, ga4]) assert.ok(!answer.body.includes(token), answer.body);
        for (const d of [res, ga4]) {
          await h.request(acme, {
            method: 'DELETE',
            url: `/v1/pixels/${pixel}/destinations/${d.json().id}`,
          });
        }
      }
    });

    it('refuses a secret with a line break or other non-header-safe character, naming it', async () => {
      const bad = ['tok\r\nX-Injected: 1', 'tok\nen', 'tok en', 'tok\ten', 'tøken'];
      const configs = {
        meta: (t: string) => ({ ...META, access_token: t }),
        ga4: (t: string) => ({ measurement_id: 'G-ABC123', api_secret: t }),
        tiktok: (t: string) => ({ pixel_code: 'C0PIXEL1', access_token: t }),
      };
      for (const [type, config] of Object.entries(configs)) {
        const field = type === 'ga4' ? 'config.api_secret' : 'config.access_token';
        for (const token of bad) {
          const res = await create(acme, pixel, { type, config: config(token) });
          assert.equal(res.statusCode, 400, `${type} ${JSON.stringify(token)}: ${res.body}`);
          assert.equal(res.json().field, field);
          assert.match(res.json().message, new RegExp(`^Invalid field: ${field} must be visible`));
        }
        // On update too, and the stored secret stays as it was.
        const ok = await create(acme, pixel, { type, config: config('good-token-1234') });
        assert.equal(ok.statusCode, 201, ok.body);
        const url = `/v1/pixels/${pixel}/destinations/${ok.json().id}`;
        const key = field.slice('config.'.length);
        const patched = await h.request(acme, {
          method: 'PATCH',
          url,
          payload: { config: { [key]: 'new\r\ntoken' } },
        });
        assert.equal(patched.statusCode, 400, patched.body);
        assert.equal(patched.json().field, field);
        const got = await h.request(acme, { method: 'GET', url });
        assert.equal(got.json().config[key], '****1234');
        await h.request(acme, { method: 'DELETE', url });
      }
    });
  });
}
