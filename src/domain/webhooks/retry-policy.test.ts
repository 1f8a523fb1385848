import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideNext, parseRetryAfter } from './retry-policy.ts';

const now = new Date('2026-06-01T00:00:00Z');
const base = {
  attempt: 1,
  statusCode: 500,
  retryAfterSeconds: null,
  schedule: [5, 300, 1800],
  now,
  failingSince: null,
  random: 0.5,
};
const delay = (r: ReturnType<typeof decideNext>) =>
  r.outcome.kind === 'retry' ? Math.round((r.outcome.at.getTime() - now.getTime()) / 1000) : null;

describe('retry policy', () => {
  it('ends on any 2xx', () => {
    for (const statusCode of [200, 201, 204, 299])
      assert.deepEqual(decideNext({ ...base, statusCode }), { outcome: { kind: 'succeeded' } });
  });

  it('follows the schedule with at most ±20 % jitter', () => {
    assert.equal(delay(decideNext(base)), 5);
    assert.equal(delay(decideNext({ ...base, attempt: 2 })), 300);
    assert.equal(delay(decideNext({ ...base, attempt: 3, random: 0 })), 1440);
    assert.equal(delay(decideNext({ ...base, attempt: 3, random: 0.999999 })), 2160);
  });

  it('treats network errors and redirects as failures', () => {
    assert.equal(delay(decideNext({ ...base, statusCode: null })), 5);
    assert.equal(delay(decideNext({ ...base, statusCode: 301 })), 5);
  });

  it('gives up after the last step, leaving the message failed', () => {
    assert.deepEqual(decideNext({ ...base, attempt: 4 }), { outcome: { kind: 'failed' } });
  });

  it('honours Retry-After on 429 and 503, capped at an hour', () => {
    assert.equal(delay(decideNext({ ...base, statusCode: 429, retryAfterSeconds: 120 })), 120);
    assert.equal(delay(decideNext({ ...base, statusCode: 503, retryAfterSeconds: 86_400 })), 3600);
    assert.equal(delay(decideNext({ ...base, statusCode: 500, retryAfterSeconds: 120 })), 5);
  });

  it('disables on 410 and after five days of continuous failure', () => {
    assert.equal(
      decideNext({ ...base, statusCode: 410 }).disableEndpoint,
      'The endpoint answered 410 Gone',
    );
    const day = 86_400_000;
    assert.equal(
      decideNext({ ...base, failingSince: new Date(now.getTime() - 4.9 * day) }).disableEndpoint,
      undefined,
    );
    assert.equal(
      decideNext({ ...base, failingSince: new Date(now.getTime() - 5 * day) }).disableEndpoint,
      'The endpoint failed continuously for 5 days',
    );
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    assert.equal(parseRetryAfter('30', now), 30);
    assert.equal(parseRetryAfter(new Date(now.getTime() + 90_000).toUTCString(), now), 90);
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter(undefined, now), null);
  });
});
