import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { excerpt, httpVerdict, retryAfterMs } from './platform-response.ts';

describe('platform answers, the shared part', () => {
  const now = new Date('2026-11-25T12:00:00Z');

  it('reads Retry-After in seconds or as an HTTP date', () => {
    assert.equal(retryAfterMs('120', now), 120_000);
    assert.equal(retryAfterMs('Wed, 25 Nov 2026 12:01:00 GMT', now), 60_000);
    assert.equal(retryAfterMs('Wed, 25 Nov 2026 11:00:00 GMT', now), 0);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });

  it('retries 429, 5xx and network failures; leaves the rest to the platform', () => {
    assert.deepEqual(
      httpVerdict({ kind: 'response', status: 503, body: 'busy', retryAfter: '5' }, now),
      {
        kind: 'transient',
        message: 'HTTP 503: busy',
        retryAfterMs: 5_000,
      },
    );
    assert.equal(httpVerdict({ kind: 'response', status: 429, body: '' }, now)?.kind, 'transient');
    assert.equal(httpVerdict({ kind: 'network', message: 'ECONNRESET' }, now)?.kind, 'transient');
    assert.equal(httpVerdict({ kind: 'response', status: 400, body: '' }, now), null);
    assert.equal(httpVerdict({ kind: 'response', status: 200, body: '' }, now), null);
  });

  it('keeps the first 1 KB of an answer for the ledger', () => {
    assert.equal(excerpt('x'.repeat(5_000)).length, 1024);
    assert.equal(excerpt('short'), 'short');
  });
});
