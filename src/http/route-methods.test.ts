/** A known path asked with a method it does not have: 405 with `Allow`, not 404 (issue 30). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';
import { RouteMethods } from './route-methods.ts';

describe('route methods', () => {
  it('lists the methods a concrete path answers to, as the router matches it', () => {
    const routes = new RouteMethods({ ignoreTrailingSlash: true, maxParamLength: 2_048 });
    routes.add(['GET', 'HEAD'], '/v1/pixels/:pixel_id');
    routes.add('PATCH', '/v1/pixels/:pixel_id');
    routes.add('HEAD', '/v1/pixels/:pixel_id'); // Fastify's HEAD twin, declared again
    routes.add('POST', '/v1/track');
    assert.deepEqual(routes.allowed('/v1/pixels/px_1'), ['GET', 'HEAD', 'PATCH']);
    assert.deepEqual(routes.allowed('/v1/pixels/px_1/?x=1'), ['GET', 'HEAD', 'PATCH']);
    assert.deepEqual(routes.allowed('/v1/track'), ['POST']);
    assert.deepEqual(routes.allowed('/v1/nope'), []);
  });
});

describe('a wrong method on a known path', async () => {
  const [sqlite] = await testStores();
  let h: Harness;
  let owner: TestAccount;
  before(async () => {
    h = await startHarness(sqlite!);
    owner = await h.account('pro');
  });
  after(() => h.close());

  it('is 405 with an Allow header, in the error shape, signed in or not', async () => {
    for (const headers of [owner.headers, {}]) {
      const res = await h.app.inject({ method: 'GET', url: '/v1/track', headers });
      assert.equal(res.statusCode, 405);
      assert.equal(res.headers.allow, 'POST');
      assert.deepEqual(res.json(), {
        error: 'Method not allowed',
        message: 'Method not allowed: GET /v1/track (allowed: POST)',
      });
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    }
    const pixel = await h.request(owner, { method: 'PUT', url: '/v1/pixels/px_any?x=1' });
    assert.equal(pixel.statusCode, 405);
    assert.equal(pixel.headers.allow, 'GET, HEAD, PATCH');
    assert.equal(
      pixel.json().message,
      'Method not allowed: PUT /v1/pixels/px_any (allowed: GET, HEAD, PATCH)',
    );
    const keys = await h.request(owner, { method: 'DELETE', url: '/v1/keys' });
    assert.equal(keys.statusCode, 405);
    assert.equal(keys.headers.allow, 'GET, HEAD, POST');
  });

  it('leaves an unknown path a 404', async () => {
    const res = await h.request(owner, { method: 'DELETE', url: '/v1/nothing-here' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), {
      error: 'Not found',
      message: 'Route not found: DELETE /v1/nothing-here',
    });
    assert.equal(res.headers.allow, undefined);
  });
});
