/**
 * The OpenAPI document: the checked-in openapi.json is exactly what the code generates (so
 * clients generated from it match the server), and the document is one tools work well with.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';
import { renderOpenApi } from './openapi.ts';

const CHECKED_IN = new URL('../../openapi.json', import.meta.url);

// biome-ignore lint/suspicious/noExplicitAny: a test walking a JSON document reads it untyped
type Json = Record<string, any>;

function walk(
  node: unknown,
  visit: (key: string, value: unknown, path: string) => void,
  path = '#',
) {
  if (typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    visit(key, value, `${path}/${key}`);
    walk(value, visit, `${path}/${key}`);
  }
}

describe('OpenAPI document', () => {
  let document: Json;
  before(async () => {
    document = (await renderOpenApi()) as Json;
  });

  it('openapi.json is what `npm run openapi` generates (run it after changing a schema)', () => {
    const checkedIn = JSON.parse(readFileSync(CHECKED_IN, 'utf8'));
    assert.deepStrictEqual(
      checkedIn,
      JSON.parse(JSON.stringify(document)),
      'openapi.json is stale: run `npm run openapi` and commit the result',
    );
  });

  it('every operation has a unique operationId and documents the shared error responses', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(document['paths'] as Json)) {
      for (const [method, operation] of Object.entries(item as Json)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.equal(typeof operation.operationId, 'string', where);
        assert.ok(!ids.has(operation.operationId), `${where}: duplicate operationId`);
        ids.add(operation.operationId);
        for (const status of ['500', '503']) assert.ok(operation.responses[status], where);
        if (path.startsWith('/v1/')) {
          assert.equal(
            operation.responses['429'].$ref,
            '#/components/responses/RateLimited',
            where,
          );
          const ok = Object.entries(operation.responses as Json).find(([s]) => s.startsWith('2'));
          assert.ok(ok?.[1].headers['X-RateLimit-Remaining'], `${where}: rate-limit headers`);
        }
      }
    }
    assert.ok(ids.has('trackEvent') && ids.has('listEvents') && ids.has('rotateWebhookSecret'));
    const rateLimited = document['components'].responses.RateLimited;
    assert.ok(rateLimited.headers['Retry-After']);
    assert.deepEqual(document['servers'], [
      {
        url: 'http://127.0.0.1:8080',
        description: 'A local `trackway serve` (default HOST and PORT)',
      },
    ]);
  });

  it('request and response bodies are named components, never inline objects', () => {
    for (const [path, item] of Object.entries(document['paths'] as Json)) {
      for (const [method, operation] of Object.entries(item as Json)) {
        const media = [
          operation.requestBody?.content['application/json'],
          ...Object.values(operation.responses as Json).map(
            (r: Json) => r.content?.['application/json'],
          ),
        ].filter(Boolean);
        for (const m of media) {
          assert.match(m.schema.$ref, /^#\/components\/schemas\//, `${method} ${path}`);
        }
      }
    }
    assert.equal(
      document['paths']['/v1/track/batch'].post.requestBody.content['application/json'].schema.$ref,
      '#/components/schemas/TrackBatchRequest',
    );
    assert.deepEqual(document['components'].schemas.TrackBatchRequest.properties.events.items, {
      $ref: '#/components/schemas/TrackEvent',
    });
  });

  it('leaks no non-standard keyword (errorMessage is an x- extension)', () => {
    const leaked: string[] = [];
    walk(document, (key, _value, path) => {
      if (key === 'errorMessage' || key === 'patternProperties') leaked.push(path);
    });
    assert.deepEqual(leaked, []);
    let extensions = 0;
    walk(document, (key) => {
      if (key === 'x-error-message') extensions += 1;
    });
    assert.ok(extensions > 0);
  });

  it('has one webhook per kind, each payload a named schema with an example', () => {
    const kinds = Object.keys(document['webhooks']).sort();
    assert.deepEqual(kinds, [
      'event.forwarded',
      'event.tracked',
      'pixel.created',
      'pixel.updated',
      'subscription.updated',
    ]);
    for (const kind of kinds) {
      const media = document['webhooks'][kind].post.requestBody.content['application/json'];
      assert.equal(media.example.event, kind);
      const name = media.schema.$ref.split('/').pop();
      assert.equal(document['components'].schemas[name].properties.event.const, kind);
    }
  });
});

for (const kind of (await testStores()).slice(0, 1)) {
  describe(`OpenAPI examples are accepted by the server [${kind.name}]`, () => {
    let h: Harness;
    let acme: TestAccount;
    let document: Json;
    before(async () => {
      h = await startHarness(kind);
      acme = await h.account('pro');
      document = (await renderOpenApi()) as Json;
    });
    after(() => h.close());

    const exampleOf = (path: string, method: string) =>
      structuredClone(
        document['paths'][path][method].requestBody.content['application/json'].example,
      );

    it('"try it" on POST /v1/track sends a valid event (with a real pixel id)', async () => {
      const pixelId = await h.pixel(acme);
      const body = { ...exampleOf('/v1/track', 'post'), pixel_id: pixelId };
      const res = await h.track(acme, body);
      assert.equal(res.statusCode, 200, res.body);
    });

    it('the docs page\'s "try it" targets the server showing it, not the local default', async () => {
      const res = await h.request(null, {
        method: 'GET',
        url: '/docs/json',
        headers: { host: 'trackway.example.com:8443' },
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json().servers, [
        { url: 'http://trackway.example.com:8443', description: 'This server' },
      ]);
    });

    it('the other request examples are valid too', async () => {
      const pixelId = await h.pixel(acme);
      const batch = exampleOf('/v1/track/batch', 'post');
      for (const event of batch.events) event.pixel_id = pixelId;
      const tracked = await h.request(acme, {
        method: 'POST',
        url: '/v1/track/batch',
        payload: batch,
      });
      assert.equal(tracked.json().rejected, 0, tracked.body);
      const pixel = await h.request(acme, {
        method: 'POST',
        url: '/v1/pixels',
        payload: exampleOf('/v1/pixels', 'post'),
      });
      assert.equal(pixel.statusCode, 201, pixel.body);
      const webhook = await h.request(acme, {
        method: 'POST',
        url: '/v1/webhooks',
        payload: exampleOf('/v1/webhooks', 'post'),
      });
      // The example's host does not resolve here: refused by the SSRF check, not by the schema.
      assert.ok(webhook.statusCode === 201 || webhook.json().field === 'url', webhook.body);
    });
  });
}
