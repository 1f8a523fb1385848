import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { afterAttempt, claimedBody } from './delivery.ts';

const at = new Date('2026-11-25T10:00:00Z');
const base = { responseStatusCode: 200, durationMs: 5, error: null, responseBody: null };

describe('delivery transitions', () => {
  it('fixes the body at the first claim and keeps it after', () => {
    const first = claimedBody(
      {
        messageId: 'msg_1',
        endpointId: 'wh_1',
        eventType: 'pixel.created',
        data: '{"a":1}',
        body: null,
      },
      at,
    );
    assert.deepEqual(JSON.parse(first), {
      id: 'msg_1',
      event: 'pixel.created',
      data: { a: 1 },
      webhook_id: 'wh_1',
      timestamp: at.toISOString(),
    });
    const later = claimedBody(
      {
        messageId: 'msg_1',
        endpointId: 'wh_1',
        eventType: 'pixel.created',
        data: '{"a":2}',
        body: first,
      },
      new Date(at.getTime() + 60_000),
    );
    assert.equal(later, first);
  });

  it('settles a success and clears the failure clock', () => {
    assert.deepEqual(
      afterAttempt({ ...base, status: 'succeeded', outcome: { kind: 'succeeded' } }, at),
      { status: 'succeeded', nextAttemptAt: null, failingSince: null, disable: null },
    );
  });

  it('reschedules a failure, starts the failure clock, and carries a disable reason', () => {
    const retryAt = new Date(at.getTime() + 5_000);
    assert.deepEqual(
      afterAttempt({ ...base, status: 'failed', outcome: { kind: 'retry', at: retryAt } }, at),
      { status: 'pending', nextAttemptAt: retryAt, failingSince: at, disable: null },
    );
    assert.deepEqual(
      afterAttempt(
        { ...base, status: 'failed', outcome: { kind: 'failed' }, disableEndpoint: 'Gone' },
        at,
      ),
      { status: 'failed', nextAttemptAt: null, failingSince: at, disable: 'Gone' },
    );
  });
});
