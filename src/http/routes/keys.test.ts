import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../../test/harness.ts';
import { KEY_USAGE_INTERVAL_MS } from '../../domain/keys/key-usage.ts';
import { INGEST_ROUTES } from '../../domain/keys/keys.ts';
import type { App } from '../app.ts';

/** Every `<METHOD> <path>` the app registered, read from Fastify's own route tree. */
function registeredRoutes(app: App): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(([A-Z, ]+)\)$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    for (const method of match[3]!.split(', ')) routes.push(`${method} ${stack.join('')}`);
  }
  return routes;
}

// Covers the three keys routes and the ingest scope on every route.
for (const kind of await testStores()) {
  describe(`keys [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let other: TestAccount;

    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      other = await h.account('pro');
    });
    after(() => h.close());

    it('creates a key shown once, lists it without the key, and revokes it (204, then 401)', async () => {
      const created = await h.request(acme, {
        method: 'POST',
        url: '/v1/keys',
        payload: { name: ' Checkout server ' },
      });
      assert.equal(created.statusCode, 201);
      const body = created.json();
      assert.match(body.key, /^tw_live_[0-9A-Za-z]{49}$/);
      assert.equal(body.name, 'Checkout server');
      assert.equal(body.scope, 'full');
      assert.equal(body.prefix, body.key.slice(0, 12));
      assert.equal(body.last4, body.key.slice(-4));
      assert.equal(body.revoked_at, null);
      assert.equal(body.last_used_at, null);

      const headers = { authorization: `Bearer ${body.key}` };
      assert.equal(
        (await h.request(null, { method: 'GET', url: '/v1/pixels', headers })).statusCode,
        200,
      );

      // The use is written in the background (key-usage.ts): on PostgreSQL the listing may run
      // on another connection before that write commits, so it is read until it shows.
      let list = await h.request(acme, { method: 'GET', url: '/v1/keys' });
      const listedKey = () => list.json().keys.find((k: { id: string }) => k.id === body.id);
      for (let tries = 0; listedKey().last_used_at === null && tries < 100; tries++) {
        await new Promise((resolve) => setImmediate(resolve));
        list = await h.request(acme, { method: 'GET', url: '/v1/keys' });
      }
      assert.equal(list.statusCode, 200);
      assert.ok(!list.body.includes(body.key), 'the key is never listed');
      const listed = listedKey();
      const { key: _key, ...withoutKey } = body;
      assert.deepEqual(Object.keys(listed).sort(), Object.keys(withoutKey).sort());
      assert.notEqual(listed.last_used_at, null, 'the request above was recorded as a use');

      // Another account cannot see or revoke it.
      const theirs = await h.request(other, { method: 'GET', url: '/v1/keys' });
      assert.ok(!theirs.json().keys.some((k: { id: string }) => k.id === body.id));
      const foreign = await h.request(other, { method: 'DELETE', url: `/v1/keys/${body.id}` });
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), {
        error: 'Not found',
        message: `Key not found: ${body.id}`,
      });

      const revoked = await h.request(acme, { method: 'DELETE', url: `/v1/keys/${body.id}` });
      assert.equal(revoked.statusCode, 204);
      assert.equal(revoked.body, '');
      assert.equal(
        (await h.request(acme, { method: 'DELETE', url: `/v1/keys/${body.id}` })).statusCode,
        204,
      );
      h.clock.set(new Date(h.clock.now().getTime() + 1_001)); // past the key cache's second
      assert.equal(
        (await h.request(null, { method: 'GET', url: '/v1/pixels', headers })).statusCode,
        401,
      );
      const after = (await h.request(acme, { method: 'GET', url: '/v1/keys' })).json();
      assert.notEqual(after.keys.find((k: { id: string }) => k.id === body.id).revoked_at, null);
    });

    it('validates the body', async () => {
      const cases: Array<[unknown, string]> = [
        [{}, 'Missing required field: name'],
        [{ name: '   ' }, 'Missing required field: name'],
        [{ name: 'x', scope: 'admin' }, 'Invalid field: scope'],
        [{ name: 'x', owner: 'me' }, 'Unknown field: owner'],
      ];
      for (const [payload, message] of cases) {
        const res = await h.request(acme, {
          method: 'POST',
          url: '/v1/keys',
          payload: payload as object,
        });
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.ok(res.json().message.startsWith(message), `${res.json().message} / ${message}`);
      }
    });

    it('writes last_used_at at most once a minute per key, not on every request', async () => {
      const created = (
        await h.request(acme, { method: 'POST', url: '/v1/keys', payload: { name: 'usage' } })
      ).json();
      const headers = { authorization: `Bearer ${created.key}` };
      // Watch the real store's writes (the app holds this same object).
      const keys = h.store.keys;
      const touch = keys.touchKey.bind(keys);
      const writes: Promise<void>[] = [];
      keys.touchKey = (keyId, at) => {
        const write = touch(keyId, at);
        if (keyId === created.id) writes.push(write);
        return write;
      };
      const lastUsed = async () => {
        await Promise.all(writes);
        return (await keys.listKeys(acme.account.id)).find((k) => k.id === created.id)!.lastUsedAt;
      };
      try {
        const t0 = h.clock.now();
        await h.request(null, { method: 'GET', url: '/v1/pixels', headers });
        assert.deepEqual(await lastUsed(), t0);
        h.clock.set(new Date(t0.getTime() + KEY_USAGE_INTERVAL_MS - 1));
        await h.request(null, { method: 'GET', url: '/v1/pixels', headers });
        await h.request(null, { method: 'GET', url: '/v1/pixels', headers });
        assert.equal(writes.length, 1, 'not written again within the minute');
        const t1 = new Date(t0.getTime() + KEY_USAGE_INTERVAL_MS);
        h.clock.set(t1);
        await h.request(null, { method: 'GET', url: '/v1/pixels', headers });
        assert.equal(writes.length, 2);
        assert.deepEqual(await lastUsed(), t1);
      } finally {
        keys.touchKey = touch;
      }
    });

    it('lets an ingest key call only the track routes: 403 on every other registered route', async () => {
      const created = (
        await h.request(acme, {
          method: 'POST',
          url: '/v1/keys',
          payload: { name: 'browser', scope: 'ingest' },
        })
      ).json();
      assert.equal(created.scope, 'ingest');
      const headers = { authorization: `Bearer ${created.key}` };
      const routes = registeredRoutes(h.app).filter(
        (r) =>
          r.split(' ')[1]!.startsWith('/v1/') &&
          r !== 'GET /v1/openapi.json' &&
          r !== 'HEAD /v1/openapi.json' &&
          // The browser routes take no API key at all (a publishable key, or none).
          !['/v1/collect', '/v1/pixel.js'].includes(r.split(' ')[1]!),
      );
      assert.ok(routes.length >= 20, `found ${routes.length} routes`);
      for (const route of routes) {
        const [method, template] = route.split(' ') as [string, string];
        const url = template.replace(/:([a-z_]+)/g, (_m, name: string) => `${name}_x`);
        const res = await h.request(null, {
          method: method as 'GET',
          url,
          headers,
          ...(method === 'POST' || method === 'PATCH' ? { payload: {} } : {}),
        });
        if (INGEST_ROUTES.has(route)) {
          assert.notEqual(res.statusCode, 403, route);
          assert.notEqual(res.statusCode, 401, route);
          continue;
        }
        assert.equal(res.statusCode, 403, route);
        if (method !== 'HEAD') {
          assert.deepEqual(res.json(), {
            error: 'Forbidden',
            message: `This key's scope (ingest) does not allow ${method} ${template}`,
          });
        }
      }
      const pixelId = await h.pixel(acme);
      const tracked = await h.request(null, {
        method: 'POST',
        url: '/v1/track',
        headers,
        payload: { pixel_id: pixelId, event_name: 'PageView' },
      });
      assert.equal(tracked.statusCode, 200);
    });

    it('lists keys a page at a time: limit default 50, at most 100, offset, total', async () => {
      const owner = await h.account('pro');
      // The account's own key, plus 119 made through the API: 120, oldest first.
      for (let i = 0; i < 119; i++) {
        const made = await h.request(owner, {
          method: 'POST',
          url: '/v1/keys',
          payload: { name: `k-${String(i).padStart(3, '0')}` },
        });
        assert.equal(made.statusCode, 201);
        h.clock.advance(1_000);
      }
      const list = (query: string) => h.request(owner, { method: 'GET', url: `/v1/keys${query}` });
      const first = await list('');
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.json().keys.length, 50);
      assert.equal(first.json().total, 120);
      assert.equal(first.json().limit, 50);
      assert.equal(first.json().offset, 0);
      const capped = (await list('?limit=500')).json();
      assert.equal(capped.keys.length, 100);
      assert.equal(capped.limit, 100);
      const last = (await list('?limit=100&offset=100')).json();
      assert.equal(last.keys.length, 20);
      assert.equal(last.keys.at(-1).name, 'k-118');
      // The pages cover every key once.
      const ids = [...capped.keys, ...last.keys].map((k: { id: string }) => k.id);
      assert.equal(new Set(ids).size, 120);
      for (const bad of ['?limit=0', '?offset=-1', '?limit=x', '?cursor=1']) {
        const res = await list(bad);
        assert.equal(res.statusCode, 400, `${bad}: ${res.body}`);
        assert.equal(res.json().error, 'Invalid request');
      }
      // Another account's list is its own.
      assert.equal((await h.request(other, { method: 'GET', url: '/v1/keys' })).json().total, 1);
    });
  });
}
