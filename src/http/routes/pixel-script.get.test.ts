import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { type Harness, startHarness, testStores } from '../../../test/harness.ts';

const [sqlite] = await testStores();

describe('GET /v1/pixel.js', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness(sqlite!);
  });
  after(() => h.close());

  it('is plain JavaScript of at most 3 KB gzipped, cached by ETag and max-age', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/v1/pixel.js' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/javascript/);
    assert.match(String(res.headers['cache-control']), /^public, max-age=\d+$/);
    const gzipped = gzipSync(res.rawPayload, { level: 9 }).length;
    console.log(`pixel.js: ${res.rawPayload.length} bytes, ${gzipped} gzipped`);
    assert.ok(gzipped <= 3 * 1024, `${gzipped} bytes gzipped`);
    // It parses (as a classic script: no import/export, no top-level await).
    assert.doesNotThrow(() => new Function(res.body));
    const etag = String(res.headers.etag);
    assert.match(etag, /^"[\w-]+"$/);
    const again = await h.app.inject({
      method: 'GET',
      url: '/v1/pixel.js',
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal(again.headers.etag, etag);
  });

  it('needs no key', async () => {
    const res = await h.app.inject({
      method: 'GET',
      url: '/v1/pixel.js',
      headers: { authorization: 'Bearer nonsense' },
    });
    assert.equal(res.statusCode, 200);
  });
});
