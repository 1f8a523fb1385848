import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateApiKey, hashApiKey, hasValidChecksum } from './api-key.ts';

describe('API keys', () => {
  it('have the contract form and a valid checksum', () => {
    const key = generateApiKey();
    assert.equal(key.apiKey.length, 57);
    assert.match(key.apiKey, /^tw_live_[0-9A-Za-z]{49}$/);
    assert.ok(hasValidChecksum(key.apiKey));
    assert.equal(key.prefix, key.apiKey.slice(0, 12));
    assert.equal(key.last4, key.apiKey.slice(-4));
    assert.equal(key.hash, hashApiKey(key.apiKey));
    assert.match(key.hash, /^[0-9a-f]{64}$/);
    assert.notEqual(generateApiKey().apiKey, key.apiKey);
  });

  it('fail the checksum when any one character changes', () => {
    const { apiKey } = generateApiKey();
    for (let i = 8; i < apiKey.length; i++) {
      const swapped = apiKey[i] === 'a' ? 'b' : 'a';
      const mutated = apiKey.slice(0, i) + swapped + apiKey.slice(i + 1);
      assert.equal(hasValidChecksum(mutated), false, `position ${i}`);
    }
  });

  it('refuse anything that is not shaped like a key, without throwing', () => {
    for (const candidate of [
      '',
      'tw_live_',
      'sk_live_abc',
      'x'.repeat(57),
      `tw_live_${'é'.repeat(49)}`,
      `tw_test_${'a'.repeat(49)}`,
    ]) {
      assert.equal(hasValidChecksum(candidate), false, candidate);
    }
  });
});
