import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { type Harness, startHarness, type TestAccount, testStores } from '../../test/harness.ts';

// Decoding happens before any storage is touched: one store kind is enough.
const [kind] = await testStores();

describe('gzip request bodies', () => {
  let h: Harness;
  let acme: TestAccount;
  let pixelId: string;

  before(async () => {
    h = await startHarness(kind!);
    acme = await h.account('pro');
    pixelId = await h.pixel(acme);
  });
  after(() => h.close());

  const send = (url: string, payload: Buffer, encoding = 'gzip') =>
    h.request(acme, {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      payload,
    });
  const gz = (value: unknown) => gzipSync(JSON.stringify(value));
  /** A JSON body that inflates to `bytes` from a few kilobytes of gzip. */
  const bomb = (bytes: number) =>
    gzipSync(`{"pixel_id":"${'a'.repeat(bytes)}","event_name":"Lead"}`, { level: 9 });

  it('accepts gzip on /v1/track and /v1/track/batch', async () => {
    const one = await send(
      '/v1/track',
      gz({ pixel_id: pixelId, event_name: 'Lead', event_id: 'gz-1' }),
    );
    assert.equal(one.statusCode, 200, one.body);
    assert.equal(one.json().event_id, 'gz-1');
    const many = await send(
      '/v1/track/batch',
      gz({ events: [{ pixel_id: pixelId, event_name: 'Lead', event_id: 'gz-2' }] }),
    );
    assert.equal(many.statusCode, 200, many.body);
    assert.equal(many.json().accepted, 1);
    const list = await h.request(acme, { method: 'GET', url: `/v1/pixels/${pixelId}/events` });
    const ids = list.json().events.map((e: { event_id: string }) => e.event_id);
    assert.ok(ids.includes('gz-1') && ids.includes('gz-2'));
  });

  it('applies the size limit to the decoded body: a gzip bomb is 413', async () => {
    const small = bomb(50 * 1024 * 1024);
    assert.ok(small.length < 100_000, 'the bomb itself is small');
    const single = await send('/v1/track', small);
    assert.equal(single.statusCode, 413);
    assert.deepEqual(single.json(), {
      error: 'Payload too large',
      message: 'Request body exceeds 32768 bytes',
    });
    const batch = await send('/v1/track/batch', small);
    assert.equal(batch.statusCode, 413);
    assert.equal(batch.json().message, 'Request body exceeds 524288 bytes');
    // Just under the limit once decoded is fine (the content is then judged as JSON).
    const fits = await send('/v1/track', bomb(30_000));
    assert.equal(fits.statusCode, 400);
    assert.equal(fits.json().message, 'Invalid field: pixel_id must be at most 64 characters');
  });

  it('is 413 when the compressed body alone is over the limit', async () => {
    const res = await send('/v1/track', gzipSync(randomBytes(40_000)));
    assert.equal(res.statusCode, 413);
  });

  it('is 400 for a body that is not gzip, or is cut short', async () => {
    const expected = { error: 'Invalid request', message: 'Malformed gzip body' };
    const notGzip = await send('/v1/track', Buffer.from(JSON.stringify({ pixel_id: pixelId })));
    assert.equal(notGzip.statusCode, 400);
    assert.deepEqual(notGzip.json(), expected);
    const whole = gz({ pixel_id: pixelId, event_name: 'Lead', title: 'x'.repeat(2000) });
    const cut = await send('/v1/track', whole.subarray(0, whole.length - 12));
    assert.equal(cut.statusCode, 400);
    assert.deepEqual(cut.json(), expected);
  });

  it('is 415 for an encoding it does not speak, and takes identity as none', async () => {
    const body = Buffer.from(JSON.stringify({ pixel_id: pixelId, event_name: 'Lead' }));
    const br = await send('/v1/track', body, 'br');
    assert.equal(br.statusCode, 415);
    assert.deepEqual(br.json(), {
      error: 'Unsupported media type',
      message: 'Content-Encoding must be gzip (or identity)',
    });
    assert.equal((await send('/v1/track', body, 'identity')).statusCode, 200);
  });
});
