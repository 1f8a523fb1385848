/** How failures that are not the client's become HTTP: 503 to retry, or a 500 for a bug. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toDomainError } from '../storage/driver-errors.ts';
import { errorBody, toTrackwayError } from './errors.ts';

/** A driver's error as a store port hands it on: translated by the adapter. */
const withCode = (code: string) =>
  toDomainError(Object.assign(new Error(`driver error ${code}`), { code }));

describe('errors the storage raises', () => {
  it('answers 503 for a conflict PostgreSQL still reports after the retries', () => {
    for (const code of ['40001', '40P01']) {
      const { status, body } = errorBody(toTrackwayError(withCode(code)));
      assert.equal(status, 503, code);
      assert.deepEqual(body, {
        error: 'Service unavailable',
        message:
          'Storage is busy with conflicting writes; nothing was stored. Please retry shortly.',
      });
    }
  });

  it('answers 503 for an outage and 500 for anything else', () => {
    assert.equal(errorBody(toTrackwayError(withCode('ECONNREFUSED'))).status, 503);
    assert.equal(errorBody(toTrackwayError(withCode('57P01'))).status, 503);
    const bug = errorBody(toTrackwayError(toDomainError(new TypeError('x is undefined'))));
    assert.deepEqual(bug, {
      status: 500,
      body: { error: 'Internal server error', message: 'An unexpected error occurred' },
    });
  });
});

describe('driver errors at the HTTP layer', () => {
  it('are only storage errors once a store port has translated them', () => {
    // An ECONNRESET that did not come through a store (a client hanging up) is no outage.
    const raw = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    assert.equal(errorBody(toTrackwayError(raw)).status, 500);
    assert.equal(errorBody(toTrackwayError(toDomainError(raw))).status, 503);
  });
});
