/** How failures that are not the client's become HTTP: 503 to retry, or a 500 for a bug. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorBody, toTrackwayError } from './errors.ts';

const withCode = (code: string) => Object.assign(new Error(`driver error ${code}`), { code });

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
    const bug = errorBody(toTrackwayError(new TypeError('x is undefined')));
    assert.deepEqual(bug, {
      status: 500,
      body: { error: 'Internal server error', message: 'An unexpected error occurred' },
    });
  });
});
