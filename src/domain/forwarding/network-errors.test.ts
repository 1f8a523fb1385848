import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { networkErrorText } from './network-errors.ts';

describe('networkErrorText', () => {
  it('names the common network failures in words', () => {
    assert.match(
      networkErrorText('getaddrinfo ENOTFOUND graph.facebook.com')!,
      /could not be found/,
    );
    assert.match(networkErrorText('connect ECONNREFUSED 127.0.0.1:9')!, /refused the connection/);
    assert.match(networkErrorText('retries exhausted: UND_ERR_CONNECT_TIMEOUT')!, /in time/);
    assert.match(networkErrorText('self-signed: SELF_SIGNED_CERT_IN_CHAIN')!, /certificate/);
  });
  it('leaves a platform refusal alone', () => {
    assert.equal(networkErrorText('Invalid parameter: event_time'), null);
    assert.equal(networkErrorText(null), null);
  });
});
