import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TestClock } from '../../test/harness.ts';
import { generateApiKey, hashApiKey } from '../domain/accounts/api-key.ts';
import { KEY_CACHE_TTL_MS } from '../domain/accounts/key-cache.ts';
import { KeyHashes } from './auth.ts';

describe('remembered key hashes (issue 21)', () => {
  it('gives the key’s SHA-256 for a well-formed header, null for anything else', () => {
    const hashes = new KeyHashes(new TestClock());
    const { apiKey } = generateApiKey();
    assert.equal(hashes.of(`Bearer ${apiKey}`), hashApiKey(apiKey));
    assert.equal(hashes.of(`bearer  ${apiKey} `), hashApiKey(apiKey));
    assert.equal(hashes.of(`Bearer ${apiKey}`), hashApiKey(apiKey), 'remembered: same answer');
    const typo = `${apiKey.slice(0, -1)}${apiKey.endsWith('a') ? 'b' : 'a'}`;
    assert.equal(hashes.of(`Bearer ${typo}`), null);
    assert.equal(hashes.of(apiKey), null, 'no Bearer');
    assert.equal(hashes.of(undefined), null);
    assert.equal(hashes.size, 2, 'only headers with a valid checksum are remembered');
    hashes.clear();
  });

  it('holds raw keys no longer than the key cache’s second, even on a clock stepping back', () => {
    const clock = new TestClock();
    const hashes = new KeyHashes(clock);
    const first = generateApiKey().apiKey;
    const start = clock.current.getTime();
    hashes.of(`Bearer ${first}`);
    clock.set(new Date(start + KEY_CACHE_TTL_MS - 1));
    hashes.of(`Bearer ${generateApiKey().apiKey}`);
    assert.equal(hashes.size, 2, 'within the second both are kept');
    clock.set(new Date(start + KEY_CACHE_TTL_MS));
    assert.equal(hashes.of(`Bearer ${first}`), hashApiKey(first));
    assert.equal(hashes.size, 1, 'the second is over: everything older was dropped');
    clock.set(new Date(start));
    hashes.of(`Bearer ${first}`);
    assert.equal(hashes.size, 1, 'a clock that stepped back drops the entries too');
    hashes.clear();
  });

  it('drops every raw key by a timer when no request comes', async () => {
    const hashes = new KeyHashes(new TestClock());
    hashes.of(`Bearer ${generateApiKey().apiKey}`);
    assert.equal(hashes.size, 1);
    await new Promise((resolve) => setTimeout(resolve, KEY_CACHE_TTL_MS + 50));
    assert.equal(hashes.size, 0);
  });

  it('remembers at most 1,000 headers; past that it still answers, hashing each time', () => {
    const hashes = new KeyHashes(new TestClock());
    const keys = Array.from({ length: 1_010 }, () => generateApiKey().apiKey);
    for (const key of keys) assert.equal(hashes.of(`Bearer ${key}`), hashApiKey(key));
    assert.equal(hashes.size, 1_000);
    hashes.clear();
  });
});
